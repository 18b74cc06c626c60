# SPDX-License-Identifier: MIT
"""armctl ui: a local web page that shows the arm live in 3D and drives it."""

import argparse
import asyncio
import html
import ipaddress
import os
import signal
import sys
import tempfile
import webbrowser

from armctl import cli, fallback, shipped
from armctl.link import Link
from armctl.sim import Simulator, SimulatorError
from armfw import board as boardlib

NAME = "ui"
HELP = "A local web page: the arm live in 3D, jog, preview IK, stop (the simulator unless --port)."

DEFAULT_HTTP_PORT = 8765

EPILOG = """\
examples:
  armctl ui                                    the simulated sim_arm5, page opens in the browser
  armctl ui --board sim_planar --no-browser    print the address only
  armctl ui --port /dev/ttyACM0                a real board (its board file found by name from `info`)
  armctl ui --port /dev/ttyACM0 --board my_arm.json
  armctl ui --port /dev/ttyACM0 --calibration calibration-pico_pca9685.json

The page's pulses, tool offset and line previews are the host's, from the
board file; the board's calibration.json (servo fits, tool offset) is not
read over the link (that would stop the board). --calibration gives the host
the same file: the one `armctl calibrate` wrote (its --save copy), laid over
the board file as the board lays its own. On the simulator it is installed
beside the board file, as `armctl sim --calibration` does.

The page draws the arm from the pose the board reports, with the firmware's
own forward kinematics; every request and reply on the link is in its
transcript. Its address carries a secret token made at each launch: only
the address printed (and opened) reaches the page. It listens on 127.0.0.1
only; another --host needs --allow-remote, and then anyone who has the
address can move the arm. Ctrl-C stops the server (and the simulator it
started). Exit status: 0 stopped, 2 bad usage or board file, 3 no link to
the board, 4 the board is at the MicroPython REPL.
"""


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--board", help="board name or file (default: %s on the simulator; with --port the "
                                        "shipped board named by the board's `info`)" % shipped.DEFAULT_BOARD)
    cli.add_link_options(parser, port_help="serial port of a real board (default: start the simulator)")
    cli.add_calibration_option(parser)
    parser.add_argument("--http-port", type=int, default=DEFAULT_HTTP_PORT,
                        help="port of the page (default %(default)s; 0: any free port)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default %(default)s, this computer only; another needs "
                             "--allow-remote)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="let a --host other than loopback be reached from other computers: anyone with the "
                             "page's address (its token) can then move the arm")
    parser.add_argument("--no-browser", action="store_true", help="print the page's address, open no browser")
    parser.add_argument("--fast", action="store_true",
                        help="simulator: virtual time (motions end at once; default real time, to watch)")


def _is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args):
    if not 0 <= args.http_port <= 65535:
        raise cli.UsageError("--http-port must be 0..65535")
    if args.fast and args.port:
        raise cli.UsageError("--fast is for the simulator (no --port)")
    if not _is_loopback(args.host):
        if not args.allow_remote:
            raise cli.UsageError("--host %s can be reached from other computers: add --allow-remote if anyone "
                                 "with the page's address may move the arm" % args.host)
        print("armctl ui: warning: listening on %s: anyone with the page's address (its token) can move the "
              "arm, and plain http shows that address to anyone watching the network" % args.host,
              file=sys.stderr, flush=True)
    sim = None
    try:
        port = args.port
        board_file = args.board
        if port is None:
            board_file = board_file or shipped.board_path(shipped.DEFAULT_BOARD)
            # A bad board or calibration file is a usage error, before anything starts.
            boardlib.load(str(board_file), calibration=args.calibration)
            try:
                sim = Simulator(board_file, pty=True, realtime=not args.fast, calibration=args.calibration).start()
            except (SimulatorError, OSError) as e:
                raise cli.UsageError("cannot start the simulator: %s" % e)
            port = sim.port
        with Link(port, args.baud, args.timeout) as link:
            link.wait_ready()
            board = fallback.board_for(link, board_file, args.calibration)
            return asyncio.run(_serve(args, link, board, sim))
    finally:
        if sim is not None:
            sim.close()


async def _serve(args, link, board, sim):
    from aiohttp import web
    from armctl.ui.server import make_app, new_token
    from armctl.ui.session import UiSession

    # The board file under the calibration the host was given: the session asks the board for its own.
    board_path = board.source[:-len("+%s" % args.calibration)] if args.calibration else board.source
    session = UiSession(link, board, sim, board_path)
    await session.start()
    token = new_token()
    runner = web.AppRunner(make_app(session, token, args.host), access_log=None)
    await runner.setup()
    opener = None
    try:
        site = web.TCPSite(runner, args.host, args.http_port)
        try:
            await site.start()
        except OSError as e:
            raise cli.UsageError("cannot listen on %s port %d: %s" % (args.host, args.http_port, e.strerror or e))
        stopped = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, stopped.set)
            except NotImplementedError:
                pass     # Windows: Ctrl-C arrives as KeyboardInterrupt, which cli.main handles
        host, port = runner.addresses[0][:2]
        url = "http://%s:%d/%s/" % ("[%s]" % host if ":" in host else host, port, token)
        where = "the simulator" if sim is not None else link.port
        calibrated = " with calibration %s" % args.calibration if args.calibration else ""
        print("armctl ui: %s  (board %s%s on %s; Ctrl-C stops)" % (url, board.name, calibrated, where), flush=True)
        if not args.no_browser:
            opener = _open_browser(url)
        await stopped.wait()
    finally:
        await runner.cleanup()
        session.close()
        if opener is not None:
            os.remove(opener)
    return cli.EXIT_OK


def _open_browser(url):
    """Open url through a page only this user can read (as Jupyter does): a browser started with the
    address on its command line would show the token to every user's process list. Its path."""
    fd, path = tempfile.mkstemp(prefix="armctl-ui-", suffix=".html")      # mode 0600
    with os.fdopen(fd, "w") as f:
        f.write('<!doctype html><meta http-equiv="refresh" content="0;url=%s"><a href="%s">armctl ui</a>\n'
                % (html.escape(url), html.escape(url)))
    webbrowser.open("file://" + path)
    return path
