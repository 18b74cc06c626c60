# SPDX-License-Identifier: MIT
"""armctl calibrate: jog each joint to known poses, fit the servo map, write it to the board
(bus servos: --by-hand, move each joint through its range with the torque off)."""

import argparse
import sys

from armctl import calibrate as cal
from armctl import cli
from armctl.calibrate_by_hand import ByHand, ByHandError, limits_into
from armctl.calibrate_keys import TerminalKeys, confirm_on_terminal
from armctl.calibrate_store import (BACKUP, Progress, calibration_file, carried_forward, changes, check_calibration,
                                    read_from_board, write_json_atomically, write_to_board)
from armctl.deploy import restart
from armctl.link import Link
from armfw import board as boardlib
from armfw.numeric import DEG

NAME = "calibrate"
# What a shell reports for a command ended by Ctrl-C (armctl.cli answers the same).
EXIT_INTERRUPTED = 130
DEFAULT_POSES = (0.0, 90.0)
# --verify: poses other than the calibration's, so they test it between and beside them.
VERIFY_POSES = (-45.0, 45.0)
HELP = "Guided servo calibration: jog each joint to known poses with the keyboard, fit and save."

EPILOG = """\
For each joint the servo is jogged with raw `servo CH US` commands while you
press keys (no Enter needed):
  a / d  (left / right)  -/+ 10 us      A / D  (down / up)  -/+ 1 us
  z / c   -/+ 100 us
  Enter   the joint is at the asked pose: record   q   quit, nothing saved
Poses are joint angles in the math frame (default 0 and +90 deg; the screen
says what each looks like). Per joint the recorded pulses fit offset, sign
and us-per-radian; residuals show how straight the servo is (with 3+ poses).
With --measure the arm then visits a few poses and you type the measured tool
tip (mm); the link lengths are fitted by least squares and the misses before
and after tell a length (model) error from play or a bad servo fit.

With --tcp only the tool centre point is calibrated (four-point method):
jog the arm joint by joint (1..5 pick the joint, a/d -/+1 deg, A/D -/+0.1,
z/c -/+10, Enter records a touch, f finishes after 4+) until the tool tip
touches one fixed point, from four or more clearly different orientations.
The tool offset and the point are fitted by least squares; a touch whose
residual is over --max-residual mm is asked for again; orientations too
alike to separate offset and point are refused (exit 1, nothing written).
The offset goes into calibration.json as "tool_mm" (across, lateral, along
the tool; mm; the solver puts the tool tip on targets with it, see
docs/KINEMATICS.md): the whole offset from the wrist's tool end, whatever
tool the board file or an earlier calibration gave. The screen shows the
joint being jogged and where the tool tip is.

Each pose is reached clear of the keep-out zones: when the board refuses it
with the other joints where they are, they go home, else straight (0 deg),
first; when it refuses even that, the run stops and says what to do (what is
recorded is kept). A refused jog leaves the pulse where it was, and Enter
records only a pulse the servo has. Each joint's fit is checked against its
pulse window as soon as it is measured: a limit it would push out is named,
with the fix (narrow the limit, or widen the window if the servo takes it),
and nothing is written until the board file takes the fit.

The result is shown beside the calibration in force (offset, sign, us/rad
per joint and the worst residual); Enter writes it, q keeps the calibration
in force (and what you recorded, for the next run). calibration.json
carries "version", "date" (UTC), "board" and "residuals_us" besides the fits;
the board reports the date in `info` (calibration=DATE) and its boot banner.
The file it replaces stays on the board as calibration.json.bak.

With --verify nothing is fitted or written: per joint and pose (default
-45,45 deg) the board moves the joint there with the calibration it runs,
and you jog it (a/d -/+1 deg, A/D -/+0.1, z/c -/+10) until it really is at
the pose and press Enter; the angle the board had to command minus the pose
is that calibration's error, reported per joint and pose.

Written to the board as calibration.json (via calibration.json.tmp and a
rename, so a power cut keeps the old file), then the board restarts; and to
the host file --save (with the fit report). The board's earlier
calibration.json is read once the measuring is done (the arm is not touched
before): with --joints, the other joints keep the calibration the board
already has; every joint measured now gets its new fit alone. What is not a
joint fit, the tool offset of an earlier --tcp run, is kept, and the screen
says so ("kept tool offset 0 / 8 / 35 mm from the earlier calibration");
--reset-tool drops it. Likewise --tcp keeps every joint's servo fit.
With --by-hand (bus servo boards: driver sts or dynamixel) nothing is
jogged, as LeRobot calibrates: the torque goes off, you put the arm in its
known pose (the board's home, each joint at its home_deg) and press Enter,
then move each joint slowly through its whole range, end to end, and press
Enter; the board's `servo read` is sampled meanwhile (20 a second). Each
joint's offset comes from the known pose's tick, its limits from the
extremes reached (1 deg inside), its tick window from the extremes
themselves. They are written into a copy of the board file, --save (default
<board name>-by-hand.json here; --board itself is never changed), checked
first: it must load. `armctl deploy --board FILE` then puts it on the
board. A calibration.json on the board (from a jogged calibration) lays its
servo fits over the board file's: a bus board calibrated by hand needs none.
A joint moved too little, or across the servo's tick 0, is named and nothing
is written.

Exit status: 0 saved (--verify: measured), 1 abandoned (q), a pose the arm
cannot reach, or the fit would break a joint limit's pulse window (nothing
written), 2 bad board file or options, 3 no link, 130 Ctrl-C.
"""


def _poses(text):
    try:
        poses = [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("poses are degrees separated by commas, e.g. 0,90")
    if len(set(poses)) < 2:
        raise argparse.ArgumentTypeError("need at least two different poses")
    return poses


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cli.add_link_options(parser, timeout=False)
    parser.add_argument("--board", "-b", required=True, help="the board's description (boards/*.json)")
    parser.add_argument("--joints", type=lambda t: [int(v) for v in t.split(",")],
                        help="joint numbers to calibrate, 1-based, e.g. 2,3 (default: all)")
    parser.add_argument("--poses", type=_poses, default=None,
                        help="known poses in degrees (default 0,90; with --verify -45,45)")
    parser.add_argument("--measure", action="store_true",
                        help="afterwards fit the link lengths from tip positions you measure")
    parser.add_argument("--verify", action="store_true",
                        help="re-measure the calibration the board runs at --poses (default -45,45) and "
                             "report the error per joint and pose; writes nothing")
    parser.add_argument("--tcp", action="store_true",
                        help="calibrate the tool centre point (four-point method) instead of the servos")
    parser.add_argument("--max-residual", type=float, default=None, metavar="MM",
                        help="with --tcp: a touch missing the fit by more than this is redone (default 1.0)")
    parser.add_argument("--by-hand", action="store_true",
                        help="bus servos: torque off, move each joint through its range by hand; writes the "
                             "board file with the offsets and limits found (--save)")
    parser.add_argument("--save", help="host copy of the result (default calibration-<board name>.json)")
    parser.add_argument("--fresh", action="store_true",
                        help="ignore the progress an interrupted calibration left, start over")
    parser.add_argument("--reset-tool", action="store_true",
                        help="drop the tool offset an earlier --tcp calibration left in calibration.json "
                             "(default: kept); the board file's tool offset applies again")


def _save_on_board(args, board, merge, out, keys):
    """Read the board's calibration.json, merge the new results into it, check it, show it,
    and write it once the person confirms.

    merge(previous) returns the new calibration and the lines that say what
    it took from previous. Called after the measuring, never before: reading
    the file stops the board's loop and needs a restart, which sends the arm
    to its boot pose (home, or limp) under the person jogging it. keys: the
    keyboard (None: this terminal); a scripted one without confirm() writes
    without asking. Returns the calibration and the board loaded with it, or
    None when it would break a joint limit's pulse window or the person keeps
    the calibration in force (nothing written; the board restarted on it).
    """
    previous = read_from_board(args.port)
    calibration, lines = merge(previous)
    for line in lines:
        print(line, file=out)
    for line in changes(board, previous, calibration):
        print(" " + line, file=out)
    try:
        calibrated = check_calibration(args.board, calibration)
    except boardlib.BoardError as e:
        restart(args.port, args.baud)
        print("armctl calibrate: the fit does not fit the board file: %s; nothing written" % e, file=sys.stderr)
        return None
    question = ("Enter writes it to the board (the calibration in force is kept as %s); q keeps the "
                "calibration in force" % BACKUP)
    if keys is None:
        confirmed = confirm_on_terminal(question, out)
    else:
        print(question, file=out, flush=True)
        confirmed = keys.confirm() if hasattr(keys, "confirm") else True
    if not confirmed:
        restart(args.port, args.baud)
        print("armctl calibrate: kept the calibration in force; nothing written", file=sys.stderr)
        return None
    reply = write_to_board(args.port, calibration, args.baud, out, previous)
    print("board restarted with the new calibration: %s" % reply.final, file=out)
    return calibration, calibrated


def _calibrate_tool(args, board, keys, out):
    from armctl import tcp
    if board.solver.kind != "arm5":
        raise cli.UsageError("--tcp needs a 5-joint arm (%s is %s)" % (board.name, board.solver.kind))
    if getattr(args, "reset_tool", False):
        raise cli.UsageError("--reset-tool is for a servo calibration; --tcp measures a new tool offset")
    save = args.save or "calibration-%s.json" % board.name
    try:
        with Link(args.port, args.baud) as link:
            session = cal.CalibrationRun(link, board, keys, out=out)
            max_residual = getattr(args, "max_residual", None)
            if keys is None:
                with TerminalKeys() as session.keys:
                    report = session.calibrate_tool(max_residual_mm=max_residual)
            else:
                report = session.calibrate_tool(max_residual_mm=max_residual)
    except cal.CalibrationAborted as e:
        print("armctl calibrate: %s" % e, file=sys.stderr)
        return cli.EXIT_REFUSED
    except tcp.DegenerateTouches as e:
        print("armctl calibrate: %s; nothing written" % e, file=sys.stderr)
        return cli.EXIT_REFUSED

    def merge(previous):
        calibration = calibration_file(board, {}, previous)
        calibration[boardlib.TOOL] = [round(v, 3) for v in report["offset_mm"]]
        return calibration, carried_forward(board, previous, (), {boardlib.TOOL: "replaced"})

    saved = _save_on_board(args, board, merge, out, keys)
    if saved is None:
        return cli.EXIT_REFUSED
    calibration = saved[0]
    write_json_atomically(save, dict(calibration, board=board.name, board_file=str(args.board), tcp=report))
    print("saved %s" % save, file=out)
    return cli.EXIT_OK


def _verify(args, board, joints, keys, out):
    """--verify: the errors of the calibration the board runs, per joint and pose; nothing written."""
    try:
        with Link(args.port, args.baud) as link:
            session = cal.CalibrationRun(link, board, keys, out=out)
            if keys is None:
                with TerminalKeys() as session.keys:
                    session.verify(joints, args.poses)
            else:
                session.verify(joints, args.poses)
    except (cal.CalibrationAborted, KeyboardInterrupt) as e:
        print("armctl calibrate: %s" % (str(e) or "interrupted (Ctrl-C); nothing was written"), file=sys.stderr)
        return EXIT_INTERRUPTED if isinstance(e, KeyboardInterrupt) else cli.EXIT_REFUSED
    return cli.EXIT_OK


# --by-hand: servo read samples a second while a joint is moved.
BY_HAND_HZ = 20.0


class TerminalPerson:
    """The person of a by-hand calibration at this terminal: Enter answers each step."""

    def __init__(self, lines=input):
        self.lines = lines

    def ask(self, text):
        self.lines(text + " ")

    def moving(self, joint):
        """Waits one sample period; True once Enter has been pressed."""
        import select
        if select.select([sys.stdin], [], [], 1.0 / BY_HAND_HZ)[0]:
            sys.stdin.readline()
            return True
        return False


def _by_hand(args, board, person, out):
    import json
    import os
    import tempfile
    if board.driver.get("kind") not in ("sts", "dynamixel"):
        raise cli.UsageError("--by-hand needs bus servos that report their position (driver sts or dynamixel); "
                             "%s drives %s servos: calibrate by jogging" % (board.name, board.driver.get("kind")))

    def say(text):
        print(text, file=out, flush=True)

    try:
        with Link(args.port, args.baud) as link:
            def request(line):
                reply = link.request(line)
                if not reply.ok:
                    raise ByHandError("the board answered %s with %s" % (line, reply.final))
                return reply.final

            def read_ticks():
                return [int(w) for w in request("servo read").split()[1:]]

            fits, limits = ByHand(read_ticks, lambda: request("relax"), person.ask, person.moving, say).run(board)
    except ByHandError as e:
        print("armctl calibrate: %s; nothing written" % e, file=sys.stderr)
        return cli.EXIT_REFUSED
    except KeyboardInterrupt:
        print("armctl calibrate: interrupted (Ctrl-C); nothing written", file=sys.stderr)
        return EXIT_INTERRUPTED
    with open(args.board) as f:
        data = json.load(f)
    for j, fit in fits.items():
        data["joints"][j].update((key, fit[key]) for key in boardlib.CALIBRATED)
    data = limits_into(data, limits)
    with tempfile.TemporaryDirectory() as tmp:
        check = os.path.join(tmp, os.path.basename(str(args.board)))
        write_json_atomically(check, data)
        try:
            boardlib.load(check)
        except boardlib.BoardError as e:
            print("armctl calibrate: the result does not load: %s; nothing written" % str(e).replace(check, "it"),
                  file=sys.stderr)
            return cli.EXIT_REFUSED
    for j, name in enumerate(board.solver.names):
        say("%s: offset %+.3f deg, limits %.1f..%.1f deg, ticks %d..%d" % (
            name, fits[j]["offset_deg"], limits[j]["min_deg"], limits[j]["max_deg"], limits[j]["min_us"],
            limits[j]["max_us"]))
    save = args.save or "%s-by-hand.json" % board.name
    write_json_atomically(save, data)
    say("written %s; put it on the board: armctl deploy --board %s" % (save, save))
    return cli.EXIT_OK


def run(args, keys=None, lines=input, out=sys.stdout, person=None):
    """The command; keys and lines (--by-hand: person, with ask and moving) replace the keyboard in tests."""
    board = boardlib.load(args.board)
    if getattr(args, "by_hand", False):
        return _by_hand(args, board, person or TerminalPerson(lines), out)
    if getattr(args, "tcp", False):
        return _calibrate_tool(args, board, keys, out)
    if args.measure and board.solver.kind not in cal.MEASURE_POSES:
        raise cli.UsageError("--measure fits the link lengths of a planar or arm5 arm; a %s arm's "
                             "geometry comes from its description (armctl board import)" % board.solver.kind)
    verifying = getattr(args, "verify", False)
    if args.poses is None:
        args.poses = list(VERIFY_POSES if verifying else DEFAULT_POSES)
    joints = [j - 1 for j in args.joints] if args.joints else list(range(board.solver.n))
    for j in joints:
        if not 0 <= j < board.solver.n:
            raise cli.UsageError("no joint %d (the arm has %d)" % (j + 1, board.solver.n))
        for deg in args.poses:
            q = deg * DEG
            if q < board.solver.lo[j] or q > board.solver.hi[j]:
                raise cli.UsageError("pose %g deg is outside joint %d's limits" % (deg, j + 1))
    if verifying:
        return _verify(args, board, joints, keys, out)
    save = args.save or "calibration-%s.json" % board.name
    progress = Progress(save + ".progress.json", board.name, args.poses, getattr(args, "fresh", False))
    if progress.pulses:
        print("resuming the calibration kept in %s (--fresh starts over)" % progress.path, file=out)
    try:
        with Link(args.port, args.baud) as link:
            session = cal.CalibrationRun(link, board, keys, lines, out, progress)
            if keys is None:
                with TerminalKeys() as session.keys:
                    fits = session.calibrate_servos(joints, args.poses)
            else:
                fits = session.calibrate_servos(joints, args.poses)
        if session.window_misses:
            misses = [line for j in sorted(session.window_misses) for line in session.window_misses[j]]
            print("armctl calibrate: nothing written: the fit puts %d joint limit%s outside %s pulse "
                  "window:\n  %s\nchange the board file, then run the same command: it fits again from "
                  "the pulses kept in %s" % (len(misses), "" if len(misses) == 1 else "s",
                                              "its" if len(misses) == 1 else "their", "\n  ".join(misses),
                                              progress.path), file=sys.stderr)
            return cli.EXIT_REFUSED
        # Measured joints get their fits only; the rest of the board's calibration.json
        # (the other joints, the tool offset) is carried forward unless --reset-tool.
        drop = {boardlib.TOOL: "dropped (--reset-tool)"} if getattr(args, "reset_tool", False) else {}

        def merge(previous):
            return (calibration_file(board, fits, previous, drop),
                    carried_forward(board, previous, fits, drop))

        saved = _save_on_board(args, board, merge, out, keys)
        if saved is None:
            print("armctl calibrate: what you recorded is kept in %s; the same command fits it again"
                  % progress.path, file=sys.stderr)
            return cli.EXIT_REFUSED
        calibration, calibrated = saved
        report = dict(calibration, board=board.name, board_file=str(args.board),
                      poses_deg=args.poses, fits={calibrated.solver.names[j]: f for j, f in fits.items()})
        write_json_atomically(save, report)
        progress.remove()
        print("saved %s" % save, file=out)
        if args.measure:
            with Link(args.port, args.baud) as link:
                session = cal.CalibrationRun(link, calibrated, keys, lines, out)
                report["lengths"] = session.measure_lengths(cal.MEASURE_POSES[board.solver.kind])
            write_json_atomically(save, report)
            print("saved %s with the length fit" % save, file=out)
    except (cal.CalibrationAborted, KeyboardInterrupt) as e:
        # A KeyboardInterrupt has no text of its own.
        print("armctl calibrate: %s" % (str(e) or "interrupted (Ctrl-C); nothing was written to the board"),
              file=sys.stderr)
        if progress.pulses:
            print("armctl calibrate: what you recorded is kept in %s; the same command resumes"
                  % progress.path, file=sys.stderr)
        return EXIT_INTERRUPTED if isinstance(e, KeyboardInterrupt) else cli.EXIT_REFUSED
    return cli.EXIT_OK
