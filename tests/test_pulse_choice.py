# SPDX-License-Identifier: MIT
"""A line step's pulses chosen jointly (armfw.pulsepick), judged from the pulse record.

The numbers here are derived independently of the firmware: the pulses are
turned into angles with the servo formula written out from the board file, and
into tool positions with docs/KINEMATICS.md's forward kinematics as
tests/test_motion.py writes it out; the PCA9685's grid comes from its
datasheet's prescale equation.
"""

import itertools
import json
from math import cos, pi, radians, sin, sqrt

import pytest

from armctl.bench import accuracy
from armfw import board
from armfw.pulsepick import PulsePicker
from armfw.status import solved
from conftest import BOARDS
from test_motion import arm5_tool       # docs/KINEMATICS.md's forward kinematics, written out

ARM5 = BOARDS / "sim_arm5.json"
JOINTS = json.loads(ARM5.read_text())["joints"]
# PCA9685 at 50 Hz from 25 MHz: prescale = round(25e6 / (4096 * 50)) - 1 = 121, so one count
# lasts 122 / 25 MHz = 4.88 us.
COUNT_US = 122 / 25.0


def angle(i, us):
    """The servo formula: servo angle = offset + sign * q, us = center + servo angle * us_per_rad."""
    j = JOINTS[i]
    return ((us - j["center_us"]) / j["us_per_rad"] - radians(j["offset_deg"])) * j["sign"]


def tool_of_pulses(us):
    return arm5_tool([angle(i, v) for i, v in enumerate(us)])


def distance(p, a, b):
    ab = [y - x for x, y in zip(a, b)]
    ap = [y - x for x, y in zip(a, p)]
    length2 = sum(v * v for v in ab)
    t = min(max(sum(u * v for u, v in zip(ap, ab)) / length2, 0.0), 1.0) if length2 else 0.0
    return sqrt(sum((x + t * v - y) ** 2 for x, v, y in zip(a, ab, p)))


@pytest.fixture(scope="module", params=sorted(accuracy.DRIVERS))
def drawn(request):
    """(driver name, lines drawn with each joint rounded, the same lines with the joint choice)."""
    segments = accuracy.lines()
    driver = accuracy.DRIVERS[request.param]
    return request.param, accuracy.draw(driver, segments, joint=False), accuracy.draw(driver, segments, joint=True)


def test_joint_choice_is_never_worse_than_rounding_and_better_on_some_lines(drawn, report):
    name, before, after = drawn
    assert len(before) == len(after) > 100          # the dense set, refusals alike in both runs
    worse = []
    better = 0
    worst_before = worst_after = 0.0
    for (start, end, steps_b), (start_a, end_a, steps_a) in zip(before, after):
        assert (start, end) == (start_a, end_a)
        b = max(distance(tool_of_pulses(us), start, end) for us in steps_b)
        a = max(distance(tool_of_pulses(us), start, end) for us in steps_a)
        worst_before = max(worst_before, b)
        worst_after = max(worst_after, a)
        if a > b:
            worse.append((start, end, a, b))
        better += a < b
    assert worse == []
    assert better > 0
    assert worst_after < worst_before
    report("pulse choice (%s, %d lines of %g mm on sim_arm5): worst step %.3f mm from its line chosen jointly, "
           "%.3f mm rounded per joint; better on %d lines" % (name, len(after), accuracy.LENGTH_MM, worst_after,
                                                             worst_before, better))


def test_the_simulated_pca9685_records_its_count_grid(drawn):
    name, before, after = drawn
    widths = {us for _, _, steps in before + after for pose in steps for us in pose}
    counts = [us / COUNT_US for us in widths]
    if name == "pca9685":
        assert all(abs(c - round(c)) < 1e-6 for c in counts)
    else:
        assert all(isinstance(us, int) for us in widths)
        # Direct PWM keeps the microseconds between the counts.
        assert any(abs(c - round(c)) > 0.1 for c in counts)


def _arm5(driver=None):
    data = json.loads(ARM5.read_text())
    if driver:
        data["driver"] = driver
    return board.from_dict(data, str(ARM5))


@pytest.mark.parametrize("name", sorted(accuracy.DRIVERS))
def test_each_choice_is_the_nearest_combination_and_no_worse_than_the_nearest_pulses(name):
    """Every combination of the pulse grid points either side of each joint's exact
    pulse, judged by FK: the chosen one is never farther from the line than the
    nearest pulses; where it is not the nearest pulses, it is the combination
    nearest the step's point or within the first-order model's error of it."""
    b = _arm5(accuracy.DRIVERS[name])
    picker = PulsePicker(b.servos, b.solver, b.driver)
    step_us = COUNT_US if name == "pca9685" else 1.0
    q = [0.0] * 5
    gaps = []
    exact = 0
    solves = 0
    moved = 0       # steps whose choice is not the nearest pulses
    for k in range(200):
        p0 = [150.0 + (k % 7) * 15.0, -60.0 + (k % 11) * 12.0, 90.0 + (k % 5) * 20.0]
        p1 = [p0[0] + 10.0 * cos(k), p0[1] + 10.0 * sin(k), p0[2] + 3.0 * cos(3 * k)]
        t = (k % 13) / 12.0
        point = [a + (c - a) * t for a, c in zip(p0, p1)] + [pi]
        if not solved(b.solver.ik(point, q, b.solver.home)):
            continue
        solves += 1
        us = [0] * 5
        assert picker.pick(q, us, p0, p1, point) == -1
        chosen = list(picker.pose)
        assert chosen == pytest.approx([angle(i, u if name == "pwm" else round(u / COUNT_US) * COUNT_US)
                                        for i, u in enumerate(us)], abs=1e-12)
        below = []
        for i in range(5):
            j = JOINTS[i]
            exact_us = j["center_us"] + (radians(j["offset_deg"]) + j["sign"] * q[i]) * j["us_per_rad"]
            below.append(int(exact_us // step_us) * step_us)
        nearest = []
        for i in range(5):
            j = JOINTS[i]
            exact_us = j["center_us"] + (radians(j["offset_deg"]) + j["sign"] * q[i]) * j["us_per_rad"]
            nearest.append(angle(i, below[i] + (step_us if exact_us - below[i] >= step_us / 2 else 0.0)))
        assert distance(arm5_tool(chosen), p0, p1) <= distance(arm5_tool(nearest), p0, p1) + 1e-12
        if chosen == pytest.approx(nearest, abs=1e-12):
            continue
        moved += 1
        d_chosen = distance(arm5_tool(chosen), point[:3], point[:3])
        best = min(distance(arm5_tool([angle(i, below[i] + step_us * s) for i, s in enumerate(sides)]),
                            point[:3], point[:3])
                   for sides in itertools.product((0, 1), repeat=5))
        gaps.append(d_chosen - best)
        exact += d_chosen - best < 1e-9
    # The model is first order: its error grows with the square of the grid step.
    # About a hundredth of what one grid step of a joint moves the tool (up to 403 mm
    # of reach times 1 / 424.448 rad: 0.95 mm; at 4.88 us: 4.6 mm).
    assert max(gaps) <= (0.001 if name == "pwm" else 0.05)
    assert solves >= 150 and moved >= solves / 2 and exact >= 0.75 * moved


def test_a_pulse_outside_its_window_is_refused_not_pulled_in():
    b = _arm5()
    servos = b.servos
    picker = PulsePicker(servos, b.solver, b.driver)
    # The shoulder's exact pulse 1600.7 us: rounding sends 1601.
    zero = servos.exact_us(1, 0.0)
    q = [0.0, (1600.7 - zero) / (servos.exact_us(1, 1.0) - zero), 1.2, 0.5, 0.0]
    exact = servos.exact_us(1, q[1])
    p = list(arm5_tool(q))
    # The window ends between the exact pulse's floor and ceiling: only the ceiling is sent.
    servos.min_us[1] = 1601
    try:
        out = [0] * 5
        assert picker.pick(q, out, p, p, p) == -1
        assert out[1] == 1601 and exact == pytest.approx(1600.7)
        # ... and where rounding would be refused (the exact pulse more than half a microsecond out), so is the step.
        servos.min_us[1] = 1602
        assert picker.pick(q, out, p, p, p) == 1
    finally:
        servos.min_us[1] = 500


def test_a_line_stopped_midway_reports_the_pose_its_pulses_command(tmp_path):
    """Stopped between two steps, the controller's pose is the one the last pulses command
    (each joint's angle of its recorded pulse), not the walk's exact solution."""
    from armctl.sim_flash import parse_pulses
    from armfw.motion import ArmController
    from armfw.planner import LINE, MOVE
    from armfw.simservo import SimServo
    log = tmp_path / "pulses.log"
    b = _arm5(dict(accuracy.DRIVERS["pwm"], log=str(log)))
    sim = SimServo(b.driver)
    arm = ArmController(b, sim, None, sleep_ms=sim.sleep_ms)
    arm.park()
    arm.plan()
    arm.add(MOVE, [200.0, -20.0, 120.0, accuracy.PITCH])
    assert arm.run()
    arm.plan()
    arm.add(LINE, [200.0, 25.0, 140.0, accuracy.PITCH])
    assert arm.begin()
    for _ in range(12):
        assert arm.step() >= 0
    arm.executor.stop()
    sim.deinit()
    last = {}
    for _, channel, us in parse_pulses(log.read_text()):
        if channel >= 0:
            last[channel] = us
    assert arm.q == pytest.approx([angle(i, last[i]) for i in range(5)], abs=1e-12)
    reached = tool_of_pulses([last[i] for i in range(5)])
    assert list(arm.tool()[:3]) == pytest.approx(reached, abs=1e-9)


def test_the_simulator_records_a_pca9685_grid_and_the_line_stays_near(micropython, tmp_path):
    """The firmware on the MicroPython Unix port, its simulated driver a PCA9685: every
    recorded width is a whole number of counts, and a line's steps stay near the line."""
    from armctl.sim import Simulator
    data = json.loads(ARM5.read_text())
    data["driver"] = accuracy.DRIVERS["pca9685"]
    path = tmp_path / "arm5_pca9685.json"
    path.write_text(json.dumps(data))
    start, end = (200.0, -30.0, 120.0), (200.0, 30.0, 140.0)
    with Simulator(str(path)) as sim:
        assert sim.request("move %g %g %g 180" % start)[-1].startswith("ok ")
        before = len(sim.pulses())
        assert sim.request("line %g %g %g 180" % end)[-1].startswith("ok ")
        pulses = sim.pulses()
    assert all(abs(us / COUNT_US - round(us / COUNT_US)) < 1e-3 for _, _, us in pulses if us)
    us = {}
    for _, channel, width in pulses[:before]:
        us[channel] = width
    steps = {}
    for t, channel, width in pulses[before:]:
        us[channel] = width
        steps[t] = [us[i] for i in range(5)]      # the pose once every pulse of step t is out
    steps = list(steps.values())
    # The port sends what CPython's run of the firmware sends, and nearer the line than
    # each joint's nearest count would be.
    (_, _, cpython), = accuracy.draw(accuracy.DRIVERS["pca9685"], [(start, end)])
    assert len(steps) == len(cpython)
    assert [v for s in steps for v in s] == pytest.approx([v for s in cpython for v in s], abs=1e-3)
    (_, _, rounded), = accuracy.draw(accuracy.DRIVERS["pca9685"], [(start, end)], joint=False)
    worst = max(distance(tool_of_pulses(s), start, end) for s in steps)
    assert worst < max(distance(tool_of_pulses(s), start, end) for s in rounded)


def test_the_simulated_driver_models_only_a_pca9685_it_could_make():
    data = json.loads(ARM5.read_text())
    for settings, error in (({"model": "pca9686"}, "must be one of pca9685"),
                            ({"model": "pca9685", "freq_hz": 2000}, "outside 3..255")):
        data["driver"] = dict({"kind": "sim", "freq_hz": 50}, **settings)
        with pytest.raises(board.BoardError, match=error):
            board.from_dict(data, "x")
