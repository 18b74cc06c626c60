# SPDX-License-Identifier: MIT
"""armctl shell: an interactive protocol terminal for a person at the keyboard."""

import argparse
import os
import sys
from pathlib import Path

from armctl import cli
from armctl.link import Link
from armctl.pacing import Pacer

NAME = "shell"
HELP = "Type protocol commands at the board interactively (history, line editing, Tab; Ctrl-C stops the arm)."

HISTORY = Path(os.environ.get("ARMCTL_HISTORY", Path.home() / ".armctl_history"))
HISTORY_LENGTH = 1000
PROMPT = "arm> "

EPILOG = """\
Type a command such as "where", "ik 150 0 200 90" or "servo 1 1520" and press
Enter; the board's reply lines are printed as they arrive. Tab completes the
command words the board lists in "help". Up/Down recall earlier commands,
kept in %s (ARMCTL_HISTORY overrides); the usual line-editing keys work.
Ctrl-C while a command runs stops the arm (GRBL's "!" then Ctrl-X; firmware
without a real-time stop finishes its motion first) and the shell waits
until the board answers again; Ctrl-C at the prompt clears the line.
Ctrl-D or "exit" leaves.
Exit status: 0 normal exit, 3 the link was lost or never opened, 4 the board
is at the MicroPython REPL (soft-reset it, or `armctl deploy`).
""" % HISTORY


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser)


def _start_readline(words):
    """readline with history and Tab completion of words (None where there is no readline)."""
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input() still works
        return None
    try:
        readline.read_history_file(HISTORY)
    except OSError:
        pass
    readline.set_history_length(HISTORY_LENGTH)

    def complete(text, state):
        if readline.get_line_buffer()[:readline.get_begidx()].strip():
            return None     # only the command word
        matches = [w + " " for w in words if w.startswith(text.lower())]
        return matches[state] if state < len(matches) else None

    readline.set_completer(complete)
    readline.set_completer_delims(" \t")
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    return readline


def _save_history(readline):
    if readline is None:
        return
    try:
        readline.write_history_file(HISTORY)
    except OSError as e:
        print("armctl shell: history not saved: %s" % e, file=sys.stderr)


def _command_words(link):
    """The first word of each line of the board's `help`: what Tab completes."""
    reply = link.request("help")
    return sorted({line.split()[0] for line in reply.info_lines if line.split()})


def _show(text):
    print(text, flush=True)


def _stop(link):
    """Ctrl-C during a command: stop the arm, then wait until the board answers again."""
    print("\nstopping the arm (! Ctrl-X), waiting for the board...", flush=True)
    link.interrupt()
    while True:
        try:
            link.resync()
            print("stopped; the board answers again", flush=True)
            return
        except KeyboardInterrupt:
            link.interrupt()


def run(args):
    link = Link(args.port, args.baud, args.timeout)
    interactive = sys.stdin.isatty()
    readline = None
    try:
        with link:
            readline = _start_readline(_command_words(link) if interactive else [])
            pacer = Pacer(link)
            if interactive:
                print("connected to %s; \"help\" lists the board's commands, Tab completes, "
                      "Ctrl-C stops the arm, Ctrl-D exits" % args.port)
            while True:
                try:
                    line = input(PROMPT if interactive else "").strip()
                except EOFError:
                    if interactive:
                        print()
                    return cli.EXIT_OK
                except KeyboardInterrupt:
                    print()
                    continue
                if not line:
                    continue
                if line in ("exit", "quit"):
                    return cli.EXIT_OK
                if not interactive:
                    print(PROMPT + line)
                try:
                    link.request(line, on_line=_show, motion_s=pacer.allowance(line))
                except KeyboardInterrupt:
                    _stop(link)
    finally:
        _save_history(readline)
