# SPDX-License-Identifier: MIT
"""The `armctl` command: subcommands found in armctl.commands.

Exit codes: 0 success, 1 the arm or solver said no (unreachable, refused),
2 bad usage or bad input file, 3 no link to the board (port missing, busy,
timeout), 4 the board is at the MicroPython REPL instead of the arm protocol
(soft-reset it, or deploy the firmware). A command's run() returns its code;
a UsageError (bad option value or combination), BoardError (bad board file),
LinkError (no link) or BoardAtRepl it lets through is printed and turned into
2, 2, 3 or 4 here, and nowhere else.
"""

import argparse
import importlib
import pkgutil
import sys

from armctl import commands, shipped
from armctl.link import DEFAULT_BAUD, DEFAULT_TIMEOUT_S, BoardAtRepl, LinkError
from armfw.board import BoardError

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_LINK = 3
EXIT_REPL = 4


class UsageError(Exception):
    """A command was given a wrong value or combination of options; the message says which."""


def add_link_options(parser, timeout=True, port_help=None):
    """--port and --baud (and --timeout, for commands that pass it on), for every command
    that opens a link to a board. port_help: the --port help of a command for which
    it is optional (without it the option is required)."""
    parser.add_argument("--port", "-p", required=port_help is None,
                        help=port_help or "serial port of the board (/dev/ttyACM0, COM3, or the pty "
                                          "`armctl sim --pty` prints)")
    parser.add_argument("--baud", type=int, default=DEFAULT_BAUD, help="baud rate (default %(default)s)")
    if timeout:
        parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                            help="seconds of silence before the board counts as gone; a motion also gets "
                                 "the time its path needs (default %(default)s)")


def add_calibration_option(parser):
    """--calibration, for every command that describes the board on the host (pulses, windows,
    tool offset) while the board runs its own calibration.json, which the host cannot read
    over the link without stopping the board."""
    parser.add_argument("--calibration", metavar="FILE",
                        help="the calibration the board runs (calibration.json or armctl calibrate's "
                             "--save copy), laid over the board file as the board lays it")


def _command_modules():
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            yield importlib.import_module("armctl.commands." + info.name)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="armctl",
        description="Drive a servo robot arm from a MicroPython board, or its simulator.",
        epilog="exit codes: 0 done, 1 refused by the arm or solver, 2 bad usage or input file, "
               "3 no link to the board, 4 the board is at the MicroPython REPL (soft-reset it or deploy). "
               "--board takes a shipped board's name (`armctl boards`) or a board file's path. "
               "`armctl COMMAND --help` for each command.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _command_modules():
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(run=module.run)
    return parser


def _parser_with_ctrl_c_for_the_main_thread():
    """build_parser(), with SIGINT blocked while it imports the commands: the threads that
    numpy's BLAS starts at import inherit that mask, so the kernel gives Ctrl-C to the main
    thread. Given to a BLAS thread, it only sets Python's flag, and a main thread blocked
    reading the terminal (a calibration prompt) never wakes to raise KeyboardInterrupt."""
    import signal
    if not hasattr(signal, "pthread_sigmask"):     # Windows: no POSIX signal masks
        return build_parser()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return build_parser()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def main(argv=None):
    parser = _parser_with_ctrl_c_for_the_main_thread()
    args = parser.parse_args(argv)
    # The failures every command shares get their exit code here, once.
    try:
        if getattr(args, "board", None) is not None:
            args.board = shipped.board_path(args.board)   # a shipped board's name, or a path
        return args.run(args)
    except (UsageError, BoardError) as e:
        print("armctl %s: %s" % (args.command, e), file=sys.stderr)
        return EXIT_USAGE
    except BoardAtRepl as e:
        print("armctl %s: %s" % (args.command, e), file=sys.stderr)
        return EXIT_REPL
    except LinkError as e:
        print("armctl %s: %s" % (args.command, e), file=sys.stderr)
        return EXIT_LINK
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    # Run as `python -m armctl.cli`, this file is __main__, a second copy of the
    # module: the commands raise armctl.cli.UsageError, so armctl.cli must catch it.
    from armctl.cli import main as _main
    sys.exit(_main())
