# SPDX-License-Identifier: MIT
# The motion profiles (armfw.profile) on fixed cases, one line of numbers each, so that
# the same script run by MicroPython and by CPython can be compared number for number.
# Lines: "joint <steps> <duration_s> <fraction of every step...>",
#        "ramp <steps> <distance of every step...>",
#        "hold <stopping_mm at the hold> <distance covered after it>",
#        "alloc <bytes per joint fraction> <bytes per ramp step>" (MicroPython only).
import gc
from math import pi

from armfw.jointprofile import JointProfile
from armfw.profile import ToolRamp

STEP_S = 0.02
JOINT_CASES = (
    # start, goal (rad), vmax (rad/s), amax (rad/s^2)
    ([0.0, 0.0, 0.0], [pi / 2, 0.1, -0.3], [pi / 2, 1.0, 1.0], [2 * pi, 10.0, 10.0]),
    ([0.2, -0.1], [0.25, -0.1], [1.5, 1.5], [6.0, 6.0]),
    ([0.0] * 5, [1.5, -0.4, 0.3, 0.0, 0.2], [1.57, 1.57, 1.57, 3.14, 3.14], [6.28, 6.28, 6.28, 12.5, 12.5]),
)


def circle(r, n, top):
    """n chords of a circle of radius r mm, as (length, top, dx, dy) blocks."""
    from math import cos, sin, sqrt
    out = []
    for k in range(n):
        a0 = 2 * pi * k / n
        a1 = 2 * pi * (k + 1) / n
        dx = r * (cos(a1) - cos(a0))
        dy = r * (sin(a1) - sin(a0))
        length = sqrt(dx * dx + dy * dy)
        out.append((length, top, dx / length, dy / length))
    return out


def run_ramp(ramp, blocks):
    """Queue blocks as room frees (as a planner streams them), step to the end; the distances."""
    out = []
    for length, top, dx, dy in blocks:
        while not ramp.add(length, top, dx, dy, 0.0):
            out.append(ramp.step())
    while ramp.count:
        out.append(ramp.step())
    return out


def main():
    p = JointProfile()
    for start, goal, vmax, amax in JOINT_CASES:
        n = p.plan(start, goal, vmax, amax, STEP_S)
        print("joint %d %r %s" % (n, p.duration_s, " ".join(repr(p.fraction(s)) for s in range(1, n + 1))))
    r = ToolRamp()
    for accel, top, radius in ((500.0, 100.0, 20.0), (1000.0, 300.0, 20.0), (500.0, 100.0, 2.0)):
        r.reset(accel, 0.05, STEP_S)
        d = run_ramp(r, circle(radius, 72, top))
        print("ramp %d %s" % (len(d), " ".join(repr(x) for x in d)))
    r.reset(500.0, 0.05, STEP_S)
    r.add(200.0, 100.0, 1.0, 0.0, 0.0)
    for _ in range(30):
        r.step()
    r.hold()
    stopping = r.stopping_mm()
    after = 0.0
    while True:
        ds = r.step()
        if ds == 0.0:
            break
        after += ds
    print("hold %r %r" % (stopping, after))
    if hasattr(gc, "mem_alloc"):
        start, goal, vmax, amax = JOINT_CASES[2]
        n = p.plan(start, goal, vmax, amax, STEP_S)
        gc.collect()
        before = gc.mem_alloc()
        for s in range(1, n + 1):
            p.fraction(s)
        per_fraction = (gc.mem_alloc() - before) / n
        r.reset(500.0, 0.05, STEP_S)
        for length, top, dx, dy in circle(20.0, 72, 100.0)[:16]:
            r.add(length, top, dx, dy, 0.0)
        gc.collect()
        before = gc.mem_alloc()
        steps = 0
        while r.count:
            r.step()
            steps += 1
        print("alloc %d %d" % (per_fraction, (gc.mem_alloc() - before) / steps))


if __name__ == "__main__":
    main()
