# SPDX-License-Identifier: MIT
"""The host's numerical fallback driving the simulated board, beside the board's own solver.

Figures:
- end-to-end time per target of `armctl move`'s fallback (armctl.fallback.Mover):
  on the chain arm (sim_al5d: the board's NO_CLOSED_FORM refusal, `where`,
  the host's DLS solve checked by the firmware's FK, `speed` (the motion's
  allowance), `joints`, `where`) and on the 5-joint arm with the pitch left
  free (no refusal needed), beside the board's own analytic
  `move X Y Z PITCH` (with `speed` and `where`) to the same 5-joint targets;
- the firmware's chain FK on the Unix port (tests/mp/bench_chain.py): calls
  per second and heap bytes per call.
Targets are FK of seeded random in-limit poses (all reachable). The simulator
runs in virtual time: motion steps are not waited for, so these are the costs
of solving, checking and talking, not of moving.
"""

import statistics
import time

import numpy as np

from armctl import BOARDS_DIR, ROOT
from armctl.bench import firmware

SCRIPT = ROOT / "tests" / "mp" / "bench_chain.py"
TARGETS = 50
SHORT_TARGETS = 10
FK_CALLS = 20000
SHORT_FK_CALLS = 2000


def _timed_moves(board_file, targets, move):
    """(median ms per target, targets moved, targets the board refused COLLISION) of
    move(mover, target) through the simulator, one target after the other.

    Every target comes from a pose clear of the board's zones, yet the joint path
    to it from the target before can sweep a link through one (the table under a
    chain arm): the board checks every step and refuses that path, moving nothing."""
    from armctl.fallback import Mover
    from armctl.link import Link
    from armctl.sim import Simulator
    from armfw import board as fw_board
    b = fw_board.load(str(board_file))
    times = []
    moved = refused = 0
    with Simulator(str(board_file), pty=True) as sim, Link(sim.port, timeout=30.0) as link:
        link.wait_ready()
        mover = Mover(link, b)
        for target in targets:
            t0 = time.perf_counter()
            outcome = move(mover, target)
            times.append(time.perf_counter() - t0)
            moved += outcome.moved
            refused += not outcome.moved and outcome.status == "COLLISION"
    return statistics.median(times) * 1000.0, moved, refused


def _clear_poses(b, chain, count, rng, roll=None):
    """count random in-limit poses (rows) clear of board b's keep-out zones."""
    poses = chain.random_poses(count * 20, rng)
    if roll is not None:
        poses[:, -1] = roll
    zones = b.solver.zones
    keep = np.array([zones is None or zones.clear([float(a) for a in q]) for q in poses])
    return poses[keep][:count]


def _protocol_pitch_deg(solver, q):
    """The pitch the protocol speaks for pose q (the firmware's own rule, Arm5Solver.tool_pose)."""
    return float(np.degrees(solver.tool_pose([float(v) for v in q], [0.0] * 4)[3]))


def run(short=False):
    from armctl import chain as chain_mod
    from armfw import board as fw_board
    count = SHORT_TARGETS if short else TARGETS
    rng = np.random.default_rng(7)
    al5d = BOARDS_DIR / "sim_al5d.json"
    arm5 = BOARDS_DIR / "sim_arm5.json"
    b_chain = fw_board.load(str(al5d))
    c = chain_mod.from_board(b_chain)
    chain_targets = c.fk(_clear_poses(b_chain, c, count, rng))
    b5 = fw_board.load(str(arm5))
    c5 = chain_mod.from_board(b5)
    # 5-joint targets with their pitch.
    q5 = _clear_poses(b5, c5, count, rng, roll=0.0)
    tips = c5.fk(q5)
    pitches = [_protocol_pitch_deg(b5.solver, q) for q in q5]
    chain_ms, chain_moved, chain_refused = _timed_moves(al5d, chain_targets, lambda m, t: m.move(t))
    free_ms, free_moved, free_refused = _timed_moves(arm5, tips, lambda m, t: m.move(t))
    board_ms, board_moved, board_refused = _timed_moves(
        arm5, list(zip(tips, pitches)), lambda m, t: m.move(t[0], t[1]))
    return {
        "targets": count,
        "chain_fallback_ms": chain_ms, "chain_moved": chain_moved, "chain_refused_collision": chain_refused,
        "arm5_free_pitch_fallback_ms": free_ms, "arm5_free_pitch_moved": free_moved,
        "arm5_free_pitch_refused_collision": free_refused, "arm5_board_refused_collision": board_refused,
        "arm5_board_move_ms": board_ms, "arm5_board_moved": board_moved,
        "firmware_chain_fk": firmware.run_script(SCRIPT, SHORT_FK_CALLS if short else FK_CALLS),
        "note": "simulator in virtual time: solving, checking and talking, not moving",
    }
