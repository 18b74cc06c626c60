# SPDX-License-Identifier: MIT
"""armctl shell: an interactive protocol terminal for a person at the keyboard."""

import argparse
import os
import sys
from pathlib import Path

from armctl import cli
from armctl.fallback import Mover, board_for, host_solves, tool_request
from armctl.link import Link
from armctl.pacing import Pacer
from armfw.board import BoardError

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
A `move X Y Z` or `line X Y Z` the board cannot solve (a chain arm; a 5-joint
arm without a pitch) goes through the host's fallback, as `armctl move`:
the host solves it and sends `joints` or a joint `path` (--board names the
board file when it is not a shipped one).
Exit status: 0 normal exit, 3 the link was lost or never opened, 4 the board
is at the MicroPython REPL (soft-reset it, or `armctl deploy`).
""" % HISTORY


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser)
    parser.add_argument("--board", "-b", default=None, metavar="NAME|PATH",
                        help="the board's description, for targets the host solves "
                             "(default: the shipped board its `info` names)")
    cli.add_calibration_option(parser)


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


def _mover(link, board_file, calibration, interactive):
    """The host fallback for this board, or None (with a note) when its description is unknown."""
    try:
        return Mover(link, board_for(link, board_file, calibration))
    except BoardError as e:
        if board_file is not None:
            raise
        if interactive:
            print("note: targets the board cannot solve stay with the board (%s)" % e)
        return None


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
            movers = []         # the fallback, found at the first target it may have to solve
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
                target = tool_request(line)
                if target is not None and not movers:
                    movers.append(_mover(link, args.board, args.calibration, interactive))
                try:
                    if target is not None and movers[0] is not None and host_solves(movers[0].solver.kind):
                        verb, position = target
                        mover = movers[0]
                        outcome = (mover.line if verb == "line" else mover.move)(position)
                        for text in outcome.describe():
                            _show(text if text.startswith("solver=") else "# " + text)
                        continue
                    link.request(line, on_line=_show, motion_s=pacer.allowance(line))
                except KeyboardInterrupt:
                    _stop(link)
    finally:
        _save_history(readline)
