# SPDX-License-Identifier: MIT
"""Feed hold measured, not asserted: `!` decelerates along the checked steps within the
acceleration limits, `~` accelerates back, Ctrl-X still stops at once.

The exact tests drive the firmware's executor under CPython and record every pose sent:
their differences give each joint's (and the tool's) velocity per step exactly. The
simulator test reads the real MicroPython's recorded pulses, differentiated as in
tests/test_motion_profile.py (its tolerances for the 1 µs pulse quantum)."""
import time
from math import radians, sqrt

import pytest

from armctl.bench import accuracy
from armctl.sim import Simulator
from armfw import board
from armfw.gripper import Gripper
from armfw.motion import ArmController
from armfw.gcodearc import arc
from armfw.planner import ARC, GRIP_CLOSE, GRIP_OPEN, LINE
from armfw.simservo import SimServo
from conftest import BOARDS
from test_motion_profile import (ACCEL, JOINTS, QUANTUM, STEP_S, TOOL_ACCEL, WINDOW, arm5_mapping, arm5_tool,
                                 derivatives, joint_samples)

ARM5 = BOARDS / "sim_arm5.json"
# Rounding in the limits' own arithmetic, no more.
FLOAT = 1e-9


def arm5():
    b = board.load(str(ARM5))
    # Exact timing: a line step's pose is the walk's own, its pulses rounded per joint (the
    # joint choice of pulses moves each pose by up to a pulse quantum: tests/test_pulse_choice.py).
    accuracy.round_each(b.servos)
    driver = SimServo(b.driver)
    arm = ArmController(b, driver, Gripper(driver, b.gripper), sleep_ms=lambda ms: None)
    arm.park()
    return arm


def run_recording(arm, hold_at, resume_after):
    """Run the plan begun: `!` before step hold_at, `~` resume_after steps of rest later.
    The pose (and pulses) after every step period, at rest too."""
    ex = arm.executor
    poses = [(list(arm.q), list(arm.output.next_us))]
    rest = 0
    for k in range(5000):
        if k == hold_at:
            ex.hold()
        if ex.resting():
            rest += 1
            if rest == resume_after:
                ex.resume()
            poses.append((list(arm.q), list(arm.output.next_us)))
            continue
        if arm.step() < 0:
            return poses
        arm.refill()
        poses.append((list(arm.q), list(arm.output.next_us)))
    raise AssertionError("the motion never ended")


def plain_run(arm, plan):
    """The same plan's checked steps, run without a hold: [(pose, pulses)] from its start."""
    plan()
    assert arm.begin()
    return run_recording(arm, -1, 0)


def velocities(poses, j):
    return [(b[0][j] - a[0][j]) / STEP_S for a, b in zip(poses, poses[1:])]


def places(held, checked):
    """Each pose sent as (k, f): f of the way from checked step k to k + 1 in joint space,
    its pulses between theirs; asserts there is one (no pose off the checked path)."""
    k = 0
    found = []
    for q, us in held:
        while True:
            a, b = checked[k], checked[k + 1] if k + 1 < len(checked) else checked[k]
            span = [b[0][j] - a[0][j] for j in JOINTS]
            big = max(JOINTS, key=lambda j: abs(span[j]))
            f = (q[big] - a[0][big]) / span[big] if span[big] else 0.0
            if -1e-9 <= f <= 1 + 1e-9 and all(abs(a[0][j] + f * span[j] - q[j]) < 1e-9 for j in JOINTS):
                break
            k += 1
            assert k < len(checked), "a pose off the checked path: %s" % q
        for j in JOINTS:
            assert min(a[1][j], b[1][j]) <= us[j] <= max(a[1][j], b[1][j])
        found.append((k, f))
    return found


def assert_on_the_checked_path(held, checked):
    """Every pose sent lies on the polyline of checked poses, its pulses between two checked ones."""
    places(held, checked)


def speed_changes(points):
    """The change from each step to the next of the speed along the path (mm/s per step)
    of a tool through points, one a step."""
    speeds = [sqrt(sum((b[i] - a[i]) ** 2 for i in range(3))) / STEP_S for a, b in zip(points, points[1:])]
    return [b - a for a, b in zip(speeds, speeds[1:])]


def joint_changes(poses):
    """Each joint's largest change of velocity from one step to the next (rad/s per step)."""
    return [max([abs(b - a) for a, b in zip(v, v[1:])] + [0.0]) for v in (velocities(poses, j) for j in JOINTS)]


def assert_held_within_the_limits(held, checked):
    """A held run of checked: on its path, ending where it ends, and per step no joint's
    velocity changes by more than its acceleration allows, nor the tool's speed along the
    path by more than the tool's (or than the plan's own steps change it)."""
    found = places(held, checked)
    assert held[-1] == checked[-1]
    for j, change in enumerate(joint_changes(held)):
        assert change <= ACCEL * STEP_S * (1 + FLOAT), j
    # The hold bounds the tool on the chord between two checked steps' tool points: there,
    # exactly. The real tool (the joints interpolated) strays off that chord by the sag,
    # measured here; a change of speed takes three points: up to 4 sags a step more.
    own = max([TOOL_ACCEL * STEP_S] + [abs(c) for c in speed_changes([arm5_tool(q) for q, _ in checked])])
    chord = []
    sag = 0.0
    for (q, _), (k, f) in zip(held, found):
        a = arm5_tool(checked[k][0])
        b = arm5_tool(checked[min(k + 1, len(checked) - 1)][0])
        chord.append([a[i] + f * (b[i] - a[i]) for i in range(3)])
        p = arm5_tool(q)
        sag = max(sag, sqrt(sum((chord[-1][i] - p[i]) ** 2 for i in range(3))))
    assert max(abs(c) for c in speed_changes(chord)) <= own * (1 + FLOAT)
    real = speed_changes([arm5_tool(q) for q, _ in held])
    assert max(abs(c) for c in real) <= own * (1 + FLOAT) + 4 * sag / STEP_S


def joint_move(arm):
    assert arm.joints([0, 0, radians(90), 0, 0])
    return lambda: arm.plan_joints([radians(60), radians(10), radians(70), radians(20), 0])


@pytest.mark.parametrize("hold_at", [3, 12, 25, 38])     # ramping up, cruising, ramping down
def test_a_held_joint_move_decelerates_within_each_joints_acceleration_and_resumes(hold_at):
    arm = arm5()
    plan = joint_move(arm)
    checked = plain_run(arm, plan)
    assert arm.joints([0, 0, radians(90), 0, 0])
    plan()
    assert arm.begin()
    held = run_recording(arm, hold_at, 5)
    assert len(held) > len(checked)         # it came to rest and went on
    for j in JOINTS:
        v = velocities(held, j)
        # Per step, the velocity changes by at most accel * dt: no step, no excess.
        assert max(abs(b - a) for a, b in zip(v, v[1:])) <= ACCEL * STEP_S * (1 + FLOAT)
    # At rest for 5 step periods: the joints' velocity reached zero (not a stop between steps).
    still = [i for i in range(1, len(held)) if held[i][0] == held[i - 1][0]]
    assert len(still) >= 5
    assert_on_the_checked_path(held, checked)
    assert held[-1] == checked[-1]          # the plan's own last step


def held_line(hold_at, resume_after):
    """A 120 mm line at 100 mm/s: its checked steps run plain, and held (run_recording)."""
    arm = arm5()
    assert arm.move((150, -60, 150, radians(180)))

    def plan():
        arm.plan()
        arm.add(LINE, (150, 60, 150, radians(180)))
    checked = plain_run(arm, plan)
    assert arm.move((150, -60, 150, radians(180)))
    plan()
    assert arm.begin()
    return arm, checked, run_recording(arm, hold_at, resume_after)


def test_a_hold_before_the_first_step_rests_and_then_runs_the_plan_as_checked():
    """Held before anything is sent, the arm rests where the plan starts from rest:
    `~` runs the plan's own steps, as if it had never been held."""
    arm, checked, held = held_line(0, 4)
    assert held[1:5] == [held[0]] * 4           # four step periods at rest, nothing sent
    assert held[5:] == checked[1:]


def test_a_held_line_decelerates_within_the_tools_acceleration_on_the_line():
    arm, checked, held = held_line(30, 3)
    points = [arm5_tool(q) for q, _ in held]
    speeds = [sqrt(sum((b[i] - a[i]) ** 2 for i in range(3))) / STEP_S for a, b in zip(points, points[1:])]
    # The hold came at cruise (100 mm/s) and brought the tool to rest at 500 mm/s^2 or less.
    assert max(speeds) == pytest.approx(100.0, rel=1e-6)
    assert speeds.count(0.0) >= 3
    # The hold bounds the tool on the chord between two checked steps; the real tool sags off
    # it by far less than a thousandth of a step's travel.
    assert max(abs(b - a) for a, b in zip(speeds, speeds[1:])) <= TOOL_ACCEL * STEP_S * (1 + 1e-3)
    # Stopping from 100 mm/s at 500 mm/s^2 takes 100 / (500 * 0.02) = 10 steps at the least.
    first_rest = speeds.index(0.0)
    slowing = [i for i in range(first_rest) if speeds[i] < 100.0 - 1e-6 and i > 20]
    assert len(slowing) >= 9
    assert_on_the_checked_path(held, checked)
    assert held[-1] == checked[-1]


def still_steps(poses):
    return len([i for i in range(1, len(poses)) if poses[i][0] == poses[i - 1][0]])


def hold_everywhere(setup, plan, resume_after=3):
    """The plan run plain, then once held before each of its steps (setup: the arm to its
    start): [(hold_at, checked, held)]."""
    arm = arm5()
    setup(arm)
    checked = plain_run(arm, lambda: plan(arm))
    runs = []
    for hold_at in range(len(checked)):
        arm = arm5()
        setup(arm)
        plan(arm)
        assert arm.begin()
        runs.append((hold_at, checked, run_recording(arm, hold_at, resume_after)))
    return runs


def test_a_hold_at_any_step_of_a_line_stays_within_the_limits():
    def setup(arm):
        assert arm.move((150, -60, 150, radians(180)))

    def plan(arm):
        arm.plan()
        arm.add(LINE, (150, 60, 150, radians(180)))
    for hold_at, checked, held in hold_everywhere(setup, plan):
        assert_held_within_the_limits(held, checked)
        assert still_steps(held) >= 3, hold_at         # it came to rest, and `~` went on


# Half a circle of r = 40 mm (G3 from (150, -40) about (150, 0), as armfw.gcode walks it:
# chords of a step at 100 mm/s, ramped from rest to rest; round this bend v^2 / r =
# 250 mm/s^2 of the tool's 500).
ARC_START = (150.0, -40.0, 150.0, radians(180))


def arc_plan(arm):
    chords = arc(ARC_START, (150.0, 40.0, 150.0, radians(180)), False, (0.0, 40.0))
    arm.plan()
    chords.split(arm.planner.line_step_mm)
    chords.top = arm.planner.line_top(arm.planner.line_step_mm)
    arm.add(ARC, chords)


def test_a_hold_at_any_step_of_an_arc_stays_within_the_limits():
    def setup(arm):
        assert arm.move(ARC_START)
    # The arc ramps from rest to rest: a hold anywhere on it, its last steps too, rests
    # within the limits.
    for hold_at, checked, held in hold_everywhere(setup, arc_plan):
        assert_held_within_the_limits(held, checked)
        assert still_steps(held) >= 3, hold_at


def test_a_hold_on_a_long_line_works_while_the_ring_is_refilled():
    arm = arm5()
    assert arm.move((150, -60, 150, radians(180)))

    def plan():
        arm.plan()
        arm.add(LINE, (150, 60, 150, radians(180)), step_mm=0.4)     # 300 steps: past the ring
    checked = plain_run(arm, plan)
    assert len(checked) > 2 * arm.executor.ring_size
    assert arm.move((150, -60, 150, radians(180)))
    plan()
    assert arm.begin() and not arm.executor.kept_whole()
    held = run_recording(arm, 200, 4)
    assert_on_the_checked_path(held, checked)
    assert held[-1] == checked[-1]
    for j in JOINTS:
        v = velocities(held, j)
        assert max(abs(b - a) for a, b in zip(v, v[1:])) <= ACCEL * STEP_S * (1 + FLOAT)


# The pick's events: the joint move above 0..47, open 48, the line down 49..77, close 78.
@pytest.mark.parametrize("hold_at", [45, 52, 65, 74, 77])
def test_a_hold_ahead_of_a_gripper_action_rests_on_the_checked_step_before_it(hold_at):
    # pick: above the object (a joint move), open, straight down, close, straight up.
    arm = arm5()
    grips = []
    arm.gripper.open = lambda: grips.append(("open", list(arm.q)))
    arm.gripper.close = lambda: grips.append(("close", list(arm.q)))

    def plan():
        assert arm.joints([0, 0, radians(90), 0, 0])
        arm.pick_plan((150, 0, 60), True)
    checked = plain_run(arm, plan)
    plain_grips = list(grips)
    grips.clear()
    plan()
    assert arm.begin()
    assert (arm.executor._events[48], arm.executor._events[78]) == (GRIP_OPEN, GRIP_CLOSE)
    held = run_recording(arm, hold_at, 3)
    # The gripper acted as often, at the same checked poses; the arm never moved past one unacted.
    assert grips == plain_grips
    assert_on_the_checked_path(held, checked)
    assert held[-1] == checked[-1]
    for j in JOINTS:
        v = velocities(held, j)
        assert max(abs(b - a) for a, b in zip(v, v[1:])) <= ACCEL * STEP_S * (1 + FLOAT)


def test_the_stopping_distance_is_what_the_hold_then_covers():
    arm = arm5()
    assert arm.move((150, -60, 150, radians(180)))
    arm.plan()
    arm.add(LINE, (150, 60, 150, radians(180)))
    assert arm.begin()
    for _ in range(30):
        arm.step()
    speed, stop = arm.executor.motion_fields()
    assert speed == pytest.approx(100.0, rel=1e-6)
    # Independently: from 100 mm/s, 10 mm/s slower each 0.02 s step: (90 + 80 + .. + 10) * 0.02 mm.
    assert stop == pytest.approx(sum(range(10, 100, 10)) * STEP_S, rel=1e-6)
    start = arm5_tool(arm.q)
    arm.executor.hold()
    while not arm.executor.resting():
        arm.step()
    end = arm5_tool(arm.q)
    assert sqrt(sum((end[i] - start[i]) ** 2 for i in range(3))) == pytest.approx(stop, rel=1e-6)


def test_ctrl_x_during_a_hold_stops_at_once():
    arm = arm5()
    plan = joint_move(arm)
    plan()
    assert arm.begin()
    for _ in range(20):
        arm.step()
    arm.executor.hold()
    arm.step()
    sent = arm.driver.count
    arm.stop()                  # what Ctrl-X does (armfw.session.abort)
    assert arm.step() == -1 and arm.driver.count == sent


def fields(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


def test_in_micropython_a_hold_decelerates_and_ctrl_x_still_stops_at_once(micropython, report):
    signs, offsets = arm5_mapping()
    tool_accel = TOOL_ACCEL
    lever = 126.14 + 126.14 + 150.6
    err = 2 * QUANTUM * lever
    with Simulator(ARM5, realtime=True) as sim:
        assert sim.request("move 150 -100 150 180")[-1].startswith("ok OK")
        since = sim.pulses()[-1][0] + 1
        sim.write(b"line 150 100 150 180\n")
        # The line runs 2.2 s, at cruise (100 mm/s) from 0.2 s; the first progress line comes at 0.4 s.
        assert sim.readline(30).startswith("# progress state=run")
        sim.write(b"!?")
        status = fields(sim.readline(30))
        assert status["state"] == "hold"
        # The speed over the last step, from the pose its pulses command: up to two
        # pulse quanta at the lever per step off the 100 mm/s cruise.
        assert 0 < float(status["speed"]) <= 100.0 + err / STEP_S
        # Resting: a status line with speed 0 (a condition, with a generous deadline).
        deadline = time.monotonic() + 30
        while True:
            assert time.monotonic() < deadline, "the hold never came to rest"
            time.sleep(0.05)
            sim.write(b"?")
            line = sim.readline(30)
            while not line.startswith("# status"):
                line = sim.readline(30)
            if fields(line)["speed"] == "0.000":
                break
        assert fields(line)["stop"] == "0.000"
        sim.write(b"~")
        reply = sim.readline(30)
        while reply.startswith("#"):
            reply = sim.readline(30)
        assert reply.startswith("ok OK"), reply
        samples = joint_samples(sim.pulses(), since, signs, offsets)
        # Ctrl-X at cruise: the pulses end at once, from full speed.
        since = sim.pulses()[-1][0] + 1
        sim.write(b"line 150 -100 150 180\n")
        assert sim.readline(30).startswith("# progress state=run")
        sim.write(b"\x18")
        assert sim.readline(30).startswith("error ABORTED aborted (Ctrl-X)")
        aborted = joint_samples(sim.pulses(), since, signs, offsets)
        count = len(sim.pulses())
        assert sim.request("unlock")[-1] == "ok"
        assert len(sim.pulses()) == count
    y = [arm5_tool(q)[1] for q in samples]
    assert y[-1] - y[0] == pytest.approx(200.0, abs=err)
    # At rest mid-line: a step period with no pulse (the pose still), far from both ends.
    middle = [abs(b - a) for a, b in zip(y[15:-15], y[16:-15])]
    assert min(middle) == 0.0, "the line never came to rest in the middle"
    y = [y[0]] * WINDOW + y + [y[-1]] * WINDOW
    acc = [(y[i + WINDOW] - 2 * y[i] + y[i - WINDOW]) / (WINDOW * STEP_S) ** 2 for i in range(WINDOW, len(y) - WINDOW)]
    assert max(abs(a) for a in acc) <= tool_accel + 2 * err / (WINDOW * STEP_S) ** 2
    for j in JOINTS:
        _, jacc = derivatives(samples, j, WINDOW)
        assert max(abs(x) for x in jacc) <= ACCEL + 2 * QUANTUM / (WINDOW * STEP_S) ** 2, j
    # The abort: the last 5 steps ran at cruise, 2 mm each (a braking hold would have covered
    # 1.8 + 1.6 + .. + 1.0 = 7 mm), up to two microseconds' angle at the lever aside.
    y = [arm5_tool(q)[1] for q in aborted]
    assert y[-6] - y[-1] == pytest.approx(10.0, abs=err)
    report("hold in MicroPython: peak tool acceleration over %d steps %.0f mm/s^2 (limit %.0f, "
           "pulse quantum tolerance %.0f)" % (WINDOW, max(abs(a) for a in acc), tool_accel,
                                              2 * err / (WINDOW * STEP_S) ** 2))


def test_accel_sets_the_limits_validated_and_info_shows_them(micropython):
    with Simulator(ARM5) as sim:
        info = fields(sim.request("info")[-1])
        assert info["accel_deg_s2"] == ",".join(["360.000"] * 5) and info["tool_accel_mm_s2"] == "500.000"
        assert sim.request("accel")[-1] == "ok joints=%s tool=500.000" % ",".join(["360.000"] * 5)
        for bad in ("accel 0", "accel 361", "accel 100 501", "accel nan", "accel 100 x", "accel 1 2 3"):
            assert sim.request(bad)[-1].startswith("error BAD_INPUT"), bad
        assert sim.request("accel")[-1].endswith("tool=500.000")        # nothing changed
        assert sim.request("accel 180 250")[-1] == "ok joints=%s tool=250.000" % ",".join(["180.000"] * 5)
        info = fields(sim.request("info")[-1])
        assert info["accel_deg_s2"] == ",".join(["180.000"] * 5) and info["tool_accel_mm_s2"] == "250.000"
        # The new limit times the next move: 90 deg of the base at 90 deg/s and 180 deg/s^2 is
        # 0.5 s up, 0.5 s at speed, 0.5 s down: 1.5 s, 75 steps (at 360 deg/s^2, 1.25 s).
        reply = sim.request("joints 90 0 90 0 0")[-1]
        assert reply.startswith("ok OK") and reply.endswith("steps=75"), reply
