# SPDX-License-Identifier: MIT
"""armctl shell: an interactive protocol terminal with line editing and history."""

import argparse
import os
import sys
from pathlib import Path

from armctl import cli
from armctl.fallback import Mover, board_for, host_solves, tool_request
from armctl.link import Link
from armfw.board import BoardError

NAME = "shell"
HELP = "Type protocol commands at the board interactively (history, line editing; Ctrl-D exits)."

HISTORY = Path(os.environ.get("ARMCTL_HISTORY", Path.home() / ".armctl_history"))
HISTORY_LENGTH = 1000
PROMPT = "arm> "

EPILOG = """\
Type a command such as "where", "ik 150 0 200 90" or "servo 1 1520" and press
Enter; the board's reply lines are printed as they arrive. "help" asks the
board for its command list. Up/Down recall earlier commands, kept in
%s (ARMCTL_HISTORY overrides). Ctrl-D or "exit" leaves.
A `move X Y Z` or `line X Y Z` the board cannot solve (a chain arm; a 5-joint
arm without a pitch) goes through the host's fallback, as `armctl move`:
the host solves it and sends `joints` or a joint `path` (--board names the
board file when it is not a shipped one).
Exit status: 0 normal exit, 3 the link was lost or never opened.
""" % HISTORY


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser)
    parser.add_argument("--board", "-b", default=None, metavar="NAME|PATH",
                        help="the board's description, for targets the host solves "
                             "(default: the shipped board its `info` names)")


def _start_history():
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input() still works
        return None
    try:
        readline.read_history_file(HISTORY)
    except OSError:
        pass
    readline.set_history_length(HISTORY_LENGTH)
    return readline


def _save_history(readline):
    if readline is None:
        return
    try:
        readline.write_history_file(HISTORY)
    except OSError as e:
        print("armctl shell: history not saved: %s" % e, file=sys.stderr)


def _mover(link, board_file, interactive):
    """The host fallback for this board, or None (with a note) when its description is unknown."""
    try:
        return Mover(link, board_for(link, board_file))
    except BoardError as e:
        if board_file is not None:
            raise
        if interactive:
            print("note: targets the board cannot solve stay with the board (%s)" % e)
        return None


def run(args):
    link = Link(args.port, args.baud, args.timeout)
    readline = _start_history()
    interactive = sys.stdin.isatty()
    if interactive:
        print("connected to %s; \"help\" lists the board's commands, Ctrl-D exits" % args.port)
    try:
        with link:
            movers = []         # the fallback, found at the first target it may have to solve
            while True:
                try:
                    line = input(PROMPT if interactive else "").strip()
                except EOFError:
                    if interactive:
                        print()
                    return cli.EXIT_OK
                if not line:
                    continue
                if line in ("exit", "quit"):
                    return cli.EXIT_OK
                if not interactive:
                    print(PROMPT + line)
                target = tool_request(line)
                if target is not None and not movers:
                    movers.append(_mover(link, args.board, interactive))
                if target is not None and movers[0] is not None and host_solves(movers[0].solver.kind):
                    verb, position = target
                    mover = movers[0]
                    outcome = (mover.line if verb == "line" else mover.move)(position)
                    for text in outcome.describe():
                        print("# " + text if not text.startswith("solver=") else text, flush=True)
                    continue
                link.request(line, on_line=lambda text: print(text, flush=True))
    finally:
        _save_history(readline)
