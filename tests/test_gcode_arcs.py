# SPDX-License-Identifier: MIT
"""G2/G3 arcs and the M0 pause (firmware/PROTOCOL.md, G-code).

Arc geometry is derived by hand here: centres from the words as a person
draws them (a quarter circle's centre is a corner of the square its ends
span), chord counts from the sagitta r (1 - cos(a / 2)), speeds from F and
sqrt(accel * r), step counts from a ramp from rest to that speed and back
(the travel per step changes by at most accel * dt^2 a step). The firmware's
arcs are then run three ways: in CPython, where every step's exact pose is
recorded and put through this file's own forward kinematics; on the real
MicroPython Unix port, whose recorded pulses must decode to those same poses
within a microsecond, and whose joints stay within their acceleration; and
through `armctl run` from a file.
"""

import argparse
import io
from math import acos, atan2, ceil, cos, hypot, pi, radians, sin, sqrt

import pytest

from armctl import cli
from armctl.bench import accuracy
from armctl.commands import run as run_command
from armctl.sim import Simulator
from armfw import board, executor, protocol
from armfw.gcodearc import CHORD_TOLERANCE_MM, arc
from armfw.motion import ArmController
from armfw.simservo import SimServo
from conftest import BOARDS
from test_gcode_blend import steps_alone
from test_motion_profile import (ACCEL, JOINTS, QUANTUM, TOOL_ACCEL, WINDOW, arm5_mapping, arm5_tool, derivatives,
                                 joint_samples, peak_joint_accel)

ARM5 = BOARDS / "sim_arm5.json"
STEP_S = 0.02
START = "G0 X150 Y0 Z200 A180"       # tool pointing down, 150 mm out


# -- the geometry, by hand ------------------------------------------------------------

@pytest.mark.parametrize("clockwise, radius, centre, travel", [
    # From (0, 0) to (10, 10) with radius 10 the centre is (10, 0) or (0, 10). Clockwise about
    # (10, 0) goes from 180 deg down to 90 deg: the short way, a quarter turn.
    (True, 10.0, (10, 0), -pi / 2),
    (True, -10.0, (0, 10), -3 * pi / 2),       # negative R: the long way, about the other centre
    (False, 10.0, (0, 10), pi / 2),            # counterclockwise about (0, 10): -90 deg up to 0
    (False, -10.0, (10, 0), 3 * pi / 2),
])
def test_a_radius_arc_takes_the_centre_a_person_would_draw(clockwise, radius, centre, travel):
    a = arc([0.0, 0.0], [10.0, 10.0], clockwise, radius=radius)
    assert (a.cx, a.cy) == pytest.approx(centre, abs=1e-12)
    assert a.radius == pytest.approx(10.0) and a.travel == pytest.approx(travel, abs=1e-12)


def test_centre_offsets_full_circles_and_half_circles():
    a = arc([150.0, 0.0], [170.0, 20.0], True, (20.0, 0.0))
    assert (a.cx, a.cy, a.radius, a.travel) == pytest.approx((170.0, 0.0, 20.0, -pi / 2))
    # The end on the start: a whole turn, either way.
    assert arc([5.0, 5.0], [5.0, 5.0], True, (0.0, 3.0)).travel == pytest.approx(-2 * pi)
    assert arc([5.0, 5.0], [5.0, 5.0], False, (0.0, 3.0)).travel == pytest.approx(2 * pi)
    # Ends a diameter apart: the centre between them; 4 um more than a diameter is still the
    # half circle (rounding in a generator's numbers), 6 um is not.
    half = arc([0.0, 0.0], [10.0, 0.0], False, radius=5.0)
    assert (half.cx, half.cy, half.travel) == pytest.approx((5.0, 0.0, pi))
    assert arc([0.0, 0.0], [10.004, 0.0], False, radius=5.0).travel == pytest.approx(pi)
    with pytest.raises(ValueError, match="R 5.000 is too small: the ends are 10.006 mm apart"):
        arc([0.0, 0.0], [10.006, 0.0], False, radius=5.0)


@pytest.mark.parametrize("radius, miss, ok", [
    # GRBL's rule: the end may lie off the start's circle by 0.005 mm, or by up to 0.5 mm
    # where that is within 0.1 % of the radius.
    (5.0, 0.004, True), (5.0, 0.006, False),
    (400.0, 0.3, True), (400.0, 0.45, False),
    (1000.0, 0.6, False),
])
def test_an_end_off_the_circle_is_refused_beyond_grbls_slack(radius, miss, ok):
    start, end = [0.0, 0.0], [2 * radius + miss, 0.0]
    if ok:
        assert arc(start, end, True, (radius, 0.0)).radius == radius
    else:
        with pytest.raises(ValueError, match="the end is %.3f mm off the circle" % miss):
            arc(start, end, True, (radius, 0.0))


@pytest.mark.parametrize("words, message", [
    (dict(offset=(0.0, 0.0)), "I J put the centre on the start"),
    (dict(radius=5.0, end=[0.0, 0.0]), "an R arc needs an end other than its start"),
    (dict(offset=(float("nan"), 0.0)), "not finite"),
    (dict(radius=float("nan")), "R nan gives no arc"),
    (dict(offset=(1e300, 1e300)), "not finite"),
])
def test_words_that_make_no_arc_say_why(words, message):
    end = words.pop("end", [10.0, 0.0])
    with pytest.raises(ValueError, match=message):
        arc([0.0, 0.0], end, True, **words)


def sagitta(r, chord):
    return r - sqrt(r * r - chord * chord / 4)


def test_chords_stay_within_the_tolerance_and_are_as_few_as_it_allows():
    # Radius 20, a quarter turn: a chord of angle a strays 20 (1 - cos(a / 2)) from the arc,
    # at most 0.05 mm for a <= 2 acos(1 - 0.05 / 20).
    a = arc([150.0, 0.0], [170.0, 20.0], True, (20.0, 0.0))
    most = 2 * acos(1 - CHORD_TOLERANCE_MM / 20.0)
    assert a.chords == ceil((pi / 2) / most) == 12
    points = [[150.0, 0.0]] + [a.point(i, [0.0, 0.0]) for i in range(1, a.chords + 1)]
    assert points[-1] == [170.0, 20.0]
    for p, q in zip(points, points[1:]):
        assert hypot(q[0] - 170.0, q[1]) == pytest.approx(20.0, abs=1e-9)
        assert sagitta(20.0, hypot(q[0] - p[0], q[1] - p[1])) <= CHORD_TOLERANCE_MM
    # One chord fewer would stray further.
    assert sagitta(20.0, 2 * 20.0 * sin(pi / 2 / 11 / 2)) > CHORD_TOLERANCE_MM
    # Split for a speed of 0.4 mm a step: 79 chords no longer than a step (10 pi / 0.4 = 78.5).
    a.split(0.4)
    assert a.chords == 79 and 2 * 20 * sin(pi / 4 / 79) <= 0.4


def test_a_helix_rises_evenly_with_the_angle():
    # A whole clockwise turn about (160, 0) from its point at 180 deg, 10 mm down.
    a = arc([150.0, 0.0, 200.0, pi], [150.0, 0.0, 190.0, pi], True, (10.0, 0.0))
    a.split(0.4)
    n = a.chords
    assert n == ceil(hypot(20 * pi, 10) / 0.4)
    for i in range(1, n + 1):
        angle = pi - 2 * pi * i / n
        assert a.point(i, [0.0] * 4) == pytest.approx([160.0 + 10.0 * cos(angle), 10.0 * sin(angle),
                                                        200.0 - 10.0 * i / n, pi], abs=1e-9)


# -- the firmware's arcs in CPython: every step's exact pose ---------------------------------

def cpython_arm():
    b = board.load(str(ARM5))
    # Each joint's pulse rounded, not chosen on the pulse grid (armfw.pulsepick): the
    # controller's pose stays the walk's exact one, whose path and timing are judged here.
    accuracy.round_each(b.servos)
    arm = ArmController(b, SimServo(b.driver))
    arm.park()
    out = []
    return protocol.Protocol(arm, out.append), out


def run_line(p, out, line):
    """Answer a G-code line in CPython, stepping its motion; the poses of its steps (radians)."""
    poses = []
    p.handle(line.encode())
    if p.machine.moving:
        arm = p.controller
        while arm.step() >= 0:
            poses.append(list(arm.q))
            arm.refill()
        p.motion_done()
    return poses


ARCS = [
    # line, centre, radius, start angle, turn, z start, z end, top speed (mm/s), steps. The travel per
    # step rises by 500 mm/s^2 * (20 ms)^2 = 0.2 mm a step from rest to the top speed's and falls back.
    # A quarter circle, 10 pi = 31.42 mm at F1200 (20 mm/s, 0.4 mm a step; sqrt(500 * 20) = 100 mm/s
    # allowed round the bend): n steps cover at most 0.2 + 0.4 (n - 2) + 0.2 = 0.4 (n - 1) mm, 79 steps
    # 31.2 mm, 80 steps 31.6: 80 (79 unramped, one chord a step).
    ("G2 X170 Y20 I20 J0 F1200", (170, 0), 20, pi, -pi / 2, 200, 200, 20.0, 80),
    # Counterclockwise about (170, 0) from 180 deg round to 90 deg: the long way, 30 pi = 94.25 mm at
    # F3000 (50 mm/s, 1 mm a step): 0.2 + 0.4 + 0.6 + 0.8 up and down (4 mm in 8 steps), 90.25 mm
    # at 1 mm a step in 91 more: 99.
    ("G3 X170 Y20 R-20 F3000", (170, 0), 20, pi, 3 * pi / 2, 200, 200, 50.0, 99),
    # A helix of hypot(20 pi, 10) = 63.62 mm at F600 (10 mm/s, 0.2 mm a step: reached in the first
    # step and left in the last): 0.2 n >= 63.62 mm, 319 steps.
    ("G2 I10 Z190 F600", (160, 0), 10, pi, -2 * pi, 200, 190, 10.0, 319),
]


def speeds_of(points):
    """The tool's speed (mm/s) over each step between points (x, y, z)."""
    return [sqrt(sum((b[i] - a[i]) ** 2 for i in range(3))) / STEP_S for a, b in zip(points, points[1:])]


def test_the_step_counts_are_the_ramps_fewest():
    # The hand counts above, and the tight circle's below, against the tent of steps worked out
    # for blended lines (tests/test_gcode_blend.py), on the arcs' lengths.
    assert steps_alone(10 * pi, top=20.0) == 80
    assert steps_alone(30 * pi, top=50.0) == 99
    assert steps_alone(hypot(20 * pi, 10), top=10.0) == 319
    assert steps_alone(10 * pi, top=50.0) == 36


def eased(reply, fewest):
    """The steps reply reports: the tool ramp's fewest (the hand counts above), or up to 15 %
    more where a joint turns fast for the tool's travel and the line survey eases the tool's
    acceleration there (armfw.linesurvey); every joint's acceleration is checked apart."""
    taken = int(reply.rsplit("steps=", 1)[1])
    assert fewest <= taken <= 1.15 * fewest, reply
    return taken


@pytest.mark.parametrize("line, centre, r, angle0, turn, z0, z1, top, steps", ARCS)
def test_an_arc_ramps_from_rest_to_its_speed_and_back_on_its_chords(line, centre, r, angle0, turn, z0, z1, top,
                                                                    steps):
    p, out = cpython_arm()
    run_line(p, out, START)
    assert out[-1].startswith("ok OK")
    q0 = list(p.controller.q)
    start = arm5_tool(q0)
    poses = run_line(p, out, line)
    assert out[-1].startswith("ok OK"), out[-1]
    assert len(poses) == eased(out[-1], steps)
    assert peak_joint_accel([q0] + poses) <= ACCEL
    points = [start] + [arm5_tool(q) for q in poses]
    # Every step ends on a chord: inside the arc by no more than the chord tolerance, turning on
    # the arc's way, Z with the angle; the last on the arc's end.
    last = 0.0
    for x, y, z in points[1:]:
        assert r - CHORD_TOLERANCE_MM - 1e-6 <= hypot(x - centre[0], y - centre[1]) <= r + 1e-6
        turned = atan2(y - centre[1], x - centre[0]) - angle0
        turned += 2 * pi * round((last - turned) / (2 * pi))      # unwrapped near the last step's
        assert (turned - last) * turn >= -1e-9
        assert z == pytest.approx(z0 + (z1 - z0) * turned / turn, abs=1e-4)
        last = turned
    assert last == pytest.approx(turn, abs=1e-9)
    speeds = speeds_of(points)
    # From rest and back to it: the first and last steps no faster than one step's acceleration.
    assert speeds[0] <= TOOL_ACCEL * STEP_S * (1 + 1e-6)
    assert speeds[-1] <= TOOL_ACCEL * STEP_S * (1 + 1e-6)
    # Up to the top speed, never over it; no faster round the bend than v^2 / r <= 500 mm/s^2.
    assert max(speeds) == pytest.approx(top, rel=1e-3) and max(speeds) <= top * (1 + 1e-6)
    assert max(speeds) ** 2 / r <= TOOL_ACCEL * (1 + 1e-6)
    # The speed changes by at most 500 mm/s^2 a step (a step across a corner, measured straight, is
    # shorter than along its chords by under its length times a^2 / 8, a chord's angle < 0.1 rad).
    assert max(abs(b - a) for a, b in zip(speeds, speeds[1:])) <= TOOL_ACCEL * STEP_S + 2 * top * 0.1 ** 2 / 8


@pytest.mark.parametrize("line, steps", [(ARCS[2][0], 319), ("G2 I5 F6000", None)])
def test_an_arc_refilled_as_it_runs_takes_the_steps_its_check_took(monkeypatch, line, steps):
    # The helix's 319 steps, and the tight circle whose check slowed it for its joints (walked
    # again slower, test_a_tight_arc_slows_to_keep_the_tools_acceleration), through a ring of 7,
    # refilled a step at a time as it runs (the checked plan walked again, its ramp fed its
    # chords again): the very poses a ring that holds the whole arc sends.
    monkeypatch.setattr(executor, "RING_STEPS", 100000)
    whole, out = cpython_arm()
    run_line(whole, out, START)
    expected = run_line(whole, out, line)
    assert whole.controller.executor.kept_whole()
    monkeypatch.setattr(executor, "RING_STEPS", 7)
    monkeypatch.setattr(executor, "REFILL_EVENTS", 1)
    p, out = cpython_arm()
    run_line(p, out, START)
    poses = run_line(p, out, line)
    assert not p.controller.executor.kept_whole()
    assert poses == expected and len(poses) == (steps or len(expected))


def test_a_tight_arc_slows_to_keep_the_tools_acceleration():
    # A whole circle of radius 5 at F6000 (100 mm/s): round it the tool would accelerate at
    # v^2 / r = 2000 mm/s^2. The board's 500 mm/s^2 allow sqrt(500 * 5) = 50 mm/s, 1 mm a step:
    # 10 pi mm in 4 mm of ramps (8 steps) and 27.42 mm at 1 mm a step, 36 steps at the fewest.
    # At 50 mm/s the elbow's turn per mm changes at each of the 32 corners faster than its
    # 360 deg/s^2 allow (399 deg/s^2 on one step), so the corners, and with them the whole
    # circle, are slower still (armfw.cornerwatch).
    p, out = cpython_arm()
    run_line(p, out, START)
    q0 = list(p.controller.q)
    start = arm5_tool(q0)
    poses = run_line(p, out, "G2 I5 F6000")
    points = [start] + [arm5_tool(q) for q in poses]
    assert out[-1].startswith("ok OK") and len(poses) > 36, out[-1]
    assert peak_joint_accel([q0] + poses) <= ACCEL
    speeds = speeds_of(points)
    assert max(speeds) <= 50.0 * (1 + 1e-6)
    assert speeds[0] <= TOOL_ACCEL * STEP_S * (1 + 1e-6) and speeds[-1] <= TOOL_ACCEL * STEP_S * (1 + 1e-6)
    # Along the path and across it each within 500 mm/s^2: their sum, the second difference of the
    # points, within sqrt(2) times that. A step across a corner of the 32 chords (a = 2 pi / 32)
    # measures shorter straight than along them, by under its length times a^2 / 8.
    corner = 2 * 50.0 * (2 * pi / 32) ** 2 / 8
    accel = [hypot(c[0] - 2 * b[0] + a[0], c[1] - 2 * b[1] + a[1]) / STEP_S ** 2
             for a, b, c in zip(points, points[1:], points[2:])]
    assert max(accel) <= sqrt(2) * TOOL_ACCEL + corner / STEP_S
    assert max(abs(b - a) for a, b in zip(speeds, speeds[1:])) <= TOOL_ACCEL * STEP_S + corner


@pytest.mark.parametrize("line, centre, r, angle0, turn, z0, z1, top, steps", ARCS[:2])
def test_micropythons_pulses_decode_to_the_same_arc(micropython, line, centre, r, angle0, turn, z0, z1, top, steps):
    p, out = cpython_arm()
    run_line(p, out, START)
    exact = run_line(p, out, line)
    signs, offsets = arm5_mapping()
    with Simulator(ARM5) as sim:
        assert sim.request(START)[-1].startswith("ok OK")
        since = sim.pulses()[-1][0] + 1
        reply = sim.request(line)[-1]
        assert reply.startswith("ok OK") and reply.endswith("steps=%d" % len(exact)), reply
        eased(reply, steps)
        samples = joint_samples(sim.pulses(), since, signs, offsets)[1:]
        where = sim.request("M114")[0]
    # A step whose pulses all repeat the last ones sends nothing: the samples end at the last change.
    assert len(exact) - 2 <= len(samples) <= len(exact)
    # Each joint's pulse within a microsecond of the exact pose (rounded on its own, half of
    # one; chosen jointly with the others, the nearer of floor and ceiling, one).
    for got, q in zip(samples, exact):
        for j in range(5):
            assert got[j] == pytest.approx(q[j], abs=QUANTUM + 1e-9)
    # No joint's acceleration, differentiated from the pulses, over its limit (the standard
    # class of sim_arm5, with a microsecond's rounding over the window): no step of velocity
    # where the arc starts and ends either.
    for j in JOINTS:
        _, acc = derivatives(samples, j, WINDOW)
        assert max(abs(a) for a in acc) <= ACCEL + 2 * QUANTUM / (WINDOW * STEP_S) ** 2, j
    x, y = arm5_tool(exact[-1])[:2]
    assert where.startswith("X:%.3f Y:%.3f Z:200.000 A:180.000" % (x, y))


# -- bad arcs move nothing ------------------------------------------------------------------

@pytest.fixture
def arm(micropython):
    with Simulator(ARM5) as sim:
        assert sim.readline().startswith("# armfw ")
        assert sim.request(START)[-1].startswith("ok OK")
        yield sim


@pytest.mark.parametrize("line, reply", [
    ("G2 X10 R1", "error BAD_INPUT G2: R 1.000 is too small: the ends are 140.000 mm apart"),
    ("G3 X160 I1", "error BAD_INPUT G3: the end is 8.000 mm off the circle of radius 1.000"),
    ("G2 X160", "error BAD_INPUT G2/G3 need I J (the centre's offset) or R"),
    ("G2 I0 J0", "error BAD_INPUT G2: I J put the centre on the start: no radius"),
    ("G2 R5", "error BAD_INPUT G2: an R arc needs an end other than its start"),
    ("G2 X160 R5 I5", "error BAD_INPUT G2/G3 take I J (the centre) or R, not both"),
    ("G2 X160 I5 K5", "error BAD_INPUT G2/G3 take X Y Z I J R F, not K"),
    ("G2 X160 I5 A90", "error BAD_INPUT G2/G3 take X Y Z I J R F, not A"),
    ("G2 X160 I5 F0", "error BAD_INPUT F must be > 0"),
    ("G2 X160 I5 Jnan", "error BAD_INPUT not a G-code word: J"),
    # Reachable ends, an arc through the unreachable: refused at the step that fails.
    ("G2 X150 Y300 R150", "error TOO_FAR arc step "),
])
def test_a_bad_arc_is_refused_and_moves_nothing(arm, line, reply):
    pulses = len(arm.pulses())
    assert arm.request(line)[-1].startswith(reply)
    assert arm.request("G1 X160")[-1].startswith("error ALARM motion locked: G")
    assert len(arm.pulses()) == pulses
    assert arm.request("M114")[0].startswith("X:150.000 Y:0.000 Z:200.000")


def test_planar_arcs_take_no_z(micropython):
    with Simulator(BOARDS / "sim_planar.json") as sim:
        assert sim.readline().startswith("# armfw ")
        assert sim.request("G0 X100 Y60")[-1].startswith("ok OK")
        assert sim.request("G2 X100 Y60 I10 Z5")[-1] == "error BAD_INPUT G2/G3 take X Y I J R F, not Z"
        assert sim.request("M999") == ["ok"]
        # A full circle, 40 pi = 125.66 mm at 1 mm a step: 4 mm of ramps in 8 steps, 122 at 1 mm.
        reply = sim.request("G2 I-20 F3000")[-1]
        assert reply.startswith("ok OK") and reply.endswith("steps=130"), reply
        assert sim.request("M114")[0].startswith("X:100.000 Y:60.000")


# -- M0: the program pauses until ~; M1, the optional stop, does not ---------------------------

@pytest.mark.parametrize("word", ["M0", "M00"])
def test_m0_pauses_the_program_until_cycle_start(arm, word):
    pulses = len(arm.pulses())
    # The next motion is queued behind the pause; it must not run before `~`.
    arm.write(("%s\nG1 X160\n" % word).encode())
    assert arm.readline() == "# paused (M0): ~ resumes"
    arm.write(b"?")
    status = arm.readline()
    assert status.startswith("# status state=hold ") and status.endswith(" steps=0/0 speed=0.000 stop=0.000"), status
    assert len(arm.pulses()) == pulses
    arm.write(b"~")
    assert arm.readline().startswith("ok OK 0.000 13.792 58.152 108.056 0.000 x=150.000")    # the pause's
    assert arm.readline() == "ok"                                   # the G1's, once queued
    assert arm.request("M400") == ["ok"] and len(arm.pulses()) > pulses
    arm.write(b"?")
    assert arm.readline().startswith("# status state=idle ")


def test_m1_the_optional_stop_is_off(arm):
    assert arm.request("M1") == ["ok"]
    arm.write(b"?")
    assert arm.readline().startswith("# status state=idle ")


def test_ctrl_x_ends_a_pause_as_it_ends_a_motion(arm):
    arm.write(b"M0\n")
    assert arm.readline().startswith("# paused")
    arm.write(b"\x18")
    assert arm.readline().startswith("error ABORTED aborted (Ctrl-X) at step 0 of 0: ")
    assert arm.request("G1 X160")[-1].startswith("error ALARM")


def test_check_mode_runs_on_through_a_pause_and_a_relaxed_arm_cannot_pause(arm):
    # A pause is a dwell that starts held: like G4 it needs the pose, and refused it locks.
    assert arm.request("$C") == ["ok check on"]
    assert arm.request("M0")[-1].endswith("steps=0")          # no `# paused`, no wait for `~`
    # No F yet: the board's 2 mm a step (100 mm/s, as fast as sqrt(500 * 20) allows round the
    # bend) on a quarter circle of radius 20: 25 steps at the fewest (0.2 .. 1.8 mm up and
    # down, 18 mm in 18 steps, 13.42 mm at 2 mm a step in 7 more), more where its corners
    # turn the elbow too fast at that speed. Its steps are those the firmware's walk takes in
    # CPython from the same pose, whose joints keep their acceleration on every step.
    p, out = cpython_arm()
    run_line(p, out, START)
    q0 = list(p.controller.q)
    exact = run_line(p, out, "G2 X170 Y20 I20")
    assert len(exact) >= 25 and peak_joint_accel([q0] + exact) <= ACCEL
    assert arm.request("G2 X170 Y20 I20")[-1].endswith("steps=%d" % len(exact))
    assert arm.request("$C") == ["ok check off"]
    assert arm.request("M84") == ["ok RELAXED"]
    assert arm.request("M0")[-1].startswith("error HOME_FIRST")
    arm.write(b"?")
    assert arm.readline().startswith("# status state=alarm ")


# -- a sender's file ------------------------------------------------------------------------

DRAWING = """\
G17
G21
G90
G94
G0 X150 Y0 Z200 A180
G2 X170 Y20 I20 J0 F1200 ; a quarter circle
G3 X150 Y0 R20
G1 X140
G2 I10 Z195 ; a helix down
M2
"""


def test_armctl_run_checks_and_draws_arcs(micropython, tmp_path):
    path = tmp_path / "arcs.gcode"
    path.write_text(DRAWING)
    with Simulator(ARM5, pty=True, link=str(tmp_path / "arm")) as sim:
        args = argparse.Namespace(port=str(sim.port), baud=115200, timeout=10.0, file=str(path),
                                  check_only=False, no_check=False)
        out, err = io.StringIO(), io.StringIO()
        assert run_command.run(args, out=out, err=err) == cli.EXIT_OK, err.getvalue()
        assert "checked 10 lines: all valid" in out.getvalue() and "ran 10 lines" in out.getvalue()
        pulses = sim.pulses()
    signs, offsets = arm5_mapping()
    last = {ch: us for _, ch, us in pulses}
    q = [(last[j] - 1500) / 424.448 * signs[j] + offsets[j] for j in range(5)]
    # The helix ends where it began its turn, 5 mm lower (within a microsecond's reach).
    assert arm5_tool(q) == pytest.approx((140.0, 0.0, 195.0), abs=0.6)
