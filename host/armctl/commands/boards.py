"""armctl boards: the board descriptions shipped with armctl."""

import sys

from armctl import shipped
from armfw import board as boardlib

NAME = "boards"
HELP = "List the shipped board descriptions (name, arm, driver, joints); --board takes these names."


def add_arguments(parser):
    parser.add_argument("--path", metavar="NAME",
                        help="print the file of the shipped board NAME instead (e.g. for mpremote cp)")


def run(args):
    if args.path is not None:
        if args.path not in shipped.board_names():
            print("armctl boards: no shipped board %r (shipped: %s)"
                  % (args.path, ", ".join(shipped.board_names())), file=sys.stderr)
            return 2
        print(shipped.BOARDS_DIR / (args.path + ".json"))
        return 0
    for name in shipped.board_names():
        b = boardlib.load(str(shipped.BOARDS_DIR / (name + ".json")))
        print("%-16s arm=%-7s driver=%-8s joints=%d  %s"
              % (name, b.solver.kind, b.driver["kind"], b.solver.n, b.title))
    return 0
