# SPDX-License-Identifier: MIT
"""`armctl sim-bus`: a bus board's servos, simulated, on a pseudo-terminal, until Ctrl-C.

What a USB bus adapter (Feetech's URT-1, ROBOTIS's U2D2) would show with the
board's servos on it: a program that opens a serial port by name (a servo
maker's SDK, LeRobot) opens the printed path instead and talks to simulated
STS3215s (a board with driver "sts") or XL330s ("dynamixel") at the board's IDs,
each at its middle tick, following its goal with a first-order lag.

    armctl sim-bus --board so101 --link /tmp/bus
    python -c "import scservo_sdk as s; p = s.PortHandler('/tmp/bus'); p.openPort(); print(s.sms_sts(p).ping(1))"
"""

import os
import signal
import sys
import time

from armctl import cli

NAME = "sim-bus"
HELP = "Serve a bus board's servos, simulated, on a pseudo-terminal (for the makers' SDKs, LeRobot)."


def add_arguments(parser):
    parser.add_argument("--board", "-b", required=True, metavar="NAME|PATH",
                        help="a board whose driver is sts or dynamixel (e.g. so101, koch)")
    parser.add_argument("--link", help="also make this symlink to the pty (e.g. /tmp/bus)")


def run(args):
    from armctl.sim_bus import SIM_FOLLOW
    from armctl.sim_bus_pty import serve
    from armfw import board, drivers
    b = board.load(str(args.board))
    kind = b.driver["kind"]
    if kind not in ("sts", "dynamixel"):
        raise cli.UsageError("%s drives %s servos, not a servo bus (sts, dynamixel)" % (b.name, kind))
    ids = drivers.channels(b)
    if args.link and os.path.lexists(args.link):
        raise cli.UsageError("%s exists already" % args.link)
    # A `kill` ends it as Ctrl-C does: the link is removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    pty = serve(kind, ids, SIM_FOLLOW)
    try:
        if args.link:
            os.symlink(pty.path, args.link)
        print(pty.path + (" (link %s)" % args.link if args.link else ""), flush=True)
        print("%d simulated %s at ID %s, %d baud or any; Ctrl-C stops"
              % (len(ids), "XL330s" if kind == "dynamixel" else "STS3215s", ", ".join(map(str, ids)),
                 b.driver["baud"]), file=sys.stderr, flush=True)
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        if args.link and os.path.islink(args.link):
            os.unlink(args.link)
        pty.close()
    return cli.EXIT_OK
