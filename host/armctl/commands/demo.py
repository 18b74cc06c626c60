# SPDX-License-Identifier: MIT
"""armctl demo: pick and place on the simulated board, transcript and path picture."""

import argparse
from pathlib import Path

from armctl import cli, shipped
from armfw import board as boardlib

NAME = "demo"
HELP = "Run a pick and place on the simulator over the line protocol; print the transcript, draw the tool path."

EPILOG = """\
No hardware needed: the simulator runs the firmware under the MicroPython
Unix port on a pseudo-terminal and the demo talks to it like to a board.
The picture shows the tool path decoded from the servo pulses the simulated
board sent, with the pick and place waypoints.
Exit status: 0 done, 1 the arm refused a move, 2 bad board file,
3 the simulator did not answer.
"""


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--board", "-b", default=shipped.DEFAULT_BOARD,
                        help="board name or file (default %(default)s)")
    parser.add_argument("-o", "--output", default="out/demo_path.png",
                        help="path picture to write (default %(default)s)")


def run(args):
    from armctl import demo
    out = Path(args.output)
    board = boardlib.load(args.board)      # a bad board file: exit 2 before anything starts
    if not board.solver.closed_form:
        raise cli.UsageError("the demo's pick and place needs the board's own IK; a %s arm has none "
                             "(drive it with armctl move)" % board.solver.kind)
    out.parent.mkdir(parents=True, exist_ok=True)
    code, _, _ = demo.run(args.board, out)
    return code
