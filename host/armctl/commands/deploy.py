# SPDX-License-Identifier: MIT
"""armctl deploy: put the firmware and a board description on a board."""

import argparse
import sys

from armctl import cli
from armctl.deploy import BoardNotRunning, DeployError, NotEnoughHeap, deploy
from armfw import board as boardlib

NAME = "deploy"
HELP = "Copy the firmware and a board file to the board's flash (mpremote), restart it, check it answers."

EPILOG = """\
examples:
  armctl deploy --port /dev/ttyACM0 --board boards/pico_pca9685.json
  armctl deploy --port /dev/ttyACM0 --board boards/pico_pca9685.json --source
  armctl deploy --port /dev/ttyUSB0 --board boards/esp32_pwm.json --anyway
      (an ESP32's heap holds the joint moves, not lines or G-code: README, Memory)

Reads the board's free heap first (soft reset, raw REPL) and copies nothing
when the firmware will not fit it, unless --anyway. Then copies
firmware/main.py, firmware/armfw/*.py compiled to .mpy for the board file's
"mcu" (source .py with --source) and the board file (as board.json), removes
stale armfw modules, keeps the board's calibration.json, soft-resets the
board, waits until it answers `help` with ok and checks `info` names the
deployed board. Close any terminal on the port first.
Exit status: 0 deployed and running the board file, 1 refused: the firmware
will not fit the board's heap, or the board restarted but cannot run the
board file (e.g. no PCA9685 answers: BAD_BOARD), 2 bad board file or
firmware that does not compile, 3 no link (port missing or busy, board
silent after reset).
"""


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser, timeout=False)
    parser.add_argument("--board", "-b", required=True, help="board description, e.g. boards/pico_pca9685.json")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--mpy", dest="source", action="store_false", default=False,
                      help="compile armfw with mpy-cross for the board's CPU (the default: faster import, "
                           "less RAM); main.py stays source")
    form.add_argument("--source", action="store_true",
                      help="copy armfw as source .py (the board compiles it at import: needs more heap)")
    parser.add_argument("--anyway", action="store_true",
                        help="copy the firmware even where the board's free heap is less than it needs: the "
                             "board then answers each request that does not fit error NO_MEMORY (README, "
                             "Memory: an ESP32's 112 KB holds a 5-joint arm's joint moves as .mpy)")


def run(args):
    boardlib.load(args.board)      # a bad board file: exit 2 before the port is touched
    try:
        deploy(args.port, args.board, mpy=not args.source, baud=args.baud, anyway=args.anyway)
    except DeployError as e:
        raise cli.UsageError(str(e))
    except (NotEnoughHeap, BoardNotRunning) as e:
        print("armctl deploy: %s" % e, file=sys.stderr)
        return cli.EXIT_REFUSED
    return cli.EXIT_OK
