# SPDX-License-Identifier: MIT
"""armctl run: stream a G-code or protocol file to the board, checked whole first."""

import argparse
import sys

from armctl import cli
from armctl.link import Link
from armctl.pacing import Pacer
from armfw.commands import GCODE_MOTION, gcode_word, is_gcode
from armfw.gcodeblend import joins

NAME = "run"
HELP = "Stream a G-code or protocol file: check it whole first (nothing moves), then run it."

EPILOG = """\
examples:
  armctl run --port /dev/ttyACM0 square.gcode
  armctl run --port /dev/ttyACM0 --check-only pick.txt

Lines are G-code (G0/G1/G4/G28/G90/G91, M3/M5, M114, M400, ...) or protocol
commands (move, line, joints, pose go, ...), one per line; `;` and `#` start
comments, blank lines are skipped (firmware/PROTOCOL.md lists both). First the
whole file runs in the board's check mode (`check on`, GRBL's $C): every
motion is validated from the pose the lines before it would leave, nothing
moves. Only a file that passes is then sent for real, one line per reply,
with a progress bar; the first refused line stops it. The board answers a G1
once it is checked and queued (consecutive G1 lines blend), so the run ends
with M400: it returns when the arm has stopped.
Exit status: 0 done, 1 a line was refused (its number and the board's reason
are printed; in the check nothing moved), 2 bad file, 3 no link.
"""

PROGRESS_WIDTH = 30


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser)
    parser.add_argument("file", help="G-code or protocol file")
    parser.add_argument("--check-only", action="store_true", help="check the file, do not run it")
    parser.add_argument("--no-check", action="store_true", help="run without checking first (not advised)")
    parser.add_argument("--gcode-motion-s", type=float, default=120.0, metavar="S",
                        help="how long one G-code motion line may keep the board silent (default %(default)s)")


def program_lines(text):
    """[(line number, request)] of a program: comments and blank lines dropped."""
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(";", 1)[0]
        if line.lstrip().startswith("#"):
            continue
        line = line.strip()
        if line:
            out.append((number, line))
    return out


def _progress(done, total, err):
    filled = PROGRESS_WIDTH * done // max(total, 1)
    err.write("\r[%s%s] %d/%d lines" % ("#" * filled, "." * (PROGRESS_WIDTH - filled), done, total))
    err.flush()


def _allowance(pacer, line, gcode_motion_s):
    """Seconds a line's motion may keep the board silent (0 in check mode: nothing moves)."""
    if pacer is None:
        return 0.0
    if is_gcode(line):
        words = line.split(";")[0].upper().split()
        try:
            head = gcode_word(words[0].split("*")[0])
        except ValueError:
            return 0.0          # not a G-code command word: the board refuses it at once
        if head == "G4":
            # A dwell is silent for as long as it asks (P ms or S s), plus the margin.
            for w in words[1:]:
                try:
                    if w[0] == "P":
                        return float(w[1:].split("*")[0]) / 1000.0 + gcode_motion_s
                    if w[0] == "S":
                        return float(w[1:].split("*")[0]) + gcode_motion_s
                except ValueError:
                    break
        return gcode_motion_s if head in GCODE_MOTION else 0.0
    return pacer.allowance(line)


def _joins_queue(line):
    """True for a line the board queues behind G1 lines without running them (armfw.gcode)."""
    return is_gcode(line) and joins(line.encode())


def _failure(path, number, line, reply):
    """Where and why a run stopped: the line's refusal, or the alarm that came with its
    reply (queued G1 lines before it failed after their `ok`)."""
    text = "%s:%d: %s -> %s" % (path, number, line, reply.final)
    if reply.alarms:
        text += " (before it: %s)" % "; ".join(reply.alarms)
    return text


def _stream(link, path, lines, pacer, gcode_motion_s, err, show_progress):
    """Send every line, one reply each; (True, None) or (False, the failing line and reply).

    pacer: None in check mode (nothing moves, every answer comes at once)."""
    queued = False          # G1 lines answered and maybe not run: the next other line waits for them
    for k, (number, line) in enumerate(lines):
        allowance = _allowance(pacer, line, gcode_motion_s)
        if queued and pacer is not None:
            allowance = max(allowance, gcode_motion_s)
        queued = _joins_queue(line) and (queued or allowance > 0.0)
        reply = link.request(line, motion_s=allowance)
        if not reply.ok or reply.alarms:
            if show_progress:
                err.write("\n")
            return False, _failure(path, number, line, reply)
        if show_progress:
            _progress(k + 1, len(lines), err)
    if show_progress:
        err.write("\n")
    return True, None


def run(args, out=sys.stdout, err=sys.stderr):
    try:
        with open(args.file) as f:
            lines = program_lines(f.read())
    except (OSError, UnicodeDecodeError) as e:
        raise cli.UsageError("%s: %s" % (args.file, e))
    if not lines:
        raise cli.UsageError("%s: nothing to run" % args.file)
    if args.check_only and args.no_check:
        raise cli.UsageError("--check-only and --no-check exclude each other")
    gcode_motion_s = getattr(args, "gcode_motion_s", 120.0)
    with Link(args.port, args.baud, args.timeout) as link:
        if not args.no_check:
            reply = link.request("check on")
            if not reply.ok:
                print("armctl run: the board has no check mode: %s" % reply.final, file=err)
                return cli.EXIT_REFUSED
            try:
                ok, failure = _stream(link, args.file, lines, None, gcode_motion_s, err, False)
            finally:
                link.request("check off")
            if not ok:
                print("armctl run: check failed, nothing moved: %s" % failure, file=err)
                return cli.EXIT_REFUSED
            print("checked %d lines: all valid" % len(lines), file=out)
            if args.check_only:
                return cli.EXIT_OK
        ok, failure = _stream(link, args.file, lines, Pacer(link), gcode_motion_s, err, True)
        if not ok:
            print("armctl run: stopped: %s" % failure, file=err)
            return cli.EXIT_REFUSED
        if any(is_gcode(line) for _, line in lines):
            reply = link.request("M400", motion_s=gcode_motion_s)     # queued G1 lines run to their end
            if not reply.ok or reply.alarms:
                print("armctl run: stopped at the end: %s" % _failure(args.file, lines[-1][0], "M400", reply),
                      file=err)
                return cli.EXIT_REFUSED
        print("ran %d lines" % len(lines), file=out)
    return cli.EXIT_OK
