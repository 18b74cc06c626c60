# SPDX-License-Identifier: MIT
"""The solver with single-precision numbers, as on an RP2040 or ESP32 board.

MicroPython on those boards keeps floats in IEEE single precision (24-bit
mantissa, ~6e-8 relative); the Unix port this suite runs is double precision.
Two checks stand in for the board:

1. float32-rounded inputs (numpy.float32) into the double solver: what a
   target loses on its way through a float32 protocol parser or computation.
2. float32 arithmetic emulated: the firmware modules themselves run with every
   number an F32 (a float subclass whose every + - * / result, every constant
   and every math-function result is rounded to the nearest float32), and
   sin/cos/atan2 results are additionally nudged by one float32 ulp at random,
   as a board's single-precision libm may be off by that much.

What this shows: with single-precision rounding at every step the solver never
makes NaN, a target exactly on the outer boundary stays SINGULAR (the reach
margin, 1e-6 of L1+L2 = 12 float32 ulps at 180 mm, absorbs the rounding),
targets 1e-4 outside are TOO_FAR, a pose exactly on a joint limit and away
from full stretch (|sin q3| >= 0.1) stays inside (LIMIT_EPS), and FK of every
answer is within float32-sized errors.

Not a pose on a limit at full stretch, and no tolerance should make it so.
Rounding a target to float32 moves it by up to half an ulp per coordinate
(~1e-5 mm at 200 mm, ~1e-7 rad of pitch, which moves the wrist l3 times as
much): a different target. Away from stretch its exact solution moves by that
over the arm's lever, |dq| ~ delta / (L |sin q3|) <= ~3e-6 rad for
|sin q3| >= 0.1, inside LIMIT_EPS = 1e-5. At stretch the wrist distance is
d = 2 L cos(q3 / 2) (L1 = L2 = L), flat in q3: a target pulled in by delta
needs q3 = 2 acos(1 - delta / 2L) ~ 2 sqrt(delta / L), about 6e-4 rad for
delta = 1e-5 mm and L = 126 mm, and the joints on the limits move by about
half of that, 30 times LIMIT_EPS. Then the rounded target's exact solutions
really lie past a limit and JOINT_LIMIT is the true answer for it (pushed
out, the reach margin keeps it SINGULAR in place). A LIMIT_EPS of ~1e-3 rad
would hide this, and would let every other target through 100 times past
what rounding explains. test_float32_inputs_stretched_on_a_limit checks the
solver against the exact solutions of the rounded targets.
What emulation cannot show: float parsing on the board, and arithmetic that is
single precision throughout rather than rounded after each double operation.
Section 3 shows those on the board-like interpreter
(../shared/micropython/build-board-like.sh: the Unix port with 32-bit objects
and single-precision floats; skipped without it, except in CI): the same
claims, with the board's own parser reading the decimal targets, by
tests/mp/run_vectors.py. What that cannot show either: a board's actual libm
(it has glibc's float functions: errors of more than one ulp, argument
reduction of large angles), ports that box floats in 30 bits
(MICROPY_OBJ_REPR_C loses two more mantissa bits), timing. Those need the
board: run tests/mp/run_vectors.py on it with mpremote and compare with the
same comparator (allowing float32 tolerances).
"""

import math
import random

import numpy as np
import pytest

from conftest import BOARDS, solver_only

import derive_vectors as derive
from armfw import arm5, arm5fk, arm5near, board, kinematics, planar, solver, status, twolink


FLOAT32_MAX = float(np.finfo(np.float32).max)


def f32(v):
    return float(np.float32(v))


class F32(float):
    """A float that rounds every arithmetic result to IEEE single precision."""

    __slots__ = ()

    def __new__(cls, value):
        return float.__new__(cls, f32(value))

    def __repr__(self):
        return "F32(%r)" % float(self)


def _rounded(op):
    method = getattr(float, op)

    def apply(self, *args):
        result = method(self, *args)
        if result is NotImplemented or isinstance(result, bool):
            return result
        return F32(result)
    apply.__name__ = op
    return apply


for _op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
            "__rtruediv__", "__pow__", "__rpow__", "__mod__", "__rmod__", "__neg__", "__pos__", "__abs__"):
    setattr(F32, _op, _rounded(_op))


class Libm32:
    """Single-precision math functions: sqrt correctly rounded, the others within one ulp."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def nudge(self, v):
        v = np.float32(v)
        step = self.rng.choice((-1, 0, 1))
        if step:
            v = np.nextafter(v, np.float32(np.inf if step > 0 else -np.inf), dtype=np.float32)
        return F32(v)

    def install(self, monkeypatch):
        def sqrt(v):
            return F32(math.sqrt(v))

        def sin(v):
            return self.nudge(math.sin(v))

        def cos(v):
            return self.nudge(math.cos(v))

        def atan2(y, x):
            return self.nudge(math.atan2(y, x))

        # Every solver module's own names for them (each imports what it uses).
        functions = {"sqrt": sqrt, "sin": sin, "cos": cos, "atan2": atan2}
        for module in (twolink, solver, planar, arm5, arm5fk, arm5near):
            for name, function in functions.items():
                if hasattr(module, name):
                    monkeypatch.setattr(module, name, function)
        for name in ("REACH_EPS", "SINGULAR_SIN"):
            monkeypatch.setattr(twolink, name, F32(getattr(twolink, name)))
        for module in (solver, arm5, arm5fk, arm5near):
            if hasattr(module, "pi"):
                monkeypatch.setattr(module, "pi", F32(math.pi))
            if hasattr(module, "TWO_PI"):
                monkeypatch.setattr(module, "TWO_PI", F32(2.0) * F32(math.pi))
        monkeypatch.setattr(solver, "LIMIT_EPS", F32(solver.LIMIT_EPS))
        for module in (arm5, arm5fk, arm5near):
            monkeypatch.setattr(module, "AXIS_EPS", F32(arm5fk.AXIS_EPS))


def arm32(board_file):
    """The board's arm with every length and limit a float32, as the board would build it."""
    arm = board.load(str(BOARDS / board_file)).solver
    rad = F32(math.pi) / F32(180.0)
    lo = [F32(round(math.degrees(v), 9)) * rad for v in arm.lo]
    hi = [F32(round(math.degrees(v), 9)) * rad for v in arm.hi]
    home = [F32(v) for v in arm.home]
    if arm.kind == "planar":
        return kinematics.PlanarSolver(F32(arm.l1), F32(arm.l2), arm.names, lo, hi, home)
    return kinematics.Arm5Solver(F32(arm.l1), F32(arm.l2), F32(arm.l3), F32(arm.base), arm.names, lo, hi, home,
                                 [F32(v) for v in arm.tool])


@pytest.fixture
def single(monkeypatch):
    Libm32(seed=32).install(monkeypatch)
    return {"planar": arm32("sim_planar.json"), "arm5": arm32("sim_arm5.json"),
            "arm5_tool": arm32("sim_arm5_tool.json")}


def planar_ring(radius, count=720):
    ang = np.radians(np.arange(count) * 360.0 / count + 0.25)
    return [(radius * math.cos(a), radius * math.sin(a)) for a in ang]


def shoulder_allows(geom, x, y):
    """The stretched/folded pose toward (x, y) needs shoulder atan2(y, x): inside -10..190?"""
    t1 = math.atan2(y, x)
    return any(geom.lo[0] - 1e-6 <= t1 + k * 2 * math.pi <= geom.hi[0] + 1e-6 for k in (-1, 0, 1))


# --- 1. float32-rounded inputs into the double-precision solver -------------

def test_float32_inputs_on_the_outer_boundary_are_singular():
    geom = derive.Geometry("sim_planar.json")
    arm = board.load(str(BOARDS / "sim_planar.json")).solver
    out = [0.0, 0.0]
    reach = geom.l1 + geom.l2
    for x, y in planar_ring(reach):
        t = [float(np.float32(x)), float(np.float32(y))]
        st = arm.ik(t, out, None, kinematics.PREFER_UP)
        want = status.SINGULAR if shoulder_allows(geom, x, y) else status.JOINT_LIMIT
        assert st == want, (t, status.name(st))
        if st == status.SINGULAR:
            assert all(math.isfinite(a) for a in out)
            assert arm.fk_error(t, out)[0] < 1e-3
    for x, y in planar_ring(reach * (1 + 1e-4)):
        assert arm.ik([f32(x), f32(y)], out) == status.TOO_FAR
    for x, y in planar_ring(abs(geom.l1 - geom.l2)):
        assert arm.ik([f32(x), f32(y)], out) == status.JOINT_LIMIT   # folded: |elbow| 180 > 160
    for x, y in planar_ring(abs(geom.l1 - geom.l2) * (1 - 1e-4)):
        assert arm.ik([f32(x), f32(y)], out) == status.TOO_CLOSE


def stretched_on_limits(geom, count, seed):
    """Poses at full stretch (q3 = 0) with the shoulder and the wrist pitch on their limits,
    yaw anywhere (the edge set of the review): (pose, target (x, y, z, pitch) in double)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = np.array([rng.uniform(geom.lo[0], geom.hi[0]), rng.choice([geom.lo[1], geom.hi[1]]), 0.0,
                      rng.choice([geom.lo[3], geom.hi[3]]), 0.0])
        tip, tool = derive.fk_arm5(geom, q)
        yaw = math.atan2(tip[1], tip[0])
        pitch = math.atan2(tool[0] * math.cos(yaw) + tool[1] * math.sin(yaw), tool[2])
        yield q, [float(tip[0]), float(tip[1]), float(tip[2]), pitch]


def test_float32_inputs_stretched_on_a_limit(report):
    """A stretched pose on its limits, its target rounded to float32: the solver's status is the
    exact one for the rounded target (derive_vectors' circle intersection, fitted with LIMIT_EPS):
    SINGULAR in place when the rounding pushes the wrist out, JOINT_LIMIT when it pulls the wrist
    in far enough that every exact solution leaves a limit by more than LIMIT_EPS."""
    geom = derive.Geometry("sim_arm5.json")
    arm = solver_only("sim_arm5.json")      # the solver's geometry alone (zones: test_zones.py)
    reach = geom.l1 + geom.l2
    out = [0.0] * 5
    forbidden = 0
    smallest_bend = math.inf
    for q, target in stretched_on_limits(geom, 2000, 13):
        t32 = [f32(v) for v in target]
        st = arm.ik(t32, out, None, kinematics.MIN_MOTION)
        assert st in (status.SINGULAR, status.JOINT_LIMIT), (np.degrees(q), status.name(st))
        exact = derive.candidates(geom, t32, None)
        inside = [c for c in exact if all(derive.fit(a, lo, hi) is not None
                                          for a, lo, hi in zip(c["q"], geom.lo, geom.hi))]
        if inside:
            assert st == status.SINGULAR, (np.degrees(q), t32)
            assert all(math.isfinite(a) for a in out) and arm.fk_error(t32, out)[0] < 1e-3
            continue
        assert st == status.JOINT_LIMIT, (np.degrees(q), t32)
        forbidden += 1
        # Forbidden only because the wrist came in: the elbow had to bend by 2 acos(d / 2L).
        wh = math.hypot(t32[0], t32[1]) - geom.l3 * math.sin(t32[3])
        wz = t32[2] - geom.base - geom.l3 * math.cos(t32[3])
        d = math.hypot(wh, wz)
        assert d < reach
        bend = 2.0 * math.acos(d / reach)
        assert bend > 2.0 * kinematics.LIMIT_EPS
        smallest_bend = min(smallest_bend, bend)
    assert forbidden > 0
    report("float32 inputs: %d of 2000 stretched poses on their limits are JOINT_LIMIT once rounded, as the "
           "exact solutions of the rounded targets say (elbow bend >= %.2g rad, LIMIT_EPS %g); the rest "
           "SINGULAR in place" % (forbidden, smallest_bend, kinematics.LIMIT_EPS))


def reach_sphere_targets(geom, k, max_phi_deg, rounded):
    """Arm5Solver targets whose wrist lies (1 + k) times the reach from J2, every
    coordinate passed through rounded: (phi in degrees from vertical, target)."""
    reach = geom.l1 + geom.l2
    for phi in np.radians(np.arange(0.0, max_phi_deg, 2.5) + 0.3):
        for pitch in np.radians([0.0, 60.0, 90.0]):
            h = reach * (1 + k) * math.sin(phi) + geom.l3 * math.sin(pitch)
            z = geom.base + reach * (1 + k) * math.cos(phi) + geom.l3 * math.cos(pitch)
            yield (math.degrees(phi),
                   [rounded(h * math.cos(0.4)), rounded(h * math.sin(0.4)), rounded(z), rounded(pitch)])


def test_float32_inputs_arm5_wrist_on_the_reach_sphere():
    geom = derive.Geometry("sim_arm5.json")
    arm = solver_only("sim_arm5.json")
    out = [0.0] * 5
    for k, want in ((0.0, (status.SINGULAR, status.JOINT_LIMIT)), (1e-4, (status.TOO_FAR,))):
        for phi_deg, t in reach_sphere_targets(geom, k, 180.0, f32):
            st = arm.ik(t, out, None, kinematics.PREFER_UP)
            assert st in want, (t, status.name(st))
            if k == 0.0 and phi_deg < 134.0:
                assert st == status.SINGULAR, t
                assert all(math.isfinite(a) for a in out)


# --- 2. float32 arithmetic emulated through the firmware's own code ---------

def test_emulation_rounds_like_float32(single):
    a = F32(1.0) + 1e-8
    assert type(a) is F32 and a == 1.0                 # 1e-8 is below half an ulp of 1.0f
    assert F32(0.1) * 3 == f32(f32(0.1) * 3)
    assert type(2.0 * F32(3.0)) is F32 and type(-F32(2.0)) is F32
    assert type(twolink.sqrt(F32(2.0))) is F32
    # The textbook failure the reach check prevents: float32 makes c2 > 1 on the boundary.
    x, y = F32(108.0 * 1.0000001), F32(144.0)
    c2 = (x * x + y * y - F32(100.0) * 100.0 - F32(80.0) * 80.0) / (F32(2.0) * 100.0 * 80.0)
    assert c2 > 1.0


def test_float32_outer_boundary_is_singular_never_nan(single, report):
    arm = single["planar"]
    geom = derive.Geometry("sim_planar.json")
    reach = geom.l1 + geom.l2
    out = [0.0, 0.0]
    worst = 0.0
    for x, y in planar_ring(reach):
        st = arm.ik([F32(x), F32(y)], out, None, kinematics.PREFER_DOWN)
        want = status.SINGULAR if shoulder_allows(geom, x, y) else status.JOINT_LIMIT
        assert st == want, ((x, y), status.name(st))
        if st == status.SINGULAR:
            assert all(math.isfinite(a) for a in out)
            err = float(np.hypot(*(derive.fk_planar(geom, [float(a) for a in out]) - [x, y])))
            worst = max(worst, err)
    assert worst < 2e-3, worst
    report("float32 emulation: 720 targets exactly on the outer boundary: no NaN, SINGULAR or JOINT_LIMIT "
           "(never TOO_FAR); FK within %.2g mm" % worst)
    for x, y in planar_ring(reach * (1 + 1e-4)):
        assert arm.ik([F32(x), F32(y)], out) == status.TOO_FAR
    for x, y in planar_ring(abs(geom.l1 - geom.l2) * (1 - 1e-4)):
        assert arm.ik([F32(x), F32(y)], out) == status.TOO_CLOSE


def poses_on_a_limit(geom, rng, tries=200):
    """(pose, joint on its limit, tip, pitch) for each pitch joint and limit, away from full
    stretch (|sin q3| >= 0.1): of `tries` random poses each, those not stretched."""
    for joint in (1, 2, 3):
        for limit in (geom.lo[joint], geom.hi[joint]):
            for _ in range(tries):
                q = np.radians(rng.uniform(-120.0, 120.0, 5))
                q[joint] = limit
                q[4] = 0.0
                if abs(math.sin(q[2])) < 0.1:
                    continue
                tip, tool = derive.fk_arm5(geom, q)
                yaw = math.atan2(tip[1], tip[0])
                yield q, joint, tip, math.atan2(tool[0] * math.cos(yaw) + tool[1] * math.sin(yaw), tool[2])


def test_float32_pose_exactly_on_a_limit_stays_inside(single, report):
    """Poses with a pitch joint exactly on +-135: in float32 min motion must return that very pose.

    Away from full stretch (|sin q3| >= 0.1) float32 moves the solved angles by
    up to ~3e-6 rad; with LIMIT_EPS = 1e-6 about 0.6% of these poses came back
    JOINT_LIMIT or, worse, as the base turned half a turn.
    """
    geom = derive.Geometry("sim_arm5.json")
    arm = single["arm5"]
    out = [0.0] * 5
    rng = np.random.default_rng(11)
    count = 0
    worst = 0.0
    for q, joint, tip, pitch in poses_on_a_limit(geom, rng):
        target = [F32(tip[0]), F32(tip[1]), F32(tip[2]), F32(pitch)]
        st = arm.ik(target, out, [F32(v) for v in q], kinematics.MIN_MOTION)
        assert st == status.OK, (np.degrees(q), status.name(st))
        assert max(abs(float(out[i]) - q[i]) for i in range(5)) < 1e-4, (np.degrees(q), out)
        worst = max(worst, abs(float(out[joint])) - abs(q[joint]))
        count += 1
    assert count > 1000
    report("float32 emulation: %d poses exactly on a joint limit all solved in place; worst %.2g rad past "
           "the limit (LIMIT_EPS %g)" % (count, worst, kinematics.LIMIT_EPS))


def test_float32_grid_never_nan_and_honest(single, report):
    """2,000 arm5 and 2,000 planar targets in float32: no NaN; statuses as in double except at a threshold."""
    rng = np.random.default_rng(32)
    judged = 0
    worst_mm = 0.0
    for kind, board_file in (("planar", "sim_planar.json"), ("arm5", "sim_arm5.json")):
        geom = derive.Geometry(board_file)
        arm = single[kind]
        double_arm = solver_only(board_file)
        if kind == "planar":
            targets = rng.uniform(-200.0, 200.0, (2000, 2))
        else:
            yaw = rng.uniform(-math.pi, math.pi, 2000)
            r = rng.uniform(0.0, 400.0, 2000)
            targets = np.stack([r * np.cos(yaw), r * np.sin(yaw), rng.uniform(-100.0, 600.0, 2000),
                                rng.uniform(-math.pi, math.pi, 2000)], axis=1)
        out = [0.0] * arm.n
        ref = [0.0] * arm.n
        for t in targets:
            t32 = [F32(v) for v in t]
            st = arm.ik(t32, out, None, kinematics.PREFER_UP)
            st64 = double_arm.ik([float(v) for v in t32], ref, None, kinematics.PREFER_UP)
            if status.solved(st):
                assert type(out[0]) is F32 and all(math.isfinite(a) for a in out), t
                q = [float(a) for a in out]
                mm, rad = double_arm.fk_error([float(v) for v in t32], q)
                assert rad < 1e-4, (t, rad)
                if st == status.OK:
                    assert mm < 0.01, (t, mm)   # away from the singular band float32 costs microns
                    worst_mm = max(worst_mm, mm)
            if st != st64:
                # Only near a threshold, where single and double may round apart.
                assert near_threshold(geom, double_arm, [float(v) for v in t32], out, ref, st, st64), \
                    (t, status.name(st), status.name(st64))
            else:
                judged += 1
    assert judged > 3900
    report("float32 emulation: 4000 grid targets: no NaN, %d statuses as in double, the rest at a threshold; "
           "OK answers within %.2g mm" % (judged, worst_mm))


def near_threshold(geom, arm, target, q32, q64, st, st64):
    """True when the two statuses differ only because the target sits at a threshold."""
    pair = {st, st64}
    reach = geom.l1 + geom.l2
    if geom.kind == "planar":
        d = math.hypot(target[0], target[1])
    else:
        r = math.hypot(target[0], target[1])
        d = math.hypot(r - geom.l3 * math.sin(target[3]), target[2] - geom.base - geom.l3 * math.cos(target[3]))
    if pair == {status.SINGULAR, status.TOO_FAR}:
        return abs(d - reach) < 1e-3
    if pair == {status.OK, status.SINGULAR}:
        c2 = (d * d - geom.l1 ** 2 - geom.l2 ** 2) / (2 * geom.l1 * geom.l2)
        return abs(math.sqrt(max(0.0, 1 - c2 * c2)) - twolink.SINGULAR_SIN) < 1e-4
    if status.JOINT_LIMIT in pair:
        # The one that solved it found its answer a hair inside a limit.
        return min_slack(arm, q64 if status.solved(st64) else q32) < 1e-4
    return False


def min_slack(arm, q):
    """How far (rad) the angles q keep inside the limits."""
    return min(min(q[i] - arm.lo[i], arm.hi[i] - q[i]) for i in range(arm.n))


def test_float32_wrist_on_the_reach_sphere(single):
    """Arm5Solver with emulated float32: wrist exactly on the reach sphere is SINGULAR; 1e-4 outside TOO_FAR."""
    geom = derive.Geometry("sim_arm5.json")
    arm = single["arm5"]
    out = [0.0] * 5
    for k in (0.0, 1e-4):
        for _, t in reach_sphere_targets(geom, k, 134.0, F32):
            st = arm.ik(t, out, None, kinematics.PREFER_UP)
            if k:
                assert st == status.TOO_FAR, t
            else:
                assert st == status.SINGULAR, (t, status.name(st))
                assert all(math.isfinite(a) for a in out)


def test_vectors_in_float32(single, report):
    """Every shared vector solved with emulated float32: the same status; angles within float32 error."""
    import test_vectors
    runner = test_vectors.load_runner()
    worst = {"OK": 0.0, "SINGULAR": 0.0, "OK with a tool offset": 0.0}
    count = 0
    for name in test_vectors.FILES:
        doc = test_vectors.load_doc(name)
        arm = single[{"sim_planar.json": "planar", "sim_arm5.json": "arm5",
                      "sim_arm5_tool.json": "arm5_tool"}[doc["board"]]]
        for case in doc["cases"]:
            if any(isinstance(v, float) and abs(v) > FLOAT32_MAX for v in case["target"]):
                continue    # 1e200 is inf in float32: BAD_INPUT there, honestly
            f32_case = dict(case, target=[F32(v) if isinstance(v, float) else v for v in case["target"]])
            out = [0.0] * arm.n
            st = runner.solve(arm, f32_case, out)
            assert status.name(st) == case["status"], (case["id"], status.name(st))
            if case["q_deg"] is not None:
                off = max(abs(math.degrees(a) - b) for a, b in zip(out, case["q_deg"]))
                key = case["status"]
                if key == "OK" and doc["board"] == "sim_arm5_tool.json":
                    key = "OK with a tool offset"
                worst[key] = max(worst[key], off)
            count += 1
    assert worst["OK"] < 1e-3, worst
    # The offset adds a rotation and the base angle's asin(b / r): a few more roundings.
    assert worst["OK with a tool offset"] < 3e-3, worst
    report("float32 emulation: %d shared vectors, every status as in double; angles within %.2g deg "
           "(OK; %.2g deg with a tool offset) and %.2g deg (SINGULAR, where an angle goes with the square "
           "root of the rounding)" % (count, worst["OK"], worst["OK with a tool offset"], worst["SINGULAR"]))


def test_float32_overflow_is_too_far(single):
    """In float32 x*x overflows from 1.9e19 mm: still TOO_FAR, never BAD_INPUT or NaN."""
    with np.errstate(over="ignore"):
        for target in ([F32(1e20), F32(0.0), F32(300.0), F32(1.0)], [F32(-3e19), F32(3e19), F32(0.0), F32(0.0)]):
            assert single["arm5"].ik(target, [0.0] * 5) == status.TOO_FAR
        assert single["planar"].ik([F32(1e20), F32(1e20)], [0.0] * 2) == status.TOO_FAR


def test_float32_tool_offset_never_nan_and_honest(single, report):
    """2,000 targets for the arm with a tool offset (rolls included) in float32: no NaN; every
    status as in double, or one a nudge of the target in double also gives (a threshold)."""
    rng = np.random.default_rng(33)
    arm = single["arm5_tool"]
    double_arm = solver_only("sim_arm5_tool.json")
    yaw = rng.uniform(-math.pi, math.pi, 2000)
    r = np.concatenate([rng.uniform(0.0, 20.0, 300), rng.uniform(0.0, 400.0, 1700)])
    targets = np.stack([r * np.cos(yaw), r * np.sin(yaw), rng.uniform(-100.0, 600.0, 2000),
                        rng.uniform(-math.pi, math.pi, 2000)], axis=1)
    rolls = rng.uniform(-2.3, 2.3, 2000)
    out = [0.0] * 5
    ref = [0.0] * 5
    judged = 0
    worst_mm = 0.0
    for t, roll in zip(targets, rolls):
        t32 = [F32(v) for v in t]
        t64 = [float(v) for v in t32]
        current = [F32(0.0)] * 4 + [F32(roll)]
        st = arm.ik(t32, out, current, kinematics.PREFER_UP)
        st64 = double_arm.ik(t64, ref, [0.0] * 4 + [float(current[4])], kinematics.PREFER_UP)
        if status.solved(st):
            assert all(math.isfinite(a) for a in out), t
            mm, rad = double_arm.fk_error(t64, [float(a) for a in out])
            assert rad < 1e-4, (t, rad)
            if st == status.OK:
                assert mm < 0.02, (t, mm)
                worst_mm = max(worst_mm, mm)
        if st == st64:
            judged += 1
            continue
        nudged = set()
        for k in range(4):
            for d in (1e-3, -1e-3) if k < 3 else (1e-5, -1e-5):
                moved = list(t64)
                moved[k] += d
                nudged.add(double_arm.ik(moved, ref, [0.0] * 4 + [float(current[4])], kinematics.PREFER_UP))
        assert st in nudged, (t, roll, status.name(st), status.name(st64))
    assert judged > 1950
    report("float32 emulation, tool offset: 2000 targets: no NaN, %d statuses as in double, the rest at "
           "a threshold; OK answers within %.2g mm" % (judged, worst_mm))


# --- 3. the real thing: single-precision floats on a board-like interpreter --

def board_answers(interpreter, folder, board_file, cases):
    """[(status, angles in degrees or None)] of the firmware's ik for each case (vectors format:
    target with an arm5 pitch in degrees, current_deg, rule), run by tests/mp/run_vectors.py on
    the board-like interpreter: the board's own float parsing and single-precision arithmetic."""
    import json
    import subprocess
    from armctl import upy
    from conftest import MP_SCRIPTS
    doc = folder / "cases.json"
    doc.write_text(json.dumps({"board": board_file, "cases": [dict(c, id="c%d" % i) for i, c in enumerate(cases)]}))
    run = subprocess.run([interpreter, str(MP_SCRIPTS / "run_vectors.py"), str(doc), str(BOARDS)],
                         capture_output=True, text=True, timeout=300, env=upy.env())
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[-1] == "done %d" % len(cases)
    out = []
    for line in lines[:-1]:
        words = line.split()
        out.append((words[1], [float(v) for v in words[2:]] or None))
    return out


def case(target, rule="up", current_deg=None):
    return {"target": [float(v) for v in target], "rule": rule, "current_deg": current_deg}


def test_board_float32_planar_boundaries(boardlike_upy, tmp_path, report):
    """Targets exactly on the outer boundary: SINGULAR (or JOINT_LIMIT where the shoulder cannot
    face them), never NaN, FK within 2e-3 mm; 1e-4 outside TOO_FAR; 1e-4 inside the hole TOO_CLOSE.
    The board parses the decimal targets itself (its float parser, not numpy's rounding)."""
    geom = derive.Geometry("sim_planar.json")
    reach = geom.l1 + geom.l2
    rings = {"on": planar_ring(reach), "out": planar_ring(reach * (1 + 1e-4)),
             "hole": planar_ring(abs(geom.l1 - geom.l2) * (1 - 1e-4))}
    cases = [case(t, "down") for ring in rings.values() for t in ring]
    answers = board_answers(boardlike_upy, tmp_path, "sim_planar.json", cases)
    on, out, hole = answers[:720], answers[720:1440], answers[1440:]
    worst = 0.0
    for (x, y), (st, q) in zip(rings["on"], on):
        assert st == ("SINGULAR" if shoulder_allows(geom, x, y) else "JOINT_LIMIT"), ((x, y), st)
        if q is not None:
            assert all(math.isfinite(a) for a in q)
            worst = max(worst, float(np.hypot(*(derive.fk_planar(geom, np.radians(q)) - [x, y]))))
    assert worst < 2e-3, worst
    assert {st for st, _ in out} == {"TOO_FAR"}
    assert {st for st, _ in hole} == {"TOO_CLOSE"}
    report("float32 on the board-like interpreter: 720 planar targets on the outer boundary SINGULAR or "
           "JOINT_LIMIT, never NaN, FK within %.2g mm; 1e-4 outside TOO_FAR, inside the hole TOO_CLOSE" % worst)


def test_board_float32_wrist_on_the_reach_sphere(boardlike_upy, tmp_path):
    geom = derive.Geometry("sim_arm5.json")
    groups = {k: list(reach_sphere_targets(geom, k, 134.0, float)) for k in (0.0, 1e-4)}
    cases = [case(t[:3] + [math.degrees(t[3])]) for k in (0.0, 1e-4) for _, t in groups[k]]
    answers = board_answers(boardlike_upy, tmp_path, "sim_arm5.json", cases)
    n = len(groups[0.0])
    for (_, t), (st, q) in zip(groups[0.0], answers[:n]):
        assert st == "SINGULAR", (t, st)
        assert all(math.isfinite(a) for a in q)
    assert {st for st, _ in answers[n:]} == {"TOO_FAR"}


def test_board_float32_pose_exactly_on_a_limit_stays_inside(boardlike_upy, tmp_path, report):
    """A pitch joint exactly on its limit, away from full stretch: min motion from that very pose
    gives it back (OK, within 1e-4 rad), never JOINT_LIMIT or the base turned half a turn."""
    geom = derive.Geometry("sim_arm5.json")
    rng = np.random.default_rng(11)
    poses, cases = [], []
    for q, _, tip, pitch in poses_on_a_limit(geom, rng):
        poses.append(q)
        cases.append(case(list(tip) + [math.degrees(pitch)], "min", [math.degrees(a) for a in q]))
    assert len(poses) > 1000
    answers = board_answers(boardlike_upy, tmp_path, "sim_arm5.json", cases)
    worst = 0.0
    for q, (st, got) in zip(poses, answers):
        assert st == "OK", (np.degrees(q), st)
        off = max(abs(math.radians(a) - b) for a, b in zip(got, q))
        assert off < 1e-4, (np.degrees(q), got)
        worst = max(worst, off)
    report("float32 on the board-like interpreter: %d poses exactly on a joint limit solved in place, "
           "within %.2g rad" % (len(poses), worst))


def test_board_float32_overflow(boardlike_upy, tmp_path):
    """x*x overflows float32 from 1.9e19 mm: TOO_FAR, never NaN; 1e200 is inf once parsed: BAD_INPUT."""
    cases = [case([1e20, 0.0, 300.0, 57.3]), case([-3e19, 3e19, 0.0, 0.0]), case([1e200, 0.0, 0.0, 0.0])]
    answers = board_answers(boardlike_upy, tmp_path, "sim_arm5.json", cases)
    assert [st for st, _ in answers] == ["TOO_FAR", "TOO_FAR", "BAD_INPUT"]
    planar = board_answers(boardlike_upy, tmp_path, "sim_planar.json", [case([1e20, 1e20])])
    assert planar == [("TOO_FAR", None)]


def test_board_float32_grid_never_nan_and_honest(boardlike_upy, tmp_path, report):
    """2,000 planar and 2,000 arm5 targets: no NaN; every status as the double solver gives for the
    same float32 target, except at a threshold (near_threshold, as for the emulation)."""
    rng = np.random.default_rng(32)
    judged = 0
    for kind, board_file in (("planar", "sim_planar.json"), ("arm5", "sim_arm5.json")):
        geom = derive.Geometry(board_file)
        double_arm = solver_only(board_file)
        if kind == "planar":
            targets = rng.uniform(-200.0, 200.0, (2000, 2))
            docs = [case([f32(v) for v in t]) for t in targets]
        else:
            yaw = rng.uniform(-math.pi, math.pi, 2000)
            r = rng.uniform(0.0, 400.0, 2000)
            targets = np.stack([r * np.cos(yaw), r * np.sin(yaw), rng.uniform(-100.0, 600.0, 2000),
                                rng.uniform(-math.pi, math.pi, 2000)], axis=1)
            docs = [case([f32(v) for v in t[:3]] + [math.degrees(f32(t[3]))]) for t in targets]
        answers = board_answers(boardlike_upy, tmp_path, board_file, docs)
        ref = [0.0] * double_arm.n
        for t, (st, q) in zip(targets, answers):
            t32 = [f32(v) for v in t]
            st64 = status.name(double_arm.ik(t32, ref, None, kinematics.PREFER_UP))
            q32 = None if q is None else [math.radians(a) for a in q]
            if q32 is not None:
                assert all(math.isfinite(a) for a in q32), t
                mm, rad = double_arm.fk_error(t32, q32)
                assert rad < 1e-4 and (st != "OK" or mm < 0.01), (t, mm, rad)
            if st == st64:
                judged += 1
            else:
                assert near_threshold(geom, double_arm, t32, q32, ref, getattr(status, st), getattr(status, st64)), \
                    (t, st, st64)
    assert judged > 3900
    report("float32 on the board-like interpreter: 4000 grid targets, no NaN, %d statuses as in double, the "
           "rest at a threshold" % judged)


def test_float32_answers_on_a_limit_are_inside_every_limit_check(single):
    """One joint-limit tolerance: a float32 answer for a pose on a limit, which float32 moves
    past it, is inside the limits for the firmware's check (joints, pose set, path add,
    the solver) and for the host's chain of the same arm (its fallback and numik)."""
    from armctl import chain as chain_mod
    from conftest import solver_only
    geom = derive.Geometry("sim_arm5.json")
    arm = single["arm5"]
    fw = solver_only("sim_arm5.json")
    host = chain_mod.from_board(fw)
    out = [0.0] * 5
    past = 0
    for q, joint, tip, pitch in poses_on_a_limit(geom, np.random.default_rng(12), tries=60):
        target = [F32(tip[0]), F32(tip[1]), F32(tip[2]), F32(pitch)]
        if arm.ik(target, out, [F32(v) for v in q], kinematics.MIN_MOTION) != status.OK:
            continue
        answer = [float(F32(v)) for v in out]
        assert fw.within_limits(answer), answer
        assert host.within_limits(answer), answer
        past += not fw.lo[joint] <= answer[joint] <= fw.hi[joint]
    assert past > 10       # answers past the limit itself, which a stricter check refused
