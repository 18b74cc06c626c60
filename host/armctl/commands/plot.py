# SPDX-License-Identifier: MIT
"""armctl plot: pictures of the workspace and of straight tool lines (PNG)."""

import argparse
import math
from pathlib import Path

import numpy as np

from armctl import cli, shipped
from armfw import board as boardlib
from armfw import status as fw_status

NAME = "plot"
HELP = ("Draw the workspace (status over a grid), a straight tool line (path, joint angles, joint speeds) "
        "or a motion from its pulses (joint position, velocity, acceleration).")

EPILOG = """\
examples:
  armctl plot workspace --board boards/sim_planar.json -o out/planar.png
  armctl plot workspace --board boards/sim_arm5.json --pitch 90
  armctl plot path --board boards/sim_planar.json --from 150 -60 --to 150 120
  armctl plot path --board boards/sim_arm5.json --from 150 0 100 90 --to 330 0 100 90
  armctl plot motion --board boards/sim_arm5.json --run "joints 90 0 90 0 0" "line 200 50 150 180"
  armctl plot motion --board boards/sim_arm5.json --pulses flash-pulses.log

Targets: planar X Y (mm); arm5 X Y Z (mm) PITCH (degrees from vertical,
90 = tool horizontal). A path is solved by the firmware's IK at every step
of the board's line_step_mm; joint speeds are those a constant tool speed
demands. A motion is drawn from recorded pulses: a simulator's pulse log
(--pulses), or the pulses of commands run now on a simulated board (--run);
velocity and acceleration are central differences over --window control
steps either side. Exit status: 0 picture written (path: every step solved),
1 the path leaves the workspace (the picture marks the failing steps) or a
--run command is refused, 2 bad arguments or board file.
"""


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = parser.add_subparsers(dest="what", metavar="WHAT")
    sub.required = True
    ws = sub.add_parser("workspace", help="status of the analytic IK over a grid")
    path = sub.add_parser("path", help="a straight tool line solved step by step")
    motion = sub.add_parser("motion", help="a motion's joint position, velocity, acceleration from its pulses")
    for p, default in ((ws, "out/workspace.png"), (path, "out/path.png"), (motion, "out/motion.png")):
        p.add_argument("--board", "-b", default=shipped.DEFAULT_BOARD,
                       help="board name or file (default %(default)s)")
        p.add_argument("-o", "--output", default=default, help="PNG to write (default %(default)s)")
    ws.add_argument("--pitch", type=float, default=90.0,
                    help="arm5: tool pitch, degrees from vertical (default 90, horizontal)")
    ws.add_argument("--grid", type=int, default=301, help="grid points per side (default %(default)s)")
    path.add_argument("--from", dest="start", nargs="+", type=float, required=True, metavar="V",
                      help="start: X Y (planar) or X Y Z PITCH (arm5), mm and degrees")
    path.add_argument("--to", dest="end", nargs="+", type=float, required=True, metavar="V",
                      help="end, as --from")
    path.add_argument("--speed", type=float, default=None,
                      help="tool speed, mm/s (default: the board's line_step_mm per step_ms)")
    source = motion.add_mutually_exclusive_group(required=True)
    source.add_argument("--pulses", help="a pulse log: lines of t_ms channel us (armctl sim's)")
    source.add_argument("--run", dest="commands", nargs="+", metavar="COMMAND",
                        help="commands to run on the simulated board, their pulses drawn")
    motion.add_argument("--window", type=int, default=5,
                        help="control steps either side of each difference (default %(default)s)")


def parse_target(arm, values, what):
    """Firmware target (mm, pitch radians) from command-line numbers (pitch in degrees); ValueError."""
    want = len(arm.targets)
    if len(values) != want:
        raise ValueError("%s: a target of the %s arm is %s, got %d numbers"
                         % (what, arm.kind, " ".join(t.upper() for t in arm.targets), len(values)))
    if not all(math.isfinite(v) for v in values):
        raise ValueError("%s: numbers must be finite" % what)
    target = [float(v) for v in values]
    if arm.kind == "arm5":
        target[3] = math.radians(target[3])
    return target


def _motion(args, board, out):
    from armctl import plot
    from armctl.sim_flash import parse_pulses
    if not 1 <= args.window <= 1000:
        raise cli.UsageError("--window must be 1..1000 steps")
    if args.pulses is not None:
        try:
            pulses = parse_pulses(Path(args.pulses).read_text())
        except OSError as e:
            raise cli.UsageError("--pulses: %s" % e)
        refused = None
    else:
        from armctl.sim import Simulator
        refused = None
        with Simulator(str(shipped.board_path(args.board))) as sim:
            for command in args.commands:
                reply = sim.request(command)[-1]
                if not reply.startswith("ok"):
                    refused = "%s: %s" % (command, reply)
                    break
            pulses = sim.pulses()
    try:
        m = plot.motion_figure(board, pulses, out, args.window)
    except ValueError as e:
        raise cli.UsageError(str(e))
    peak_v = np.nanmax(np.abs(m.v_deg_s), axis=0) if len(m.t_s) > 2 * args.window else [float("nan")] * len(m.names)
    peak_a = np.nanmax(np.abs(m.a_deg_s2), axis=0) if len(m.t_s) > 2 * args.window else [float("nan")] * len(m.names)
    print("motion on %s: %.2f s, peak velocity / acceleration per joint: %s"
          % (board.name, m.t_s[-1], ", ".join("%s %.0f deg/s %.0f deg/s^2" % (name, v, a)
                                             for name, v, a in zip(m.names, peak_v, peak_a))))
    print("picture: %s" % out)
    if refused is not None:
        print("refused: %s" % refused)
        return cli.EXIT_REFUSED
    return cli.EXIT_OK


def run(args):
    from armctl import plot
    board = boardlib.load(args.board)
    if args.what == "motion":
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        return _motion(args, board, out)
    if not board.solver.closed_form:
        raise cli.UsageError("plot maps the board's own IK; a %s arm has none (armctl solve and "
                             "armctl move solve it on the host)" % board.solver.kind)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.what == "workspace":
        if not math.isfinite(args.pitch) or not 10 <= args.grid <= 2000:
            raise cli.UsageError("--pitch must be finite and --grid 10..2000")
        status = plot.workspace_figure(board, out, math.radians(args.pitch), args.grid)
        shares = ", ".join("%s %.1f%%" % (fw_status.name(c), 100.0 * (status == c).mean())
                           for c in sorted(set(status.ravel().tolist())))
        print("workspace of %s: %dx%d grid: %s" % (board.name, args.grid, args.grid, shares))
        print("picture: %s" % out)
        return cli.EXIT_OK
    try:
        start = parse_target(board.solver, args.start, "--from")
        end = parse_target(board.solver, args.end, "--to")
        if args.speed is not None and not (math.isfinite(args.speed) and args.speed > 0):
            raise ValueError("--speed must be a positive number of mm/s")
    except ValueError as e:
        raise cli.UsageError(str(e))
    res = plot.line_figure(board, start, end, out, speed_mm_s=args.speed)
    steps = len(res.status)
    peak = res.joint_speed_deg_s
    fastest = np.nanmax(peak) if np.any(np.isfinite(peak)) else float("nan")
    print("line on %s: %d steps, %.1f mm, peak joint speed %.0f deg/s (limit %g)"
          % (board.name, steps, res.distance_mm[-1], fastest, board.motion["max_speed_deg_s"]))
    print("picture: %s" % out)
    if not res.ok:
        first = res.failed[0]
        print("refused: %d of %d steps have no solution; first at step %d (%.1f mm along): %s"
              % (len(res.failed), steps, first, res.distance_mm[first], fw_status.name(res.status[first])))
        return cli.EXIT_REFUSED
    return cli.EXIT_OK
