# SPDX-License-Identifier: MIT
"""Motion: whole-plan validation, the joint speed limit, straight lines, pick and place.

Two views of the same controller (armfw.motion): under CPython with a hook on
every step (exact poses), and the MicroPython simulator's recorded pulses,
decoded back to angles with the servo formula written out here and to tool
positions with docs/KINEMATICS.md's forward kinematics written out here.
"""

import json
from math import cos, degrees, pi, radians, sin, sqrt

import pytest

from armctl.sim import Simulator
from armfw import board, executor, motion, status
from armfw.gripper import Gripper
from armfw.clock import StepClock
from armfw.executor import GRIP_DWELL_MS
from armfw.motion import ArmController
from armfw.planner import GRIP_CLOSE, GRIP_OPEN, JOINTS, LINE, MOVE, WAIT
from armfw.simservo import SimServo
from conftest import BOARDS

ARM5 = BOARDS / "sim_arm5.json"
PLANAR = BOARDS / "sim_planar.json"
L1, L2, L3, BASE = 126.14, 126.14, 150.6, 189.0
US_PER_RAD_ARM5 = 424.448
STEP_MS = 20
# Pulses are whole microseconds: half a microsecond of rounding per joint.
PULSE_MM = 2.0
# A line step's pulses are the floor or the ceiling of each joint's exact one, chosen jointly
# (armfw.pulsepick), and its pose the one they command: nearer the line than rounding each
# (half a microsecond per joint, times each joint's reach: 180 and 80 mm), within a
# microsecond of each exact pulse. A line's last step's pose is its target.
US_PER_RAD_PLANAR = 318.31
PLANAR_PULSE_MM = 0.5 / US_PER_RAD_PLANAR * (180 + 80)


def arm5_tool(q):
    """docs/KINEMATICS.md forward kinematics, q in radians: (x, y, z) mm."""
    a2 = q[1]
    a3 = a2 + q[2]
    a4 = a3 + q[3]
    s = L1 * sin(a2) + L2 * sin(a3) + L3 * sin(a4)
    return s * cos(q[0]), s * sin(q[0]), BASE + L1 * cos(a2) + L2 * cos(a3) + L3 * cos(a4)


def planar_tool(q, l1=100.0, l2=80.0):
    return l1 * cos(q[0]) + l2 * cos(q[0] + q[1]), l1 * sin(q[0]) + l2 * sin(q[0] + q[1])


class Recorder:
    """A CPython arm whose every step (and gripper dwell) is recorded."""

    def __init__(self, path, edit=None):
        data = json.loads(path.read_text())
        if edit:
            edit(data)
        self.board = board.from_dict(data, str(path))
        self.driver = SimServo(self.board.driver)
        gripper = Gripper(self.driver, self.board.gripper) if self.board.gripper else None
        self.poses = []
        self.arm = ArmController(self.board, self.driver, gripper, sleep_ms=self._sleep)
        self.arm.park()

    def _sleep(self, ms):
        self.poses.append((ms, list(self.arm.q)))
        self.driver.sleep_ms(ms)


def max_joint_step(poses, start):
    prev = start
    worst = 0.0
    for _, q in poses:
        worst = max(worst, max(abs(a - b) for a, b in zip(q, prev)))
        prev = q
    return worst


# -- CPython, exact poses ----------------------------------------------------

def trapezoid_steps(distance, speed, accel, step_s=STEP_MS / 1000):
    """Whole steps of a rest-to-rest move of distance at speed and accel (any one unit):
    distance / speed + speed / accel, or 2 sqrt(distance / accel) when too short to reach speed."""
    if distance >= speed * speed / accel:
        t = distance / speed + speed / accel
    else:
        t = 2 * sqrt(distance / accel)
    return int(t / step_s + 1 - 1e-9)


def test_joint_move_is_a_trapezoid_at_the_speed_limit():
    r = Recorder(ARM5)
    arm = r.arm
    start = list(arm.q)
    assert arm.set_speed_deg_s(30)
    arm.plan()
    arm.add(JOINTS, [radians(v) for v in (90, 0, 90, 0, 0)])
    assert arm.run()
    # 90 deg at 30 deg/s, 360 deg/s^2 (the standard servo class): 3 s + 1/12 s up and down,
    # 155 steps of 20 ms (150 at constant speed); no step turns a joint more than 0.6 deg.
    assert trapezoid_steps(90, 30, 360) == 155
    assert arm.executor.steps == 155 == len(r.poses)
    assert max_joint_step(r.poses, start) <= radians(0.6) + 1e-12
    assert abs(r.poses[-1][1][0] - radians(90)) < 1e-12
    # At rest at both ends: the first and last steps are the smallest.
    base = [start[0]] + [q[0] for _, q in r.poses]
    moves = [b - a for a, b in zip(base, base[1:])]
    assert moves[0] == pytest.approx(min(moves), rel=1e-9) and moves[-1] == pytest.approx(moves[0], rel=1e-9)
    assert 0 < moves[0] < radians(360) * (STEP_MS / 1000) ** 2


@pytest.mark.parametrize("start, end", [
    ((175, -40), (175, 40)),       # skims the outer edge: elbow nearly straight at the ends
    ((60, 120), (150, -60)),
    ((-100, 100), (100, 100)),
])
def test_planar_line_is_straight_and_slows_down_instead_of_jumping(start, end):
    r = Recorder(PLANAR)
    arm = r.arm
    arm.plan()
    arm.add(MOVE, start)
    assert arm.run()
    r.poses.clear()
    q0 = list(arm.q)
    arm.plan()
    arm.add(LINE, end)
    assert arm.run(), (arm.refusal.status, arm.refusal.step)
    limit = radians(90) * STEP_MS / 1000
    assert max_joint_step(r.poses, q0) <= limit + 2 / US_PER_RAD_PLANAR
    (x0, y0), (x1, y1) = start, end
    length = sqrt((x1 - x0) ** 2 + (y1 - y0) ** 2)
    prev = planar_tool(q0)
    steps = []
    for _, q in r.poses:
        x, y = planar_tool(q)
        # Distance from the segment's line (cross product), and progress along it.
        off = abs((x1 - x0) * (y0 - y) - (x0 - x) * (y1 - y0)) / length
        assert off <= PLANAR_PULSE_MM
        steps.append(sqrt((x - prev[0]) ** 2 + (y - prev[1]) ** 2))
        prev = (x, y)
    assert max(steps) <= 2.0 + 4 * PLANAR_PULSE_MM
    assert abs(prev[0] - x1) < 1e-6 and abs(prev[1] - y1) < 1e-6     # the last step's pose: the target
    if start == (175, -40):
        # Near the edge the joints turn fast for the tool: the steps shrink.
        assert min(steps) < 1.0
        assert len(steps) > length / 2.0


def test_arm5_line_keeps_the_tool_straight_and_pitch_interpolated():
    r = Recorder(ARM5)
    arm = r.arm
    arm.plan()
    arm.add(MOVE, (150, 100, 150, pi))
    assert arm.run()
    r.poses.clear()
    q0 = list(arm.q)
    arm.plan()
    arm.add(LINE, (250, -50, 250, radians(120)))
    assert arm.run()
    a, b = (150, 100, 150), (250, -50, 250)
    d = [b[i] - a[i] for i in range(3)]
    n = sqrt(sum(v * v for v in d))
    for _, q in r.poses:
        p = arm5_tool(q)
        t = sum((p[i] - a[i]) * d[i] for i in range(3)) / n / n
        off = sqrt(sum((p[i] - a[i] - t * d[i]) ** 2 for i in range(3)))
        assert off <= PULSE_MM
        # Three joints a microsecond each, and t as far off as the point along the line.
        pitch = q[1] + q[2] + q[3]
        assert abs(pitch - (pi + t * (radians(120) - pi))) <= 3 / US_PER_RAD_ARM5 + 2 * PULSE_MM / n * (pi / 3)
    assert max_joint_step(r.poses, q0) <= radians(90) * STEP_MS / 1000 + 2 / US_PER_RAD_ARM5


def test_refused_plan_moves_nothing_and_names_the_failing_step():
    r = Recorder(PLANAR)
    arm = r.arm
    arm.plan()
    arm.add(MOVE, (60, 0))
    assert arm.run()
    sent = r.driver.count
    q = list(arm.q)
    # Fast joints: near the fold the elbow would slow a line at 90 deg/s and ease its
    # acceleration at 360 deg/s^2 (tests/test_motion_profile.py); here the tool's ramp alone
    # sets the steps.
    arm.planner.speed_rad_s = radians(900)
    arm.planner.joint_accel = [radians(36000)] * len(q)
    arm.plan()
    arm.add(LINE, (-60, 0))
    assert not arm.run()
    assert r.driver.count == sent and arm.q == q
    # By hand: folding to radius r needs cos(t2) = (r^2 - 100^2 - 80^2) / (2*100*80);
    # the 160 deg elbow limit is reached at r = 36.94 mm.
    r_limit = sqrt(100 ** 2 + 80 ** 2 + 2 * 100 * 80 * cos(radians(160)))
    assert abs(r_limit - 36.94) < 0.01
    assert arm.refusal.point[0] <= r_limit and arm.refusal.point[0] > r_limit - 2.0
    # The tool ramps up at 500 mm/s^2 (0.2, 0.4, ... 2 mm a step, 11 mm in 10 steps), then
    # 2 mm a step: the failing step is the one that reaches the failing point.
    travel = 60 - arm.refusal.point[0]
    reached = [0.1 * k * (k + 1) for k in range(1, 11)] + [11.0 + 2.0 * k for k in range(1, 60)]
    assert arm.refusal.step == 1 + min(range(len(reached)), key=lambda k: abs(reached[k] - travel))


# -- MicroPython simulator, recorded pulses ----------------------------------

def decode(pulses, channels, us_per_rad, center=1500):
    """Pose after every time stamp: [(t_ms, [angle rad per channel], gripper us)]."""
    current = {}
    timeline = []
    for t, ch, us in pulses:
        current[ch] = us
        angles = [(current.get(c, center) - center) / us_per_rad for c in channels]
        if timeline and timeline[-1][0] == t:
            timeline[-1] = (t, angles, current.get(5))
        else:
            timeline.append((t, angles, current.get(5)))
    return timeline


def check_speed(pulses, channels, deg_s, us_per_rad):
    """No channel's pulse changes faster than the speed limit (plus each pulse's distance from
    its exact one: under a microsecond, floor or ceiling, on a line)."""
    per_step = radians(deg_s) * STEP_MS / 1000 * us_per_rad
    last = {}
    for t, ch, us in pulses:
        if ch in channels and ch in last:
            t0, us0 = last[ch]
            allowed = per_step * max(1, (t - t0) / STEP_MS) + 2
            assert abs(us - us0) <= allowed, (t, ch, us0, us)
        last[ch] = (t, us)


def test_pick_and_place_pulses_follow_the_waypoints(micropython):
    with Simulator(ARM5) as sim:
        assert sim.request("where")[-1].startswith("ok")     # booted
        booted = len(sim.pulses())
        pick = sim.request("pick 150 100 50")[-1]
        place = sim.request("place 200 -80 30")[-1]
        assert pick.startswith("ok ") and place.startswith("ok "), (pick, place)
        pulses = sim.pulses()
    check_speed(pulses, range(5), 90, US_PER_RAD_ARM5)
    timeline = decode(pulses[booted:], range(5), US_PER_RAD_ARM5)
    events = []     # (kind, index in timeline)
    grip = None
    for i, (t, q, g) in enumerate(timeline):
        if g != grip:
            events.append(("open" if g == 1000 else "close" if g == 1900 else g, i))
            grip = g
    assert [e[0] for e in events] == ["open", "close", "open"]

    def tool(i):
        return arm5_tool(timeline[i][1])

    def near(p, want, tol=PULSE_MM):
        return all(abs(a - b) < tol for a, b in zip(p, want))

    (_, i_open), (_, i_close), (_, i_release) = events
    # Pick: gripper opens above the object, closes at it, then the arm lifts.
    assert near(tool(i_open), (150, 100, 90))
    assert near(tool(i_close), (150, 100, 50))
    z = [tool(i)[2] for i in range(i_open, i_close + 1)]
    assert all(b <= a + 0.5 for a, b in zip(z, z[1:]))            # only down
    for i in range(i_open, i_close + 1):
        assert near(tool(i)[:2], (150, 100))                     # straight down
        q = timeline[i][1]
        assert abs(degrees(q[1] + q[2] + q[3]) - 180) < 0.5      # tool pointing down
    lifted = [i for i in range(i_close, i_release) if near(tool(i), (150, 100, 90))]
    assert lifted, "the arm never lifted the object back to the approach height"
    for i in range(i_close, lifted[0] + 1):
        assert near(tool(i)[:2], (150, 100))                     # straight up
    # Place: above the destination, down, release, up.
    above = [i for i in range(lifted[0], i_release) if near(tool(i), (200, -80, 70))]
    assert above and above[0] < i_release
    assert near(tool(i_release), (200, -80, 30))
    assert near(tool(len(timeline) - 1), (200, -80, 70))
    # The gripper dwells before the arm moves on.
    assert timeline[i_close + 1][0] - timeline[i_close][0] >= GRIP_DWELL_MS


def test_pick_is_checked_whole_before_anything_moves(micropython, tmp_path):
    # An arm on a stand, reaching below its base: no floor in the way.
    data = json.loads(ARM5.read_text())
    data["workspace"] = {"floor": None}
    stand = tmp_path / "arm5_on_a_stand.json"
    stand.write_text(json.dumps(data))
    with Simulator(stand) as sim:
        assert sim.request("where")[-1].startswith("ok")     # booted
        booted = sim.pulses()
        # Above (z = -130) is reachable, the object (z = -170) is not: nothing
        # moves, not even the gripper, though the first leg was fine.
        assert sim.request("ik 150 100 -130 180")[-1].startswith("ok ")
        reply = sim.request("pick 150 100 -170")[-1]
        assert reply.startswith("error TOO_FAR line step ")
        assert sim.pulses() == booted


@pytest.mark.parametrize("elbow_deg", [160, 179, 180])
def test_line_through_the_hole_is_refused_with_no_pulse(micropython, tmp_path, elbow_deg):
    data = json.loads(PLANAR.read_text())
    data["joints"][1]["min_deg"] = -elbow_deg
    data["joints"][1]["max_deg"] = elbow_deg
    path = tmp_path / "planar.json"
    path.write_text(json.dumps(data))
    # By hand: the elbow limit is reached on folding to this radius.
    r_limit = sqrt(100 ** 2 + 80 ** 2 + 2 * 100 * 80 * cos(radians(elbow_deg)))
    with Simulator(path) as sim:
        assert sim.request("move 61.3 0")[-1].startswith("ok ")
        before = sim.pulses()
        reply = sim.request("line -61.3 0")[-1]
        words = reply.split()
        assert words[0] == "error" and words[2:4] == ["line", "step"] and words[5] == "at", reply
        step = int(words[4])
        x = float(words[6])
        assert step >= 1
        if elbow_deg == 180:
            assert words[1] == "TOO_CLOSE"      # no limit short of the fold: the hole itself
        if words[1] == "TOO_CLOSE":
            assert 0 < x < 20.0                     # inside the hole |L1 - L2| = 20
        else:
            assert words[1] == "JOINT_LIMIT"
            assert 20.0 - 1e-3 <= x <= r_limit       # folded past the limit, not yet in the hole
            assert x > r_limit - 2.0
        assert sim.pulses() == before
        where = sim.request("where")[-1].split()
        assert where[4:7] == ["x=61.300", "y=0.000", "grip=none"]


def test_arm5_line_through_the_base_axis_is_refused_as_a_jump(micropython):
    with Simulator(ARM5) as sim:
        assert sim.request("move 100 0 300 90")[-1].startswith("ok ")
        before = sim.pulses()
        # The tool pitch points away from the base: crossing the axis needs
        # the base to swing half a turn in no time.
        reply = sim.request("line -100 0 300 90")[-1]
        assert reply.startswith("error SINGULAR line step ") or reply.startswith("error JOINT_LIMIT line step ")
        assert sim.pulses() == before


def test_speed_limit_holds_for_every_pulse_of_a_busy_session(micropython):
    with Simulator(ARM5) as sim:
        script = ["speed 60", "move 200 100 150 180", "line 150 -100 150 180", "joints 90 45 45 45 90",
                  "home", "move 120 -200 250 120", "line 120 200 250 120", "servo 0 2400",
                  "servo 0 600", "pick 200 0 20", "place 100 150 20"]
        for line in script:
            assert sim.request(line)[-1].startswith("ok"), line
        check_speed(sim.pulses(), range(5), 60, US_PER_RAD_ARM5)
        virtual = sim.pulses()[-1][0]
    assert virtual > 10000      # many seconds of motion, run in virtual time


def test_line_near_the_edge_slows_the_tool_in_micropython(micropython):
    with Simulator(PLANAR) as sim:
        assert sim.request("move 175 -40")[-1].startswith("ok")
        t0 = sim.pulses()[-1][0]
        reply = sim.request("line 175 40")[-1]
        assert reply.startswith("ok")
        steps = int(reply.split("steps=")[1].split()[0])
        pulses = sim.pulses()
    # At 2 mm a step the 80 mm line would take 40 steps; near the edge it needs more.
    assert steps > 40
    # Every step takes STEP_MS; the last ones, braking to rest, may move the joints less
    # than a pulse microsecond and so change no pulse.
    assert (steps - 2) * STEP_MS <= pulses[-1][0] - t0 <= steps * STEP_MS
    check_speed(pulses, range(2), 90, 318.31)
    timeline = decode([p for p in pulses if p[0] > t0], range(2), 318.31)
    for _, q, _ in timeline:
        # Decode with the board's mapping: shoulder offset -90 deg.
        x, y = planar_tool((q[0] + radians(90), q[1]))
        assert abs(x - 175) < 1.0


def test_python_calls_refuse_like_the_protocol():
    r = Recorder(ARM5)
    arm = r.arm
    sent = r.driver.count
    assert not arm.joints([0.0, 0.0, radians(136), 0.0, 0.0])
    assert (arm.refusal.status, arm.refusal.reason) == ("JOINT_LIMIT", "outside the joint limits")
    assert not arm.line((600.0, 0.0, 0.0, pi / 2))
    assert arm.refusal.status == "TOO_FAR" and arm.refusal.step >= 1    # somewhere along it
    assert r.driver.count == sent
    assert arm.move((150, 100, 150, pi)) and arm.pick((150, 100, 50)) and arm.home()
    assert arm.q == arm.solver.home


class SlowDriver:
    """A driver without a clock of its own whose every pulse costs 3 ms of (fake) time."""

    def __init__(self, clock):
        self.clock = clock
        self.sent = []

    def set_us(self, channel, us):
        self.clock[0] += 3
        self.sent.append((self.clock[0], channel, us))

    def off(self, channel=None):
        pass


def test_real_time_steps_keep_their_cadence_however_long_a_step_computes():
    b = board.load(str(PLANAR))
    now = [1000]
    driver = SlowDriver(now)

    def sleep_ms(ms):
        now[0] += ms

    # No virtual clock on this driver: real time, on a step clock reading the test's ms.
    arm = ArmController(b, driver, sleep_ms=sleep_ms, clock=StepClock(lambda: now[0]))
    arm.park()
    parked = len(driver.sent)
    assert arm.joints([radians(90), radians(-54)])       # the elbow alone, 36 deg
    assert arm.executor.steps == trapezoid_steps(36, 90, 360) == 33
    elbow = [t for t, ch, _ in driver.sent[parked:] if ch == 1]
    assert len(elbow) == len(driver.sent) - parked
    # Each step spends 3 ms sending and still starts 20 ms after the one before (a step
    # whose pulse rounds to the last one's sends nothing: the first and last, at rest).
    assert len(elbow) >= 33 - 4
    assert all(b - a > 0 and (b - a) % 20 == 0 for a, b in zip(elbow, elbow[1:]))
    assert elbow[-1] - elbow[0] <= 20 * 32


# -- the stepper the live console drives (armfw.session) ---------------------

def test_stepping_by_hand_takes_the_steps_run_takes_and_stops_where_told():
    target = [radians(v) for v in (60, 10, 70, 20, 0)]
    whole = Recorder(ARM5)
    assert whole.arm.joints(target)
    by_hand = Recorder(ARM5)
    arm = by_hand.arm
    assert arm.plan_joints(target) and arm.begin()
    assert arm.executor.total == len(whole.poses) and arm.executor.steps == 0      # checked whole, nothing sent yet
    poses = []
    while True:
        wait = arm.step()
        if wait < 0:
            break
        assert wait == STEP_MS
        poses.append(list(arm.q))
    assert poses == [q for _, q in whole.poses] and arm.executor.steps == arm.executor.total
    # Stopped after 5 steps: the pose of step 5, and no step after it.
    stopped = Recorder(ARM5)
    arm = stopped.arm
    assert arm.plan_joints(target) and arm.begin()
    for _ in range(5):
        arm.step()
    sent = stopped.driver.count
    arm.stop()
    assert arm.step() == -1 and stopped.driver.count == sent
    assert arm.q == poses[4] and arm.executor.steps == 5


def test_relaxed_arm_refuses_to_interpolate_and_joints_sends_at_once():
    r = Recorder(ARM5)
    arm = r.arm
    arm.relax()
    assert not arm.pose_known() and arm.output.us == [-1] * 5
    assert list(r.driver.records())[-1] == (r.driver.now_ms, -1, 0)     # every output off
    arm.plan()
    arm.add(MOVE, (150.0, 0.0, 150.0, pi))
    assert not arm.begin() and arm.refusal.status == "HOME_FIRST"
    sent = r.driver.count
    assert arm.home()
    # One pulse per joint, at once: the home pose by the servo formula.
    assert [us for _, _, us in list(r.driver.records())[sent:]] == \
        [round(1500 + q * US_PER_RAD_ARM5) for q in (0, 0, pi / 2, 0, 0)]
    assert arm.pose_known() and r.poses == []


# -- plans longer than the ring the check pass keeps (executor.RING_STEPS) ------

class PulseRecorder(Recorder):
    """A Recorder that also keeps every pulse sent, (virtual ms, channel, us)."""

    def __init__(self, path):
        Recorder.__init__(self, path)
        self.pulses = []
        record = self.driver.set_us

        def set_us(channel, us):
            self.pulses.append((self.driver.now_ms, channel, us))
            record(channel, us)

        self.driver.set_us = set_us


# The protocol bench's line, out and back at 3 deg/s: the joints' speed limit makes each
# line several hundred steps; a gripper action and a wait between them.
LONG_START = (250.0, -150.0, 150.0, radians(90))
LONG_END = (250.0, 150.0, 150.0, radians(90))


def test_a_line_keeps_its_own_step_length_to_its_last_step():
    """A LINE added with step_mm (G-code F) walks that step length, also where a plan too long
    for the ring is walked a second time while it runs, whatever line_step_mm says by then;
    a step_mm of 0 or above the board's line_step_mm is the board's."""
    a, b = (150.0, -60.0, 150.0), (150.0, 60.0, 150.0)
    # 0.2 mm a step is 10 mm/s, reached in the first step at 500 mm/s^2 (10 mm/s more per
    # step) and left in the last; 2 mm a step (100 mm/s) ramps up over 10 steps (0.2, 0.4,
    # ... 2 mm: 11 mm), down over 9 (9 mm), and 100 mm between at 2 mm: 69 steps.
    board_steps = [0.2 * k for k in range(1, 11)] + [2.0] * 50 + [0.2 * k for k in range(9, 0, -1)]
    assert sum(board_steps) == pytest.approx(120.0)
    for step_mm, advances in ((0.2, [0.2] * 600), (0.0, board_steps), (50.0, board_steps)):
        want = len(advances)
        r = Recorder(ARM5)
        arm = r.arm
        assert arm.move(a + (pi,))
        r.poses.clear()
        arm.plan()
        arm.add(LINE, b + (pi,), step_mm=step_mm)
        assert arm.begin()
        assert arm.executor.total == want, (step_mm, arm.executor.total)    # 120 mm in steps of 0.2 mm or the board's 2 mm
        arm.planner.line_step_mm = 7.0
        step_by_step(r)
        assert len(r.poses) == want
        reached = a[1]
        for (_, q), advance in zip(r.poses, advances):
            reached += advance
            p = arm5_tool(q)
            assert abs(p[1] - reached) <= PULSE_MM and abs(p[0] - 150.0) <= PULSE_MM
        assert abs(reached - 60.0) < 1e-9


def long_plan(arm):
    arm.plan()
    arm.add(LINE, LONG_END)
    arm.add(GRIP_CLOSE)
    arm.add(WAIT, [70])
    arm.add(LINE, LONG_START)
    arm.add(GRIP_OPEN)
    arm.add(JOINTS, [radians(v) for v in (-40, 30, 60, 40, 20)])


def run_long_plan(monkeypatch, ring, refill):
    monkeypatch.setattr(executor, "RING_STEPS", ring)
    monkeypatch.setattr(executor, "REFILL_EVENTS", max(refill, 1))
    r = PulseRecorder(ARM5)
    arm = r.arm
    assert arm.move(LONG_START)
    assert arm.set_speed_deg_s(3.0)
    r.poses.clear()
    del r.pulses[:]
    q0 = list(arm.q)
    long_plan(arm)
    assert arm.begin()
    assert arm.executor.steps == 0 and arm.executor.kept_whole() == (arm.executor.total + 3 <= ring)
    step_by_step(r, refill > 0)
    return r, q0


def step_by_step(r, refill=True):
    """Step the plan begun to its end as the live console does (refill: and refill the ring
    after each step), recording each wait and pose."""
    while True:
        wait = r.arm.step()
        if wait < 0:
            return
        r.poses.append((wait, list(r.arm.q)))
        if refill:
            r.arm.refill()
        r.driver.sleep_ms(wait)


@pytest.mark.parametrize("ring, refill", [(256, 2), (7, 1), (40, 3), (40, 0)])
def test_a_plan_longer_than_the_ring_runs_exactly_the_plan_a_ring_that_holds_it_runs(monkeypatch, ring, refill):
    """The same long plan (lines, a grip, a wait, a joint move: over a thousand events) with a
    ring that holds it whole and with rings that must be refilled while it runs (one
    event refilled per event sent, or none: the live pass catches the second walk up):
    the same pulses at the same virtual times, the same poses; and every pose is the
    plan's by the test's own forward kinematics: the lines straight, no joint faster
    than the limit, each target reached."""
    whole, q0 = run_long_plan(monkeypatch, 100000, 3)
    chunked, _ = run_long_plan(monkeypatch, ring, refill)
    assert len(whole.poses) > 4 * 256
    assert chunked.pulses == whole.pulses and chunked.poses == whole.poses
    assert max_joint_step(whole.poses, q0) <= radians(3.0) * STEP_MS / 1000 + 2 / US_PER_RAD_ARM5
    steps = [q for ms, q in whole.poses if ms == STEP_MS]
    waits = [ms for ms, _ in whole.poses if ms != STEP_MS]
    assert waits == [GRIP_DWELL_MS, 70, GRIP_DWELL_MS]
    a, b = LONG_START[:3], LONG_END[:3]
    d = [b[i] - a[i] for i in range(3)]
    on_line = 0
    for q in steps:
        p = arm5_tool(q)
        t = sum((p[i] - a[i]) * d[i] for i in range(3)) / sum(v * v for v in d)
        if sqrt(sum((p[i] - a[i] - t * d[i]) ** 2 for i in range(3))) <= PULSE_MM and -0.01 <= t <= 1.01:
            on_line += 1
    lines = len(steps) - trapezoid_steps(max(abs(x - y) for x, y in zip(q0, [radians(v) for v in (-40, 30, 60, 40, 20)])),
                                         radians(3.0), radians(360))
    assert on_line >= lines > 2 * 256
    assert steps[-1] == pytest.approx([radians(v) for v in (-40, 30, 60, 40, 20)], abs=1e-12)


def test_a_long_plan_walked_otherwise_the_second_time_stops_before_a_step_it_did_not_check(monkeypatch):
    """The second walk of a long plan must agree with the check: made to solve every pose
    off (by enough to change a pulse), it stops the run at the first step (after sending only that checked
    step); made to refuse a step past the ring, the run stops before that step, having
    sent only steps the check pass took."""
    monkeypatch.setattr(executor, "RING_STEPS", 64)
    whole, q0 = run_long_plan(monkeypatch, 100000, 3)
    for when in ("at once", "past the ring"):
        monkeypatch.setattr(executor, "RING_STEPS", 64)
        r = PulseRecorder(ARM5)
        arm = r.arm
        assert arm.move(LONG_START) and arm.set_speed_deg_s(3.0)
        r.poses.clear()
        long_plan(arm)
        assert arm.begin() and not arm.executor.kept_whole()
        solve = arm.solver.ik

        def off_by_a_hair(target, out, current=None, rule=0):
            st = solve(target, out, current, rule)
            if when == "at once":
                out[0] += 0.01
            elif arm.executor._n_walked > 100:
                return status.COLLISION     # event 101 of the second walk: refused
            return st

        arm.solver.ik = off_by_a_hair
        arm.solver.ik_near = lambda target, out, current: off_by_a_hair(target, out, current)    # a line's steps
        with pytest.raises(RuntimeError, match="not the plan checked"):
            step_by_step(r)
        assert not arm.running() and arm.step() == -1
        # Every step that went out is the checked plan's (refill() stops after a step).
        assert arm.q == whole.poses[arm.executor.steps - 1][1]
        assert r.poses == whole.poses[:arm.executor.steps]
        if when == "at once":
            assert arm.executor.steps == 1           # the first step went out, then the stop
        else:
            # The second walk runs at most the ring's 64 events ahead of the live pass.
            assert 101 - 64 <= arm.executor.steps < 101


def test_a_long_line_sends_in_micropython_the_pulses_it_sends_in_cpython(micropython):
    """A move and a line of over a thousand steps each at 3 deg/s through the simulator's
    protocol (the Unix port, its ring refilled as the line runs) and the same calls on
    CPython: the same pulses on the same channels at the same virtual times."""
    with Simulator(ARM5) as sim:
        assert sim.request("where")[-1].startswith("ok")     # booted
        booted = len(sim.pulses())
        t0 = sim.pulses()[-1][0]
        assert sim.request("speed 3")[-1].startswith("ok")
        assert sim.request("move 250 -150 150 90")[-1].startswith("ok")
        reply = sim.request("line 250 150 150 90")[-1]
        assert reply.startswith("ok")
        steps = int(reply.split("steps=")[1].split()[0])
        pulses = sim.pulses()[booted:]
    assert steps > 4 * 256
    r = PulseRecorder(ARM5)
    assert r.arm.set_speed_deg_s(3.0)
    start = r.driver.now_ms
    assert r.arm.move(LONG_START) and r.arm.line(LONG_END)
    assert [(t - t0, ch, us) for t, ch, us in pulses] == [(t - start, ch, us) for t, ch, us in r.pulses]


class ScriptConsole:
    """A console that hands the live console its request lines, one at a time, then ends."""

    def __init__(self, lines):
        self.lines = list(lines)
        self.closed = False
        self.refused = 0
        self.on_realtime = None

    def next_line(self):
        if self.lines:
            return self.lines.pop(0)
        self.closed = True
        return None

    def wait(self, ms, block=False):
        pass

    def clear_typing(self):
        pass

    def begin(self):
        pass

    def end(self):
        pass

    def flush(self):
        pass


def test_the_live_console_stops_a_long_line_whose_second_walk_disagrees_with_an_error_word():
    """The live console (armfw.session on CPython, virtual time) runs a 3 deg/s line of over
    a thousand steps; its second walk is made to refuse event 301. The line stops
    before that step with `error ABORTED INTERNAL ...` naming the step reached, every
    pulse sent is the checked line's, and motion is locked (the alarm)."""
    from armfw import protocol, session
    requests = [b"speed 3", b"move 250 -150 150 90", b"line 250 150 150 90"]
    runs = {}
    for sabotage in (False, True):
        r = PulseRecorder(ARM5)
        arm = r.arm
        solve = arm.solver.ik

        def second_walk_refuses(target, out, current=None, rule=0):
            if sabotage and arm.planner.refilling and arm.executor._n_walked > 300:
                return status.COLLISION
            return solve(target, out, current, rule)

        arm.solver.ik = second_walk_refuses
        arm.solver.ik_near = lambda target, out, current: second_walk_refuses(target, out, current)
        replies = []
        p = protocol.Protocol(arm, replies.append)
        p.progress = False
        session.Session(p, ScriptConsole(requests), r.driver).serve()
        runs[sabotage] = (replies, r.pulses, p.machine.alarm)
    (whole, whole_pulses, calm), (stopped, stopped_pulses, alarm) = runs[False], runs[True]
    assert [w.split()[0] for w in whole] == ["ok", "ok", "ok"] and not calm
    total = int(whole[-1].split("steps=")[1].split()[0])
    assert total > 4 * 256
    assert stopped[:2] == whole[:2]
    assert stopped[2].startswith("error ABORTED INTERNAL RuntimeError: the plan walked again is not the plan "
                                 "checked: stopped at step ")
    reached = int(stopped[2].split(" at step ")[1].split()[0])
    assert 301 - 8 <= reached <= 301 and stopped[2].split(" at step ")[1].split()[2] == "%d:" % total
    assert alarm and stopped_pulses == whole_pulses[:len(stopped_pulses)] and len(stopped_pulses) < len(whole_pulses)
