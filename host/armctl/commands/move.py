# SPDX-License-Identifier: MIT
"""armctl move: move the arm to a tool position, with the host's numerical fallback."""

import argparse
import sys

from armctl import cli
from armctl.fallback import Mover, board_for
from armctl.link import Link

NAME = "move"
HELP = "Move the tool to X Y Z [PITCH [ROLL]]: the board's solver first, the host's where it has none."

EPILOG = """\
examples:
  armctl move --port /dev/ttyACM0 200 50 120           (arm5, pitch free: solved on the host)
  armctl move --port /dev/ttyACM0 157.3 0 342.4 90     (pitch given: the board's own solver)
  armctl move --port /dev/ttyACM0 157.3 0 342.4 90 30  (and wrist roll 30 deg)
  armctl move --port /dev/pts/5 --board sim_al5d 150 40 180          (chain arm: host)
  armctl move --port /dev/pts/5 --board sim_al5d --line 150 -40 180  (straight line)

Target: arm5 X Y Z [PITCH [ROLL]] (mm, degrees); planar X Y; chain X Y Z (X Y Z [PITCH] where the board solves a closed form, as the SO-101).
The board's analytic solver answers first. Where the pitch is free, or the
board answers NO_CLOSED_FORM (a chain arm), the host solves numerically
(damped least squares) from the pose the board reports, checks the answer
with the firmware's own forward kinematics and moves with `joints`, which the
board checks again. --line: a straight tool line from the current pose; where
the board cannot solve it, every step is solved on the host, the whole path
checked, then sent as joint waypoints (`path add`) that the board runs as one
motion under its own speed limit (`path run`).
--board: the board file the board runs (a shipped name or a path; default:
the shipped board named by the board's `info`).
Output: the solver that answered, the FK error of its answer, the pose reached.
Exit status: 0 moved, 1 refused (unreachable, joint limit: the nearest pose
found is printed, never moved to), 2 bad usage, 3 no link to the board.
"""


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser)
    parser.add_argument("--board", "-b", default=None, metavar="NAME|PATH",
                        help="the board's description (default: the shipped board its `info` names)")
    cli.add_calibration_option(parser)
    parser.add_argument("--line", action="store_true", help="a straight tool line from the current pose")
    parser.add_argument("target", nargs="+", type=float, metavar="V", help="X Y [Z [PITCH [ROLL]]]")


def split_target(solver, values):
    """(position, pitch_deg or None, roll_deg or None) for an arm's solver; UsageError if miscounted.

    A chain arm whose board solves a closed form (armfw.chain5) takes a pitch too."""
    kind = solver.kind
    width = 2 if kind == "planar" else 3
    extra = {"planar": 0, "chain": len(solver.targets) - 3, "arm5": 2}[kind]
    if not width <= len(values) <= width + extra:
        takes = {"planar": "X Y", "chain": "X Y Z" + (" [PITCH]" if extra else ""), "arm5": "X Y Z [PITCH [ROLL]]"}
        raise cli.UsageError("a %s arm takes %s, got %d numbers" % (kind, takes[kind], len(values)))
    rest = list(values[width:]) + [None, None]
    return list(values[:width]), rest[0], rest[1]


def run(args):
    with Link(args.port, args.baud, args.timeout) as link:
        board = board_for(link, args.board, args.calibration)
        position, pitch, roll = split_target(board.solver, args.target)
        mover = Mover(link, board)
        if args.line:
            if roll is not None:
                raise cli.UsageError("--line takes X Y Z [PITCH]: the roll stays as it is")
            outcome = mover.line(position, pitch)
        else:
            outcome = mover.move(position, pitch, roll)
    for text in outcome.describe():
        print(text)
    if not outcome.moved:
        print("armctl move: %s" % (outcome.message or outcome.status), file=sys.stderr)
        return cli.EXIT_REFUSED
    return cli.EXIT_OK
