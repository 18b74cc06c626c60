# SPDX-License-Identifier: MIT
"""Host numerical IK on the 5-joint arm: armctl.numik (DLS, CCD) against IKPy,
scipy's least_squares and Robotics Toolbox for Python (ik_LM in C++, ikine_LM
in Python).

Every solver gets the same reachable targets (FK of random in-limit poses,
position and tool pitch), the same start pose (home) and the same judge: an
answer counts as a success only when the firmware's own FK puts the tool
within TOL_MM of the target and its direction within TOL_RAD, inside the joint
limits, whatever the solver says about itself. Each solve is timed alone
(perf_counter), so the median and 99th percentile are per target. A solver
stops early when its time budget is spent (CCD in numpy takes far longer per
target than the others); it then reports how many targets it did, and its
batch run covers those same targets.

numik runs twice: "dls" as the product calls it (first attempt from the
firmware closed form's answer, which DLS polishes), "dls_home" with that seed
switched off, which measures the numerical method alone. CCD is left out by
default (METHODS): from home it reaches about 82 % of these pitch-mode
targets and takes ~200 ms each; run(methods=("dls", "dls_home", "ccd")) adds it.

IKPy's and the Toolbox's chains are built from the board's geometry (metres,
their own units) and trusted only after their FK matches armfw's FK on random
poses. The Toolbox solves a full tool frame: position, tool direction and the
roll about it. The target fixes the roll only up to the base facing the
target or turned half a turn (both leave the wrist roll at 0), so it gets
the facing frame first and the turned one if that fails, both timed.
scipy's least_squares (trust region reflective, joint limits as bounds) gets
the same residual as numik (tip miss in mm, DIRECTION_WEIGHT_MM x the tool
direction miss) and numik's analytic Jacobian.
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
    seeded = not method.endswith("_home")
    method = "ccd" if method.startswith("ccd") else "dls"
    deadline = time.perf_counter() + budget_s
    for t in targets:
        t0 = time.perf_counter()
        result = numik.solve(chain, t, mode="pitch", seed=home, method=method, analytic_seed=seeded)
        times.append(time.perf_counter() - t0)
        answers.append(result.q)
        self_ok.append(bool(result.ok))
        if t0 > deadline:
            break
    summary = _summary(arm, targets, answers, times, self_ok)
    targets = targets[:len(answers)]
    t0 = time.perf_counter()
    whole = numik.solve_batch(chain, targets, mode="pitch", seed=home, method=method, analytic_seed=seeded)
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


def rtb_ets(arm):
    """A Robotics Toolbox ETS of the arm5 geometry (metres), joint limits included."""
    from roboticstoolbox import ET
    lo, hi = arm.lo, arm.hi
    return (ET.Rz(qlim=[lo[0], hi[0]]) * ET.tz(arm.base * M_PER_MM)
            * ET.Ry(qlim=[lo[1], hi[1]]) * ET.tz(arm.l1 * M_PER_MM)
            * ET.Ry(qlim=[lo[2], hi[2]]) * ET.tz(arm.l2 * M_PER_MM)
            * ET.Ry(qlim=[lo[3], hi[3]]) * ET.Rz(qlim=[lo[4], hi[4]]) * ET.tz(arm.l3 * M_PER_MM))


def rtb_fk_error(ets, arm, count, seed):
    """Largest disagreement of the Toolbox's FK with armfw's on random poses: (mm, rad)."""
    rng = np.random.default_rng(seed)
    worst_mm = worst_rad = 0.0
    out = [0.0] * 4
    for _ in range(count):
        q = (arm.lo + (np.array(arm.hi) - arm.lo) * rng.random(arm.n)).tolist()
        frame = ets.fkine(np.array(q)).A
        p = arm.fk(q, out)
        worst_mm = max(worst_mm, float(np.linalg.norm(frame[:3, 3] / M_PER_MM - np.array(p[:3]))))
        worst_rad = max(worst_rad, float(np.linalg.norm(frame[:3, 2] - tool_direction(p, q[0]))))
    return worst_mm, worst_rad


def rtb_frames(target):
    """The two tool frames (4x4, metres) of an arm5 target with the wrist roll at 0:
    base facing the target, then turned half a turn (the frame turned by pi about z)."""
    yaw = target_yaw(target)
    z = tool_direction(target, yaw)
    y = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    frame = np.eye(4)
    frame[:3, 0] = np.cross(y, z)
    frame[:3, 1] = y
    frame[:3, 2] = z
    frame[:3, 3] = np.array(target[:3]) * M_PER_MM
    turned = frame.copy()
    turned[:3, :2] = -frame[:3, :2]
    return frame, turned


def run_rtb(ets, arm, targets, budget_s, compiled):
    """ik_LM (C++, compiled=True) or ikine_LM (Python) from home, facing frame then turned frame."""
    answers, times = [], []
    home = np.array(arm.home)
    # Residual E = 0.5 e'e in metres and radians: 1e-14 is ~0.1 um, far inside the judge's 0.01 mm.
    options = {"q0": home, "ilimit": 30, "slimit": 100, "tol": 1e-14, "joint_limits": True}
    deadline = time.perf_counter() + budget_s
    for t in targets.tolist():
        frames = rtb_frames(t)
        t0 = time.perf_counter()
        for frame in frames:
            solution = ets.ik_LM(frame, **options) if compiled else ets.ikine_LM(frame, seed=0, **options)
            if solution.success:
                break
        times.append(time.perf_counter() - t0)
        answers.append(np.asarray(solution.q, dtype=float))
        if t0 > deadline:
            break
    return _summary(arm, targets, answers, times)


def run_scipy(numik, chain, arm, targets, budget_s):
    """scipy.optimize.least_squares on numik's residual and analytic Jacobian, joint limits as bounds."""
    from scipy.optimize import least_squares
    answers, times = [], []
    home = np.array(arm.home)
    lo, hi = np.array(arm.lo), np.array(arm.hi)
    w = numik.DIRECTION_WEIGHT_MM

    def residual(q, pos, direction):
        jac, tip, d = chain.jacobian(q)
        return np.concatenate([tip - pos, w * (d - direction)])

    def jacobian(q, pos, direction):
        jac, tip, d = chain.jacobian(q)
        return np.concatenate([jac[:3], w * np.cross(jac[3:].T, d).T])

    deadline = time.perf_counter() + budget_s
    for t in targets.tolist():
        pos = np.array(t[:3])
        direction = tool_direction(t, target_yaw(t))
        t0 = time.perf_counter()
        fit = least_squares(residual, home, jac=jacobian, bounds=(lo, hi), args=(pos, direction),
                            method="trf", xtol=1e-12, ftol=1e-12, gtol=1e-12)
        times.append(time.perf_counter() - t0)
        answers.append(fit.x)
        if t0 > deadline:
            break
    return _summary(arm, targets, answers, times)


def _unavailable(e):
    return "not available: %s: %s" % (type(e).__name__, e)


METHODS = ("dls", "dls_home")


def run(short=False, budget_s=None, methods=METHODS):
    """Figures of every solver; budget_s: seconds each solver may spend (default by mode);
    methods: the numik rows ("dls", "dls_home", "ccd")."""
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
        for method in methods:
            result[method] = _unavailable(e)
    else:
        for method in methods:
            result[method] = run_numik(numik, chain, arm, targets, method, budget_s)
        try:
            result["scipy"] = run_scipy(numik, chain, arm, targets, budget_s)
            import scipy
            result["scipy"]["version"] = scipy.__version__
        except Exception as e:
            result["scipy"] = _unavailable(e)
    try:
        import roboticstoolbox
        ets = rtb_ets(arm)
        fk_mm, fk_rad = rtb_fk_error(ets, arm, FK_CHECK_POSES // (10 if short else 1), 23)
    except Exception as e:     # an optional dependency: pip install '.[bench]'
        result["rtb_ik_LM"] = result["rtb_ikine_LM"] = _unavailable(e)
    else:
        if fk_mm > IKPY_FK_TOL_MM or fk_rad > IKPY_FK_TOL_MM:
            result["rtb_ik_LM"] = result["rtb_ikine_LM"] = (
                "not trusted: its FK differs from armfw's by %.3g mm / %.3g" % (fk_mm, fk_rad))
        else:
            for key, compiled in (("rtb_ik_LM", True), ("rtb_ikine_LM", False)):
                result[key] = run_rtb(ets, arm, targets, budget_s, compiled)
                result[key].update(fk_check_mm=fk_mm, fk_check_rad=fk_rad, version=roboticstoolbox.__version__)
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
