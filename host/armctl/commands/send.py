# SPDX-License-Identifier: MIT
"""armctl send: send protocol lines to the board and print the replies."""

import argparse
import sys

from armctl import cli
from armctl.link import Link
from armctl.pacing import Pacer, is_motion

NAME = "send"
# With --window: requests gathered before their replies are printed.
BATCH = 64
HELP = "Send protocol commands to the board and print every reply line."

EPILOG = """\
examples:
  armctl send --port /dev/ttyACM0 "ik 150 0 200 90" "where"
  printf 'home\\nwhere\\n' | armctl send --port /dev/pts/5 -

Each request is printed after "> ", then the board's reply lines ("# " info
lines, then one "ok"/"error" line). --timeout is silence: every line from
the board restarts it, and a motion request also gets the time its path needs
at the speed in force (the board is silent while it moves). Before the first
request the link resynchronises, so a reply left over from an earlier run
(a board still finishing a motion) is never printed as this one's.
Exit status: 0 every reply was ok, 1 at least one error reply (the board
refused), 2 nothing to send, 3 no link (port missing or busy, board silent),
4 the board is at the MicroPython REPL (soft-reset it, or `armctl deploy`).
Sending stops at the first link failure. With --window N, requests that do
not move the arm are sent up to N ahead of their replies (at most 128 bytes in
flight, like a GRBL sender), replies still matched in order and printed per
request; motions are sent one at a time.
"""


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser)
    parser.add_argument("--window", type=int, default=1, metavar="N",
                        help="send up to N requests ahead of their replies (replies still matched in order; "
                             "motions are sent one at a time); default %(default)s")
    parser.add_argument("commands", nargs="+", metavar="COMMAND",
                        help='a protocol line such as "where"; "-" reads lines from standard input')


def _requests(commands, stdin):
    for command in commands:
        if command == "-":
            for line in stdin:
                line = line.strip()
                if line and not line.startswith("#"):
                    yield line
        elif command.strip():
            yield command.strip()


def _show(text):
    print(text, flush=True)


def run(args):
    if args.window < 1:
        raise cli.UsageError("--window must be at least 1")
    refused = False
    sent = 0
    batch = []
    with Link(args.port, args.baud, args.timeout) as link:
        pacer = Pacer(link)

        def send_batch():
            nonlocal refused
            for request, reply in zip(batch, link.pipeline(batch, window=args.window)):
                print("> " + request)
                for line in reply.raw:
                    print(line)
                refused = refused or not reply.ok
            sys.stdout.flush()
            batch.clear()

        for request in _requests(args.commands, sys.stdin):
            sent += 1
            if args.window > 1 and not is_motion(request):
                pacer.allowance(request)        # 0 here; a `speed` request changes later motions' time
                batch.append(request)
                if len(batch) >= BATCH:
                    send_batch()
                continue
            send_batch()
            print("> " + request, flush=True)
            reply = link.request(request, on_line=_show, motion_s=pacer.allowance(request))
            refused = refused or not reply.ok
        send_batch()
    if sent == 0:
        raise cli.UsageError("nothing to send")
    return cli.EXIT_REFUSED if refused else cli.EXIT_OK
