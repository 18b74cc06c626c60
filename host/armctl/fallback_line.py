# SPDX-License-Identifier: MIT
"""Straight lines the host solves for the board (armctl.fallback.Mover.line): each step solved
on the host by the board's own stepping rule, the waypoints put on the servos' pulse grid or
thinned to what the board holds, and the joint legs between them checked against the line,
the limits, the zones and the pulse windows before anything is sent, a step's turn apart (the
board's steps lie on the legs: on each waypoint in turn for a line put on the pulse grid,
armfw.pathprofile; the board checks its own steps again before the first)."""

import math

import numpy as np

from armctl import numik
from armfw import status as fw_status

# Every pose the board commands along a host-solved line stays this close to the line (mm).
LINE_TOLERANCE_MM = 0.05
# ... and, where every step is a waypoint on the servos' pulse grid, this close
# (the pulse grid included).
PULSE_GRID_TOLERANCE_MM = 0.3


class LinePlan:
    """A host-solved line: ok, status, waypoints (radians, list of arrays), steps (the board's
    control periods), error_mm (largest distance of a commanded pose from the line),
    nearest_q and message for a refusal."""

    def __init__(self, ok, status, waypoints=(), steps=0, error_mm=None, nearest_q=None, message=""):
        self.ok = ok
        self.status = status
        self.waypoints = list(waypoints)
        self.steps = steps
        self.error_mm = error_mm
        self.nearest_q = nearest_q
        self.message = message


def _distance_to_segment(p, a, b):
    ab = b - a
    length2 = float(ab @ ab)
    t = 0.0 if length2 == 0.0 else min(max(float((p - a) @ ab) / length2, 0.0), 1.0)
    return float(np.linalg.norm(p - (a + t * ab)))


def _leg_poses(qa, qb, max_step):
    """Poses along the straight joint leg from qa to qb, qa excluded, no joint turning more
    than max_step from one to the next: the board's steps (armfw.pathprofile) lie on the leg."""
    biggest = float(np.max(np.abs(qb - qa)))
    steps = int(biggest / max_step + 1.0 - 1e-9)
    return [qa + (qb - qa) * (s / steps) for s in range(1, steps + 1)]


def board_path_steps(mover, q0, waypoints, speed_rad_s):
    """The steps the board takes to run waypoints (radians) from pose q0 as one path, by its
    own profile (armfw.pathprofile) at its limits as the board file gives them."""
    from armfw.pathprofile import PathProfile
    m = mover.board.motion
    speed = [min(math.radians(float(v)), speed_rad_s) for v in m["joint_speed_deg_s"]]
    accel = [math.radians(float(v)) for v in m["joint_accel_deg_s2"]]
    path = [float(v) for q in waypoints for v in _as_stored(q)]
    profile = PathProfile(len(waypoints), mover.board.servos)
    profile.plan([float(v) for v in _as_stored(q0)], path, len(waypoints), speed, accel, mover.step_ms / 1000.0)
    steps = 0
    while profile.step():
        steps += 1
    return steps


def _as_stored(q):
    """q as the board stores a waypoint (float32), so the host judges what the board will run."""
    return np.asarray(np.asarray(q, dtype=np.float32), dtype=float)


def _tool_ramp(mover, q0, p0, p1, length, solve, max_step):
    """The tool's speed along the line from rest to rest, as the board ramps its own lines
    (armfw.planner): slowed and eased ahead where the joints' limits bind (armfw.linesurvey,
    with this host's solver), so that the path of one waypoint a step keeps the joints'
    limits and the board runs it at this pace (armfw.pathprofile)."""
    from armfw.linesurvey import LineSurvey
    from armfw.planner import LINE_STRETCHES
    from armfw.profile import ToolRamp
    m = mover.board.motion
    step_s = mover.step_ms / 1000.0
    ramp = ToolRamp(LINE_STRETCHES)
    ramp.reset(float(m["tool_accel_mm_s2"]), float(m["junction_deviation_mm"]), step_s)
    survey = LineSurvey(len(q0), len(p0))
    survey.begin(q0, solve, max_step, step_s, [math.radians(v) for v in m["joint_accel_deg_s2"]], ramp.accel)
    survey.line(ramp, p0, p1, length, min(mover.line_step_mm / step_s, float(m["tool_speed_mm_s"])))
    return survey


def plan_line(mover, q0, p1, speed_rad_s, max_waypoints=None):
    """Solve and check a straight line from the pose q0 (radians) to p1 (mm); a LinePlan.

    The line is stepped by the board's own rule (armfw.linestep), with this
    host's solver at each step."""
    from armfw.linestep import LineStepper, JUMP
    from armfw.planner import MAX_WAYPOINTS
    max_waypoints = max_waypoints or MAX_WAYPOINTS
    max_step = speed_rad_s * mover.step_ms / 1000.0
    p0 = mover.tip(q0)
    length = float(np.linalg.norm(p1 - p0))
    if not np.all(np.isfinite(p1)):
        return LinePlan(False, fw_status.name(fw_status.BAD_INPUT), message="target is not finite")
    if length == 0.0:
        return LinePlan(True, "OK", [np.array(q0)], 0, 0.0)
    poses = [np.array(q0, dtype=float)]
    points = [list(p0)]         # each pose's point on the line
    last = []

    def solve(point, out, current):
        r = numik.solve(mover.board, np.array(point), mode=numik.POSITION, seed=np.array(current), restarts=0)
        last[:] = [r]
        for i, v in enumerate(r.q):        # out: a list (the stepper's) or a float array (the survey's)
            out[i] = float(v)
        return r.status

    line = LineStepper(len(q0), len(p0))
    q = [float(v) for v in q0]
    start, end = [float(v) for v in p0], [float(v) for v in p1]
    for st in line.walk(start, end, length, mover.line_step_mm, q, solve, max_step,
                        ramp=_tool_ramp(mover, q, start, end, length, solve, max_step)):
        point = " ".join("%.3f" % v for v in line.point)
        if st == JUMP:
            return LinePlan(False, fw_status.name(fw_status.SINGULAR), nearest_q=np.asarray(last[0].q),
                            message="joint would jump at %s" % point)
        if not fw_status.solved(st):
            r = last[0]
            return LinePlan(False, r.name, error_mm=r.error_mm, nearest_q=np.asarray(r.q),
                            message="step at %s: %s (misses by %.3f mm)" % (point, r.name, r.error_mm))
        q[:] = line.pose
        poses.append(np.array(q))
        points.append(list(line.point))
    if len(poses) - 1 <= max_waypoints:
        waypoints, worst = _on_the_pulse_grid(mover, poses, points, p0, p1, max_step)
        if worst <= PULSE_GRID_TOLERANCE_MM:
            return LinePlan(True, "OK", waypoints, board_path_steps(mover, q0, waypoints, speed_rad_s), worst)
    waypoints, worst = _thin(mover, poses, p0, p1, max_step)
    if worst > LINE_TOLERANCE_MM:
        return LinePlan(False, fw_status.name(fw_status.JOINT_LIMIT if worst == math.inf else fw_status.SINGULAR),
                        error_mm=worst, message="the board's steps between two solved poses leave %s"
                        % ("the joint limits, the zones or the pulse windows" if worst == math.inf
                           else "the line by %.3f mm" % worst))
    if len(waypoints) > max_waypoints:
        return LinePlan(False, fw_status.name(fw_status.BAD_INPUT), error_mm=worst,
                        message="the line needs %d waypoints; the board holds %d (split it)"
                        % (len(waypoints), max_waypoints))
    return LinePlan(True, "OK", waypoints, board_path_steps(mover, q0, waypoints, speed_rad_s), worst)


def _on_the_pulse_grid(mover, poses, points, p0, p1, max_step):
    """Every solved step a waypoint, moved onto the servos' pulse grid.

    The pulses of each step are chosen jointly by the board's own rule
    (armfw.pulsepick: of the combinations of each joint's pulse just below and
    just above its exact one, the one whose tip lies nearest the step's point on
    the line, where no farther from it than the nearest pulses'), so the
    pulses the servos get are the pose the host chose. The last waypoint stays
    the exact solution (the target, as `where` reports it). Returns (waypoints,
    worst distance from the line of every pose along the legs).
    """
    from armfw.pulsepick import PulsePicker
    servos = mover.board.servos
    picker = PulsePicker(servos, mover.solver, servos.driver)
    start = [float(v) for v in p0]
    end = [float(v) for v in p1]
    us = [0] * mover.n
    waypoints = []
    for q, point in zip(poses[1:-1], points[1:-1]):
        if picker.pick([float(v) for v in q], us, start, end, point) >= 0:
            return [], math.inf
        waypoints.append(_as_stored(picker.pose))
    waypoints.append(_as_stored(poses[-1]))
    worst = 0.0
    previous = _as_stored(poses[0])
    for q in waypoints:
        worst = max(worst, _segment_error(mover, previous, q, p0, p1, max_step))
        previous = q
    return waypoints, worst


def _segment_error(mover, qa, qb, p0, p1, max_step):
    """The worst distance from the line of the poses along the leg from qa to qb, inf if one is
    outside the limits, in a keep-out zone or outside the pulse windows."""
    worst = 0.0
    poses = _leg_poses(qa, qb, max_step)
    zones = mover.solver.zones
    for q in poses:
        pose = list(q)
        if (not mover.solver.within_limits(pose) or not mover._pulses_ok(q)
                or (zones is not None and not zones.clear(pose))):
            return math.inf
        worst = max(worst, _distance_to_segment(mover.tip(q), p0, p1))
    return worst


def _thin(mover, poses, p0, p1, max_step):
    """Keep as few solved poses as waypoints as hold every commanded pose within
    LINE_TOLERANCE_MM of the line (greedy: the farthest reachable next waypoint)."""
    kept = [_as_stored(poses[0])]
    worst = 0.0
    i = 0
    last = len(poses) - 1
    while i < last:
        j = i + 1
        best = (j, _segment_error(mover, kept[-1], _as_stored(poses[j]), p0, p1, max_step))
        while j < last:
            err = _segment_error(mover, kept[-1], _as_stored(poses[j + 1]), p0, p1, max_step)
            if err > LINE_TOLERANCE_MM:
                break
            j += 1
            best = (j, err)
        j, err = best
        kept.append(_as_stored(poses[j]))
        worst = max(worst, err)
        i = j
    return kept[1:], worst
