# SPDX-License-Identifier: MIT
"""armctl teach: record a path by moving a bus servo arm by hand (the board's `path record`)."""

import argparse
import sys
import time

from armctl import cli
from armctl.link import Link
from armctl.pacing import Pacer

NAME = "teach"
HELP = "Record a joint path by moving the relaxed arm by hand (bus servos); --replay runs it back."

EPILOG = """\
The board's servos go limp (`relax`) and its joint path is emptied (`path
clear`); then, while you move the arm, the pose the servos report is added
to the path --hz times a second (`path record`: a pose within 0.5 deg of the
last one is not added, so pausing costs nothing; at most 128 waypoints).
Enter ends the recording. The path stays on the board: `engage` gives the
torque back where the arm stands, and `path run` replays the path from
there, checked whole first like any path (firmware/PROTOCOL.md, "Teach by
hand"). --replay does both at once after the recording.
Exit status: 0 recorded (and replayed), 1 the board refused (a board whose
servos cannot report their position; a pose outside the limits or in a
zone; a full path), 3 no link.
"""


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser)
    parser.add_argument("--hz", type=float, default=5.0, help="samples a second (default %(default)s)")
    parser.add_argument("--replay", action="store_true", help="then engage and run the path back")


class TerminalStop:
    """Enter at this terminal ends the recording; wait(s) waits up to s seconds for it."""

    def wait(self, seconds):
        import select
        if select.select([sys.stdin], [], [], seconds)[0]:
            sys.stdin.readline()
            return True
        return False


def run(args, stop=None, out=sys.stdout):
    """The command; stop (wait(seconds) -> True to end) replaces the terminal in tests."""
    if not 0.1 <= args.hz <= 50:
        raise cli.UsageError("--hz 0.1..50 samples a second")
    stop = stop or TerminalStop()
    with Link(args.port, args.baud) as link:
        pacer = Pacer(link)

        def request(line):
            reply = link.request(line, motion_s=pacer.allowance(line))
            if not reply.ok:
                print("armctl teach: %s: %s" % (line, reply.final), file=sys.stderr)
            return reply

        for line in ("relax", "path clear"):
            if not request(line).ok:
                return cli.EXIT_REFUSED
        print("Move the arm; Enter ends the recording", file=out, flush=True)
        count = "0"
        while not stop.wait(1.0 / args.hz):
            reply = request("path record")
            if not reply.ok:
                return cli.EXIT_REFUSED
            if reply.final != "ok " + count:
                count = reply.final.split()[1]
                print("waypoints: %s" % count, file=out, flush=True)
        print("recorded %s waypoints" % count, file=out, flush=True)
        if args.replay:
            for line in ("engage", "path run"):
                reply = request(line)
                if not reply.ok:
                    return cli.EXIT_REFUSED
                print(reply.final, file=out, flush=True)
    return cli.EXIT_OK
