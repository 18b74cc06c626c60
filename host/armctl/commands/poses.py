# SPDX-License-Identifier: MIT
"""armctl poses: list, save, go to, delete, export and import the board's named poses."""

import argparse
import json
import sys

from armctl import cli
from armctl.link import Link
from armctl.pacing import Pacer

NAME = "poses"
HELP = "The board's named poses (poses.json on its flash): list, save, go, del, export, import."

EPILOG = """\
examples:
  armctl poses --port /dev/ttyACM0 list
  armctl poses --port /dev/ttyACM0 save rest          # the pose the arm is in now
  armctl poses --port /dev/ttyACM0 go rest            # a validated joint move
  armctl poses --port /dev/ttyACM0 export poses.json  # {"rest": [deg, ...], ...}
  armctl poses --port /dev/ttyACM0 import poses.json  # each one checked by the board

The board keeps the poses in poses.json, rewritten whole through a temporary
file and a rename at every change (a power cut keeps the old file). Names:
1..16 letters, digits, _ or -, starting with a letter. Exit status: 0 done,
1 the board refused (unknown name, a joint outside its limits, flash full),
2 bad usage or file, 3 no link.
"""


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser)
    parser.add_argument("action", choices=("list", "save", "go", "del", "export", "import"))
    parser.add_argument("name", nargs="?", help="pose name (save, go, del) or JSON file (export, import)")


def read_poses(link):
    """{name: [deg, ...]} as the board lists them."""
    reply = link.request("pose list")
    if not reply.ok:
        raise cli.UsageError("the board refused `pose list`: %s" % reply.final)
    poses = {}
    for line in reply.info_lines:
        words = line.split()
        poses[words[0]] = [float(v) for v in words[1:]]
    return poses


def _load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise cli.UsageError("%s: %s" % (path, e))
    if not isinstance(data, dict) or not all(isinstance(q, list) for q in data.values()):
        raise cli.UsageError("%s: must map names to lists of joint angles (deg)" % path)
    return data


def run(args, out=sys.stdout):
    if args.action != "list" and not args.name:
        raise cli.UsageError("%s needs a %s" % (args.action, "file" if args.action in ("export", "import") else "name"))
    data = _load(args.name) if args.action == "import" else None
    with Link(args.port, args.baud, args.timeout) as link:
        if args.action in ("list", "export"):
            poses = read_poses(link)
            if args.action == "list":
                for name, q in poses.items():
                    print("%-16s %s" % (name, " ".join("%8.3f" % v for v in q)), file=out)
                return cli.EXIT_OK
            with open(args.name, "w") as f:
                json.dump(poses, f, indent=1)
                f.write("\n")
            print("exported %d poses to %s" % (len(poses), args.name), file=out)
            return cli.EXIT_OK
        if args.action == "import":
            refused = False
            for name, q in data.items():
                reply = link.request("pose set %s %s" % (name, " ".join(repr(float(v)) for v in q)))
                print("%s: %s" % (name, reply.final), file=out)
                refused = refused or not reply.ok
            return cli.EXIT_REFUSED if refused else cli.EXIT_OK
        # `pose go` is a joint move to angles the host does not know: a full turn's time at most.
        motion_s = Pacer(link).allowance("home") if args.action == "go" else 0.0
        reply = link.request("pose %s %s" % (args.action, args.name), motion_s=motion_s)
        print(reply.final, file=out)
        return cli.EXIT_OK if reply.ok else cli.EXIT_REFUSED
