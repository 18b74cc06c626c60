# SPDX-License-Identifier: MIT
"""Pictures of the arm: workspace maps, straight-line paths, tool paths (PNG, matplotlib Agg).

- workspace_figure(board, out_png): where the analytic solver says OK,
  SINGULAR, TOO_FAR, TOO_CLOSE, JOINT_LIMIT or COLLISION (a link would enter
  one of the board's keep-out zones) over a grid. Planar arm: the (x, y)
  plane. Arm5: the side view (r, z) for one tool pitch (r < 0 is behind the
  base), with the arm drawn in its home pose. The floor and the zones are
  drawn (arm5: their section with the view's plane).
- line_figure(board, start, end, out_png): a straight tool line solved by the
  firmware (armfw) at every step, with minimum motion from the previous step:
  the tool path with failing steps marked, joint angles and the joint speeds
  a constant tool speed demands (they rise near the workspace edge).
- path_figure(board, points_mm, out_png, waypoints=None): a tool path given
  as positions (e.g. decoded from servo pulses), with its waypoints.
- motion_figure(board, pulses, out_png): a motion as its recorded pulses
  (the simulator's pulse log) say it went: each joint's position, velocity and
  acceleration against time (motion_series: the numbers drawn).

Units on every axis: mm, degrees, seconds. The status colours are the same in
every picture.
"""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt                 # noqa: E402
from matplotlib.patches import Circle, Patch, Rectangle    # noqa: E402
from matplotlib.colors import ListedColormap    # noqa: E402
import numpy as np                               # noqa: E402

from armfw import status as fw_status           # noqa: E402
from armfw import zones as fw_zones             # noqa: E402
from armfw.kinematics import MIN_MOTION         # noqa: E402
from armfw.linestep import LineStepper         # noqa: E402
from armctl import batch, chain as chain_mod   # noqa: E402

STATUS_COLOURS = {
    fw_status.OK: "#4caf50",
    fw_status.SINGULAR: "#ffb300",
    fw_status.TOO_FAR: "#eeeeee",
    fw_status.TOO_CLOSE: "#90caf9",
    fw_status.JOINT_LIMIT: "#e57373",
    fw_status.BAD_INPUT: "#000000",
    fw_status.COLLISION: "#8e24aa",
}
ZONE_COLOUR = "#6d4c41"
ARM_COLOUR = "#263238"
FAIL_COLOUR = "#d32f2f"
DPI = 110
WORKSPACE_GRID = 301


def _status_map():
    codes = sorted(STATUS_COLOURS)
    return ListedColormap([STATUS_COLOURS[c] for c in codes]), codes


def _status_legend(ax, present, loc="upper right"):
    handles = [Patch(facecolor=STATUS_COLOURS[c], edgecolor="#9e9e9e", label=fw_status.name(c))
               for c in sorted(STATUS_COLOURS) if c in present]
    return ax.legend(handles=handles, loc=loc, fontsize=8, title="analytic IK status", title_fontsize=8)


def _save(fig, out_png):
    fig.savefig(str(out_png), dpi=DPI)
    plt.close(fig)
    return out_png


def _side_points(c, q):
    """Joint origins and tip of pose q in its own vertical plane: (r, z) mm, r along the base's facing."""
    pts = c.joint_points(q)
    yaw = q[0]
    return pts[:, 0] * math.cos(yaw) + pts[:, 1] * math.sin(yaw), pts[:, 2]


def _draw_arm(ax, xs, ys, label, colour=ARM_COLOUR, alpha=1.0):
    ax.plot(xs, ys, "-o", color=colour, lw=3, ms=5, alpha=alpha, label=label, zorder=5)
    ax.plot(xs[-1:], ys[-1:], "v", color=colour, ms=8, alpha=alpha, zorder=6)


def workspace_grid(board, pitch_rad=math.pi / 2, grid=WORKSPACE_GRID):
    """Status codes over a grid: (extent_x, extent_y, status (grid, grid) rows along y).

    Planar: targets (x, y). Arm5Solver: targets (r, 0, z, pitch), r < 0 behind the base.
    Uses armctl.batch, the numpy twin of armfw's solver held to its answers.
    """
    arm = board.solver
    c = chain_mod.from_board(board)
    if arm.kind == "planar":
        span = 1.15 * c.reach
        xs = np.linspace(-span, span, grid)
        ys = np.linspace(-span, span, grid)
        gx, gy = np.meshgrid(xs, ys)
        targets = np.column_stack([gx.ravel(), gy.ravel()])
    else:
        span = 1.1 * c.reach
        xs = np.linspace(-span, span, grid)
        ys = np.linspace(c.anchor[2] - span, c.anchor[2] + span, grid)
        gx, gy = np.meshgrid(xs, ys)
        targets = np.column_stack([gx.ravel(), np.zeros(gx.size), gy.ravel(), np.full(gx.size, pitch_rad)])
    status, _, _ = batch.ik(board, targets)
    status = _zone_status(board, targets, np.asarray(status))
    return (xs[0], xs[-1]), (ys[0], ys[-1]), status.reshape(gx.shape)


def _zone_status(board, targets, status):
    """status with the firmware's zone-aware answer where the zone-free twin solved.

    The numpy twin (armctl.batch) is the solver alone; the keep-out zones and
    the branch choice they steer are the firmware's (armfw.zones), asked per point.
    """
    solver = board.solver
    if solver.zones is None or solver.zones.n_zones == 0:
        return status
    status = status.copy()
    out = [0.0] * solver.n
    for i in np.flatnonzero(status <= fw_status.SINGULAR):
        st = solver.ik([float(v) for v in targets[i]], out, None, MIN_MOTION)
        if not fw_status.solved(st):
            status[i] = st
    return status


def _draw_zones(ax, board, yaw=None):
    """The floor, keep-out zones and tool box of the board; yaw: arm5 side view's plane (radians)."""
    z = board.solver.zones
    if z is None:
        return
    planar = board.solver.kind == "planar"
    c = 1.0 if yaw is None else math.cos(yaw)
    s = 0.0 if yaw is None else math.sin(yaw)
    label = "keep-out zones"
    for k in range(z.n_zones):
        kind = z.zone_kinds[k]
        p = z.params[k]
        name = z.zone_names[k]
        if kind == fw_zones.FLOOR:
            ax.axhspan(p[0] - 40.0, p[0], color=ZONE_COLOUR, alpha=0.25, lw=0, label=label)
            ax.axhline(p[0] + p[1], color=ZONE_COLOUR, ls=":", lw=1)
            label = None
            continue
        if kind == fw_zones.CYLINDER:
            d = 0.0 if planar else abs(-s * p[0] + c * p[1])
            if d >= p[2]:
                continue
            centre = p[0] if planar else c * p[0] + s * p[1]
            half = math.sqrt(p[2] * p[2] - d * d)
            lo, hi, bottom, top = centre - half, centre + half, p[3], p[4]
        else:
            bottom, top = p[2], p[5]
            if planar:
                lo, hi = p[0], p[3]
            else:
                lo, hi = -1e9, 1e9      # the r interval where the plane's line is in the box
                for a, b0, b1 in ((c, p[0], p[3]), (s, p[1], p[4])):
                    if abs(a) < 1e-12:
                        if not b0 <= 0.0 <= b1:
                            lo, hi = 1.0, 0.0
                        continue
                    ra, rb = sorted((b0 / a, b1 / a))
                    lo, hi = max(lo, ra), min(hi, rb)
                if lo >= hi:
                    continue
        stay_in = kind == fw_zones.TOOL_BOX
        ax.add_patch(Rectangle((lo, bottom), hi - lo, top - bottom, fill=not stay_in,
                               color=ZONE_COLOUR, alpha=0.8 if stay_in else 0.35,
                               ls="--" if stay_in else "-", lw=1, label=label if not stay_in else "tool box"))
        if not stay_in:
            label = None
        ax.annotate(name, ((lo + hi) / 2, top), fontsize=7, color=ZONE_COLOUR, ha="center",
                    xytext=(0, 2), textcoords="offset points")


def workspace_figure(board, out_png, pitch_rad=math.pi / 2, grid=WORKSPACE_GRID):
    """Draw the workspace map (see the module doc) to out_png; returns the status grid."""
    arm = board.solver
    c = chain_mod.from_board(board)
    (x0, x1), (y0, y1), status = workspace_grid(board, pitch_rad, grid)
    cmap, codes = _status_map()
    index = np.searchsorted(codes, status)
    fig, ax = plt.subplots(figsize=(7.5, 7.0))
    ax.imshow(index, origin="lower", extent=(x0, x1, y0, y1), cmap=cmap,
              vmin=-0.5, vmax=len(codes) - 0.5, interpolation="nearest")
    if arm.kind == "planar":
        for radius, text in ((abs(arm.l1 - arm.l2), "|L1-L2|"), (arm.l1 + arm.l2, "L1+L2")):
            ax.add_patch(Circle((0, 0), radius, fill=False, ls="--", lw=1, color="#616161"))
            ax.annotate("%s = %g mm" % (text, radius), (radius * 0.71, -radius * 0.71), fontsize=8,
                        color="#424242", xytext=(4, -10), textcoords="offset points")
        pts = c.joint_points(c.home)
        _draw_arm(ax, pts[:, 0], pts[:, 1], "home pose")
        _draw_zones(ax, board)
        ax.set_xlabel("x (mm)")
        ax.set_ylabel("y (mm)")
        ax.set_title("%s: planar workspace, elbow limit %.0f..%.0f deg"
                     % (board.name, math.degrees(arm.lo[1]), math.degrees(arm.hi[1])))
    else:
        # For a fixed pitch the wrist point is the tip minus L3 along the
        # tool, so the tip can be anywhere within L1+L2 of the J2 axis
        # shifted by L3 along the tool; behind the base the tool points back.
        for side in (1, -1):
            centre = (side * arm.l3 * math.sin(pitch_rad), arm.base + arm.l3 * math.cos(pitch_rad))
            ax.add_patch(Circle(centre, arm.l1 + arm.l2, fill=False, ls="--", lw=1, color="#616161",
                                label="wrist reach L1+L2 (shifted by L3)" if side == 1 else None))
        r, z = _side_points(c, c.home)
        _draw_arm(ax, r, z, "home pose")
        _draw_zones(ax, board, 0.0)
        ax.axvline(0.0, color="#9e9e9e", lw=0.8, ls=":")
        ax.set_xlabel("r (mm, horizontal distance from the base axis; < 0 behind the base)")
        ax.set_ylabel("z (mm, height above the base)")
        ax.set_title("%s: side view, tool pitch %.0f deg from vertical"
                     % (board.name, math.degrees(pitch_rad)))
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.grid(True, lw=0.3, color="#bdbdbd")
    legend = _status_legend(ax, set(np.unique(status)))
    ax.add_artist(legend)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    _save(fig, out_png)
    return status


class LineResult:
    """A straight line solved step by step by the firmware.

    points (N, k) targets; status (N,) codes; q (N, n) radians, NaN where not
    solved; distance_mm (N,) along the line; time_s (N,) at the constant tool
    speed; joint_speed_deg_s (N, n) demanded between a step and the one
    before (NaN at the first step and around failures); failed: indices.
    """

    def __init__(self, points, status, q, distance_mm, time_s, joint_speed_deg_s):
        self.points = points
        self.status = status
        self.q = q
        self.distance_mm = distance_mm
        self.time_s = time_s
        self.joint_speed_deg_s = joint_speed_deg_s
        self.failed = np.flatnonzero(~np.isin(status, (fw_status.OK, fw_status.SINGULAR)))

    @property
    def ok(self):
        return len(self.failed) == 0


def solve_line(board, start, end, speed_mm_s=None, step_mm=None, current=None):
    """Solve a straight line with armfw at every step (minimum motion); returns a LineResult.

    The steps are the board's (armfw.linestep), at a constant tool speed: no
    step is shortened for the joints' speed limit, so the joint speeds drawn
    are the ones the line demands, and the survey goes on past a failing step
    to mark every one (the board stops at the first).

    speed_mm_s: the tool speed (default: the board's nominal line speed,
    line_step_mm per step_ms). step_mm: default the board's line_step_mm.
    current: the pose before the first step (default home).
    """
    arm = board.solver
    step_mm = step_mm or board.motion["line_step_mm"]
    speed = speed_mm_s or board.motion["line_step_mm"] / (board.motion["step_ms"] / 1000.0)
    start = [float(v) for v in start]
    end = [float(v) for v in end]
    length = math.dist(start[:3], end[:3])
    previous = list(arm.home if current is None else current)

    def solve(p, out, current):
        return arm.ik(p, out, current, MIN_MOTION)

    line = LineStepper(arm.n, len(start))
    steps = []

    def keep(point, st, pose):
        steps.append((list(point), st, list(pose)))
        if fw_status.solved(st):
            previous[:] = pose

    keep(start, solve(start, line.pose, previous), line.pose)
    if length > 0.0:
        for st in line.walk(start, end, length, step_mm, previous, solve, math.inf, survey=True):
            keep(line.point, st, line.pose)
    points = np.array([p for p, _, _ in steps])
    status = np.array([st for _, st, _ in steps], dtype=int)
    q = np.array([pose if fw_status.solved(st) else [np.nan] * arm.n for _, st, pose in steps])
    pos = points[:, :3] if points.shape[1] >= 3 else points
    distance = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(pos, axis=0), axis=1))])
    time_s = distance / speed
    dt = np.diff(time_s)
    speeds = np.full(q.shape, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        speeds[1:] = np.degrees(np.abs(np.diff(q, axis=0))) / dt[:, None]
    return LineResult(points, status, q, distance, time_s, speeds)


def line_figure(board, start, end, out_png, speed_mm_s=None, step_mm=None):
    """Solve the line (solve_line) and draw it to out_png; returns the LineResult."""
    res = solve_line(board, start, end, speed_mm_s, step_mm)
    arm = board.solver
    c = chain_mod.from_board(board)
    speed = res.distance_mm[-1] / res.time_s[-1] if res.time_s[-1] > 0 else 0.0
    fig, (ax_path, ax_q, ax_v) = plt.subplots(1, 3, figsize=(16, 5.2),
                                              gridspec_kw={"width_ratios": [1.1, 1, 1]})
    bad = res.failed
    if arm.kind == "planar":
        px, py = res.points[:, 0], res.points[:, 1]
        for radius in (abs(arm.l1 - arm.l2), arm.l1 + arm.l2):
            ax_path.add_patch(Circle((0, 0), radius, fill=False, ls="--", lw=1, color="#616161"))
        ax_path.set_xlabel("x (mm)")
        ax_path.set_ylabel("y (mm)")
        view = "top view, dashed: |L1-L2| and L1+L2"
    else:
        px = np.hypot(res.points[:, 0], res.points[:, 1])
        py = res.points[:, 2]
        ax_path.add_patch(Circle((0, arm.base), c.reach, fill=False, ls="--", lw=1, color="#616161"))
        yaw = math.atan2(res.points[0, 1], res.points[0, 0])
        ax_path.set_xlabel("r (mm, horizontal distance from the base axis)")
        ax_path.set_ylabel("z (mm)")
        view = "side view, dashed: reach L1+L2+L3 about J2"
    _draw_zones(ax_path, board, None if arm.kind == "planar" else yaw)
    ax_path.plot(px, py, "-", color="#1e88e5", lw=2, label="tool line", zorder=3)
    hit = bad[res.status[bad] == fw_status.COLLISION]
    other = bad[res.status[bad] != fw_status.COLLISION]
    if len(other):
        ax_path.plot(px[other], py[other], "x", color=FAIL_COLOUR, ms=7, mew=2, zorder=7,
                     label="no solution (%d steps, first: %s)" % (len(other), fw_status.name(res.status[other[0]])))
    if len(hit):
        ax_path.plot(px[hit], py[hit], "x", color=STATUS_COLOURS[fw_status.COLLISION], ms=7, mew=2, zorder=7,
                     label="refused by a zone (%d steps)" % len(hit))
    ax_path.plot(px[:1], py[:1], "o", color="#2e7d32", ms=8, label="start", zorder=8)
    ax_path.plot(px[-1:], py[-1:], "s", color="#6a1b9a", ms=8, label="end", zorder=8)
    for i, name, alpha in ((0, "arm at start", 0.9), (len(res.q) - 1, "arm at end", 0.45)):
        if np.all(np.isfinite(res.q[i])):
            if arm.kind == "planar":
                pts = c.joint_points(res.q[i])
                xs, ys = pts[:, 0], pts[:, 1]
            else:
                xs, ys = _side_points(c, res.q[i])
            _draw_arm(ax_path, xs, ys, name, alpha=alpha)
    ax_path.set_aspect("equal")
    ax_path.grid(True, lw=0.3)
    ax_path.legend(fontsize=7, loc="lower left", framealpha=0.85)
    ax_path.set_title("Tool path (%s)" % view, fontsize=10)

    for j in range(arm.n):
        ax_q.plot(res.distance_mm, np.degrees(res.q[:, j]), lw=1.8, label=arm.names[j])
    ax_q.set_xlabel("distance along the line (mm)")
    ax_q.set_ylabel("joint angle (deg)")
    ax_q.set_title("Joint angles (armfw IK, minimum motion)", fontsize=10)
    ax_q.legend(fontsize=8, loc="best")
    ax_q.grid(True, lw=0.3)

    limit = board.motion["max_speed_deg_s"]
    for j in range(arm.n):
        v = res.joint_speed_deg_s[:, j]
        if not np.any(v > 1e-6):
            continue        # a joint that never moves has no place on a log scale
        ax_v.plot(res.distance_mm, np.where(v > 1e-6, v, np.nan), lw=1.8, label=arm.names[j],
                  color="C%d" % j)
    ax_v.axhline(limit, color=FAIL_COLOUR, ls="--", lw=1.2, label="speed limit %g deg/s" % limit)
    ax_v.set_yscale("log")
    ax_v.set_xlabel("distance along the line (mm)")
    ax_v.set_ylabel("joint speed (deg/s, log scale)")
    ax_v.set_title("Joint speeds at a constant tool speed of %.0f mm/s" % speed, fontsize=10)
    ax_v.legend(fontsize=8, loc="best")
    ax_v.grid(True, which="both", lw=0.3)
    for ax in (ax_q, ax_v):
        for i in bad:
            ax.axvspan(res.distance_mm[max(i - 1, 0)], res.distance_mm[min(i + 1, len(res.distance_mm) - 1)],
                       color=FAIL_COLOUR, alpha=0.12, lw=0)
    verdict = "every step solved" if res.ok else "LEAVES THE WORKSPACE: %d of %d steps fail" % (len(bad), len(res.status))
    fig.suptitle("%s: straight line %s -> %s, %d steps of %g mm: %s"
                 % (board.name, _fmt_target(arm, res.points[0]), _fmt_target(arm, res.points[-1]),
                    len(res.status) - 1, step_mm or board.motion["line_step_mm"], verdict), fontsize=11)
    fig.tight_layout()
    _save(fig, out_png)
    return res


def _fmt_target(arm, p):
    if arm.kind == "arm5":
        return "(%.0f, %.0f, %.0f mm, pitch %.0f deg)" % (p[0], p[1], p[2], math.degrees(p[3]))
    return "(%.0f, %.0f mm)" % (p[0], p[1])


def path_figure(board, points_mm, out_png, waypoints=None, title=None):
    """Draw a tool path given as positions (N, 2) planar or (N, 3+) arm5, mm, with waypoints.

    Planar: one top view. Arm5Solver: top view (x, y) and side view (r, z), with the
    arm in its home pose. Returns out_png.
    """
    arm = board.solver
    c = chain_mod.from_board(board)
    pts = np.asarray(points_mm, dtype=float).reshape(len(points_mm), -1) if len(points_mm) else np.zeros((0, 3))
    way = np.asarray(waypoints, dtype=float) if waypoints is not None and len(waypoints) else None
    if arm.kind == "planar":
        fig, ax = plt.subplots(figsize=(7, 6.5))
        axes = [ax]
        views = [(0, 1, "x (mm)", "y (mm)", "top view")]
        for radius in (abs(arm.l1 - arm.l2), arm.l1 + arm.l2):
            ax.add_patch(Circle((0, 0), radius, fill=False, ls="--", lw=1, color="#616161"))
        home = c.joint_points(c.home)
        _draw_arm(ax, home[:, 0], home[:, 1], "home pose", alpha=0.5)
    else:
        fig, axes = plt.subplots(1, 2, figsize=(13, 6))
        views = [(0, 1, "x (mm)", "y (mm)", "top view"),
                 ("r", 2, "r (mm, horizontal distance from the base axis)", "z (mm)", "side view")]
        axes[1].add_patch(Circle((0, arm.base), c.reach, fill=False, ls="--", lw=1, color="#616161",
                                 label="reach L1+L2+L3"))
        axes[1].axhline(0.0, color="#795548", lw=1)
        r, z = _side_points(c, c.home)
        _draw_arm(axes[1], r, z, "home pose", alpha=0.5)
        axes[0].add_patch(Circle((0, 0), c.reach, fill=False, ls="--", lw=1, color="#616161",
                                 label="reach at J2 height"))
    for ax, (ix, iy, xl, yl, name) in zip(axes, views):
        def coord(a, i):
            return np.hypot(a[:, 0], a[:, 1]) if i == "r" else a[:, i]
        if len(pts):
            ax.plot(coord(pts, ix), coord(pts, iy), "-", color="#1e88e5", lw=1.8, label="tool path", zorder=3)
            ax.plot(coord(pts, ix)[:1], coord(pts, iy)[:1], "o", color="#2e7d32", ms=7, label="start", zorder=8)
        if way is not None:
            ax.plot(coord(way, ix), coord(way, iy), "D", color="#fb8c00", ms=7, mec="k", label="waypoints",
                    zorder=9)
            spots = {}
            for k, w in enumerate(way, 1):
                spot = (round(float(coord(w[None], ix)[0]), 1), round(float(coord(w[None], iy)[0]), 1))
                spots.setdefault(spot, []).append(str(k))
            for spot, numbers in spots.items():
                ax.annotate(",".join(numbers), spot, fontsize=8, xytext=(6, 5), textcoords="offset points")
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_title(name, fontsize=10)
        ax.set_aspect("equal")
        ax.grid(True, lw=0.3)
        ax.legend(fontsize=8, loc="best")
    fig.suptitle(title or "%s: tool path (%d positions)" % (board.name, len(pts)), fontsize=11)
    fig.tight_layout()
    return _save(fig, out_png)


class MotionSeries:
    """A motion from its pulses: t_s (samples, one per control step), q_deg (sample x
    joint, each joint's angle its last pulse commands), v_deg_s and a_deg_s2 (central
    differences over window steps either side; NaN where the window leaves the record)."""

    def __init__(self, t_s, q_deg, v_deg_s, a_deg_s2, names):
        self.t_s = t_s
        self.q_deg = q_deg
        self.v_deg_s = v_deg_s
        self.a_deg_s2 = a_deg_s2
        self.names = names


def motion_series(board, pulses, window=5):
    """The joints' motion from pulses [(t_ms, channel, us)] (the simulator's record), sampled
    every control step (the board's step_ms) from the first time every joint has a pulse.

    A whole-microsecond pulse is a step of about 0.13 degree: differentiated over one
    step that is several degrees per second of velocity; window steps either side
    (window * step_ms of time) average it down."""
    servos = board.servos
    n = servos.n
    step_ms = int(board.motion["step_ms"])
    joint_of = {ch: i for i, ch in enumerate(servos.channels)}
    us = [None] * n
    events = []         # (t_ms, pose in degrees) once every joint is known
    for t_ms, channel, value in pulses:
        i = joint_of.get(channel)
        if i is None or not value:
            continue
        us[i] = value
        if None not in us:
            pose = [math.degrees(servos.angle(j, us[j])) for j in range(n)]
            if events and events[-1][0] == t_ms:
                events[-1] = (t_ms, pose)
            else:
                events.append((t_ms, pose))
    if not events:
        raise ValueError("no pulse of every joint in the record")
    t0 = events[0][0]
    count = (events[-1][0] - t0) // step_ms + 1
    q = np.empty((count, n))
    k = 0
    for s in range(count):
        t = t0 + s * step_ms
        while k + 1 < len(events) and events[k + 1][0] <= t:
            k += 1
        q[s] = events[k][1]
    dt = step_ms / 1000.0
    w = max(1, int(window))
    v = np.full_like(q, np.nan)
    a = np.full_like(q, np.nan)
    if count > 2 * w:
        v[w:-w] = (q[2 * w:] - q[:-2 * w]) / (2 * w * dt)
        a[w:-w] = (q[2 * w:] - 2 * q[w:-w] + q[:-2 * w]) / (w * dt) ** 2
    return MotionSeries(np.arange(count) * dt, q, v, a, list(board.solver.names))


def motion_figure(board, pulses, out_png, window=5, title=None):
    """Draw the motion of pulses (motion_series) to out_png: position, velocity and
    acceleration of every joint against time, one panel each; returns the series."""
    m = motion_series(board, pulses, window)
    fig, axes = plt.subplots(3, 1, figsize=(11, 9), sharex=True)
    panels = ((m.q_deg, "position (deg)"), (m.v_deg_s, "velocity (deg/s)"), (m.a_deg_s2, "acceleration (deg/s^2)"))
    for ax, (values, label) in zip(axes, panels):
        for j, name in enumerate(m.names):
            ax.plot(m.t_s, values[:, j], lw=1.3, label=name)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="best", fontsize=8)
    axes[-1].set_xlabel("time (s) from the first pulse of every joint")
    axes[0].set_title(title or "%s: the motion its pulses command (differences over %d steps either side)"
                      % (board.name, max(1, int(window))))
    fig.tight_layout()
    _save(fig, out_png)
    return m

