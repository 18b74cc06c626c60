# SPDX-License-Identifier: MIT
"""The motion profiles' figures on sim_arm5: durations beside Ruckig's, the blended G1 circle, cost per step.

- Joint moves (armfw.jointprofile.JointProfile, as the `joints` command plans them,
  the firmware in process under CPython): steps and seconds from home, beside
  Ruckig's time-optimal duration for the same limits (jerk unlimited, time
  synchronized), and their ratio. Ruckig is an optional dependency (the
  `bench` extra): without it that column says so.
- The G1 circle (72 lines, radius 20 mm, F6000, the tool pointing down): the
  firmware's own walk of the lines queued as the G-code face queues them
  (armfw.gcodeblend.Blend: a blended plan each time the queue is full),
  against each line walked alone from rest to rest.
- A drawing's lines: a 20 mm square at F6000, its sides as one G1 line each
  and cut into 2, 0.5 and 0.1 mm lines as a plotter's G-code may have them:
  the steps of each, queued the same way.
- Lines between random reachable points (a fixed seed): each joint's
  largest acceleration, the second difference of the exact poses of every
  step (each joint's pulse rounded on its own, so the controller keeps the
  walk's pose), against the joint's limit.
- Sharp corners of G1 lines (a 20 mm square twice round, and 32 chords of a
  5 mm circle, at F6000, queued as the G-code face queues them): steps, and
  each joint's largest acceleration from the exact poses, against its limit.
- Cost per step under the MicroPython Unix port (tests/mp/bench_motion.py):
  a joint move's fraction, a line's ramp step, a blended queue's step, in us
  and heap bytes, with an RP2040 ESTIMATE scaled as armctl.bench.estimate
  scales the solver; and the live step's heap (step() and refill(), the
  driver write left out) against LIVE_STEP_BUDGET_BYTES.
"""

import random
from math import cos, degrees, pi, radians, sin

from armctl import BOARDS_DIR, ROOT

SCRIPT = ROOT / "tests" / "mp" / "bench_motion.py"
BOARD = BOARDS_DIR / "sim_arm5.json"

# From home (0 0 90 0 0 deg): the base leads; the elbow leads, the roll close behind;
# 8 deg, too short to reach the speed limit (a triangle).
JOINT_MOVES = (("base leads", (60, 10, 70, 20, 0)),
               ("elbow leads", (-30, -20, 100, -40, 90)),
               ("short, no cruise", (5, 0, 98, 0, 0)))
CIRCLE_CENTRE = (150.0, 40.0, 150.0)
CIRCLE_RADIUS_MM = 20.0
CIRCLE_CHORDS = 72
CIRCLE_FEED_MM_MIN = 6000.0
# Lines between random points: how many, and the seed that draws them.
RANDOM_LINES = 24
RANDOM_LINES_SEED = 4
# Corners (tool coordinates, the tool pointing down): a 20 mm square, twice round from its
# first corner; the first half of a 5 mm circle's 32 chords, from the circle's start.
SQUARE = ((150.0, 0.0, 200.0), (170.0, 0.0, 200.0), (170.0, 20.0, 200.0), (150.0, 20.0, 200.0))
SMALL_CIRCLE = ((150.0, 0.0, 200.0), 5.0, 32)
# The square drawn as a plotter's G-code often has it: each side cut into lines this long (mm).
DRAWING_CUTS_MM = (2.0, 0.5, 0.1)
# The most a live step (sent every step_ms, mid-motion) may allocate: issue 27's bound.
LIVE_STEP_BUDGET_BYTES = 200


def controller():
    from armfw import board as fw_board
    from armfw.motion import ArmController
    from armfw.simservo import SimServo
    sim = SimServo({})      # virtual time, no pulse record
    arm = ArmController(fw_board.load(str(BOARD)), sim, None, sleep_ms=sim.sleep_ms)
    arm.park()
    return arm


def ruckig_trajectory(start, goal, speed, accel, synchronization=None):
    """Ruckig's time-optimal trajectory from start to goal (radians), each joint within
    speed and accel, jerk so large the profile is a trapezoid; synchronization: a
    ruckig.Synchronization (None: Time). Raises ImportError without ruckig installed."""
    from ruckig import InputParameter, Ruckig, Synchronization, Trajectory
    n = len(start)
    inp = InputParameter(n)
    inp.current_position = list(start)
    inp.target_position = list(goal)
    inp.max_velocity = list(speed)
    inp.max_acceleration = list(accel)
    inp.max_jerk = [1e7] * n
    inp.synchronization = Synchronization.Time if synchronization is None else synchronization
    trajectory = Trajectory(n)
    Ruckig(n).calculate(inp, trajectory)
    return trajectory


def ruckig_duration(start, goal, speed, accel):
    """ruckig_trajectory's duration (s), time synchronized; None without ruckig installed."""
    try:
        return ruckig_trajectory(start, goal, speed, accel).duration
    except ImportError:
        return None


def joint_moves():
    """Per move of JOINT_MOVES: the firmware's steps and seconds, Ruckig's seconds, the ratio."""
    arm = controller()
    step_s = arm.planner.step_ms / 1000.0
    home = list(arm.q)
    out = []
    for label, target in JOINT_MOVES:
        goal = [radians(v) for v in target]
        if not arm.joints(home) or not arm.joints(goal):
            raise RuntimeError("the joint move %s was refused" % (target,))
        steps = arm.executor.total
        optimal = ruckig_duration(home, goal, arm.planner.joint_speed, arm.planner.joint_accel)
        out.append({"move": label, "target_deg": list(target), "steps": steps, "seconds": steps * step_s,
                    "ruckig_s": optimal, "ratio": None if optimal is None else steps * step_s / optimal})
    return out


def circle_points():
    c, r = CIRCLE_CENTRE, CIRCLE_RADIUS_MM
    return [(c[0] + r * cos(2 * pi * k / CIRCLE_CHORDS), c[1] + r * sin(2 * pi * k / CIRCLE_CHORDS), c[2], pi)
            for k in range(CIRCLE_CHORDS + 1)]


def queued(arm, points, top):
    """Run G1 lines through points (tool coordinates) at up to top mm/s as the G-code face
    queues them (a plan each time Blend.add says the queue is full, the rest at the end):
    (their steps, the plans they ran as)."""
    from armfw.gcodeblend import Blend
    from armfw.planner import BLEND
    blend = Blend(len(arm.q), len(points[0]))
    steps = plans = 0
    for k, point in enumerate(points):
        if not blend.add(point, top, arm.q, arm.planner.tool_accel) and k < len(points) - 1:
            continue
        arm.plan()
        arm.add(BLEND, blend)
        if not arm.run():
            raise RuntimeError("the blended lines to %s were refused" % (point,))
        steps += arm.executor.total
        plans += 1
        blend.count = 0
    return steps, plans


def circle():
    """The circle's steps blended (queued as the G-code face queues them) and with every line alone."""
    from armfw.gcodeblend import BLEND_LINES, LOOK_AHEAD
    points = circle_points()
    arm = controller()
    top = min(CIRCLE_FEED_MM_MIN / 60.0, arm.planner.line_top(0.0))
    if not arm.move(points[0]):
        raise RuntimeError("the move to the circle was refused")
    blended, plans = queued(arm, points[1:], top)
    alone = 0
    for point in points[1:]:
        if not arm.line(point):
            raise RuntimeError("a line of the circle was refused")
        alone += arm.executor.total
    return {"lines": CIRCLE_CHORDS, "radius_mm": CIRCLE_RADIUS_MM, "feed_mm_min": CIRCLE_FEED_MM_MIN,
            "look_ahead": LOOK_AHEAD, "queue_lines": BLEND_LINES, "plans": plans, "blended_steps": blended,
            "alone_steps": alone, "ratio": alone / blended}


def square_lines(cut_mm=None):
    """The ends (tool coordinates, the tool pointing down) of G1 lines once round the square
    from its first corner: a line a side, or each side cut into lines of cut_mm."""
    points, here = [], SQUARE[0] + (pi,)
    for corner in SQUARE[1:] + SQUARE[:1]:
        corner += (pi,)
        pieces = 1 if cut_mm is None else max(1, round(max(abs(corner[i] - here[i]) for i in range(3)) / cut_mm))
        points += [tuple(here[i] + (corner[i] - here[i]) * k / pieces for i in range(4))
                   for k in range(1, pieces + 1)]
        here = corner
    return points


def drawing():
    """The square's sides (once round) at F6000 as one G1 line each, and cut into each of
    DRAWING_CUTS_MM: the steps of each, queued as the G-code face queues them."""
    arm = controller()
    top = min(CIRCLE_FEED_MM_MIN / 60.0, arm.planner.line_top(0.0))
    out = []
    for cut in (None,) + DRAWING_CUTS_MM:
        if not arm.move(SQUARE[0] + (pi,)):
            raise RuntimeError("the move to the square was refused")
        points = square_lines(cut)
        steps, plans = queued(arm, points, top)
        out.append({"cut_mm": cut, "lines": len(points), "plans": plans, "steps": steps})
    return out


def recording_controller():
    """(a controller, the list its steps' poses go into): each joint's pulse rounded on its
    own (armctl.bench.accuracy), so a step's pose is the walk's exact one."""
    from armctl.bench import accuracy
    from armfw import board as fw_board
    from armfw.motion import ArmController
    from armfw.simservo import SimServo
    board = fw_board.load(str(BOARD))
    accuracy.round_each(board.servos)
    poses = []
    arm = ArmController(board, SimServo({}), None, sleep_ms=lambda ms: poses.append(list(arm.q)))
    arm.park()
    return arm, poses


def peak_accel(arm, poses):
    """The largest joint acceleration (rad/s^2) over poses, a step apart, at rest before and after."""
    step_s = arm.planner.step_ms / 1000.0
    qs = [poses[0]] + poses + [poses[-1]]
    return max(abs(qs[i + 1][j] - 2 * qs[i][j] + qs[i - 1][j]) / (step_s * step_s)
               for j in range(len(arm.q)) for i in range(1, len(qs) - 1))


def random_lines():
    """RANDOM_LINES lines between random reachable points, the pitch kept: their steps and
    the largest joint acceleration (deg/s^2, from the exact poses) against the limit."""
    arm, poses = recording_controller()
    rng = random.Random(RANDOM_LINES_SEED)
    peak, over, steps, lines = 0.0, 0, 0, 0
    while lines < RANDOM_LINES:
        pitch = radians(rng.choice((90, 120, 150, 180)))
        a = (rng.uniform(40, 260), rng.uniform(-200, 200), rng.uniform(60, 300), pitch)
        b = (rng.uniform(40, 260), rng.uniform(-200, 200), rng.uniform(60, 300), pitch)
        if not arm.move(a):
            continue                    # out of reach: another pair
        poses[:] = [list(arm.q)]
        if not arm.line(b):
            continue
        lines += 1
        steps += len(poses) - 1
        worst = peak_accel(arm, poses)
        over += worst > min(arm.planner.joint_accel)
        peak = max(peak, worst)
    return {"lines": lines, "seed": RANDOM_LINES_SEED, "steps": steps, "peak_accel_deg_s2": degrees(peak),
            "limit_deg_s2": degrees(min(arm.planner.joint_accel)), "over": over}


def _blended(arm, poses, start, points, top):
    """Run lines from start through points (tool coordinates) as one blended queue; the steps'
    poses into poses (the first: at start); their largest joint acceleration (rad/s^2)."""
    from armfw.gcodeblend import Blend
    from armfw.planner import BLEND
    if not arm.move(start):
        raise RuntimeError("the move to %s was refused" % (start,))
    poses[:] = [list(arm.q)]
    blend = Blend(len(arm.q), len(start))
    for point in points:
        blend.add(point, top, arm.q, arm.planner.tool_accel)
    arm.plan()
    arm.add(BLEND, blend)
    if not arm.run():
        raise RuntimeError("the lines from %s were refused" % (start,))
    return peak_accel(arm, poses)


def corners():
    """The square's and the small circle's steps and largest joint acceleration (deg/s^2, from
    the exact poses), blended at F6000 (the board's 100 mm/s), against the limit."""
    arm, poses = recording_controller()
    top = min(CIRCLE_FEED_MM_MIN / 60.0, arm.planner.line_top(0.0))
    square = [corner + (pi,) for corner in SQUARE]
    peak = _blended(arm, poses, square[0], (square[1:] + square[:1]) * 2, top)
    figures = {"square_mm": SQUARE[1][0] - SQUARE[0][0], "square_steps": len(poses) - 1,
               "square_peak_deg_s2": degrees(peak)}
    (cx, cy, cz), r, chords = SMALL_CIRCLE
    points = [(cx + r * cos(2 * pi * k / chords), cy + r * sin(2 * pi * k / chords), cz, pi)
              for k in range(chords // 2 + 1)]
    peak = _blended(arm, poses, points[0], points[1:], top)
    figures.update({"circle_radius_mm": r, "circle_chords": chords // 2, "circle_steps": len(poses) - 1,
                    "circle_peak_deg_s2": degrees(peak), "limit_deg_s2": degrees(min(arm.planner.joint_accel))})
    return figures


def cost(short):
    """tests/mp/bench_motion.py's figures, with the RP2040 ESTIMATE of each."""
    from armctl.bench import estimate, firmware
    figures = firmware.run_script(SCRIPT, 5 if short else 50)
    if not isinstance(figures, dict):
        raise RuntimeError(figures)
    # ESTIMATE, as armctl.bench.estimate scales the solver: time by bm_float (centre, fast, slow),
    # heap by the board's GC block (the number of allocations stays).
    for key in ("joint_fraction", "line_ramp_step", "blend_step"):
        figures["rp2040_%s_us" % key] = estimate.time_on("rp2040_125MHz", figures[key + "_us"])
    for key in ("joint_fraction", "line_ramp_step", "blend_step", "live_joint_step", "live_blend_step"):
        figures["rp2040_%s_heap_bytes" % key] = estimate.heap_on("rp2040_125MHz", figures[key + "_heap_bytes"],
                                                                figures["gc_block_bytes"])
    figures["live_step_heap_bytes"] = max(figures["live_joint_step_heap_bytes"],
                                          figures["live_blend_step_heap_bytes"])
    figures["live_step_budget_bytes"] = LIVE_STEP_BUDGET_BYTES
    return figures


def run(short=False):
    moves = joint_moves()
    return {"board": BOARD.name, "ruckig": moves[0]["ruckig_s"] is not None,
            "joint_moves": moves, "circle": circle(), "drawing": drawing(), "lines": random_lines(), "corners": corners(),
            "cost": cost(short)}
