# SPDX-License-Identifier: MIT
"""The motion profiles (armfw.profile) against numbers derived here by other means:
trapezoid times by hand, time-optimal durations from Ruckig, junction speeds from
the corner's geometry, and the limits checked on every step of dense grids."""
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st
from ruckig import Synchronization

from armctl.bench.motion import ruckig_trajectory
from armfw.jointprofile import JointProfile
from armfw.profile import ToolRamp, junction_speed
from conftest import MP_SCRIPTS, ROOT

sys.path.append(str(MP_SCRIPTS))
from profile_run import circle, run_ramp  # noqa: E402  (the MicroPython script's own)

DEG = math.pi / 180
STEP_S = 0.02
# Float rounding in a comparison of limits (the profiles meet theirs exactly).
ROUNDING = 1e-9


# -- joint moves ----------------------------------------------------------------------

def test_a_quarter_turn_at_the_standard_class_limits_takes_the_hand_computed_time():
    # 90 deg at 90 deg/s and 360 deg/s^2: 0.25 s up to speed (11.25 deg), 67.5 deg at
    # 90 deg/s (0.75 s), 0.25 s down: 1.25 s, 62.5 steps of 20 ms, so 63.
    p = JointProfile()
    steps = p.plan([0.0], [90 * DEG], [90 * DEG], [360 * DEG], STEP_S)
    assert p.duration_s == pytest.approx(1.25, rel=1e-12)
    assert p.ramp_s == pytest.approx(0.25, rel=1e-12)
    assert steps == 63
    # Stretched to 63 steps: the half-way step is the half-way point (the trapezoid is symmetric).
    assert p.fraction(0) == 0.0
    assert p.fraction(63) == 1.0
    assert p.fraction(31) + p.fraction(32) == pytest.approx(1.0, abs=1e-12)


def test_a_short_move_is_a_triangle():
    # 10 deg at 360 deg/s^2 never reaches 90 deg/s (that needs 22.5 deg): accelerate over
    # 5 deg, t = sqrt(2 * 5 / 360) = 0.1667 s, then brake: 0.3333 s, 17 steps.
    p = JointProfile()
    steps = p.plan([0.0], [10 * DEG], [90 * DEG], [360 * DEG], STEP_S)
    assert p.duration_s == pytest.approx(2 * math.sqrt(10 / 360), rel=1e-12)
    assert steps == 17
    peak = max(p.fraction(s) - p.fraction(s - 1) for s in range(1, steps + 1)) * 10 / STEP_S
    assert peak < 90        # deg/s: never at the speed limit


def test_the_joint_that_needs_longest_sets_the_pace_for_all():
    # Base 90 deg at 90 deg/s, wrist 90 deg at 180 deg/s (micro class) and an
    # elbow 180 deg at 90 deg/s: the elbow's 180 deg limit V and A; 2 s + 0.25 s.
    p = JointProfile()
    p.plan([0.0, 0.0, 0.0], [90 * DEG, 90 * DEG, 180 * DEG], [90 * DEG, 180 * DEG, 90 * DEG],
           [360 * DEG, 720 * DEG, 360 * DEG], STEP_S)
    # V = min(90/90, 180/90, 90/180) = 0.5 1/s, A = min(4, 8, 2) = 2 1/s^2: 1/V + V/A.
    assert p.duration_s == pytest.approx(2.25, rel=1e-12)


def test_no_motion_is_no_steps_and_next_to_none_is_one():
    p = JointProfile()
    assert p.plan([0.3, -0.2], [0.3, -0.2], [1.0, 1.0], [1.0, 1.0], STEP_S) == 0
    for tiny in (5e-324, 2.2250738585e-313, 1e-300, 1e-12):
        assert p.plan([0.0], [tiny], [1.0], [1.0], STEP_S) == 1
        assert p.fraction(1) == 1.0


def ruckig_duration(start, goal, vmax, amax, sync):
    return ruckig_trajectory(start, goal, vmax, amax, sync).duration


def on_the_line(traj, start, goal):
    """True when Ruckig's trajectory stays on the joint-space line from start to goal (phase
    synchronization found; where it cannot keep every joint within its limits on the line
    with the shape it chose, Ruckig falls back to time synchronization, off the line)."""
    for k in range(1, 8):
        q = traj.at_time(traj.duration * k / 8)[0]
        along = [(x - a) / (b - a) for x, a, b in zip(q, start, goal) if abs(b - a) > 1e-9]
        if max(along) - min(along) > 1e-6:
            return False
    return True


joint_limits = st.tuples(st.floats(20, 400), st.floats(60, 3000))      # deg/s, deg/s^2
moves = st.lists(st.tuples(st.floats(-170, 170), st.floats(-170, 170), joint_limits), min_size=1, max_size=6)


def plan_move(move, step_s=STEP_S):
    start = [a * DEG for a, _, _ in move]
    goal = [b * DEG for _, b, _ in move]
    vmax = [v * DEG for _, _, (v, _) in move]
    amax = [a * DEG for _, _, (_, a) in move]
    p = JointProfile()
    p.plan(start, goal, vmax, amax, step_s)
    return p, start, goal, vmax, amax


@settings(max_examples=150, deadline=None)
@given(moves)
def test_the_duration_is_ruckigs_time_optimal_one_for_a_straight_joint_line(move):
    p, start, goal, vmax, amax = plan_move(move)
    if p.steps == 0 or max(abs(b - a) for a, b in zip(start, goal)) < 0.5 * DEG:
        return
    # Phase synchronization keeps the joint-space line: the same problem, solved by Ruckig.
    traj = ruckig_trajectory(start, goal, vmax, amax, Synchronization.Phase)
    if on_the_line(traj, start, goal):
        assert p.duration_s == pytest.approx(traj.duration, rel=1e-3, abs=1e-4)
    else:
        # Ruckig left the line: it solved a looser problem, never slower than the line's optimum.
        assert traj.duration <= p.duration_s * (1 + 1e-4)
    # Whole steps add at most one; within 5 % of the optimum for a move of 20 steps or more.
    assert p.duration_s - 1e-12 <= p.steps * STEP_S < p.duration_s + STEP_S
    if p.duration_s >= 20 * STEP_S:
        assert p.steps * STEP_S <= 1.05 * p.duration_s


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-170, 170), min_size=1, max_size=6), st.lists(st.floats(-170, 170), min_size=6,
       max_size=6), joint_limits)
def test_joints_of_one_class_move_in_ruckigs_optimal_time(a, b, limits):
    # With one speed and one acceleration for every joint the line is the per-axis optimum
    # too: the joint going furthest sets it, and the others follow it exactly.
    start, goal = [x * DEG for x in a], [x * DEG for x in b[:len(a)]]
    vmax, amax = [limits[0] * DEG] * len(a), [limits[1] * DEG] * len(a)
    p = JointProfile()
    p.plan(start, goal, vmax, amax, STEP_S)
    if max(abs(y - x) for x, y in zip(start, goal)) < 0.5 * DEG:
        return
    per_axis = ruckig_duration(start, goal, vmax, amax, Synchronization.Time)
    assert p.duration_s == pytest.approx(per_axis, rel=1e-3, abs=1e-4)


def test_keeping_the_line_costs_time_only_where_different_joints_bind_speed_and_accel(report):
    # Each joint on its own optimal path (Ruckig's time synchronization) may finish sooner
    # than the straight line allows: here the base binds the speed and the elbow the
    # acceleration, which the line must honour together.
    start, goal = [0.0, 0.0], [90 * DEG, 60 * DEG]
    vmax, amax = [60 * DEG, 180 * DEG], [1000 * DEG, 120 * DEG]
    p = JointProfile()
    p.plan(start, goal, vmax, amax, STEP_S)
    per_axis = ruckig_duration(start, goal, vmax, amax, Synchronization.Time)
    # By hand: base alone 1.5 s + 0.06 s = 1.56 s; elbow alone a triangle of 2 * sqrt(60 / 120)
    # = 1.414 s; the line: V = 2/3 1/s (base), A = 2 1/s^2 (elbow): 1.5 + 1/3 = 1.833 s.
    assert per_axis == pytest.approx(1.56, rel=1e-3)
    assert p.duration_s == pytest.approx(1.5 + 1 / 3, rel=1e-12)
    report("joint profile: straight line %.3f s vs per-axis optimal %.3f s (x%.3f) where two joints bind"
           % (p.duration_s, per_axis, p.duration_s / per_axis))


def step_kinematics(positions, step_s):
    """Per-step velocities and accelerations of sampled positions, at rest before and after."""
    path = [positions[0]] + list(positions) + [positions[-1]]
    v = [(b - a) / step_s for a, b in zip(path, path[1:])]
    acc = [(b - a) / step_s for a, b in zip(v, v[1:])]
    return v, acc


@settings(max_examples=100, deadline=None)
@given(moves, st.sampled_from([0.0005, 0.005, 0.02]))
def test_on_every_step_no_joint_exceeds_its_limits_and_the_line_is_kept(move, step_s):
    # step_s 0.5 ms: the continuous profile on a dense grid; 20 ms: the steps the arm takes.
    p, start, goal, vmax, amax = plan_move(move, step_s)
    if p.steps == 0:
        return
    fractions = [0.0] + [p.fraction(s) for s in range(1, p.steps + 1)]
    assert fractions[-1] == 1.0
    assert all(f < 1.0 for f in fractions[:-1])
    assert all(b >= a for a, b in zip(fractions, fractions[1:]))
    for i in range(len(start)):
        d = goal[i] - start[i]
        q = [start[i] + d * f for f in fractions]
        v, acc = step_kinematics(q, step_s)
        # Differences of floats: a position's last bits, divided by the step (squared).
        noise = 4 * sys.float_info.epsilon * max(abs(x) for x in q) / step_s ** 2
        assert max(abs(x) for x in v) <= vmax[i] * (1 + ROUNDING) + noise * step_s
        # A sampled trapezoid's second difference averages its acceleration over two steps.
        assert max(abs(x) for x in acc) <= amax[i] * (1 + ROUNDING) + noise
        # No velocity step: consecutive steps differ by at most amax * step_s.
        assert max(abs(b - a) for a, b in zip(v, v[1:])) <= (amax[i] * (1 + ROUNDING) + noise) * step_s


# -- lines ------------------------------------------------------------------------------

def test_junction_speed_is_the_arc_through_the_corners_deviation():
    # An arc tangent to both blocks whose middle is deviation mm from the corner has radius
    # r = deviation * sin(h) / (1 - sin(h)), h half the angle between the blocks; at
    # centripetal acceleration a its speed is sqrt(a r).
    a, deviation = 500.0, 0.05
    for turn_deg in (5, 30, 90, 135, 179):
        h = (180 - turn_deg) / 2 * DEG
        r = deviation * math.sin(h) / (1 - math.sin(h))
        assert junction_speed(math.cos(turn_deg * DEG), a, deviation) == pytest.approx(math.sqrt(a * r), rel=1e-9)
    assert junction_speed(1.0, a, deviation) < 0            # straight on: no limit of its own
    assert junction_speed(-1.0, a, deviation) == 0.0         # straight back: stop


def check_tops(out, blocks, step_s=STEP_S):
    """No step is faster than the top of any block it covers a part of."""
    starts = [sum(b[0] for b in blocks[:j]) for j in range(len(blocks))]
    p0 = 0.0
    for ds in out:
        p1 = p0 + ds
        for start, (length, top, _, _) in zip(starts, blocks):
            if p0 < start + length - 1e-9 and p1 > start + 1e-9:
                assert ds / step_s <= top * (1 + ROUNDING)
        p0 = p1


def check_ramp(out, accel, total, step_s=STEP_S):
    speeds = [ds / step_s for ds in out]
    assert sum(out) == pytest.approx(total, rel=1e-12)
    positions = [0.0]
    for ds in out:
        positions.append(positions[-1] + ds)
    v, acc = step_kinematics(positions, step_s)
    assert max(abs(x) for x in acc) <= accel * (1 + ROUNDING) + ROUNDING
    assert speeds[-1] <= accel * step_s * (1 + ROUNDING)
    return speeds


def test_one_line_ramps_up_cruises_and_brakes_in_the_hand_computed_steps():
    # 100 mm at 100 mm/s, 500 mm/s^2 (10 mm/s more or less per 20 ms step): up at 10, 20,
    # ... 100 mm/s (10 steps, 11 mm), down at 90, 80, ... 10 mm/s (9 steps, 9 mm), and
    # 80 mm between them at 100 mm/s: 40 steps of 2 mm. 59 steps, 1.18 s (the continuous
    # trapezoid: 1 s + 0.2 s).
    r = ToolRamp()
    r.reset(500.0, 0.05, STEP_S)
    out = run_ramp(r, [(100.0, 100.0, 1.0, 0.0)])
    speeds = check_ramp(out, 500.0, 100.0)
    assert speeds == pytest.approx([10.0 * k for k in range(1, 11)] + [100.0] * 40
                                   + [10.0 * k for k in range(9, 0, -1)])


def test_a_circle_of_72_lines_blends_three_times_faster_than_stopping_at_each_end(report):
    blocks = circle(20.0, 72, 100.0)
    r = ToolRamp()
    r.reset(500.0, 0.05, STEP_S)
    blended = run_ramp(r, blocks)
    check_ramp(blended, 500.0, sum(b[0] for b in blocks))
    stopping = 0
    for block in blocks:
        r.reset(500.0, 0.05, STEP_S)
        one = run_ramp(r, [block])
        check_ramp(one, 500.0, block[0])
        stopping += len(one)
    assert 3 * len(blended) <= stopping
    report("tool ramp: 72-chord circle r=20 mm in %d steps blended, %d stopping at each end (x%.1f)"
           % (len(blended), stopping, stopping / len(blended)))


def test_a_corner_is_passed_no_faster_than_its_junction_speed():
    r = ToolRamp()
    r.reset(500.0, 0.05, STEP_S)
    out = run_ramp(r, [(50.0, 100.0, 1.0, 0.0), (50.0, 100.0, 0.0, 1.0)])
    check_ramp(out, 500.0, 100.0)
    corner = junction_speed(0.0, 500.0, 0.05)
    position = 0.0
    crossings = 0
    for ds in out:
        if position < 50.0 - 1e-9 and position + ds > 50.0 + 1e-9:
            assert ds / STEP_S <= corner * (1 + ROUNDING)
            crossings += 1
        position += ds
    landed = [k for k in range(len(out)) if sum(out[:k + 1]) == pytest.approx(50.0, abs=1e-9)]
    assert crossings + len(landed) == 1
    for k in landed:
        # The step that ends on the corner ends the first block; the next one crosses it.
        assert out[k + 1] / STEP_S <= corner * (1 + ROUNDING)


def test_a_small_circles_chords_are_passed_no_faster_than_its_radius_and_the_accel_allow():
    # 72 chords of a 5 mm circle at up to 100 mm/s: each corner turns 5 deg, whose junction
    # deviation speed (0.05 mm) is 162 mm/s; around the circle the tool accelerates by
    # v^2 / r across its path, at most 500 mm/s^2 for v = sqrt(500 * 5) = 50 mm/s.
    r = ToolRamp()
    r.reset(500.0, 0.05, STEP_S)
    assert junction_speed(math.cos(2 * math.pi / 72), 500.0, 0.05) > 160.0
    out = run_ramp(r, circle(5.0, 72, 100.0))
    check_ramp(out, 500.0, 72 * 2 * 5.0 * math.sin(math.pi / 72))     # 72 chords' length
    assert max(out) <= math.sqrt(500.0 * 5.0) * STEP_S * (1 + ROUNDING)
    assert max(out) == pytest.approx(math.sqrt(500.0 * 5.0) * STEP_S, rel=1e-6)


def test_a_stretch_the_joints_need_slower_is_entered_already_slow():
    # The middle 20 mm of a straight line at 25 mm/s (where the joints' speed limits demand
    # it): braked to it before, within the acceleration, and no faster inside it.
    r = ToolRamp()
    r.reset(500.0, 0.05, STEP_S)
    blocks = [(40.0, 100.0, 1.0, 0.0), (20.0, 25.0, 1.0, 0.0), (40.0, 100.0, 1.0, 0.0)]
    out = run_ramp(r, blocks)
    check_ramp(out, 500.0, 100.0)
    check_tops(out, blocks)
    assert max(out) / STEP_S == pytest.approx(100.0)


blocks_st = st.lists(st.tuples(st.floats(0.05, 80.0), st.floats(5.0, 300.0), st.floats(-math.pi, math.pi)),
                     min_size=1, max_size=3 * ToolRamp().size)


def corner_speeds(blocks, accel, deviation):
    """Each junction's speed, worked out from the corner's geometry: GRBL's junction deviation,
    and no faster than an arc through the shorter block at accel allows (Marlin's rule);
    None where the two blocks' tops bound it already (a junction with no corner to speak of)."""
    speeds = []
    for (l0, top0, x0, y0), (l1, top1, x1, y1) in zip(blocks, blocks[1:]):
        cos_turn = x0 * x1 + y0 * y1
        v = junction_speed(cos_turn, accel, deviation)
        if v > 0.0:
            v = min(v, math.sqrt(accel * min(l0, l1) / math.sqrt(2.0 * (1.0 - cos_turn))))
        speeds.append(v if 0.0 < v < min(top0, top1) else None)
    return speeds


def check_corners(out, blocks, accel, deviation, step_s=STEP_S):
    """The step across each corner, or where a step ends on it (braking lands exactly there)
    the step after it, no faster than the corner's speed."""
    ends = [sum(b[0] for b in blocks[:j + 1]) for j in range(len(blocks) - 1)]
    positions = [0.0]
    for ds in out:
        positions.append(positions[-1] + ds)
    for end, speed in zip(ends, corner_speeds(blocks, accel, deviation)):
        if speed is None:
            continue
        near = 1e-9 * end               # a sum of steps that ends on the corner, to rounding
        for k, ds in enumerate(out):
            starts_there = abs(positions[k] - end) <= near
            if starts_there or positions[k] < end - near and positions[k + 1] > end + near:
                assert ds / step_s <= speed * (1 + 1e-6), (end, k)


@settings(max_examples=150, deadline=None)
@given(blocks_st, st.floats(50.0, 3000.0), st.floats(0.005, 0.5))
def test_every_polyline_keeps_the_acceleration_each_blocks_top_and_each_corners_speed(raw, accel, deviation):
    blocks = [(length, top, math.cos(a), math.sin(a)) for length, top, a in raw]
    r = ToolRamp()
    r.reset(accel, deviation, STEP_S)
    out = run_ramp(r, blocks)
    check_ramp(out, accel, sum(b[0] for b in blocks))
    check_tops(out, blocks)
    check_corners(out, blocks, accel, deviation)

def check_block_accels(out, blocks, step_s=STEP_S):
    """Each step's speed differs from the one before by at most the acceleration of the block
    it starts in (a block's end: the next block's start) times step_s; the last ends at rest."""
    ends = []
    for b in blocks:
        ends.append((ends[-1] if ends else 0.0) + b[0])
    speeds = [0.0] + [ds / step_s for ds in out] + [0.0]
    position = 0.0
    for k in range(len(speeds) - 1):
        j = min(sum(1 for e in ends if e <= position + 1e-9), len(blocks) - 1)
        accel = blocks[j][4]
        assert abs(speeds[k + 1] - speeds[k]) <= accel * step_s * (1 + ROUNDING) + ROUNDING, (k, j)
        if k < len(out):
            position += out[k]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(0.05, 80.0), st.floats(5.0, 300.0), st.floats(-math.pi, math.pi),
                          st.sampled_from([0.0, 31.25, 125.0, 250.0, 500.0])),
                min_size=1, max_size=3 * ToolRamp().size), st.floats(0.005, 0.5))
def test_every_block_keeps_its_own_acceleration(raw, deviation):
    # Blocks of a line where a joint turns fast for the tool's travel take less than the
    # tool's 500 mm/s^2 (armfw.linesurvey): the ramp speeds up and brakes no harder in them.
    blocks = [(length, top, math.cos(a), math.sin(a), accel or 500.0) for length, top, a, accel in raw]
    r = ToolRamp()
    r.reset(500.0, deviation, STEP_S)
    out = []
    for length, top, dx, dy, accel in blocks:
        while not r.add(length, top, dx, dy, 0.0, accel):
            out.append(r.step())
    while r.count:
        out.append(r.step())
    check_ramp(out, 500.0, sum(b[0] for b in blocks))
    check_tops(out, [b[:4] for b in blocks])
    check_block_accels(out, blocks)


def test_a_gentle_block_is_braked_for_at_its_own_acceleration():
    # 100 mm at 100 mm/s, its last 40 mm at 125 mm/s^2: the brake to rest there loses
    # 2.5 mm/s a step, 40 steps from 100 mm/s (the first 60 mm keep 500 mm/s^2).
    r = ToolRamp()
    r.reset(500.0, 0.05, STEP_S)
    r.add(60.0, 100.0, 1.0, 0.0, 0.0)
    r.add(40.0, 100.0, 1.0, 0.0, 0.0, 125.0)
    out = []
    while r.count:
        out.append(r.step())
    speeds = [ds / STEP_S for ds in out]
    assert speeds[:10] == pytest.approx([10.0 * k for k in range(1, 11)])
    assert speeds[-39:] == pytest.approx([2.5 * k for k in range(39, 0, -1)], abs=2.5)
    assert max(abs(b - a) for a, b in zip(speeds[10:], speeds[11:])) <= 2.5 * (1 + ROUNDING)
    assert sum(out) == pytest.approx(100.0, rel=1e-12)


def test_a_hold_brakes_at_accel_to_the_distance_it_announced_and_resumes_to_the_end():
    r = ToolRamp()
    r.reset(500.0, 0.05, STEP_S)
    r.add(200.0, 100.0, 1.0, 0.0, 0.0)
    covered = sum(r.step() for _ in range(30))
    assert r.speed == pytest.approx(100.0)
    r.hold()
    # From 100 mm/s losing 10 mm/s a step: 90 + 80 + ... + 10 mm/s for 20 ms each = 9 mm.
    assert r.stopping_mm() == pytest.approx(9.0)
    after = []
    while True:
        ds = r.step()
        if ds == 0.0:
            break
        after.append(ds)
    assert sum(after) == pytest.approx(9.0)
    assert [ds / STEP_S for ds in after] == pytest.approx([90.0 - 10.0 * k for k in range(9)])
    assert r.step() == 0.0 and r.speed == 0.0       # held: at rest until resumed
    r.resume()
    rest = []
    while r.count:
        rest.append(r.step())
    assert rest[0] / STEP_S == pytest.approx(10.0)
    assert covered + sum(after) + sum(rest) == pytest.approx(200.0, rel=1e-12)


# -- the same numbers under MicroPython --------------------------------------------------

def _numbers(lines):
    return [(line.split()[0], [float(x) for x in line.split()[1:]]) for line in lines]


def test_micropython_computes_the_same_profiles(micropython, report):
    import os
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    mp = subprocess.run([micropython, str(MP_SCRIPTS / "profile_run.py")], capture_output=True, text=True,
                        timeout=120, env=env)
    assert mp.returncode == 0, mp.stderr
    cp = subprocess.run([sys.executable, str(MP_SCRIPTS / "profile_run.py")], capture_output=True, text=True,
                        timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT / "firmware")))
    assert cp.returncode == 0, cp.stderr
    mp_lines = _numbers(mp.stdout.splitlines())
    cp_lines = _numbers(cp.stdout.splitlines())
    alloc = [v for kind, v in mp_lines if kind == "alloc"]
    assert len(alloc) == 1
    mp_lines = [x for x in mp_lines if x[0] != "alloc"]
    assert [k for k, _ in mp_lines] == [k for k, _ in cp_lines] == ["joint"] * 3 + ["ramp"] * 3 + ["hold"]
    for (kind, a), (_, b) in zip(mp_lines, cp_lines):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12), kind
    report("profile allocation per step (Unix port, boxed floats): joint fraction %d B, tool ramp %d B"
           % tuple(alloc[0]))
