# SPDX-License-Identifier: MIT
"""armctl send: send protocol lines to the board and print the replies."""

import argparse
import sys

from armctl import cli
from armctl.link import Link

NAME = "send"
HELP = "Send protocol commands to the board and print every reply line."

EPILOG = """\
examples:
  armctl send --port /dev/ttyACM0 "ik 150 0 200 90" "where"
  printf 'home\\nwhere\\n' | armctl send --port /dev/pts/5 -

Each request is printed after "> ", then the board's reply lines ("# " info
lines, then one "ok"/"error" line). Exit status: 0 every reply was ok, 1 at
least one error reply (the board refused), 2 nothing to send, 3 no link (port
missing or busy, board silent). Sending stops at the first link failure.
"""


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser)
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


def run(args):
    refused = False
    sent = 0
    with Link(args.port, args.baud, args.timeout) as link:
        for request in _requests(args.commands, sys.stdin):
            print("> " + request, flush=True)
            reply = link.request(request, on_line=lambda text: print(text, flush=True))
            sent += 1
            refused = refused or not reply.ok
    if sent == 0:
        raise cli.UsageError("nothing to send")
    return cli.EXIT_REFUSED if refused else cli.EXIT_OK
