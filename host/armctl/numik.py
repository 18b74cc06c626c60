# SPDX-License-Identifier: MIT
"""Numerical inverse kinematics: the host's fallback where the firmware has no closed form.

Two solvers over an armctl.chain.Chain, both batched over many targets in numpy:

- "dls": damped least squares (Levenberg-Marquardt): dq = (JᵀJ + λ²I)⁻¹ Jᵀe,
  with λ adapted per target (a step that lowers the error is kept and λ
  shrinks; one that does not is thrown away and λ grows). The damping keeps
  the step finite where the Jacobian collapses (stretched or folded arm).
- "ccd": cyclic coordinate descent: from the last joint back to the base, turn
  each joint to the angle that best points the tip at the target (closed form:
  the objective is A·cosδ + B·sinδ), clamped to the joint's limits.

Joint limits hold always: every iterate is inside them (steps are clipped, and
a joint pressed against a limit drops out of the DLS step).

A board with a tool offset (arm.tool_mm) gives a chain whose tool is offset
too; the wrist roll then moves the tip, and the solvers hold it at the seed's
roll as the firmware holds it at the current one (Chain.held), reading an arm5
pitch in the plane the closed form's answer faces.

Modes: "position" (tool tip only; pitch or tool direction free) and "pitch"
(tip plus tool direction). Targets follow armfw where the chain comes from a
board: planar (x, y) mm; arm5 (x, y, z) mm in position mode, (x, y, z, pitch
rad) in pitch mode (pitch from vertical, in the vertical plane through the
target, as armfw.kinematics.Arm5Solver). A plain chain takes (x, y, z) or
(x, y, z, dx, dy, dz) with a unit tool direction.

Statuses are armfw.status's. A target that is not reached within tolerance is
never OK: the answer is the nearest pose found, with TOO_FAR (beyond the
chain's reach), TOO_CLOSE (inside the hole it cannot fold into), JOINT_LIMIT
(only where the firmware's closed form proves every exact solution breaks a
limit) or NOT_CONVERGED (the method stopped short and nothing proves the
target out of reach: its own failure, even when it stopped against a limit).
TOO_FAR and TOO_CLOSE are decided from the geometry before solving, with the
firmware's margin, so a target the analytic solver calls TOO_FAR is never OK
here however small the miss. The numerical solvers do not flag SINGULAR
poses; armfw's solver does.

Seeds: where the chain mirrors a firmware arm (planar; arm5 in pitch mode, or
in position mode at the seed's tool pitch) the first attempt starts from the
closed form's minimum-motion answer, so DLS only polishes it; else from the
given seed (default home); then restarts from random in-limit poses for
targets still missed. solve_batch(..., accept=f) takes a per-solution check
(e.g. keep-out zones): a pose it refuses is not a solution.

Speed: up to PLAIN_MAX targets DLS runs target by target in plain floats
(on the firmware's chain FK, armfw.chain.ChainSolver, built by
armctl.chain.plain_solver), more run vectorised over targets in numpy. DLS is
the workhorse (position and pitch mode); CCD is reliable in position mode but
crawls near full stretch and in pitch mode (where it reaches about 82% of
reachable arm5 targets from home), which is why `armctl bench` leaves it out
by default.

The methods are armctl.numik_dls and armctl.numik_ccd; what an answer is and
when it counts (Result, Batch, the miss, the statuses, the acceptance check),
armctl.numik_result.
"""

import numpy as np

from armfw.kinematics import AXIS_EPS
from armfw.status import SINGULAR, TOO_FAR, BAD_INPUT, COLLISION
from armctl import batch
from armctl import chain as chain_mod
from armctl.numik_ccd import CCD_MAX_SWEEPS, run_ccd
from armctl.numik_dls import DLS_MAX_ITER, run_dls, run_dls_plain
from armctl.numik_result import (DIRECTION_WEIGHT_MM, Batch, classify, out_of_reach, refused_poses,
                                 weighted_miss, with_zones)

POSITION = "position"
PITCH = "pitch"
MODES = (POSITION, PITCH)
METHODS = ("dls", "ccd")

TOL_MM = 0.01          # position tolerance
TOL_RAD = 1e-4         # tool direction tolerance (~0.006 degrees)

RESTARTS = 10
# Each restart starts from the best of this many random in-limit poses.
RESTART_POOL = 64

# Targets with a coordinate beyond this (mm) are TOO_FAR without solving.
ABSURD_MM = 1e6

# Up to this many targets DLS runs target by target in plain floats; more run
# vectorised over targets in numpy (the crossover measured in docs/BENCHMARKS.md).
PLAIN_MAX = 16


def as_chain(board_or_chain):
    """A Chain from a Chain, an armfw Board or an armfw arm."""
    if isinstance(board_or_chain, chain_mod.Chain):
        return board_or_chain
    return chain_mod.from_board(board_or_chain)


def default_mode(chain, width):
    """The mode a target of this many numbers asks for."""
    if chain.kind == "arm5":
        return PITCH if width == 4 else POSITION
    if chain.kind == "planar":
        return POSITION
    return PITCH if width == 6 else POSITION


def _task(chain, targets, mode, seed):
    """Target positions (B, 3) and tool directions (B, 3) or None; ValueError on a bad width.

    arm5 pitch targets point the tool at the pitch in the plane the base faces:
    atan2(y, x), or with a lateral tool offset b (at the seed's roll) the plane
    turned by asin(b / r), as armfw.kinematics.Arm5Solver faces it.
    """
    yaw = seed[:, 0]
    width = targets.shape[1]
    if chain.kind == "planar":
        if width != 2 or mode != POSITION:
            raise ValueError("planar arm: target is (x, y) mm, position mode only")
        return np.column_stack([targets, np.zeros(len(targets))]), None
    if chain.kind == "arm5":
        if mode == POSITION and width in (3, 4):
            return targets[:, :3].copy(), None
        if mode == PITCH and width == 4:
            x, y, pitch = targets[:, 0], targets[:, 1], targets[:, 3]
            r = np.hypot(x, y)
            az = np.where(r < AXIS_EPS, yaw, np.arctan2(y, x))
            t = getattr(chain.solver, "tool", None) if chain.solver is not None else None
            if t is not None and (t[0] or t[1]):
                lateral = t[0] * np.sin(seed[:, 4]) + t[1] * np.cos(seed[:, 4])
                with np.errstate(invalid="ignore", divide="ignore"):
                    az = az - np.arcsin(np.clip(lateral / np.maximum(r, AXIS_EPS), -1.0, 1.0))
            d = np.column_stack([np.sin(pitch) * np.cos(az), np.sin(pitch) * np.sin(az), np.cos(pitch)])
            return targets[:, :3].copy(), d
        raise ValueError("arm5: target is (x, y, z) mm for position mode, (x, y, z, pitch rad) for pitch mode")
    if mode == POSITION and width in (3, 6):
        return targets[:, :3].copy(), None
    if mode == PITCH and width == 6:
        d = targets[:, 3:6]
        return targets[:, :3].copy(), d / np.linalg.norm(d, axis=1, keepdims=True)
    raise ValueError("chain: target is (x, y, z) mm, plus a tool direction (dx, dy, dz) in pitch mode")


def solve_batch(board_or_chain, targets, mode=None, seed=None, method="dls", restarts=RESTARTS,
                tol_mm=TOL_MM, tol_rad=TOL_RAD, max_iter=None, rng=0, analytic_seed=True, accept=None):
    """Solve many targets (B, k) at once; returns a Batch.

    seed: a pose (n,) or poses (B, n), radians (default: the home pose).
    analytic_seed: where the chain mirrors a firmware arm with a closed form
    (planar; arm5 in pitch mode, or in position mode at the seed's tool
    pitch), the first attempt starts from its minimum-motion answer to the
    seed, and its verdict is the proof behind JOINT_LIMIT; otherwise (or
    False) the first attempt starts at the seed. Then up to `restarts`
    attempts for the targets still missed, each from the random in-limit pose
    (best of RESTART_POOL) nearest the target, keeping the best pose found.
    accept: None or a callable taking poses (M, n) and returning a boolean
    (M,) array: a pose it refuses (e.g. one inside a keep-out zone) is no
    solution, whatever its miss; the target is tried again from other seeds,
    and if no accepted pose reaches it the answer is NOT_CONVERGED with
    Batch.refused set.
    max_iter: DLS iterations or CCD sweeps per attempt. rng: seed or Generator.
    """
    chain = as_chain(board_or_chain)
    zones = getattr(chain.solver, "zones", None)
    accept = with_zones(accept, zones)
    if method not in METHODS:
        raise ValueError("method must be one of %s, got %r" % (", ".join(METHODS), method))
    targets = np.atleast_2d(np.asarray(targets, dtype=float))
    mode = mode or default_mode(chain, targets.shape[1])
    if mode not in MODES:
        raise ValueError("mode must be one of %s, got %r" % (", ".join(MODES), mode))
    count = len(targets)
    q0 = np.broadcast_to(chain.home if seed is None else np.asarray(seed, dtype=float),
                         (count, chain.n)).copy()
    if not (np.all(np.isfinite(q0)) and np.all(chain.within_limits(q0))):
        raise ValueError("seed must be finite and inside the joint limits")
    good = np.all(np.isfinite(targets), axis=1)
    # Targets a kilometre away (or at 1e300) are answered TOO_FAR from the seed
    # without solving: their squared distances would overflow.
    absurd = good & np.any(np.abs(targets[:, :3]) > ABSURD_MM, axis=1)
    good &= ~absurd
    safe_targets = np.where(good[:, None], targets, 0.0)
    pos, dirs = _task(chain, safe_targets, mode, q0)
    if method == "ccd":
        run = run_ccd
    else:
        run = run_dls_plain if count <= PLAIN_MAX else run_dls
    cap = max_iter or (DLS_MAX_ITER if method == "dls" else CCD_MAX_SWEEPS)
    too_far, too_close, floor = out_of_reach(chain, pos, dirs)
    verdict, start = None, q0
    if analytic_seed:
        verdict, start = _analytic(chain, safe_targets, pos, mode, q0, good)
        if chain.held and dirs is not None:
            # With a tool offset the pitch is read in the plane the base faces, and
            # facing and leaning back point the tool differently: where the closed form
            # answers, its own pose says which (the firmware's meaning of the target).
            answered = verdict <= SINGULAR
            answered &= verdict >= 0
            if answered.any():
                dirs = dirs.copy()
                dirs[answered] = chain.tool_direction(start[answered])
    # A run is done when it is as near as the geometry allows.
    enough_mm = floor + tol_mm
    q, e_mm, e_rad, iters, capped = run(chain, start, pos, dirs, enough_mm, tol_rad, cap)
    refused = refused_poses(accept, q, good)
    rng = np.random.default_rng(rng)
    best_cost = weighted_miss(e_mm, e_rad, refused)
    retired = ~good
    for _ in range(restarts):
        if method == "ccd":
            # A CCD run still improving at the cap is crawling near full
            # stretch: a new seed would only start its approach over (a DLS
            # run at its cap is crawling along a limit: a new seed helps).
            # Toward a target out of reach CCD stretches as far as it can.
            retired |= capped | too_far | too_close
        missed = np.flatnonzero(~retired & (refused | ~((e_mm <= enough_mm) & (e_rad <= tol_rad))))
        if len(missed) == 0:
            break
        d_sub = None if dirs is None else dirs[missed]
        begin = _restart_poses(chain, pos[missed], d_sub, rng)
        if chain.kind == "arm5":
            begin[:, 4] = q0[missed, 4]     # wrist roll: the user's, not the solver's
        for j in chain.held:
            begin[:, j] = q0[missed, j]     # a held joint stays where the seed has it
        rq, rm, rr, ri, rc = run(chain, begin, pos[missed], d_sub, enough_mm[missed], tol_rad, cap)
        iters[missed] += ri
        capped[missed] = rc
        r_refused = refused_poses(accept, rq, np.ones(len(missed), dtype=bool))
        score = weighted_miss(rm, rr, r_refused)
        better = score < best_cost[missed]
        take = missed[better]
        q[take], e_mm[take], e_rad[take] = rq[better], rm[better], rr[better]
        refused[take] = r_refused[better]
        best_cost[take] = score[better]
    status = classify(e_mm, e_rad, tol_mm, tol_rad, too_far, too_close, verdict, refused)
    if zones is not None:
        # Zone hook (armfw.zones): a pose on the target with a link in a keep-out
        # zone is no solution, and the reason is the zone, not the method.
        on_target = np.flatnonzero((e_mm <= tol_mm) & (e_rad <= tol_rad) & refused & ~too_far & ~too_close)
        for i in on_target:
            if not zones.clear([float(a) for a in q[i]]):
                status[i] = COLLISION
    status[~good] = BAD_INPUT
    status[absurd] = TOO_FAR
    q[~good] = q0[~good]
    e_mm[~good] = np.nan
    e_rad[~good] = np.nan
    if absurd.any():
        with np.errstate(over="ignore"):
            width = min(3, targets.shape[1])
            tip = chain.fk(q0[absurd])[:, :width]
            e_mm[absurd] = np.linalg.norm(targets[absurd, :width] - tip, axis=1)
    return Batch(q, status, e_mm, e_rad, iters, method, mode, refused)


def _analytic(chain, targets, pos, mode, q0, good):
    """The firmware's closed form where the chain mirrors an arm that has one.

    Returns (verdict (B,) status codes, -1 where it has none; start poses
    (B, n): its minimum-motion answer to the seed, pulled inside the limits
    (the firmware allows LIMIT_EPS past them), or the seed where it has no
    answer). In arm5 position mode it is asked at the seed's tool pitch,
    which gives a start pose but no verdict: another pitch may still reach.
    """
    arm = chain.solver
    count = len(targets)
    verdict = np.full(count, -1)
    if arm is None or chain.kind not in ("planar", "arm5"):
        return verdict, q0
    if chain.kind == "planar":
        asked = targets[:, :2]
    elif mode == PITCH:
        asked = targets
    else:
        asked = np.column_stack([pos, _seed_pitch(chain, q0, pos)])
    if count <= PLAIN_MAX:
        status = np.empty(count, dtype=int)
        answers = q0.copy()
        out = [0.0] * chain.n
        for b, (t, current) in enumerate(zip(asked.tolist(), q0.tolist())):
            status[b] = arm.ik(t, out, current)
            if status[b] <= SINGULAR:
                answers[b] = out
    else:
        status, answers, _ = batch.ik(arm, asked, q0)
        status = status.astype(int)
    solved = good & (status <= SINGULAR)
    start = np.where(solved[:, None], np.clip(answers, chain.lo, chain.hi), q0)
    if chain.kind == "planar" or mode == PITCH:
        verdict = np.where(good, status, -1)
    return verdict, start


def _seed_pitch(chain, q0, pos):
    """The seeds' tool pitch (rad from vertical) in the vertical plane through each target."""
    d = chain.tool_direction(q0)
    az = np.arctan2(pos[:, 1], pos[:, 0])
    return np.arctan2(d[:, 0] * np.cos(az) + d[:, 1] * np.sin(az), d[:, 2])


def _restart_poses(chain, pos, dirs, rng):
    """For each target, the random in-limit pose (of RESTART_POOL) that comes closest to it."""
    count = len(pos)
    pool = chain.random_poses(count * RESTART_POOL, rng).reshape(count, RESTART_POOL, chain.n)
    _, end = chain.frames(pool)
    miss = np.linalg.norm(end[..., :3, 3] - pos[:, None, :], axis=2)
    if dirs is not None:
        miss = np.hypot(miss, DIRECTION_WEIGHT_MM * np.linalg.norm(
            end[..., :3, :3] @ chain.tool_axis - dirs[:, None, :], axis=2))
    return pool[np.arange(count), np.argmin(miss, axis=1)]


def solve(board_or_chain, target, mode=None, seed=None, method="dls", **options):
    """Solve one target; returns a Result (q radians, status, error_mm, iterations).

    board_or_chain: an armfw Board (or arm) or an armctl.chain.Chain. target:
    see the module doc. mode: "position" or "pitch" (default: what the target
    gives). seed: the current pose, radians (default: home). method: "dls" or
    "ccd". options: as solve_batch. A bad target gives BAD_INPUT, never an
    exception; a bad mode, method or seed raises ValueError.
    """
    target = np.asarray(target, dtype=float).reshape(1, -1)
    return solve_batch(board_or_chain, target, mode=mode, seed=seed, method=method, **options)[0]
