# SPDX-License-Identifier: MIT
"""The motion profiles' cost per step under the MicroPython Unix port, run by `armctl bench`.

    micropython -X heapsize=384k bench_motion.py ROOT COUNT

Time (us) and heap (bytes) per step of: a joint move's fraction
(armfw.jointprofile.JointProfile.fraction), a line's ramp step (ToolRamp.step over
one block), a blended queue's step (ToolRamp.step over 16 chords of a
circle, as the G1 look-ahead holds them); and the live step (the
controller's step() and refill(), the driver write left out) of a joint move
and of 16 blended G1 lines on sim_arm5. COUNT: how many plans each profile
figure is timed over (the fastest counts). Prints one JSON object.
"""

import gc
import json
import sys
import time
from math import cos, pi, sin, sqrt

from armfw import board
from armfw.gcodeblend import LOOK_AHEAD, Blend
from armfw.motion import ArmController
from armfw.planner import BLEND
from armfw.jointprofile import JointProfile
from armfw.profile import ToolRamp

from null_driver import NullDriver

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 20
STEP_S = 0.02
# sim_arm5's standard class (rad/s, rad/s^2): the base leads a 5-joint move.
JOINT_MOVE = ([0.0, 0.0, pi / 2, 0.0, 0.0], [1.047, 0.175, 1.222, 0.349, 0.0],
              [pi / 2] * 5, [2 * pi] * 5)
TOOL_ACCEL = 500.0
TOOL_TOP = 100.0
JUNCTION_MM = 0.05
LINE_MM = 30.0
# The G1 circle of docs/BENCHMARKS.md section 10: 72 chords, radius 20 mm, the tool down.
CENTRE = (150.0, 40.0, 150.0)
RADIUS = 20.0
CHORDS = 72


def circle_point(k):
    a = 2 * pi * k / CHORDS
    return (CENTRE[0] + RADIUS * cos(a), CENTRE[1] + RADIUS * sin(a), CENTRE[2])


def measured(plans, setup, step):
    """setup() then step() until it returns 0 (or false), plans times: (us, bytes) per step,
    the us of the fastest plan (the machine's other work left out, the collector's kept in),
    the bytes from a last plan with the collector off."""
    fastest = None
    for _ in range(plans):
        setup()
        steps = 0
        t0 = time.ticks_us()
        while step():
            steps += 1
        spent = time.ticks_diff(time.ticks_us(), t0) / steps
        fastest = spent if fastest is None or spent < fastest else fastest
    setup()
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        counted = 0
        while step():
            counted += 1
        heap = (gc.mem_alloc() - before) / counted
    finally:
        gc.enable()
    return fastest, heap


def joint_fraction():
    profile = JointProfile()
    at = [0]

    def setup():
        start, goal, speed, accel = JOINT_MOVE
        profile.plan(start, goal, speed, accel, STEP_S)
        at[0] = 0

    def step():
        at[0] += 1
        if at[0] > profile.steps:
            return 0
        profile.fraction(at[0])
        return 1
    return measured(COUNT, setup, step)


def ramp_step(blocks):
    ramp = ToolRamp(LOOK_AHEAD)

    def setup():
        ramp.reset(TOOL_ACCEL, JUNCTION_MM, STEP_S)
        for length, dx, dy in blocks:
            ramp.add(length, TOOL_TOP, dx, dy, 0.0)

    def step():
        return ramp.count and ramp.step() >= 0.0
    return measured(COUNT, setup, step)


def chords():
    out = []
    for k in range(LOOK_AHEAD):
        p0 = circle_point(k)
        p1 = circle_point(k + 1)
        dx = p1[0] - p0[0]
        dy = p1[1] - p0[1]
        length = sqrt(dx * dx + dy * dy)
        out.append((length, dx / length, dy / length))
    return out


def live(controller, begin):
    """Heap per live step (step() and refill()) of the plan begin() begins, the collector off."""
    begin()
    controller.step()
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        steps = 0
        while controller.step() >= 0:
            controller.refill()
            steps += 1
        return (gc.mem_alloc() - before) / steps
    finally:
        gc.enable()


def live_steps():
    b = board.load(ROOT + "/boards/sim_arm5.json")
    controller = ArmController(b, NullDriver(), None, lambda ms: None)
    controller.park()
    home = list(controller.q)

    def joint_move():
        goal = JOINT_MOVE[1] if controller.q[0] < 0.5 else home
        if not controller.plan_joints(goal) or not controller.begin():
            raise RuntimeError("the joint move was refused")

    joint_bytes = live(controller, joint_move)
    start = circle_point(0) + (pi,)
    if not controller.move(start):
        raise RuntimeError("the move to the circle was refused")
    blend = Blend(5, 4)
    top = controller.planner.line_top(0.0)

    def blended():
        blend.count = 0
        for k in range(1, LOOK_AHEAD + 1):
            blend.add(circle_point(k) + (pi,), top, controller.q, controller.planner.tool_accel)
        controller.plan()
        controller.add(BLEND, blend)
        if not controller.begin():
            raise RuntimeError("the blended lines were refused")

    blend_bytes = live(controller, blended)
    return joint_bytes, blend_bytes


def main():
    joint_us, joint_heap = joint_fraction()
    line_us, line_heap = ramp_step([(LINE_MM, 1.0, 0.0)])
    blend_us, blend_heap = ramp_step(chords())
    live_joint, live_blend = live_steps()
    print(json.dumps({
        "plans": COUNT,
        "joint_fraction_us": joint_us, "joint_fraction_heap_bytes": int(joint_heap + 0.5),
        "line_ramp_step_us": line_us, "line_ramp_step_heap_bytes": int(line_heap + 0.5),
        "blend_step_us": blend_us, "blend_step_heap_bytes": int(blend_heap + 0.5),
        "live_joint_step_heap_bytes": int(live_joint + 0.5),
        "live_blend_step_heap_bytes": int(live_blend + 0.5),
        "gc_block_bytes": 32 if sys.maxsize > 2 ** 32 else 16}))


try:
    main()
except Exception as e:
    print(json.dumps("not available: %s: %s" % (type(e).__name__, e)))
