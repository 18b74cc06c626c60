# SPDX-License-Identifier: MIT
"""`armctl sim`: run the firmware on the simulated board (MicroPython Unix port).

Without --pty the protocol is on this terminal's stdin/stdout (pipe requests
into it, or type them). With --pty it serves a pseudo-terminal that every host
tool opens like a board's port, until Ctrl-C:

    armctl sim --pty --link /tmp/arm            (the simulated sim_arm5)
    armctl send --port /tmp/arm "where"
    mpremote connect /tmp/arm fs ls
"""

import math
import signal
import subprocess
import sys
import time
from pathlib import Path

from armctl import cli, shipped
from armctl.sim import Simulator, SimulatorError

NAME = "sim"
HELP = "Run the unmodified firmware on the simulated board (stdin/stdout, or a pty with --pty)."


def add_arguments(parser):
    parser.add_argument("--board", "-b", type=Path, metavar="NAME|PATH",
                        help="board to install into the flash (default: what --flash holds; without "
                             "--flash %s)" % shipped.DEFAULT_BOARD)
    parser.add_argument("--calibration", type=Path, help="calibration file to install beside it")
    parser.add_argument("--reset-calibration", action="store_true",
                        help="remove the calibration.json the flash holds (default: kept, as a deploy keeps it)")
    parser.add_argument("--flash", type=Path,
                        help="folder kept as the board's flash (default: a temporary one)")
    parser.add_argument("--pty", action="store_true",
                        help="serve a pseudo-terminal (prints its path) instead of stdin/stdout")
    parser.add_argument("--link", help="with --pty: also make this symlink to the pty (e.g. /tmp/arm)")
    parser.add_argument("--truth", type=Path, metavar="FILE",
                        help="the physical arm, hidden from the firmware: true servo maps and tool offset "
                             "in calibration.json's form (for --camera)")
    parser.add_argument("--camera", action="store_true",
                        help="with --flash and --truth: print where the joints and the tool tip physically "
                             "are, from the pulses the servos got, and exit")
    parser.add_argument("--fast", action="store_true",
                        help="do not wait between motion steps (virtual time); default real time")


def run(args):
    if getattr(args, "camera", False):
        return _camera(args)
    if args.board is None and args.flash is None:
        args.board = shipped.board_path(Path(shipped.DEFAULT_BOARD))
    for path in (args.board, args.calibration):
        if path is not None and not path.is_file():
            raise cli.UsageError("no such file %s" % path)
    if args.link and not args.pty:
        raise cli.UsageError("--link needs --pty")
    try:
        sim = Simulator(args.board, pty=args.pty, flash_dir=args.flash, link=args.link,
                        realtime=not args.fast, calibration=args.calibration,
                        reset_calibration=getattr(args, "reset_calibration", False))
    except (SimulatorError, OSError) as e:
        raise cli.UsageError(str(e))
    if not args.pty:
        return _stdio(sim)
    # A `kill` ends it as Ctrl-C does: the link path and its lock are removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        sim.start()
    except SimulatorError as e:
        print("armctl sim: %s" % e, file=sys.stderr)
        sim.close()
        return cli.EXIT_LINK
    try:
        print(sim.port + (" (link %s)" % args.link if args.link else ""), flush=True)
        print("flash: %s  pulses: %s  Ctrl-C stops" % (sim.flash_dir, sim.pulse_log),
              file=sys.stderr, flush=True)
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        sim.close()
    return cli.EXIT_OK


def _camera(args):
    """What a person would see of the arm a running `armctl sim --flash F` drives."""
    from armctl.sim_camera import Camera
    from armctl.sim_flash import parse_pulses, pulse_log
    if args.flash is None or args.truth is None:
        raise cli.UsageError("--camera needs --flash (the simulator's) and --truth")
    flash = args.flash.resolve()
    for path in (flash / "board.json", args.truth):
        if not path.is_file():
            raise cli.UsageError("no such file %s" % path)
    camera = Camera(flash / "board.json", args.truth)
    log = pulse_log(flash)
    pulses = parse_pulses(log.read_text()) if log.is_file() else []
    q = camera.joints(pulses)
    print("joints %s deg" % " ".join("?" if v is None else "%.2f" % (v * 180 / math.pi) for v in q))
    tip = camera.tip(pulses)
    # + 0.0: a -0.0 (a tip right above the base) shows as 0.00.
    print("tip %s" % ("? (not every servo has a pulse)" if tip is None
                      else "%.2f %.2f %.2f mm" % tuple(v + 0.0 for v in tip)))
    return cli.EXIT_OK


def _stdio(sim):
    """The firmware on this process's own stdin/stdout; ends with its input."""
    try:
        sim.pulse_log.write_text("")
        proc = subprocess.run(sim.argv(interactive=sys.stdin.isatty()), cwd=sim.flash_dir, env=sim.env())
        return proc.returncode
    except KeyboardInterrupt:
        return 130
    finally:
        sim.close()
