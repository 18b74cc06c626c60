# SPDX-License-Identifier: MIT
"""The kinematics core: hand-calculated cases, branch choice, hypothesis properties.

Expected numbers are worked out in the comments (or, for the properties, by
the numpy forward kinematics of tests/derive_vectors.py), never taken from the
solver's own output.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

from conftest import solver_only

import derive_vectors as derive
from armfw import kinematics, numeric, status, twolink
from armfw.kinematics import DOWN, MIN_MOTION, PREFER_DOWN, PREFER_UP, UP

# Properties over the whole joint space: the solver alone, without keep-out zones.
PLANAR = solver_only("sim_planar.json")
ARM5 = solver_only("sim_arm5.json")
G_PLANAR = derive.Geometry("sim_planar.json")
G_ARM5 = derive.Geometry("sim_arm5.json")
D = math.radians


def solve(arm, target, rule=PREFER_UP, current=None):
    out = [0.0] * arm.n
    s = arm.ik(target, out, current, rule)
    return s, [math.degrees(a) for a in out]


def arm5_target(q):
    """(x, y, z, pitch rad in the plane facing the target) of joints q (rad), by numpy FK."""
    tip, tool = derive.fk_arm5(G_ARM5, np.asarray(q, float))
    yaw = math.atan2(tip[1], tip[0])
    return [float(tip[0]), float(tip[1]), float(tip[2]),
            math.atan2(tool[0] * math.cos(yaw) + tool[1] * math.sin(yaw), tool[2])]


def arm5_misses(target, q, current=None):
    """(mm, rad) by which numpy FK of q (rad) misses target; pitch as a tool direction."""
    tip, tool = derive.fk_arm5(G_ARM5, np.asarray(q, float))
    yaw = derive.facing_yaw(target, current)
    want = derive.tool_direction(target[0], target[1], target[3], yaw)
    return (float(np.linalg.norm(tip - np.array(target[:3]))),
            2 * math.asin(min(1.0, float(np.linalg.norm(tool - want)) / 2)))


def planar_misses(target, q):
    return float(np.hypot(*(derive.fk_planar(G_PLANAR, np.asarray(q, float)) - np.array(target))))


# --- hand-calculated --------------------------------------------------------

def test_planar_right_angle_both_branches():
    # t1 = 0, t2 = +90: (100 + 80 cos 90, 80 sin 90) = (100, 80); t2 > 0 is "down".
    s, q = solve(PLANAR, [100.0, 80.0], PREFER_DOWN)
    assert s == status.OK and PLANAR.elbow == DOWN
    assert q == pytest.approx([0.0, 90.0], abs=1e-9)
    # Up mirrors it about the line to (100, 80): t1 = 2 atan(80/100) = 2 * 38.659808 = 77.319617.
    s, q = solve(PLANAR, [100.0, 80.0], PREFER_UP)
    assert s == status.OK and PLANAR.elbow == UP
    assert q == pytest.approx([77.319617, -90.0], abs=1e-6)


def test_planar_law_of_cosines_zero():
    # r^2 = L1^2 + L2^2 = 16400: c2 = 0, t2 = -90 (up), t1 = atan2(80, 100) = 38.659808.
    s, q = solve(PLANAR, [math.sqrt(16400.0), 0.0], PREFER_UP)
    assert s == status.OK
    assert q == pytest.approx([38.659808, -90.0], abs=1e-6)


def test_planar_all_four_quadrants():
    # Q1 (80, 100): up t = (90, -90): (100 cos 90 + 80 cos 0, 100 sin 90 + 80 sin 0) = (80, 100).
    # Q2 (-100, 80): the same arm turned by 90 deg: up t = (180, -90), 180 fits -10..190.
    # Q3 (-100, -80): down t = (180, 90): (-100 + 80 cos 270, 80 sin 270) = (-100, -80); up would
    #    need t1 = 180 + 2 atan(0.8) = 257.3, outside -10..190: rule up falls back to down.
    # Q4 (100, -80): up t = (0, -90): (100 + 80 cos(-90), 80 sin(-90)) = (100, -80).
    for target, want, elbow in (([80.0, 100.0], [90.0, -90.0], UP), ([-100.0, 80.0], [180.0, -90.0], UP),
                                ([-100.0, -80.0], [180.0, 90.0], DOWN), ([100.0, -80.0], [0.0, -90.0], UP)):
        s, q = solve(PLANAR, target, PREFER_UP)
        assert s == status.OK and PLANAR.elbow == elbow, target
        assert q == pytest.approx(want, abs=1e-6), target


def test_planar_boundaries():
    assert solve(PLANAR, [180.0, 0.0])[0] == status.SINGULAR            # stretched: t = (0, 0)
    assert solve(PLANAR, [180.0, 0.0])[1] == pytest.approx([0.0, 0.0], abs=1e-9)
    assert solve(PLANAR, [-180.0, 0.0])[1] == pytest.approx([180.0, 0.0], abs=1e-9)
    assert solve(PLANAR, [0.0, -180.0])[0] == status.JOINT_LIMIT        # needs t1 = -90
    assert solve(PLANAR, [180.001, 0.0])[0] == status.TOO_FAR           # 1e-3 > margin 1.8e-4
    assert solve(PLANAR, [180.0001, 0.0])[0] == status.SINGULAR         # inside the margin
    assert solve(PLANAR, [19.99, 0.0])[0] == status.TOO_CLOSE
    assert solve(PLANAR, [0.0, 0.0])[0] == status.TOO_CLOSE
    assert solve(PLANAR, [20.0, 0.0])[0] == status.JOINT_LIMIT          # folded, |t2| = 180 > 160


def test_spec_worked_example():
    """docs/KINEMATICS.md worked example: tip (157.3, 0, 342.4) mm, pitch 90: up q2=-50.024 q3=105.019 q4=35.004 (course-rounded)."""
    target = [157.3, 0.0, 342.4, D(90.0)]
    s, q = solve(ARM5, target, PREFER_UP)
    assert s == status.OK and ARM5.elbow == UP
    assert q[1:4] == pytest.approx([-50.024, 105.019, 35.004], abs=0.02)
    assert max(arm5_misses(target, np.radians(q))) < 1e-9
    assert max(ARM5.fk_error(target, np.radians(q))) < 1e-9
    # The down branch (q4 = 140.024) breaks the 135 limit: "down" falls back to up.
    s, q_down = solve(ARM5, target, PREFER_DOWN)
    assert s == status.OK and ARM5.elbow == UP and q_down == q


def test_arm5_hand_right_angles():
    # q = (0, 90, -90, 0): elbow at (126.14, 189), forearm straight up to (126.14, 315.14),
    # tool straight up: tip (126.14, 0, 189 + 126.14 + 150.6) = (126.14, 0, 465.74), pitch 0.
    # The up branch mirrors it: q = (0, 0, 90, -90) (elbow at (0, 315.14), forearm horizontal).
    target = [126.14, 0.0, 465.74, 0.0]
    assert solve(ARM5, target, PREFER_DOWN) == (status.OK, pytest.approx([0.0, 90.0, -90.0, 0.0, 0.0], abs=1e-9))
    assert solve(ARM5, target, PREFER_UP) == (status.OK, pytest.approx([0.0, 0.0, 90.0, -90.0, 0.0], abs=1e-9))
    # Behind the base, (-126.14, 0, 465.74): yaw 180 is forbidden, so the base stays at 0 and
    # leans back: up keeps the elbow above, (0, 0, -90, 90); down is (0, -90, 90, 0).
    behind = [-126.14, 0.0, 465.74, 0.0]
    assert solve(ARM5, behind, PREFER_UP) == (status.OK, pytest.approx([0.0, 0.0, -90.0, 90.0, 0.0], abs=1e-9))
    assert ARM5.elbow == UP
    assert solve(ARM5, behind, PREFER_DOWN) == (status.OK, pytest.approx([0.0, -90.0, 90.0, 0.0, 0.0], abs=1e-9))
    # Stretched: straight up (SINGULAR, all zero), straight out at J2 height (q2 = 90).
    assert solve(ARM5, [0.0, 0.0, 189.0 + 252.28 + 150.6, 0.0]) == (status.SINGULAR, [0.0] * 5)
    assert solve(ARM5, [252.28 + 150.6, 0.0, 189.0, D(90.0)]) == \
        (status.SINGULAR, pytest.approx([0.0, 90.0, 0.0, 0.0, 0.0], abs=1e-6))
    assert solve(ARM5, [252.3 + 150.6, 0.0, 189.0, D(90.0)])[0] == status.TOO_FAR


@pytest.mark.parametrize("arm, good", [(PLANAR, [100.0, 80.0]), (ARM5, [157.3, 0.0, 342.4, D(90.0)])])
def test_bad_input_never_crashes_and_leaves_out_alone(arm, good):
    n = len(good)
    for bad in ([math.nan] + good[1:], good[:-1] + [math.inf], [-math.inf] + good[1:], ["abc"] + good[1:],
                [None] + good[1:], good[:-1], good + [1.0], None, 5.0, "ab", {}):
        out = [7.0] * arm.n
        assert arm.ik(bad, out) == status.BAD_INPUT, bad
        assert out == [7.0] * arm.n
    for current in ([math.nan] * arm.n, [0.0] * (arm.n - 1), "xy", 3.0):
        out = [7.0] * arm.n
        assert arm.ik(good, out, current) == status.BAD_INPUT
        assert out == [7.0] * arm.n
    assert n == len(arm.targets)


def test_failing_status_leaves_out_alone():
    for arm, target in ((PLANAR, [0.0, -180.0]), (PLANAR, [500.0, 0.0]), (PLANAR, [5.0, 0.0]),
                        (ARM5, [39.0, 0.0, 300.0, D(60.0)]), (ARM5, [900.0, 0.0, 0.0, 0.0])):
        out = [7.0] * arm.n
        assert not status.solved(arm.ik(target, out))
        assert out == [7.0] * arm.n


def test_large_pitch_loses_no_accuracy():
    """Found by these tests: pitch 1e12 rad came back OK with a 4.5e-5 rad tool error."""
    checked = 0
    for big in (1e12, -3e9, 1e6):
        # The first whole radian past `big` whose direction is 60..120 deg from vertical.
        pitch = next(big + k for k in range(20) if 60 < math.degrees(math.acos(math.cos(big + k))) < 120)
        reduced = math.atan2(math.sin(pitch), math.cos(pitch))     # libm reduces huge angles exactly
        target = [157.3, 0.0, 342.4, pitch]
        s, q = solve(ARM5, target)
        assert (s, q) == (solve(ARM5, target[:3] + [reduced])[0], pytest.approx(
            solve(ARM5, target[:3] + [reduced])[1], abs=1e-9))
        if status.solved(s):
            mm, rad = arm5_misses(target, np.radians(q))
            assert mm < 1e-6 and rad < 1e-9, (pitch, mm, rad)
            checked += 1
    assert checked >= 2


def test_status_and_rule_names():
    assert [status.code(n) for n in status.NAMES] == list(range(9))
    assert status.name(status.JOINT_LIMIT) == "JOINT_LIMIT"
    assert status.name(status.COLLISION) == "COLLISION"
    assert status.name(status.NOT_CONVERGED) == "NOT_CONVERGED"
    assert status.name(status.NEAR_AXIS) == "NEAR_AXIS"
    assert [status.solved(c) for c in range(9)] == [True, True, False, False, False, False, False, False, False]
    assert [kinematics.rule_code(r) for r in ("min", "up", "down")] == [MIN_MOTION, PREFER_UP, PREFER_DOWN]
    with pytest.raises(ValueError):
        kinematics.rule_code("sideways")


def test_twolink_solve_right_angle():
    # (100, 80) with links 100, 80: the first link along x, the second at 90 degrees.
    out = [0.0, 0.0]
    assert twolink.solve(100.0, 80.0, 100.0, 80.0, 1, out) == status.OK
    assert [math.degrees(a) for a in out] == pytest.approx([0.0, 90.0], abs=1e-9)
    assert numeric.finite(1, 2.5) and not numeric.finite(1, math.nan) and not numeric.finite("1")


# --- branch choice -----------------------------------------------------------

def follow(arm, points, first_rule):
    """Solve a path: the first point by first_rule, then minimum motion from the last answer.

    Both branches stay valid all along (checked by the independent derivation),
    so a change of branch would be a silent flip. Returns the biggest joint step.
    """
    geom = G_PLANAR if arm.kind == "planar" else G_ARM5
    for p in points:
        assert candidates_valid(geom, p) == {"up": True, "down": True}, p
    out = [0.0] * arm.n
    assert status.solved(arm.ik(points[0], out, None, first_rule))
    elbow = arm.elbow
    last = list(out)
    biggest = 0.0
    for p in points[1:]:
        s = arm.ik(p, out, last, MIN_MOTION)
        assert status.solved(s), p
        assert arm.elbow == elbow, ("branch flipped at", p)
        biggest = max(biggest, max(abs(a - b) for a, b in zip(out, last)))
        last = list(out)
    return biggest


@pytest.mark.parametrize("rule", [PREFER_UP, PREFER_DOWN])
def test_min_motion_never_flips_along_a_smooth_path(rule):
    # Planar: an arc at r = 120 from 40 to 140 deg. c2 = (14400-16400)/16000 = -0.125, |t2| = 97.2,
    # t1 = theta -/+ 45.6: from -5.6 to 185.6, inside -10..190 on both branches all the way.
    arc = [[120 * math.cos(D(a)), 120 * math.sin(D(a))] for a in np.linspace(40.0, 140.0, 400)]
    assert follow(PLANAR, arc, rule) < D(1.0)
    line = [[x, 100.0] for x in np.linspace(100.0, -60.0, 320)]     # 0.5 mm steps
    assert follow(PLANAR, line, rule) < D(2.0)
    # Arm5Solver: tool horizontal, tip sliding sideways at x = 250, z = 300 (both branches valid).
    side = [[250.0, y, 300.0, D(90.0)] for y in np.linspace(-100.0, 100.0, 400)]
    assert follow(ARM5, side, rule) < D(1.0)


def candidates_valid(geom, target, current=None):
    """{label: valid?} by the independent derivation (either yaw choice counts)."""
    found = derive.candidates(geom, target, current)
    valid = {"up": False, "down": False}
    if isinstance(found, str):      # TOO_FAR / TOO_CLOSE
        return valid
    for c in found:
        if None not in [derive.fit(a, geom.lo[i], geom.hi[i]) for i, a in enumerate(c["q"])]:
            valid[c["label"]] = True
    return valid


def all_candidates_valid(geom, target):
    """True when every candidate of the independent derivation (each branch, each yaw) fits the limits."""
    found = derive.candidates(geom, target, None)
    return not isinstance(found, str) and all(
        None not in [derive.fit(a, geom.lo[i], geom.hi[i]) for i, a in enumerate(c["q"])] for c in found)


def test_prefer_falls_back_only_when_its_branch_is_invalid():
    seen = set()
    for x in np.linspace(-170.0, 170.0, 35):
        for y in np.linspace(-170.0, 170.0, 35):
            r = math.hypot(x, y)
            if not 40.0 < r < 175.0:
                continue
            valid = candidates_valid(G_PLANAR, [x, y])
            for rule, mine, other in ((PREFER_UP, "up", "down"), (PREFER_DOWN, "down", "up")):
                s, q = solve(PLANAR, [x, y], rule)
                if valid[mine]:
                    assert status.solved(s) and PLANAR.elbow == (UP if mine == "up" else DOWN)
                    seen.add("own")
                elif valid[other]:
                    assert status.solved(s) and PLANAR.elbow == (UP if other == "up" else DOWN)
                    seen.add("fallback")
                else:
                    assert s == status.JOINT_LIMIT
                    seen.add("none")
    assert seen == {"own", "fallback", "none"}


def test_min_motion_never_takes_a_forbidden_branch():
    # (150 at 185 deg): c2 = (22500-16400)/16000 = 0.38125, |t2| = 67.59, atan2(80 sin t2,
    # 100 + 80 c2) = 29.54: up needs t1 = 185 + 29.54 = 214.54 > 190; down t1 = 155.46 fits.
    # A current pose right at the forbidden up pose still gets the valid down answer.
    target = [150 * math.cos(D(185)), 150 * math.sin(D(185))]
    assert candidates_valid(G_PLANAR, target) == {"up": False, "down": True}
    s, q = solve(PLANAR, target, MIN_MOTION, [D(214.54), D(-67.59)])
    assert s == status.OK and PLANAR.elbow == DOWN
    assert q == pytest.approx([155.46, 67.59], abs=0.01)
    # The worked example (docs/KINEMATICS.md) from its forbidden down pose: up.
    s, q = solve(ARM5, [157.3, 0.0, 342.4, D(90.0)], MIN_MOTION, [0.0, D(55.0), D(-105.0), D(140.0), 0.0])
    assert s == status.OK and ARM5.elbow == UP


def test_min_motion_picks_the_nearer_branch():
    target = [120.0, 60.0]
    for current, want in (([D(60.0), D(-100.0)], UP), ([D(0.0), D(100.0)], DOWN)):
        s, _ = solve(PLANAR, target, MIN_MOTION, current)
        assert s == status.OK and PLANAR.elbow == want


# --- properties ----------------------------------------------------------------

angle = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(t1=st.floats(-10.0, 190.0), t2=st.floats(-160.0, 160.0))
def test_planar_round_trip_from_joints(t1, t2):
    q = np.radians([t1, t2])
    target = [float(v) for v in derive.fk_planar(G_PLANAR, q)]
    s, got = solve(PLANAR, target, PREFER_UP)
    assert status.solved(s)
    assert planar_misses(target, np.radians(got)) < 1e-6
    assert PLANAR.within_limits(np.radians(got))
    if abs(math.sin(q[1])) > 1e-3:
        s, got = solve(PLANAR, target, MIN_MOTION, list(q))
        assert got == pytest.approx([t1, t2], abs=1e-6)


@settings(max_examples=300, deadline=None)
@given(q=st.lists(st.floats(-135.0, 135.0), min_size=4, max_size=4), roll=st.floats(-135.0, 135.0))
def test_arm5_round_trip_from_joints(q, roll):
    qr = np.radians(q + [roll])
    target = arm5_target(qr)
    assume(math.hypot(target[0], target[1]) > 1.0)
    s, got = solve(ARM5, target, PREFER_UP)
    assert status.solved(s)
    mm, rad = arm5_misses(target, np.radians(got))
    assert mm < 1e-6 and rad < 1e-9
    assert ARM5.within_limits(np.radians(got))
    if abs(math.sin(qr[2])) > 1e-3:
        s, got = solve(ARM5, target, MIN_MOTION, list(qr))
        assert got == pytest.approx(q + [roll], abs=1e-6)


@settings(max_examples=300, deadline=None)
@given(target=st.tuples(st.floats(-300, 300), st.floats(-300, 300), st.floats(-200, 700), st.floats(-7, 7)),
       current=st.none() | st.lists(st.floats(-4, 4), min_size=5, max_size=5),
       rule=st.sampled_from([MIN_MOTION, PREFER_UP, PREFER_DOWN]))
def test_arm5_any_target_is_honest(target, current, rule):
    out = [7.0] * 5
    s = ARM5.ik(list(target), out, current, rule)
    if status.solved(s):
        assert ARM5.within_limits(out)
        mm, rad = arm5_misses(list(target), out, current)
        assert mm < 1e-3 and rad < 1e-6
    else:
        assert s in (status.TOO_FAR, status.JOINT_LIMIT) and out == [7.0] * 5


@settings(max_examples=300, deadline=None)
@given(x=angle, y=angle, current=st.none() | st.lists(st.floats(-7, 7), min_size=2, max_size=2))
def test_planar_any_finite_target_is_honest(x, y, current):
    out = [7.0, 7.0]
    s = PLANAR.ik([x, y], out, current, MIN_MOTION)
    assert s != status.BAD_INPUT
    if status.solved(s):
        assert PLANAR.within_limits(out) and planar_misses([x, y], out) < 1e-3
    else:
        assert out == [7.0, 7.0]


@settings(max_examples=300, deadline=None)
@given(target=st.lists(angle, min_size=4, max_size=4),
       current=st.none() | st.lists(angle, min_size=5, max_size=5),
       rule=st.sampled_from([MIN_MOTION, PREFER_UP, PREFER_DOWN]))
@example(target=[0.0, 0.0, 0.0, 2.0], current=[38943960474.0, 0.0, 0.0, 0.0, 0.0], rule=MIN_MOTION)
@example(target=[0.0, 0.0, 0.0, 124.0], current=[0.0, 0.0, 0.0, 0.0, -1.8054182390964496e+16], rule=MIN_MOTION)
def test_arm5_any_finite_numbers_never_crash_or_nan(target, current, rule):
    out = [7.0] * 5
    s = ARM5.ik(target, out, current, rule)
    assert s in (status.OK, status.SINGULAR, status.TOO_FAR, status.JOINT_LIMIT)
    if status.solved(s):
        assert all(math.isfinite(a) for a in out) and ARM5.within_limits(out)
        if abs(target[3]) < 1e6:
            mm, rad = arm5_misses(target, out, current)
            # On the base axis the yaw is the current one, wrapped into a turn: wrapping
            # an angle of 4e10 rad (found by these tests) rounds pi - a to a's last bit.
            wrap_rounding = math.ulp(max(abs(a) for a in current)) if current else 0.0
            assert mm < 1e-3 and rad < 1e-6 + wrap_rounding
    else:
        assert out == [7.0] * 5


def test_overflowing_far_target_is_too_far_not_bad_input():
    """Found by these tests: x*x + y*y overflowing made arm5 answer BAD_INPUT for a finite target."""
    for target in ([0.0, 1.3407807929942597e+154, 0.0, 0.0], [1e300, -1e300, 5.0, 1.0], [-1e200, 0.0, 1e200, 0.0]):
        assert ARM5.ik(target, [0.0] * 5) == status.TOO_FAR
    assert PLANAR.ik([1e300, 1e300], [0.0] * 2) == status.TOO_FAR


# Most random walks leave the region where both branches stay valid (the claim's
# premise, checked by assume): filtering is this test's design, not a slow strategy.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(start=st.lists(st.floats(-110.0, 110.0), min_size=4, max_size=4),
       direction=st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3),
       turn=st.floats(-0.2, 0.2))
@example(start=[80.0, 0.0, 12.0, -30.0], direction=[1.0, 0.0, 0.0], turn=0.0)
@example(start=[70.0, 11.0, 17.0, -72.0], direction=[1.0, 0.0, 0.0], turn=0.0)
def test_arm5_small_steps_never_flip_branch(start, direction, turn):
    """From a random pose, 60 steps of 0.5 mm (and a little pitch): min motion keeps the branch
    whenever both branches stay valid along the way (checked independently)."""
    q0 = np.radians(start + [0.0])
    assume(abs(math.sin(q0[2])) > 0.2)
    d = np.array(direction)
    assume(np.linalg.norm(d) > 0.1)
    d = 0.5 * d / np.linalg.norm(d)
    first = arm5_target(q0)
    assume(math.hypot(first[0], first[1]) > 20.0)
    path = [[first[0] + k * d[0], first[1] + k * d[1], first[2] + k * d[2], first[3] + k * D(turn)]
            for k in range(60)]
    assume(all(math.hypot(p[0], p[1]) > 20.0 for p in path))     # yaw moves <= 1.4 deg a step
    # Both yaw choices (facing the target, turned half a turn and leaning back) stay valid too:
    # where the one the arm is on leaves its limits (found by these tests: the base at 134.5 deg
    # reaching back), only the other reaches on, and no rule can keep both the branch and the yaw.
    assume(all(all_candidates_valid(G_ARM5, p) for p in path))
    assume(all(candidates_valid(G_ARM5, p) == {"up": True, "down": True} for p in path))
    out = [0.0] * 5
    last = list(q0)
    assert ARM5.ik(path[0], out, last, MIN_MOTION) == status.OK
    elbow = ARM5.elbow
    for p in path[1:]:
        assert status.solved(ARM5.ik(p, out, last, MIN_MOTION))
        assert ARM5.elbow == elbow
        assert max(abs(a - b) for a, b in zip(out, last)) < D(20.0)
        last = list(out)


def test_fk_error_on_the_base_axis_with_the_base_turned():
    """Found by these tests: on the base axis, with the base turned half a turn by minimum motion,
    fk_error reported a 120 deg pitch error for a right answer; given the current pose it is exact."""
    target = [0.0, 0.0, 400.0, D(60.0)]
    current = [D(100.0), 1.49, -1.46, -1.08, 0.0]
    s, q = solve(ARM5, target, MIN_MOTION, current)
    assert s == status.OK and q[0] == pytest.approx(-80.0)        # turned: nearer to the current q2..q4
    assert max(arm5_misses(target, np.radians(q), current)) < 1e-9
    assert max(ARM5.fk_error(target, np.radians(q), current)) < 1e-9


# -- tool offset and roll (boards' arm.tool_mm) --------------------------------

def _chain_tip(solver, q, tool):
    """The tool tip by a chain of rotation matrices (written out here, not the firmware's FK)."""
    def rz(a):
        return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])

    def ry(a):
        return np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])
    frame = rz(q[0])
    point = np.array([0.0, 0.0, solver.base])
    for length, angle in ((solver.l1, q[1]), (solver.l2, q[2]), (solver.l3, q[3])):
        frame = frame @ ry(angle)
        point = point + frame @ np.array([0.0, 0.0, length])
    return point + frame @ rz(q[4]) @ np.array(tool, float)


def _with_tool(tool):
    from armfw.kinematics import Arm5Solver
    s = solver_only("sim_arm5.json")
    return Arm5Solver(s.l1, s.l2, s.l3, s.base, s.names, s.lo, s.hi, s.home, tool)


@pytest.mark.parametrize("tool", [(0.0, 12.0, 0.0), (4.0, 12.0, 25.0), (-6.0, -9.0, 40.0)])
def test_tool_offset_fk_and_ik_round_trip(tool):
    solver = _with_tool(tool)
    rng = np.random.default_rng(14)
    solved = 0
    for _ in range(2000):
        q = list(rng.uniform(-2.3, 2.3, 5))
        p = solver.fk(q, [0.0] * 4)
        assert p[:3] == pytest.approx(list(_chain_tip(solver, q, tool)), abs=1e-9)
        out = [0.0] * 5
        current = [q[0], 0.0, 0.0, 0.0, q[4]]
        st = solver.ik(p, out, current)
        if status.solved(st):
            solved += 1
            assert out[4] == q[4]                       # the roll the IK was given stays
            assert list(_chain_tip(solver, out, tool)) == pytest.approx(list(p[:3]), abs=1e-6)
            mm, rad = solver.fk_error(p, out, current)
            assert mm < 1e-6 and rad < 1e-9
    assert solved > 1000


def test_lateral_offset_base_angle_by_hand():
    # Lateral offset 12 mm, tool horizontal, roll 0: the tip at (300, 12) lies on the
    # line the base faces shifted 12 mm to its left, so the base stays at yaw 0; at
    # (300, -12) it turns by -2 asin(12 / r), r = hypot(300, 12).
    solver = _with_tool((0.0, 12.0, 0.0))
    out = [0.0] * 5
    assert status.solved(solver.ik([300.0, 12.0, 250.0, math.pi / 2], out, [0.0] * 5))
    assert out[0] == pytest.approx(0.0, abs=1e-12)
    assert status.solved(solver.ik([300.0, -12.0, 250.0, math.pi / 2], out, [0.0] * 5))
    assert out[0] == pytest.approx(-2 * math.asin(12 / math.hypot(300, 12)), abs=1e-12)


def test_near_the_axis_inside_the_lateral_offset_is_its_own_status():
    solver = _with_tool((0.0, 12.0, 0.0))
    out = [0.0] * 5
    for r in (0.0, 6.0, 11.99):
        assert solver.ik([r, 0.0, 500.0, 0.0], out, [0.0] * 5) == status.NEAR_AXIS
    assert status.solved(solver.ik([12.01, 0.0, 500.0, 0.0], out, [0.0] * 5))
    # Rolled a quarter turn the lateral part is the across part (0 here): the cylinder is gone.
    assert status.solved(solver.ik([3.0, 0.0, 500.0, 0.0], out, [0.0, 0.0, 0.0, 0.0, math.pi / 2]))


def test_zero_offset_is_the_original_solver_bit_for_bit():
    plain = solver_only("sim_arm5.json")
    zero = _with_tool((0.0, 0.0, 0.0))
    rng = np.random.default_rng(3)
    for _ in range(500):
        target = [float(v) for v in rng.uniform(-300, 300, 3)] + [float(rng.uniform(-3, 3))]
        current = [float(v) for v in rng.uniform(-2, 2, 5)]
        a, b = [0.0] * 5, [0.0] * 5
        assert plain.ik(target, a, current) == zero.ik(target, b, current)
        assert a == b
        assert plain.fk(current, [0.0] * 4) == zero.fk(current, [0.0] * 4)


def test_twolink_branch_signs_are_not_elbow_words():
    # twolink.solve picks a branch by the sign of sin(t2); the planar arm calls
    # t2 <= 0 "up", so an elbow word handed to it would silently pick the other
    # branch. The names differ in value and solve refuses the elbow words.
    out = [0.0, 0.0]
    positive = twolink.solve(100.0, 80.0, 100.0, 80.0, twolink.T2_POSITIVE, out)
    assert positive == status.OK and out[1] > 0
    assert twolink.solve(100.0, 80.0, 100.0, 80.0, twolink.T2_NEGATIVE, out) == status.OK and out[1] < 0
    assert {UP, DOWN}.isdisjoint({twolink.T2_POSITIVE, twolink.T2_NEGATIVE})
    for word in (UP, DOWN):
        with pytest.raises(ValueError):
            twolink.solve(100.0, 80.0, 100.0, 80.0, word, out)
    # The planar solver's up answer is the T2_NEGATIVE branch.
    q = [0.0, 0.0]
    assert PLANAR.ik([100.0, 80.0], q, None, PREFER_UP) == status.OK and PLANAR.elbow == UP
    twolink.solve(PLANAR.l1, PLANAR.l2, 100.0, 80.0, twolink.T2_NEGATIVE, out)
    assert q == pytest.approx(out, abs=1e-12)


def test_whole_turn_shortcuts_answer_as_fit_angle():
    # Solver._refit skips fit_angle's arithmetic where its answer is certain;
    # bit for bit the same answer on a dense sweep and around every edge.
    for solver in (PLANAR, ARM5):
        for i in range(solver.n):
            lo, hi = solver.lo[i], solver.hi[i]
            values = list(np.linspace(-5 * math.pi, 5 * math.pi, 20001))
            for edge in solver._turns[i] + (lo, hi):
                for k in range(-3, 4):
                    values += [edge + k * 1e-10, edge + k * 1e-12, math.nextafter(edge, math.inf) * (1 + k * 1e-16)]
            for v in values:
                v = float(v)
                for sign in (1, -1):
                    angle = v * sign
                    if solver._lo_eps[i] <= angle <= solver._hi_eps[i]:
                        continue                    # _refit sees only values outside
                    want = kinematics.fit_angle(angle, lo, hi)
                    if want is not None:
                        want *= sign
                    assert solver._refit(i, v, sign) == want, (solver.kind, i, v, sign)


def test_tool_pose_reports_the_pitch_in_the_direction_the_tool_reaches():
    """Arm5Solver.tool_pose, the protocol's pitch rule: the pitch in the vertical plane
    through the tip (numpy FK here), so a base turned half a turn and leaning back
    reports it unchanged; wrapped into (-pi, pi], half a turn itself as +pi."""
    rng = np.random.default_rng(26)
    out = [0.0] * 4
    for q in rng.uniform(ARM5.lo, ARM5.hi, (500, 5)):
        q[4] = 0.0
        want = arm5_target(q)
        got = ARM5.tool_pose(q.tolist(), out)
        assert got[:3] == pytest.approx(want[:3], abs=1e-9)
        assert abs(math.remainder(got[3] - want[3], 2 * math.pi)) < 1e-12
        assert -math.pi < got[3] <= math.pi
    # Upper arm and tool horizontal, the tool pointing straight down: FK's pitch is
    # pi reaching forward and -pi leaning back; both report +pi.
    assert ARM5.tool_pose([0.0, math.pi / 2, 0.0, math.pi / 2, 0.0], out)[3] == math.pi
    assert ARM5.tool_pose([0.0, -math.pi / 2, 0.0, -math.pi / 2, 0.0], out)[3] == math.pi
    # The planar arm speaks its FK's coordinates as they are.
    assert PLANAR.tool_pose([0.0, math.pi / 2], [0.0, 0.0]) == PLANAR.fk([0.0, math.pi / 2], [0.0, 0.0])
