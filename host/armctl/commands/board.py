# SPDX-License-Identifier: MIT
"""armctl board import: a board file from a URDF; armctl board wiring: a board's wiring as a picture."""

import argparse
import json
import re
import sys

from armctl import cli

NAME = "board"
HELP = ("Make a board file from a URDF (`armctl board import ARM.urdf -o BOARD.json`), or draw a board's "
        "wiring (`armctl board wiring NAME -o WIRING.svg`).")

EPILOG = """\
examples:
  armctl board import al5d_robot.urdf --output boards/my_al5d.json --name my_al5d
  armctl sim --board boards/my_al5d.json --pty

The chain from the URDF's root link to its tip link (the only leaf, or --tip)
becomes the board's arm: revolute joints with their origins, axes and limits,
continuous joints with the servo's range, fixed joints folded in; prismatic,
floating, planar and mimic joints are refused. An arm that is exactly the
two-link planar or the 5-joint teaching arm gets that analytic kind; any other
gets kind "chain" (FK on the board, IK on the host: `armctl move`).
Servo fields are defaults to edit: channel = joint index, 270-degree servos
(1500 us at zero, 424.448 us/rad, 500..2500 us), sign 1, offset 0; the driver
is the simulator's. Exit status: 0 written, 2 the URDF cannot be a board.
"""

WIRING_EPILOG = """\
examples:
  armctl board wiring pico_pca9685 -o pico_pca9685.svg
  armctl board wiring boards/my_arm.json -o my_arm.svg

Draws, from the board file alone: the microcontroller pins the driver uses
(I2C SDA/SCL, or one PWM pin per servo), the PCA9685's address jumpers and
channels, every servo's joint, channel, pulse window and limits, and the
servo power (its own 5-6 V supply, bulk capacitor, common ground).
Exit status: 0 written, 2 no such board, or a simulated board (nothing to wire).
"""


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    p = sub.add_parser("import", help="write a board file from a URDF", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("urdf", metavar="ARM.urdf", help="the URDF file")
    p.add_argument("--output", "-o", required=True, metavar="BOARD.json", help="board file to write")
    p.add_argument("--name", help="board name (default: the robot's name in the URDF)")
    p.add_argument("--tip", metavar="LINK", help="tip link, where the URDF branches (e.g. gripper fingers)")
    p.add_argument("--no-floor", dest="floor", action="store_false",
                   help="a chain arm's workspace without the table at z = 0 of the URDF's root frame "
                        "and the base column on it")
    w = sub.add_parser("wiring", help="draw a board's wiring as an SVG picture", epilog=WIRING_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("board", metavar="NAME", help="a shipped board's name (armctl boards) or a board file")
    w.add_argument("--output", "-o", required=True, metavar="WIRING.svg", help="SVG file to write")


def render(data):
    """The board file's text: indented like the shipped boards, a list of numbers on one line."""
    text = json.dumps(data, indent=2)
    return re.sub(r"\[([-0-9.e+,\s]+)\]",
                  lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]", text) + "\n"


def run(args):
    if args.action == "wiring":
        return wiring(args)
    from armctl import urdf
    try:
        data, notes = urdf.import_file(args.urdf, name=args.name, tip=args.tip, floor=args.floor)
    except urdf.UrdfError as e:
        raise cli.UsageError(str(e))
    with open(args.output, "w") as f:
        f.write(render(data))
    for note in notes:
        print("# " + note, file=sys.stderr)
    print("wrote %s: %s arm, %d joints (%s)" % (args.output, data["arm"]["kind"], len(data["joints"]),
                                                 ", ".join(j["name"] for j in data["joints"])))
    return cli.EXIT_OK


def wiring(args):
    from armctl import wiring as drawing
    from armctl.shipped import board_path
    from armfw import board as boardlib
    try:
        path = board_path(args.board)
        boardlib.load(str(path))            # the firmware's own checks: a board it would refuse is not drawn
        with open(path) as f:
            data = json.load(f)
        picture = drawing.svg(data)
    except (boardlib.BoardError, OSError, drawing.NothingToWire) as e:
        raise cli.UsageError(str(e))
    with open(args.output, "w") as f:
        f.write(picture)
    print("wrote %s: %s, %d servos" % (args.output, data["name"], len(drawing.servos(data))))
    return cli.EXIT_OK
