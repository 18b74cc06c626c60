"""The `armctl` command: subcommands found in armctl.commands.

Exit codes: 0 success, 1 the arm or solver said no (unreachable, refused),
2 bad usage or bad input file, 3 no link to the board (port missing, busy,
timeout), 4 the board is at the MicroPython REPL instead of the arm protocol
(soft-reset it, or deploy the firmware). A command's run() returns its code;
a BoardError (bad board file), LinkError (no link) or BoardAtRepl it lets
through is turned into 2, 3 or 4 here.
"""

import argparse
import importlib
import pkgutil
import sys

from armctl import commands
from armctl.link import BoardAtRepl, LinkError
from armfw.board import BoardError

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_LINK = 3
EXIT_REPL = 4


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
               "`armctl COMMAND --help` for each command.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _command_modules():
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(run=module.run)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    # The two failures every command shares get their exit code here, once.
    try:
        return args.run(args)
    except BoardError as e:
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
    sys.exit(main())
