# SPDX-License-Identifier: MIT
"""Host numerical IK on the 5-joint arm: armctl.numik (DLS, CCD) against IKPy.

Every solver gets the same reachable targets (FK of random in-limit poses,
position and tool pitch), the same start pose (home) and the same judge: an
answer counts as a success only when the firmware's own FK puts the tool
within TOL_MM of the target and its direction within TOL_RAD, inside the joint
limits, whatever the solver says about itself. Each solve is timed alone
(perf_counter), so the median and 99th percentile are per target. A solver
stops early when its time budget is spent (CCD in numpy takes far longer per
target than the others); it then reports how many targets it did, and its
batch run covers those same targets.

IKPy's chain is built from the board's geometry (metres, its own units) and
trusted only after its FK matches armfw's FK on random poses.
"""

import math
import time
import warnings

import numpy as np

from armctl.bench import targets as bench_targets

COUNT = 10000
SHORT_COUNT = 60
BUDGET_S = 600.0        # per solver, full run
SHORT_BUDGET_S = 3.0
FK_CHECK_POSES = 500
TOL_MM = 0.01
TOL_RAD = 1e-4
# IKPy's FK must agree with armfw's this closely before its answers count.
IKPY_FK_TOL_MM = 1e-6
M_PER_MM = 1e-3


def ikpy_chain(arm):
    """An ikpy Chain of the arm5 geometry: yaw (z), three pitch joints (y), roll (z), tool."""
    from ikpy.chain import Chain
    from ikpy.link import OriginLink, URDFLink

    origins = ((0, 0, 0), (0, 0, arm.base), (0, 0, arm.l1), (0, 0, arm.l2), (0, 0, 0))
    axes = ((0, 0, 1), (0, 1, 0), (0, 1, 0), (0, 1, 0), (0, 0, 1))
    links = [OriginLink()]
    for i in range(arm.n):
        links.append(URDFLink(arm.names[i], np.array(origins[i], float) * M_PER_MM, np.zeros(3),
                              rotation=np.array(axes[i], float), bounds=(arm.lo[i], arm.hi[i])))
    links.append(URDFLink("tool", np.array((0.0, 0.0, arm.l3)) * M_PER_MM, np.zeros(3),
                          joint_type="fixed"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Chain(links, active_links_mask=[False] + [True] * arm.n + [False])


def tool_direction(target, yaw):
    """Unit tool direction of an arm5 target (pitch from vertical, in the plane of yaw)."""
    pitch = target[3]
    return np.array([math.sin(pitch) * math.cos(yaw), math.sin(pitch) * math.sin(yaw), math.cos(pitch)])


def target_yaw(target):
    return math.atan2(target[1], target[0])


def ikpy_fk_error(chain, arm, count, seed):
    """Largest disagreement of IKPy's FK with armfw's on random poses: (mm, rad)."""
    rng = np.random.default_rng(seed)
    worst_mm = 0.0
    worst_rad = 0.0
    out = [0.0] * 4
    for _ in range(count):
        q = (arm.lo + (np.array(arm.hi) - arm.lo) * rng.random(arm.n)).tolist()
        frame = chain.forward_kinematics([0.0] + q + [0.0])
        p = arm.fk(q, out)
        tip = frame[:3, 3] / M_PER_MM
        worst_mm = max(worst_mm, float(np.linalg.norm(tip - np.array(p[:3]))))
        direction = tool_direction(p, q[0])     # FK's pitch is in the plane the base faces
        worst_rad = max(worst_rad, float(np.linalg.norm(frame[:3, 2] - direction)))
    return worst_mm, worst_rad


def judge(arm, target, q):
    """True when q reaches target (firmware FK) within tolerance and inside the limits."""
    q = [float(a) for a in q]
    if not all(math.isfinite(a) for a in q):
        return False
    mm, rad = arm.fk_error(list(target), q)
    return mm <= TOL_MM and rad <= TOL_RAD and arm.within_limits(q)


def _summary(arm, targets, answers, times, self_ok=None):
    ok = [judge(arm, t, q) for t, q in zip(targets.tolist(), answers)]
    times_ms = np.array(times) * 1000.0
    targets = targets[:len(answers)]
    summary = {"targets": len(answers),
               "success_rate": float(np.mean(ok)),
               "median_ms": float(np.median(times_ms)),
               "p99_ms": float(np.percentile(times_ms, 99)),
               "mean_ms": float(np.mean(times_ms))}
    if self_ok is not None:
        summary["self_reported_ok_rate"] = float(np.mean(self_ok))
        # A solver claiming success the FK refutes would be the clamp bug again.
        summary["false_ok"] = int(np.sum(np.array(self_ok) & ~np.array(ok)))
    return summary


def run_numik(numik, chain, arm, targets, method, budget_s):
    answers, times, self_ok = [], [], []
    home = np.array(arm.home)
    deadline = time.perf_counter() + budget_s
    for t in targets:
        t0 = time.perf_counter()
        result = numik.solve(chain, t, mode="pitch", seed=home, method=method)
        times.append(time.perf_counter() - t0)
        answers.append(result.q)
        self_ok.append(bool(result.ok))
        if t0 > deadline:
            break
    summary = _summary(arm, targets, answers, times, self_ok)
    targets = targets[:len(answers)]
    t0 = time.perf_counter()
    whole = numik.solve_batch(chain, targets, mode="pitch", seed=home, method=method)
    elapsed = time.perf_counter() - t0
    summary["batch_per_s"] = len(targets) / elapsed
    summary["batch_success_rate"] = float(np.mean([judge(arm, t, q) for t, q in zip(targets.tolist(), whole.q)]))
    return summary


def run_ikpy(chain, arm, targets, budget_s):
    answers, times = [], []
    start = [0.0] + list(arm.home) + [0.0]
    deadline = time.perf_counter() + budget_s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in targets:
            position = np.array(t[:3]) * M_PER_MM
            direction = tool_direction(t, target_yaw(t))
            t0 = time.perf_counter()
            full = chain.inverse_kinematics(position, direction, orientation_mode="Z",
                                            initial_position=start)
            times.append(time.perf_counter() - t0)
            answers.append(full[1:1 + arm.n])
            if t0 > deadline:
                break
    return _summary(arm, targets, answers, times)


def _unavailable(e):
    return "not available: %s: %s" % (type(e).__name__, e)


def run(short=False, budget_s=None):
    """Figures of every solver; budget_s: seconds each solver may spend (default by mode)."""
    count = SHORT_COUNT if short else COUNT
    if budget_s is None:
        budget_s = SHORT_BUDGET_S if short else BUDGET_S
    board = bench_targets.load(bench_targets.ARM5)
    arm = board.solver
    targets, _ = bench_targets.reachable(arm, count, 21)
    result = {"targets": count, "budget_s_per_solver": budget_s,
              "mode": "pitch (tip position + tool pitch)",
              "tol_mm": TOL_MM, "tol_rad": TOL_RAD, "start": "home pose"}
    try:
        from armctl import numik
        chain = numik.as_chain(board)
    except Exception as e:   # the module is another helper's, possibly not there yet
        result["dls"] = result["ccd"] = _unavailable(e)
    else:
        for method in ("dls", "ccd"):
            result[method] = run_numik(numik, chain, arm, targets, method, budget_s)
    try:
        chain = ikpy_chain(arm)
        fk_mm, fk_rad = ikpy_fk_error(chain, arm, FK_CHECK_POSES // (10 if short else 1), 22)
    except Exception as e:
        result["ikpy"] = _unavailable(e)
    else:
        if fk_mm > IKPY_FK_TOL_MM or fk_rad > IKPY_FK_TOL_MM:
            result["ikpy"] = "not trusted: its FK differs from armfw's by %.3g mm / %.3g" % (fk_mm, fk_rad)
        else:
            result["ikpy"] = run_ikpy(chain, arm, targets, budget_s)
            result["ikpy"]["fk_check_mm"] = fk_mm
            result["ikpy"]["fk_check_rad"] = fk_rad
            import ikpy
            result["ikpy"]["version"] = ikpy.__version__
    return result
