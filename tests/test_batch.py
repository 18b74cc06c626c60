# SPDX-License-Identifier: MIT
"""armctl.batch (numpy twin of the firmware's analytic IK) against the firmware itself.

The twin exists only for speed, so it must give the firmware's answer on
every input: the same status, the same angles (to rounding: numpy's and
libm's trigonometry may differ in the last bit) and the same elbow branch.
Checked on dense grids, on rings exactly on the annulus boundaries and the
singular threshold, on random targets with every branch rule, and on the
shared vectors tests/vectors/*.json, whose expected answers were derived
without the firmware. Every solved answer must also pass a forward-kinematics
round trip.
"""

import json
import math

import numpy as np
import pytest

from conftest import VECTORS, board_without_zones

from armctl import batch, batch_arm5, batch_general, batch_math
from armfw import kinematics, status, twolink
from armfw.kinematics import MIN_MOTION, PREFER_UP, PREFER_DOWN, UP, DOWN

ANGLE_TOL = 1e-9          # rad: rounding differences only
FK_TOL_MM = 1e-6
RULES = (MIN_MOTION, PREFER_UP, PREFER_DOWN)


def load(name):
    # batch is the twin of the solver alone: zones off.
    return board_without_zones(name)


def firmware_answers(arm, targets, current, rule):
    """The firmware's answer for every row: (status, q or NaN, elbow or 0)."""
    n = len(targets)
    st = np.empty(n, dtype=int)
    q = np.full((n, arm.n), np.nan)
    elbow = np.zeros(n, dtype=int)
    for i, t in enumerate(targets.tolist()):
        cur = None
        if current is not None:
            cur = list(current) if np.ndim(current) == 1 else current[i].tolist()
        out = [0.0] * arm.n
        st[i] = arm.ik(t, out, cur, rule)
        if status.solved(st[i]):
            q[i] = out
            elbow[i] = arm.elbow
    return st, q, elbow


def assert_same(arm, targets, current, rule):
    st_b, q_b, el_b = batch.ik(arm, targets, current, rule)
    st_f, q_f, el_f = firmware_answers(arm, targets, current, rule)
    differ = np.flatnonzero(st_b != st_f)
    assert len(differ) == 0, "status differs for %d targets, first %s: batch %s, firmware %s" % (
        len(differ), targets[differ[0]].tolist(), status.name(st_b[differ[0]]), status.name(st_f[differ[0]]))
    solved = np.array([status.solved(s) for s in st_f], dtype=bool)
    assert np.all(np.isnan(q_b[~solved]))
    if np.any(solved):
        assert np.max(np.abs(q_b[solved] - q_f[solved])) < ANGLE_TOL
    assert np.array_equal(el_b, el_f)
    return st_f, q_b, solved


def random_targets(arm, count, rng):
    """Half FK of random in-limit poses (reachable), half uniform in a box past the reach."""
    half = count // 2
    poses = arm.lo + (np.array(arm.hi) - arm.lo) * rng.random((half, arm.n))
    # fk returns its out list: a fresh one per pose.
    reach = np.array([arm.fk(p.tolist(), [0.0] * len(arm.targets)) for p in poses])
    span = 1.2 * (arm.reach + getattr(arm, "l3", 0.0))
    box = rng.uniform(-span, span, (count - half, len(arm.targets)))
    if arm.kind == "arm5":
        box[:, 2] += arm.base
        box[:, 3] = rng.uniform(-3 * math.pi, 3 * math.pi, count - half)
    return np.concatenate([reach, box])


# --- the two-link core ---

@pytest.mark.parametrize("l1, l2", [(100.0, 80.0), (126.14, 126.14), (50.0, 120.0)])
def test_twolink_grid_and_boundary_rings(l1, l2):
    reach = l1 + l2
    g = np.linspace(-1.1 * reach, 1.1 * reach, 241)
    gx, gy = np.meshgrid(g, g)
    x = [gx.ravel()]
    y = [gy.ravel()]
    # Rings exactly on, just inside and just outside both annulus boundaries,
    # and on both sides of the singular threshold |sin t2| = SINGULAR_SIN.
    angles = np.linspace(-math.pi, math.pi, 97)
    c_singular = math.sqrt(1.0 - twolink.SINGULAR_SIN ** 2)
    radii = []
    for r in (reach, abs(l1 - l2)):
        radii += [r * f for f in (1.0, 1 - 1e-7, 1 + 1e-7, 1 - 1e-5, 1 + 1e-5)]
    for c2 in (c_singular, -c_singular):
        r = math.sqrt(l1 * l1 + l2 * l2 + 2 * l1 * l2 * c2)
        radii += [r * f for f in (1.0, 1 - 1e-4, 1 + 1e-4)]
    for r in radii:
        x.append(r * np.cos(angles))
        y.append(r * np.sin(angles))
    x = np.concatenate(x)
    y = np.concatenate(y)
    seen = set()
    for elbow in (1, -1):
        st, t1, t2 = batch_general.solve_twolink(l1, l2, x, y, elbow)
        for i in range(len(x)):
            out = [float("nan"), float("nan")]
            want = twolink.solve(l1, l2, float(x[i]), float(y[i]), elbow, out)
            seen.add(want)
            assert st[i] == want, (x[i], y[i], elbow)
            if status.solved(want):
                assert abs(t1[i] - out[0]) < ANGLE_TOL and abs(t2[i] - out[1]) < ANGLE_TOL
                assert math.copysign(1.0, math.sin(t2[i]) or elbow) == elbow
            else:
                assert math.isnan(t1[i]) and math.isnan(t2[i])
    assert {status.OK, status.SINGULAR, status.TOO_FAR} <= seen
    if l1 != l2:
        assert status.TOO_CLOSE in seen


def test_twolink_bad_input():
    st, t1, t2 = batch_general.solve_twolink(100.0, 80.0, [np.nan, np.inf, 1e200, 120.0], [0.0, 0.0, 0.0, 30.0], 1)
    assert st.tolist() == [status.BAD_INPUT, status.BAD_INPUT, status.TOO_FAR, status.OK]
    assert np.isnan(t1[:3]).all() and np.isfinite(t1[3])


# --- whole arms, every rule ---

@pytest.mark.parametrize("board_name", ["sim_planar.json", "sim_arm5.json", "sim_arm5_tool.json"])
@pytest.mark.parametrize("rule", RULES)
def test_ik_matches_firmware_on_random_targets(board_name, rule):
    arm = load(board_name).solver
    rng = np.random.default_rng(100 + rule)
    targets = random_targets(arm, 2000, rng)
    per_row = arm.lo + (np.array(arm.hi) - arm.lo) * rng.random((len(targets), arm.n))
    seen = set()
    for current in (None, list(arm.home), per_row):
        st, q, solved = assert_same(arm, targets, current, rule)
        seen.update(st.tolist())
        for i in np.flatnonzero(solved)[:300]:
            mm, rad = arm.fk_error(targets[i].tolist(), q[i].tolist())
            assert mm < FK_TOL_MM and rad < 1e-9
            assert arm.within_limits(q[i].tolist())
    assert {status.OK, status.TOO_FAR, status.JOINT_LIMIT} <= seen


def arm5_with_limits(lo_deg, hi_deg):
    """The shipped 5-joint arm's links with other joint limits (degrees)."""
    arm = load("sim_arm5.json").solver
    return kinematics.Arm5Solver(arm.l1, arm.l2, arm.l3, arm.base, arm.names,
                                 [math.radians(a) for a in lo_deg], [math.radians(a) for a in hi_deg], arm.home)


# The minimum-motion path has shortcuts that hold for some limits only: symmetric
# limits share the turned candidates' fits, limits inside +-180 degrees let the
# yaw and joint-3 rows skip the turn arithmetic. Limits where each one does not hold:
LIMIT_SHAPES = {
    "asymmetric": ([-100, -135, -120, -90, -135], [170, 110, 135, 150, 135]),
    "past half a turn": ([-200, -150, -190, -170, -135], [100, 150, 120, 170, 135]),
    "a whole turn and more": ([-135, -200, -135, -135, -135], [135, 200, 135, 135, 135]),
}


@pytest.mark.parametrize("shape", sorted(LIMIT_SHAPES))
def test_min_motion_with_other_limits_matches_firmware(shape, monkeypatch):
    arm = arm5_with_limits(*LIMIT_SHAPES[shape])
    rng = np.random.default_rng(7)
    targets = random_targets(arm, 1501, rng)
    per_row = arm.lo + (np.array(arm.hi) - arm.lo) * rng.random((len(targets), arm.n))
    # Blocks of 301 targets, the last one of 297: every block boundary is crossed.
    monkeypatch.setattr(batch_arm5, "BLOCK", 333)
    seen = set()
    for current in (None, list(arm.home), per_row):
        st, q, solved = assert_same(arm, targets, current, MIN_MOTION)
        seen.update(st.tolist())
        for i in np.flatnonzero(solved)[:200]:
            assert arm.within_limits(q[i].tolist())
    assert {status.OK, status.TOO_FAR, status.JOINT_LIMIT} <= seen
    # On the base axis the yaw is the current one, whole turns off or past any digits below a turn.
    on_axis = np.array([[0.0, 0.0, arm.base + arm.l1 + arm.l2 + arm.l3 - 40.0, 0.3]] * 5)
    current = np.array([[y, 0.1, 0.2, 0.1, 0.0] for y in (1.5, 5.0, -20.0, 1e3, 1e16)])
    assert_same(arm, on_axis, current, MIN_MOTION)


def test_min_motion_blocks_give_the_answers_of_one_block(monkeypatch):
    arm = load("sim_arm5.json").solver
    rng = np.random.default_rng(8)
    targets = random_targets(arm, 3000, rng)
    current = arm.lo + (np.array(arm.hi) - arm.lo) * rng.random((len(targets), arm.n))
    whole = batch.ik(arm, targets, current)
    monkeypatch.setattr(batch_arm5, "BLOCK", 256)
    for part, one in zip(batch.ik(arm, targets, current), whole):
        assert np.array_equal(part, one, equal_nan=True)


def test_min_motion_odd_inputs_match_firmware():
    arm = load("sim_arm5.json").solver
    top = arm.base + arm.l1 + arm.l2 + arm.l3 - 40.0
    rng = np.random.default_rng(9)
    reach = random_targets(arm, 200, rng)[:100]
    # Pitch many turns off (sin and cos from libm, not from tan(pitch / 2)).
    turned = reach.copy()
    turned[:, 3] += 2 * math.pi * rng.integers(-40, 40, len(turned))
    # On the base axis: the yaw is the current one, however many turns off.
    on_axis = np.array([[0.0, 0.0, top, 0.3]] * 6)
    current = np.array([[y, 0.1, 0.2, 0.1, 0.0] for y in (0.4, 3.0, -3.1, 7.0, -20.0, 1e3)])
    assert_same(arm, on_axis, current, MIN_MOTION)
    assert_same(arm, turned, None, MIN_MOTION)
    # Wrist rolls: inside, outside with no turn fitting (JOINT_LIMIT), one turn off
    # (the general path answers), and a current pose 1e200 rad away (costs tie).
    for roll in (0.3, math.pi, 2.0 - 2 * math.pi):
        current = np.tile([0.1, 0.2, 0.3, 0.1, roll], (len(reach), 1))
        st, _, _ = assert_same(arm, reach, current, MIN_MOTION)
        if roll == math.pi:
            assert set(st.tolist()) <= {status.JOINT_LIMIT, status.TOO_FAR, status.TOO_CLOSE}
    assert_same(arm, reach, [1e200, -1e200, 1e200, 0.0, 0.0], MIN_MOTION)
    for current in (None, arm.home, np.empty((0, 5))):
        st, q, el = batch.ik(arm, np.empty((0, 4)), current)
        assert st.shape == (0,) and q.shape == (0, 5) and el.shape == (0,)


def test_sin_cos_by_half_angle_tangent():
    angles = np.concatenate([np.linspace(-batch_math.SIN_COS_BY_TAN, batch_math.SIN_COS_BY_TAN, 100001),
                             [0.0, math.pi, -math.pi, math.pi / 2, -math.pi / 2, 1e-300,
                              math.nextafter(math.pi, 0.0), math.nextafter(math.pi, 4.0)]])
    sin = np.empty_like(angles)
    cos = np.empty_like(angles)
    batch_math.sin_cos(angles, sin, cos, np.empty_like(angles))
    want_sin = np.array([math.sin(a) for a in angles.tolist()])
    want_cos = np.array([math.cos(a) for a in angles.tolist()])
    assert np.max(np.abs(sin - want_sin)) <= 4.5e-16 and np.max(np.abs(cos - want_cos)) <= 4.5e-16
    # The sign of sin decides a pitch of +pi against -pi: it must be libm's.
    assert np.array_equal(np.signbit(sin[want_sin != 0]), np.signbit(want_sin[want_sin != 0]))
    # Past SIN_COS_BY_TAN: libm's own.
    big = np.array([0.5, 50.0, -1e6, 1e16])
    batch_math.sin_cos(big, sin[:4], cos[:4], np.empty(4))
    assert sin[:4].tolist() == [math.sin(a) for a in big] and cos[:4].tolist() == [math.cos(a) for a in big]



@pytest.mark.parametrize("far, near", [("arm5", None), (300.0, 50.0), (252.28, 0.1), (1e-3, 1e-4),
                                       (123.456789, 23.456), (5.0, -0.5)])
def test_reach_bounds_on_r2_give_the_square_roots_verdicts(far, near):
    """sqrt(r2) > far and sqrt(r2) < near (armfw's tests) against r2 > and <= the
    bounds the twin compares with, on every r2 within 3000 ulp of each bound and square."""
    if far == "arm5":
        links = load("sim_arm5.json").solver._links
        far, near = links._far, links._near
    beyond_far, below_near = batch_math.reach_bounds_squared(far, near)
    r2 = []
    for centre in (beyond_far, below_near, far * far, near * near):
        if centre > 0.0:
            v = centre
            for _ in range(3000):
                v = math.nextafter(v, 0.0)
            for _ in range(6001):
                r2.append(v)
                v = math.nextafter(v, math.inf)
    r2 = np.array(r2 + [0.0, math.inf])
    r = np.sqrt(r2)
    assert np.array_equal(r2 > beyond_far, r > far)
    assert np.array_equal(r2 <= below_near, r < near)
    # Each bound is a verdict's last r2: the next one up flips it.
    assert math.sqrt(beyond_far) <= far < math.sqrt(math.nextafter(beyond_far, math.inf))
    if near > 0.0:
        assert math.sqrt(below_near) < near <= math.sqrt(math.nextafter(below_near, math.inf))


# --- the vectorised atan2 (used where numpy's arctan2 calls libm per element) ---

def own_atan2(y, x):
    y = np.asarray(y, float)
    x = np.asarray(x, float)
    out = np.empty_like(y)
    batch_math.atan2(y, x, out, [np.empty_like(y) for _ in range(3)],
                 [np.empty(y.shape, dtype=bool) for _ in range(3)],
                 [np.empty(y.shape, dtype=np.int8) for _ in range(2)])
    return out


def libm_atan2(y, x):
    return np.array([math.atan2(a, b) for a, b in zip(np.ravel(y).tolist(), np.ravel(x).tolist())]).reshape(np.shape(y))


def test_own_atan2_within_two_ulp_of_libm():
    rng = np.random.default_rng(13)
    n = 400_000
    sign = lambda: rng.choice([-1.0, 1.0], n)
    # Anywhere; every magnitude; on and near the octant boundaries |y| = |x|,
    # |y| = tan(pi / 8) |x| (where the reduction switches) and the axes.
    x = rng.standard_normal(n)
    ratio = np.concatenate([np.ones(n // 4), np.full(n // 4, math.tan(math.pi / 8)),
                            np.full(n - n // 2, 1e-9)]) * (1.0 + rng.uniform(-1e-12, 1e-12, n))
    ys = [rng.standard_normal(n), x * ratio * sign(), x / ratio * sign(),
          rng.uniform(0.5, 1, n) * 10.0 ** rng.integers(-300, 300, n) * sign()]
    xs = [x, x, x, rng.uniform(0.5, 1, n) * 10.0 ** rng.integers(-300, 300, n) * sign()]
    y = np.concatenate(ys)
    x = np.concatenate(xs)
    got = own_atan2(y, x)
    want = libm_atan2(y, x)
    ulps = np.abs(got - want) / np.spacing(np.abs(want))
    assert np.max(ulps) <= 2.0
    assert np.mean(got != want) < 0.1          # most answers are libm's to the bit
    # The quadrant is libm's everywhere.
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert np.array_equal(np.abs(got) > math.pi / 2, np.abs(want) > math.pi / 2)


def test_own_atan2_special_cases_are_libm_s():
    values = [0.0, -0.0, 5e-324, -5e-324, 1e-300, 1.0, -1.0, 3.5, -2.0, 1e300, -1e300,
              math.inf, -math.inf, math.nan]
    y, x = (a.ravel() for a in np.meshgrid(values, values))
    got = own_atan2(y, x)
    want = libm_atan2(y, x)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    # Where an operand is a zero or infinite, bit for bit, the sign of zero
    # included (atan2(-0, -1) is -pi, atan2(-0, +0) is -0); elsewhere within 2 ulp.
    special = ~nan & ((x == 0) | (y == 0) | np.isinf(x) | np.isinf(y))
    assert np.array_equal(got[special].view(np.int64), want[special].view(np.int64))
    assert np.all(np.abs(got - want)[~nan] <= 2 * np.spacing(np.abs(want[~nan])))
    assert own_atan2([-0.0, 0.0], [-1.0, 0.0]).tolist() == [-math.pi, 0.0]


def test_own_atan2_is_chosen_where_numpy_calls_libm():
    rng = np.random.default_rng(3)
    y, x = rng.uniform(-5, 5, (2, 5000))
    numpy_is_libm = np.array_equal(np.arctan2(y, x), libm_atan2(y, x))
    assert batch_math.OWN_ATAN2 == numpy_is_libm


@pytest.mark.parametrize("own_atan2_on", [True, False])
def test_min_motion_with_either_atan2_matches_firmware_at_the_limits(own_atan2_on, monkeypatch):
    """The decisions an ulp can flip: joints exactly on their limits or an ulp
    past (then JOINT_LIMIT, or another candidate), both elbow branches, targets
    on the octant boundaries of the base yaw. With numpy's arctan2 and with
    batch_math.atan2, whichever this CPU would use."""
    monkeypatch.setattr(batch_arm5, "OWN_ATAN2", own_atan2_on)
    arm = load("sim_arm5.json").solver
    rng = np.random.default_rng(21)
    n = 3000
    lo = np.array(arm.lo)
    hi = np.array(arm.hi)
    poses = lo + (hi - lo) * rng.random((n, arm.n))
    for j in range(4):
        pick = rng.integers(0, 6, n)
        on = [lo[j], hi[j], np.nextafter(lo[j], -9.0), np.nextafter(hi[j], 9.0), 0.0]
        for k, value in enumerate(on):
            poses[pick == k, j] = value
    targets = np.array([arm.fk(p.tolist(), [0.0] * 4) for p in poses])
    # Base yaw on the diagonals and axes (|y| = |x|, y = 0, x = 0).
    diag = targets[:300].copy()
    diag[:100, 1] = diag[:100, 0] * rng.choice([-1.0, 1.0], 100)
    diag[100:200, 1] = 0.0 * rng.choice([-1.0, 1.0], 100)
    diag[200:, 0] = 0.0 * rng.choice([-1.0, 1.0], 100)
    targets = np.concatenate([targets, diag])
    seen = set()
    for current in (None, list(arm.home), arm.lo + (hi - lo) * rng.random((len(targets), arm.n))):
        st, q, solved = assert_same(arm, targets, current, MIN_MOTION)
        seen.update(st.tolist())
    assert {status.OK, status.JOINT_LIMIT} <= seen


def test_rules_choose_the_branch():
    arm = load("sim_planar.json").solver
    targets = np.array([[120.0, 60.0], [60.0, 120.0], [-20.0, 140.0]])
    _, _, up = batch.ik(arm, targets, None, "up")
    _, q_down, down = batch.ik(arm, targets, None, "down")
    assert up.tolist() == [UP] * 3 and down.tolist() == [DOWN] * 3
    assert np.all(q_down[:, 1] > 0)      # elbow down is t2 > 0 on the planar arm
    # Minimum motion from a pose on the down branch stays on it.
    _, _, near = batch.ik(arm, targets, q_down[0], MIN_MOTION)
    assert near[0] == DOWN


def test_arm5_target_on_base_axis_keeps_current_yaw():
    arm = load("sim_arm5.json").solver
    top = arm.base + arm.l1 + arm.l2 + arm.l3 - 40.0
    targets = np.array([[0.0, 0.0, top, 0.0]] * 2)
    current = np.array([[0.4, 0.0, 0.1, 0.0, 0.2], [-0.7, 0.0, 0.1, 0.0, 0.0]])
    st, q, solved = assert_same(arm, targets, current, MIN_MOTION)
    assert np.all(solved)
    assert q[:, 0] == pytest.approx([0.4, -0.7]) and q[:, 4] == pytest.approx([0.2, 0.0])


def test_bad_rows_leave_the_others_alone():
    arm = load("sim_arm5.json").solver
    good = np.array([[157.3, 0.0, 342.4, math.pi / 2], [250.0, -60.0, 200.0, math.pi / 2]])
    mixed = np.array([good[0], [np.nan, 0, 300, 1.0], good[1], [100.0, 0, np.inf, 1.0]])
    st, q, el = batch.ik(arm, mixed)
    st_alone, q_alone, _ = batch.ik(arm, good)
    assert st.tolist() == [st_alone[0], status.BAD_INPUT, st_alone[1], status.BAD_INPUT]
    assert status.solved(st_alone[0]) and status.solved(st_alone[1])
    assert np.array_equal(q[[0, 2]], q_alone)
    assert np.isnan(q[[1, 3]]).all() and el[1] == el[3] == 0
    # A bad current pose spoils only its own row, as in the firmware.
    current = np.array([arm.home, arm.home, [0, 0, np.nan, 0, 0], arm.home], float)
    st, _, _ = batch.ik(arm, np.array([good[0], good[1], good[0], good[1]]), current)
    assert st.tolist() == [st_alone[0], st_alone[1], status.BAD_INPUT, st_alone[1]]


def test_huge_finite_targets_are_too_far():
    for name, huge in (("sim_planar.json", [[1e200, 0.0], [3e154, 3e154]]),
                       ("sim_arm5.json", [[1e200, 0.0, 100.0, 1.0], [3e154, 3e154, 0.0, 0.0],
                                          [100.0, 0.0, 1e300, 0.0]])):
        arm = load(name).solver
        st, _, _ = assert_same(arm, np.array(huge), None, MIN_MOTION)
        assert st.tolist() == [status.TOO_FAR] * len(huge)


def test_shapes_are_checked():
    arm = load("sim_arm5.json").solver
    with pytest.raises(ValueError):
        batch.ik(arm, np.zeros((3, 3)))
    with pytest.raises(ValueError):
        batch.ik(arm, np.zeros((3, 4)), current=np.zeros(4))
    with pytest.raises(ValueError):
        batch.ik(arm, np.zeros((3, 4)), rule="sideways")


# --- the shared vectors (expected answers derived without the firmware) ---

def _number(v):
    """A vector file's number (strings "nan"/"inf"/"-inf" included), or None."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, str):
        return float(v) if v in ("nan", "inf", "-inf") else None
    return float(v)


def numeric_cases(doc, arm):
    """Cases the batch API can express: numeric targets and poses of the right length."""
    out = []
    for case in doc["cases"]:
        target = [_number(v) for v in case["target"]] if isinstance(case["target"], list) else None
        if target is None or None in target or len(target) != len(arm.targets):
            continue
        current = case["current_deg"]
        if current is not None:
            current = [_number(v) for v in current]
            if None in current or len(current) != arm.n:
                continue
            current = [math.radians(v) for v in current]
        if arm.kind == "arm5":
            target[3] = math.radians(target[3])
        out.append((case, target, current))
    return out


@pytest.mark.parametrize("vector_file", ["planar.json", "arm5.json", "arm5_tool.json"])
def test_shared_vectors(vector_file):
    path = VECTORS / vector_file
    if not path.exists():
        pytest.fail("%s is missing" % path)
    doc = json.loads(path.read_text())
    arm = load(doc["board"]).solver
    cases = numeric_cases(doc, arm)
    assert len(cases) >= 0.9 * len(doc["cases"]) - 10
    for case, target, current in cases:
        rule = case["rule"]
        st, q, _ = batch.ik(arm, np.array([target]), None if current is None else np.array([current]), rule)
        assert status.name(st[0]) == case["status"], case.get("id")
        out = [0.0] * arm.n
        assert arm.ik(target, out, current, batch._rule(rule)) == st[0], case.get("id")
        if status.solved(st[0]):
            tol = math.radians(case.get("tol_deg", 1e-6)) + ANGLE_TOL
            assert np.max(np.abs(q[0] - np.radians(case["q_deg"]))) <= tol, case.get("id")
            assert np.max(np.abs(q[0] - out)) < ANGLE_TOL
