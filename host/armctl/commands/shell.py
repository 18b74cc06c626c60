# SPDX-License-Identifier: MIT
"""armctl shell: an interactive protocol terminal with line editing and history."""

import argparse
import os
import sys
from pathlib import Path

from armctl import cli
from armctl.link import Link

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
Exit status: 0 normal exit, 3 the link was lost or never opened.
""" % HISTORY


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser)


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


def run(args):
    link = Link(args.port, args.baud, args.timeout)
    readline = _start_history()
    interactive = sys.stdin.isatty()
    if interactive:
        print("connected to %s; \"help\" lists the board's commands, Ctrl-D exits" % args.port)
    try:
        with link:
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
                link.request(line, on_line=lambda text: print(text, flush=True))
    finally:
        _save_history(readline)
