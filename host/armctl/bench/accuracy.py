# SPDX-License-Identifier: MIT
"""How far the drawn path strays from the intended lines, rebuilt from the pulse record.

The firmware (CPython, in process) draws a dense set of straight lines on the
5-joint arm (sim_arm5) with the simulated driver recording every pulse: as
direct PWM sends it (whole microseconds) and as a PCA9685 makes it (4096
counts per period, "model": "pca9685"). Each line's steps are rebuilt from the
record (the pulses of each step, to angles, to the tool by FK) and measured
against the intended segment. Each driver runs twice: with the line steps'
pulses chosen jointly (armfw.pulsepick) and, as before it, with each joint's
pulse rounded on its own (the servo map's pulses(), the chip then taking the
nearest count).

Figures per driver: the worst and the mean distance of a step from its line,
before and after, and on how many lines the joint choice is better, equal or
worse than rounding. And the choice's cost on the MicroPython Unix port
(tests/mp/bench_pulsepick.py): time and heap per line step, beside the
step's ik_near.
"""

import json
import math
import tempfile
from pathlib import Path

from armctl import BOARDS_DIR, ROOT

COST_SCRIPT = ROOT / "tests" / "mp" / "bench_pulsepick.py"

BOARD = BOARDS_DIR / "sim_arm5.json"
DRIVERS = {"pwm": {"kind": "sim", "freq_hz": 50},
           "pca9685": {"kind": "sim", "freq_hz": 50, "model": "pca9685", "osc_hz": 25000000}}
PITCH = math.pi     # the tool pointing down, as a pen plotter's
LENGTH_MM = 30.0


def lines(short=False):
    """The dense set: (start, end) tool points (x, y, z mm) of straight lines along and
    across the axes from a grid of starts in the arm's reach."""
    xs = (160.0, 220.0) if short else (140.0, 180.0, 220.0, 260.0)
    ys = (-40.0, 30.0) if short else (-80.0, -25.0, 25.0, 80.0)
    zs = (120.0,) if short else (80.0, 140.0)
    dirs = ((1, 0, 0), (0, 1, 0), (0, 0, 1), (0.6, 0.8, 0), (0.6, 0, -0.8), (0, 0.6, 0.8))
    out = []
    for x in xs:
        for y in ys:
            for z in zs:
                for d in dirs:
                    out.append(((x, y, z), (x + LENGTH_MM * d[0], y + LENGTH_MM * d[1], z + LENGTH_MM * d[2])))
    return out


def round_each(servos):
    """Make the servo map servos (armfw.servo.ServoMap) send a line step's pulses each rounded
    on its own to the driver's grid (whole microseconds, a PCA9685's counts: the nearest
    pulses armfw.pulsepick starts from), the step's pose the walk's exact one."""
    from armfw.pulsepick import grid
    num, den = grid(servos.driver)

    def rounded(q, out, solver, p0, p1, point):
        servos.line_pose = q
        bad = servos.pulses(q, out)
        if bad < 0 and num != den:
            for i in range(len(out)):
                count = int(servos.exact_us(i, q[i]) * num / den + 0.5)
                out[i] = (count * den + num // 2) // num
        return bad
    servos.line_pulses = rounded


def draw(driver, segments, joint=True):
    """Draw each segment (start, end) from a joint move to its start; per segment drawn,
    (start, end, [the pulses per joint of each of the line's steps]); refused ones are left out.

    joint False: each joint's pulse rounded on its own, as before the joint choice."""
    from armctl.sim_flash import parse_pulses
    from armfw import board as fw_board
    from armfw.motion import ArmController
    from armfw.planner import LINE, MOVE
    from armfw.simservo import SimServo
    data = json.loads(BOARD.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "pulses.log"
        data["driver"] = dict(driver, log=str(log))
        b = fw_board.from_dict(data, str(BOARD))
        if not joint:
            round_each(b.servos)
        sim = SimServo(b.driver)
        arm = ArmController(b, sim, None, sleep_ms=sim.sleep_ms)
        arm.park()
        channels = list(b.servos.channels)
        drawn = []
        for start, end in segments:
            arm.plan()
            arm.add(MOVE, list(start) + [PITCH])
            if not arm.run():
                continue
            sim._log.flush()
            before = len(parse_pulses(log.read_text()))
            us = [None] * len(channels)
            for t_ms, channel, value in parse_pulses(log.read_text()):
                us[channels.index(channel)] = value
            arm.plan()
            arm.add(LINE, list(end) + [PITCH])
            if not arm.run():
                continue
            sim._log.flush()
            steps = []
            last_t = None
            for t_ms, channel, value in parse_pulses(log.read_text())[before:]:
                if t_ms != last_t and last_t is not None:
                    steps.append(list(us))
                last_t = t_ms
                us[channels.index(channel)] = value
            steps.append(list(us))
            drawn.append((start, end, steps))
        sim.deinit()
    return drawn


def segment_distance(p, a, b):
    """Distance (mm) of point p from the segment a -> b."""
    ab = [y - x for x, y in zip(a, b)]
    ap = [y - x for x, y in zip(a, p)]
    length2 = sum(v * v for v in ab)
    t = 0.0 if length2 == 0.0 else min(max(sum(u * v for u, v in zip(ap, ab)) / length2, 0.0), 1.0)
    return math.sqrt(sum((x + t * v - y) ** 2 for x, v, y in zip(a, ab, p)))


def deviations(drawn, tool_of_pulses):
    """Per line drawn, the distances (mm) of its steps' tools (tool_of_pulses(us)) from it."""
    return [[segment_distance(tool_of_pulses(us), start, end) for us in steps] for start, end, steps in drawn]


def _firmware_tool():
    from armfw import board as fw_board
    b = fw_board.load(str(BOARD))
    tip = [0.0] * len(b.solver.targets)

    def tool(us):
        q = [b.servos.angle(i, v) for i, v in enumerate(us)]
        return b.solver.fk(q, tip)[:3]
    return tool


def compare(before, after):
    """(better, equal, worse): lines whose worst deviation the joint choice lowers, keeps, raises."""
    better = equal = worse = 0
    for b, a in zip(before, after):
        if max(a) < max(b):
            better += 1
        elif max(a) == max(b):
            equal += 1
        else:
            worse += 1
    return better, equal, worse


def run(short=False):
    segments = lines(short)
    tool = _firmware_tool()
    out = {"board": BOARD.name, "lines_mm": LENGTH_MM}
    for name, driver in DRIVERS.items():
        before = deviations(draw(driver, segments, joint=False), tool)
        after = deviations(draw(driver, segments, joint=True), tool)
        if len(before) != len(after):
            raise RuntimeError("the two runs drew %d and %d lines" % (len(before), len(after)))
        better, equal, worse = compare(before, after)
        steps_b = [d for line in before for d in line]
        steps_a = [d for line in after for d in line]
        # A line's last step is its target's pulses, each joint rounded (as a joint move's end):
        # the same in both runs.
        inner_b = [d for line in before for d in line[:-1]]
        inner_a = [d for line in after for d in line[:-1]]
        out[name] = {"lines": len(after), "steps": len(steps_a),
                     "rounded_worst_mm": max(steps_b), "rounded_mean_mm": sum(steps_b) / len(steps_b),
                     "joint_worst_mm": max(steps_a), "joint_mean_mm": sum(steps_a) / len(steps_a),
                     "rounded_worst_before_end_mm": max(inner_b), "joint_worst_before_end_mm": max(inner_a),
                     "better": better, "equal": equal, "worse": worse}
    from armctl.bench import estimate, firmware
    cost = out["cost"] = firmware.run_script(COST_SCRIPT, 50)
    # ESTIMATE for an RP2040, as armctl.bench.estimate scales the solver: time by bm_float,
    # heap by the board's GC block (the number of allocations stays).
    cost["rp2040_pick_ms"] = estimate.time_on("rp2040_125MHz", cost["pick_us"] / 1000.0)
    cost["rp2040_pick_heap_bytes"] = estimate.heap_on("rp2040_125MHz", cost["pick_heap_bytes"],
                                                      cost["gc_block_bytes"])
    return out
