# SPDX-License-Identifier: MIT
"""Servo calibration: a person jogs each joint to known poses, the host fits the servo map.

Per joint the person jogs the servo (raw `servo CH US` commands) until the
joint sits at each known pose (math zero, +90 degrees by default) and presses
Enter. The recorded pulses fit the servo bridge of armfw.servo by least
squares on a straight line, pulse = a + b * q:

    sign       = sign of b
    us_per_rad = |b|
    offset     = (a - center_us) / us_per_rad     (servo angle at math zero)

center_us stays the board's (with offset it is one degree of freedom too
many). Optionally the link lengths are fitted too, from tip positions the
person measures at a few poses: forward kinematics is linear in the lengths,
so armfw's own FK, evaluated with one unit length at a time, gives the columns
of an ordinary least-squares problem. The residuals tell a model error (wrong
lengths: large before the fit, small after) from play or a bad servo fit
(still large after).

Results go to the board as calibration.json, written atomically (a temporary
file renamed over the old one), and to a host file with the fit report. The
board's earlier calibration.json is read only when the result is written,
after the measuring (the file tool stops the board's loop and a restart
follows, which must not change the arm the person is jogging): the joints
not measured now keep their earlier fits, and everything in it that is not a
joint fit (the tool offset of `calibrate --tcp`) is carried forward.
"""

import json
import math
import os
import sys
import time

import numpy as np

from armfw import board as boardlib
from armfw import kinematics
from armfw.numeric import DEG

# Keyboard jog steps in microseconds; shown on screen by jog_help().
JOG_KEYS = {"a": -10, "d": 10, "A": -1, "D": 1, "z": -100, "c": 100}
ARROWS = {"[D": "a", "[C": "d", "[B": "A", "[A": "D"}
RECORD_KEYS = ("\r", "\n")
QUIT_KEYS = ("q", "\x03", "\x04", "")
UNDO_KEY = "u"

# What each pose looks like, by arm kind and joint index, for the prompt.
POSE_HINTS = {
    "arm5": (
        "0 deg: the arm faces forward (+x); +90 deg: it faces left (+y), seen from above counter-clockwise",
        "0 deg: upper arm vertical; +90 deg: upper arm horizontal, leaning forward",
        "0 deg: forearm in line with the upper arm; +90 deg: forearm bent forward at a right angle",
        "0 deg: tool in line with the forearm; +90 deg: tool bent forward at a right angle",
        "0 deg: gripper jaws in the arm's plane; +90 deg: turned a quarter turn (positive direction)",
    ),
    "planar": (
        "0 deg: first link along +x; +90 deg: first link along +y",
        "0 deg: second link in line with the first; +90 deg: bent counter-clockwise at a right angle",
    ),
}

# Measurement poses for the link-length fit, degrees per joint, the tip at
# least 50 mm above the base plane: chosen for a well-conditioned fit (design
# matrix condition number 1.5 for arm5), so a 0.5 mm ruler error moves each
# fitted length by about 0.2 mm.
MEASURE_POSES = {
    "arm5": ((45, 60, 120, 60, 0), (-45, 90, -60, 90, 0), (0, 60, -120, -60, 0),
             (-45, 90, 90, -90, 0), (0, -90, 30, 90, 0), (0, 30, -60, 60, 0)),
    "planar": ((30, 60), (90, -60), (150, -90), (60, 30), (10, 120)),
}


# Tool-centre-point touches: keys 1..5 pick the joint, these step it (degrees).
TOUCH_KEYS = {"a": -1.0, "d": 1.0, "A": -0.1, "D": 0.1, "z": -10.0, "c": 10.0}
FINISH_KEYS = ("f",)


class CalibrationAborted(Exception):
    """The person quit before every pose was recorded; nothing was written."""


def jog_help():
    return ("keys: a/d or left/right -/+10 us   A/D or down/up -/+1 us   z/c -/+100 us   "
            "u undo   Enter record   q quit (nothing written to the board; progress kept)")


class Task:
    """What the screen asks for: jog joint to pose_deg; us is the pulse the servo has now."""

    def __init__(self, joint, name, channel, pose_deg, us):
        self.joint = joint
        self.name = name
        self.channel = channel
        self.pose_deg = pose_deg
        self.us = us


def verify_help():
    return ("keys: a/d -/+1 deg   A/D -/+0.1 deg   z/c -/+10 deg   Enter the joint is at the pose   "
            "q quit (nothing is written either way)")


class Check:
    """What the screen asks for in --verify: joint (index, name) to pose_deg; q_deg is the
    angle the board commands it to now."""

    def __init__(self, joint, name, pose_deg):
        self.joint = joint
        self.name = name
        self.pose_deg = pose_deg
        self.q_deg = pose_deg


def touch_help():
    return ("keys: 1..5 pick the joint   a/d -/+1 deg   A/D -/+0.1 deg   z/c -/+10 deg   "
            "Enter record the touch   f finish (4+ touches)   q quit (nothing saved)")


class Touch:
    """What the screen asks for in the TCP step: touch number (1-based), the joint being
    jogged (index) and the commanded joint angles (degrees)."""

    def __init__(self, number, joint, q_deg):
        self.number = number
        self.joint = joint
        self.q_deg = q_deg


class TerminalKeys:
    """Single key presses from the terminal, without Enter (cbreak mode while open).

    Keys typed while the arm was still carrying out the last jog are dropped
    (drop_typed_ahead), not queued: the arm stops when the person stops typing.
    """

    def __enter__(self):
        import termios
        import tty
        self._fd = sys.stdin.fileno()
        self._saved = termios.tcgetattr(self._fd)
        self._kept = []
        tty.setcbreak(self._fd)
        return self

    def __exit__(self, *exc):
        import termios
        termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)

    def _byte(self):
        return os.read(self._fd, 1).decode("latin-1")

    def read(self, task):
        if self._kept:
            return self._kept.pop(0)
        key = self._byte()
        if key == "\x1b":  # an arrow key: ESC [ A..D; left/right step 10 us, down/up 1 us
            return ARROWS.get(self._byte() + self._byte(), "?")
        return key

    def drop_typed_ahead(self):
        """Forget the jog keys typed so far; keep the others (Enter, quit, undo) in order."""
        import select
        waiting = b""
        while select.select([self._fd], [], [], 0)[0]:
            chunk = os.read(self._fd, 256)
            if not chunk:
                break
            waiting += chunk
        text = waiting.decode("latin-1")
        i = 0
        while i < len(text):
            if text[i] == "\x1b":
                i += 3
                continue
            if text[i] not in JOG_KEYS:
                self._kept.append(text[i])
            i += 1


def confirm_on_terminal(question, out=sys.stdout):
    """Ask question; Enter (True) or q (False, as every quit key) from this terminal's
    keyboard, other keys ignored. Asked once single keys are read: keys typed before
    the question (a stray Enter) are dropped, not taken for the answer."""
    with TerminalKeys() as keys:
        print(question, file=out, flush=True)
        while True:
            key = keys.read(None)
            if key in RECORD_KEYS:
                return True
            if key in QUIT_KEYS:
                return False


def fit_servo(poses_rad, pulses_us, center_us):
    """Fit one joint's servo map to pulses recorded at known angles.

    Returns a dict: sign, us_per_rad, offset_deg, center_us and residual_us
    (pulse minus the fitted line, per pose). Raises ValueError when the poses
    cannot separate slope from intercept or the pulse does not change.
    """
    q = np.asarray(poses_rad, dtype=float)
    us = np.asarray(pulses_us, dtype=float)
    if len(q) < 2 or np.ptp(q) < 1e-6:
        raise ValueError("need at least two different poses")
    design = np.column_stack((np.ones_like(q), q))
    (intercept, slope), *_ = np.linalg.lstsq(design, us, rcond=None)
    if abs(slope) < 1.0:
        raise ValueError("the pulse hardly changes between poses (%.2f us/rad): is the servo connected?" % slope)
    us_per_rad = abs(slope)
    return {
        "sign": 1 if slope > 0 else -1,
        "us_per_rad": round(float(us_per_rad), 3),
        "offset_deg": round(float((intercept - center_us) / us_per_rad / DEG), 3),
        "center_us": center_us,
        "residual_us": [round(float(r), 3) for r in us - design @ (intercept, slope)],
    }


def window_misses(board, j, fit):
    """Lines naming each limit of joint j that fit (fit_servo's) puts outside the joint's
    pulse window, each with the two fixes; [] when both limits keep a pulse."""
    from armfw.servo import REFUSED, ServoMap
    s = board.servos
    arm = board.solver
    one = ServoMap([s.channels[j]], [fit["offset_deg"] * DEG], [fit["sign"]], [fit["center_us"]],
                   [fit["us_per_rad"]], [s.min_us[j]], [s.max_us[j]])
    lines = []
    for key, q, inward in (("min_deg", arm.lo[j], math.ceil), ("max_deg", arm.hi[j], math.floor)):
        if one.pulse(0, q) != REFUSED:
            continue
        us = one.exact_us(0, q)
        edge_key, edge = ("max_us", s.max_us[j]) if us > s.max_us[j] else ("min_us", s.min_us[j])
        # The limit the window allows, a tenth of a degree inside it.
        allowed = inward(one.angle(0, edge) / DEG * 10) / 10
        lines.append("%s (joints[%d]): %s %g deg needs %.0f us with this fit, outside the pulse window "
                     "%d..%d us: in the board file narrow %s to %g, or widen %s to %d if the servo "
                     "takes that pulse" % (arm.names[j], j, key, q / DEG, us, s.min_us[j], s.max_us[j],
                                           key, allowed, edge_key, round(us)))
    return lines


def _length_names(arm):
    return ("l1_mm", "l2_mm") if arm.kind == "planar" else ("l1_mm", "l2_mm", "l3_mm", "base_mm")


def _unit_arm(arm, k):
    """A copy of arm's geometry with length k set to 1 and the others 0 (FK is linear in lengths)."""
    lengths = [0.0] * len(_length_names(arm))
    lengths[k] = 1.0
    if arm.kind == "planar":
        return kinematics.PlanarSolver(lengths[0], lengths[1], arm.names, arm.lo, arm.hi, arm.home)
    return kinematics.Arm5Solver(lengths[0], lengths[1], lengths[2], lengths[3], arm.names, arm.lo, arm.hi, arm.home)


def _positions(arm, q):
    """Tool position (mm) by armfw's FK: (x, y) planar, (x, y, z) arm5."""
    p = arm.fk(q, [0.0] * len(arm.targets))
    return p[:3] if arm.kind == "arm5" else p[:2]


def fit_lengths(arm, poses_rad, measured_mm):
    """Least-squares link lengths from measured tool positions at known joint angles.

    Returns a dict: lengths (name -> mm), nominal (the arm's own), before_mm
    and after_mm (per-pose distance between the measured tip and FK with the
    nominal and the fitted lengths), rms_before_mm, rms_after_mm.
    """
    names = _length_names(arm)
    units = [_unit_arm(arm, k) for k in range(len(names))]
    rows = []
    for q in poses_rad:
        rows.append(np.column_stack([_positions(u, q) for u in units]))
    design = np.vstack(rows)
    target = np.asarray(measured_mm, dtype=float).reshape(-1)
    if design.shape[0] != target.shape[0]:
        raise ValueError("each measurement needs %d coordinates" % (design.shape[0] // len(poses_rad)))
    if np.linalg.matrix_rank(design) < len(names):
        raise ValueError("these poses cannot tell the lengths apart; use more varied poses")
    fitted, *_ = np.linalg.lstsq(design, target, rcond=None)
    nominal = np.array([getattr(arm, n.split("_")[0]) for n in names], dtype=float)
    dims = design.shape[0] // len(poses_rad)

    def per_pose(lengths):
        miss = (design @ lengths - target).reshape(-1, dims)
        return [float(v) for v in np.linalg.norm(miss, axis=1)]

    before = per_pose(nominal)
    after = per_pose(fitted)
    return {
        "lengths": {n: round(float(v), 3) for n, v in zip(names, fitted)},
        "nominal": {n: float(v) for n, v in zip(names, nominal)},
        "before_mm": [round(v, 3) for v in before],
        "after_mm": [round(v, 3) for v in after],
        "rms_before_mm": round(float(np.sqrt(np.mean(np.square(before)))), 3),
        "rms_after_mm": round(float(np.sqrt(np.mean(np.square(after)))), 3),
    }


def board_values(servos, j, poses_rad=(), pulses_us=()):
    """Joint j's servo map as the board has it, in fit_servo's form (residuals against it)."""
    exact = [servos.exact_us(j, q) for q in poses_rad]
    return {"sign": servos.signs[j], "us_per_rad": servos.us_per_rad[j],
            "offset_deg": round(servos.offsets[j] / DEG, 3), "center_us": servos.center_us[j],
            "residual_us": [round(us - e, 3) for us, e in zip(pulses_us, exact)]}


def _earlier_joints(board, previous):
    """previous's (the board's earlier calibration's) joint entries, or None without one per joint."""
    old = previous.get("joints") if isinstance(previous, dict) else None
    return old if isinstance(old, list) and len(old) == board.servos.n else None


# calibration.json's format; the firmware reads "joints" and "tool_mm", and
# reports "date" (info, boot banner); the rest is for the people reading it.
FORMAT_VERSION = 1
# What describes one file, written anew each time, never carried forward.
STAMP = ("version", "date", "board", "residuals_us")


def calibration_file(board, servo_fits, previous=None, drop=()):
    """The board's calibration.json content: the format version, the date (UTC), the board's
    name, the four calibrated fields per joint and each joint's fit residuals (us per
    pose), and everything else previous (the calibration the board had) holds.

    A joint not in servo_fits keeps its entry (and residuals) of previous, or
    else the board file's values; a joint in servo_fits gets its fit only,
    whatever previous said. The other entries of previous (the tool offset
    tool_mm, ...) are carried forward, except the keys named in drop.
    """
    old = _earlier_joints(board, previous)
    names = board.solver.names
    old_residuals = previous.get("residuals_us") if isinstance(previous, dict) else None
    joints = []
    residuals = {}
    for j in range(board.servos.n):
        fit = servo_fits.get(j) or (old and old[j]) or board_values(board.servos, j)
        joints.append({key: fit[key] for key in boardlib.CALIBRATED if key in fit})
        if j in servo_fits and "residual_us" in fit:
            residuals[names[j]] = fit["residual_us"]
        elif old and isinstance(old_residuals, dict) and names[j] in old_residuals:
            residuals[names[j]] = old_residuals[names[j]]
    calibration = {"version": FORMAT_VERSION, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "board": board.name, "joints": joints, "residuals_us": residuals}
    if isinstance(previous, dict):
        calibration.update((key, value) for key, value in previous.items()
                           if key != "joints" and key not in STAMP and key not in drop)
    return calibration


def changes(board, previous, calibration):
    """Lines for the screen before saving: per joint the servo map in force (previous, else
    the board file's) and the new one, with the new fit's worst residual."""
    old = _earlier_joints(board, previous)
    residuals = calibration.get("residuals_us", {})
    lines = ["%-12s %-28s %-28s %s" % ("joint", "in force: offset sign us/rad", "new: offset sign us/rad",
                                        "worst residual")]
    for j, new in enumerate(calibration["joints"]):
        was = board_values(board.servos, j)
        if old:
            was.update(old[j])
        name = board.solver.names[j]
        worst = max((abs(r) for r in residuals.get(name, ())), default=None)
        same = all(was.get(k) == new.get(k) for k in boardlib.CALIBRATED)
        lines.append("%-12s %+8.3f deg %+d %8.3f     %+8.3f deg %+d %8.3f     %s%s" % (
            name, was["offset_deg"], was["sign"], was["us_per_rad"],
            new["offset_deg"], new["sign"], new["us_per_rad"],
            "-" if worst is None else "%.1f us" % worst, "   (unchanged)" if same else ""))
    return lines


def _describe(key, value):
    if key == boardlib.TOOL and isinstance(value, list):
        return "tool offset %s mm" % " / ".join("%g" % v if isinstance(v, (int, float)) else repr(v)
                                                 for v in value)
    return "%s %s" % (key, json.dumps(value))


def carried_forward(board, previous, fitted, changed=None):
    """Lines for the screen: what the new calibration.json takes from previous (the board's
    earlier calibration) and what it does not.

    fitted: the joints measured now; changed: {key: reason} for entries of
    previous the new file does not keep (dropped on request, or measured anew).
    """
    changed = changed or {}
    lines = []
    names = board.solver.names
    kept = [names[j] for j in range(board.servos.n) if j not in fitted]
    if kept:
        whose = "every joint" if len(kept) == board.servos.n else ", ".join(kept)
        if _earlier_joints(board, previous):
            lines.append("kept the servo calibration of %s from the earlier calibration" % whose)
        else:
            lines.append("no earlier servo calibration on the board: %s keep the board file's values" % whose)
    for key, value in (previous.items() if isinstance(previous, dict) else ()):
        if key == "joints" or key in STAMP:
            continue
        if key in changed:
            lines.append("%s %s of the earlier calibration" % (changed[key], _describe(key, value)))
        else:
            lines.append("kept %s from the earlier calibration" % _describe(key, value))
    return lines


def check_calibration(board_path, calibration):
    """Load the board with this calibration laid over it; BoardError if a limit leaves its pulse window."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calibration.json")
        with open(path, "w") as f:
            json.dump(calibration, f)
        try:
            return boardlib.load(str(board_path), calibration=path)
        except boardlib.BoardError as e:
            # Name the new calibration, not the temporary file it was checked from.
            raise boardlib.BoardError(str(e).replace(path, "the new calibration"))


def write_json_atomically(path, data):
    """Write data as JSON to path through path.tmp and a rename: a power cut at any point
    leaves path old or new, whole (a cut before the rename leaves at most a stale .tmp,
    which the next write replaces). Every file armctl keeps on the PC goes this way."""
    tmp = "%s.tmp" % path
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    # The rename is on the disk once the folder's own entry is (POSIX; not every system allows it).
    try:
        folder = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(folder)
    except OSError:
        pass
    finally:
        os.close(folder)


class Progress:
    """The pulses recorded so far, in a host file written after every Enter.

    An interrupted calibration (quit, Ctrl-C, a lost link) resumes from it
    when started again for the same board and poses. path None: not kept.
    """

    def __init__(self, path, board_name, poses_deg, fresh=False):
        self.path = path
        self.key = {"board": board_name, "poses_deg": list(poses_deg)}
        self.pulses = {}
        if path is not None and not fresh and os.path.exists(path):
            try:
                with open(path) as f:
                    kept = json.load(f)
            except (OSError, ValueError):
                kept = {}
            if {k: kept.get(k) for k in self.key} == self.key:
                self.pulses = {int(j): list(v) for j, v in kept.get("pulses", {}).items()}

    def recorded(self, joint):
        """Joint's pulses per pose so far (None where not yet recorded)."""
        got = self.pulses.get(joint) or []
        return [got[k] if k < len(got) else None for k in range(len(self.key["poses_deg"]))]

    def record(self, joint, pose_index, us):
        row = self.recorded(joint)
        row[pose_index] = us
        self.pulses[joint] = row
        self._write()

    def forget(self, joint):
        self.pulses.pop(joint, None)
        self._write()

    def _write(self):
        if self.path is not None:
            write_json_atomically(self.path, dict(self.key, pulses={str(j): v for j, v in self.pulses.items()}))

    def remove(self):
        if self.path is not None and os.path.exists(self.path):
            os.remove(self.path)


class CalibrationRun:
    """One guided calibration over a Link.

    keys.read(task) returns the next key press (a one-character string, ""
    at end of input); lines(prompt) returns a line the person typed; out is
    where the guidance goes.
    """

    def __init__(self, link, board, keys, lines=input, out=sys.stdout, progress=None):
        self.link = link
        self.board = board
        self.keys = keys
        self.lines = lines
        self.out = out
        self.progress = progress
        self.window_misses = {}     # joint: window_misses() of its fit, where not []

    def say(self, text):
        print(text, file=self.out, flush=True)

    def _servo(self, channel, us):
        reply = self.link.request("servo %d %d" % (channel, us))
        if not reply.ok:
            self.say("  board refused %d us: %s" % (us, reply.final))
        return reply.ok

    def jog(self, task):
        """Jog task's servo from task.us (the pulse it has) until Enter; returns the recorded
        pulse, always one the servo took (CalibrationAborted on quit)."""
        servos = self.board.servos
        j = task.joint
        before = []     # pulses to go back to with undo
        while True:
            key = self.keys.read(task)
            if key in RECORD_KEYS:
                self.say("  recorded %s at %+g deg: %d us" % (task.name, task.pose_deg, task.us))
                return task.us
            if key in QUIT_KEYS:
                raise CalibrationAborted("quit at joint %s; nothing was written to the board" % task.name)
            if key == UNDO_KEY:
                if not before:
                    self.say("  nothing to undo")
                    continue
                us = before.pop()
                moved = self._servo(task.channel, us)
                self._drop_typed_ahead()
                if moved:
                    task.us = us
                    self.say("  %s %d us (undone)" % (task.name, us))
                continue
            step = JOG_KEYS.get(key)
            if step is None:
                self.say("  " + jog_help())
                continue
            us = min(max(task.us + step, servos.min_us[j]), servos.max_us[j])
            moved = us != task.us and self._servo(task.channel, us)
            # Keys typed while that jog ran are dropped before the screen shows where it went.
            self._drop_typed_ahead()
            if moved:
                before.append(task.us)
                task.us = us
                self.say("  %s %d us" % (task.name, us))

    def _drop_typed_ahead(self):
        drop = getattr(self.keys, "drop_typed_ahead", None)
        if drop is not None:
            drop()

    def _record_poses(self, j, name, poses_deg, progress):
        """The pulse at each pose of joint j: from the progress file, or jogged and recorded now."""
        servos = self.board.servos
        pulses = progress.recorded(j)
        if all(us is not None for us in pulses):
            self.say(" %s: every pose recorded earlier (%s us), resumed" % (name, " ".join(map(str, pulses))))
        for k, deg in enumerate(poses_deg):
            if pulses[k] is not None:
                continue
            start = self._reach(j, name, deg)
            task = Task(j, name, servos.channels[j], deg, start)
            self.say(" jog %s to %+g deg (now %d us), then press Enter" % (name, deg, start))
            pulses[k] = self.jog(task)
            progress.record(j, k, pulses[k])
        return pulses

    def _reach(self, j, name, deg):
        """Put joint j's servo at the pulse the board file gives deg, the other joints where
        the board lets it get there (see _clear). Returns that pulse, the one the screen
        shows and Enter records."""
        us = self.board.servos.pulse(j, deg * DEG)
        self._clear(j, name, deg, "servo %d %d" % (self.board.servos.channels[j], us), "(%d us) " % us)
        return us

    def _clear(self, j, name, deg, request, what=""):
        """Send request, which puts joint j at deg; when the board refuses it, move the other
        joints (j keeps its angle) to home, else straight (0 deg), and send it again.
        CalibrationAborted, saying what to do, when it is refused from all three."""
        arm = self.board.solver
        first = self.link.request(request, timeout=max(self.link.timeout, 30.0))
        if first.ok:
            return
        where = self.link.request("where")
        if not where.ok or where.status == "RELAXED":
            raise CalibrationAborted("the board refused %s at %+g deg %s: %s" % (name, deg, what, first.final))
        now = [float(v) for v in where.values[:arm.n]]
        for label, others in (("to home", [q / DEG for q in arm.home]), ("straight (0 deg)", [0.0] * arm.n)):
            pose = [min(max(v, arm.lo[i] / DEG), arm.hi[i] / DEG) for i, v in enumerate(others)]
            pose[j] = now[j]
            others_request = "joints " + " ".join("%g" % v for v in pose)
            if not self.link.request(others_request, timeout=max(self.link.timeout, 30.0)).ok:
                continue
            if self.link.request(request, timeout=max(self.link.timeout, 30.0)).ok:
                self.say("  %s at %+g deg %swas refused with the other joints as they were (%s): "
                         "moved them %s first" % (name, deg, what, first.final, label))
                return
        raise CalibrationAborted(
            "%s at %+g deg %sis refused with the other joints as they are, at home and straight: %s. "
            "Move the other joints clear first (armctl send \"joints ...\") or choose poses the arm "
            "reaches (--poses), then run the same command: it resumes" % (name, deg, what, first.final))

    def verify(self, joints, poses_deg):
        """Re-measure the calibration the board runs, writing nothing: per joint and pose the
        board moves the joint to the pose, the person jogs it (degrees) until it is really
        there. Returns {joint name: [error per pose, deg]}: the angle the board had to
        command minus the pose (0 for a right calibration)."""
        arm = self.board.solver
        self.say(verify_help())
        errors = {}
        for j in joints:
            name = arm.names[j]
            errors[name] = []
            for deg in poses_deg:
                q = list(self._pose_deg())       # a relaxed board goes home first: the zones need a pose
                q[j] = deg
                self._clear(j, name, deg, "joints " + " ".join("%g" % v for v in q))
                task = Check(j, name, deg)
                self.say(" jog %s until it really is at %+g deg, then press Enter" % (name, deg))
                while True:
                    key = self.keys.read(task)
                    if key in RECORD_KEYS:
                        break
                    if key in QUIT_KEYS:
                        raise CalibrationAborted("quit at joint %s; nothing was written" % name)
                    step = TOUCH_KEYS.get(key)
                    if step is None:
                        self.say("  " + verify_help())
                        continue
                    reply = self.link.request("jog j%d %g" % (j + 1, step), timeout=max(self.link.timeout, 30.0))
                    if reply.ok:
                        task.q_deg = reply.values[j]
                        self.say("  %s %.1f deg" % (name, task.q_deg))
                    else:
                        self.say("  board refused: %s" % reply.final)
                errors[name].append(round(task.q_deg - deg, 3))
                self.say("  %s at %+g deg: the board commands %+.2f deg, error %+.2f deg"
                         % (name, deg, task.q_deg, task.q_deg - deg))
        worst = max((abs(e), name) for name, row in errors.items() for e in row)
        self.say(" worst error %.2f deg (%s); nothing was written" % worst)
        return errors

    def _fit_joint(self, j, name, poses_deg, progress):
        """Joint j's servo fit; pulses that cannot be fitted are explained and measured again."""
        servos = self.board.servos
        poses_rad = [d * DEG for d in poses_deg]
        while True:
            pulses = self._record_poses(j, name, poses_deg, progress)
            if all(servos.pulse(j, q) == us for q, us in zip(poses_rad, pulses)):
                # Whole-microsecond pulses cannot tell a fit from the board's
                # values here; a fit a rounding away could break the limit check.
                self.say(" %s: the board's values give every recorded pulse; kept" % name)
                return board_values(servos, j, poses_rad, pulses)
            try:
                f = fit_servo(poses_rad, pulses, servos.center_us[j])
            except ValueError as e:
                self.say(" %s: %s us at %s deg cannot be fitted: %s" % (
                    name, " ".join(map(str, pulses)), " ".join("%+g" % d for d in poses_deg), e))
                self.say(" each pose needs its own pulse: measure %s again" % name)
                progress.forget(j)
                continue
            self.say(" fit %s: offset %+.3f deg, sign %+d, %.3f us/rad (board: %+.3f deg, %+d, %.3f)" % (
                name, f["offset_deg"], f["sign"], f["us_per_rad"],
                servos.offsets[j] / DEG, servos.signs[j], servos.us_per_rad[j]))
            self.say("  residuals (us): %s" % " ".join("%+.1f" % r for r in f["residual_us"]))
            misses = window_misses(self.board, j, f)
            for line in misses:
                self.say("  does not fit the board file: " + line)
            if misses:
                self.window_misses[j] = misses
            return f

    def calibrate_servos(self, joints, poses_deg):
        """Guide the person through every joint and pose; returns {joint: fit_servo result}."""
        arm = self.board.solver
        servos = self.board.servos
        hints = POSE_HINTS.get(arm.kind, ())
        progress = self.progress or Progress(None, self.board.name, poses_deg)
        self.say(jog_help())
        fits = {}
        for j in joints:
            name = arm.names[j]
            self.say("joint %d %s (channel %d)%s" % (j + 1, name, servos.channels[j],
                                                    ": " + hints[j] if j < len(hints) else ""))
            # Each joint is jogged from the pose the arm is in and put back after,
            # so the next joint's poses start from that known pose, not from
            # wherever this one was left (the board refuses a jog that would put
            # a link into a keep-out zone: COLLISION).
            before = self.link.request("where")
            fits[j] = self._fit_joint(j, name, poses_deg, progress)
            if before.ok:
                back = "joints " + " ".join("%g" % v for v in before.values[:arm.n])
                reply = self.link.request(back, timeout=max(self.link.timeout, 30.0))
                if not reply.ok:
                    self.say(" %s refused: %s" % (back, reply.final))
        return fits

    def _pose_deg(self):
        reply = self.link.request("where")
        if reply.ok and reply.status == "RELAXED":
            # Servos off (a board boots relaxed): jogging needs a known pose to start from.
            self.say("  the servos are off: the arm moves to its home pose first")
            home = self.link.request("home", timeout=max(self.link.timeout, 60.0))
            if not home.ok:
                raise CalibrationAborted("the board refused home: %s" % home.final)
            reply = self.link.request("where")
        if not reply.ok:
            raise CalibrationAborted("the board does not report its pose: %s" % reply.final)
        return reply.values[:self.board.solver.n]

    def touch(self, number, can_finish=False):
        """Jog joint by joint until the tool tip touches the point; returns the joint angles
        (degrees) at Enter, or None for f when can_finish."""
        arm = self.board.solver
        task = Touch(number, 0, self._pose_deg())
        self.say("  jogging %d %s (1..%d pick another)" % (task.joint + 1, arm.names[task.joint], arm.n))
        while True:
            key = self.keys.read(task)
            if key in RECORD_KEYS:
                self.say("  touch %d recorded at joints %s deg" % (number, " ".join("%.1f" % v for v in task.q_deg)))
                return list(task.q_deg)
            if key in FINISH_KEYS and can_finish:
                return None
            if key in QUIT_KEYS:
                raise CalibrationAborted("quit at touch %d; nothing was written" % number)
            if "1" <= key <= str(arm.n) and len(key) == 1:
                task.joint = int(key) - 1
                self.say("  jogging %d %s" % (task.joint + 1, arm.names[task.joint]))
                continue
            step = TOUCH_KEYS.get(key)
            if step is None:
                self.say("  " + touch_help())
                continue
            q = list(task.q_deg)
            q[task.joint] = round(q[task.joint] + step, 3)
            reply = self.link.request("joints " + " ".join("%g" % v for v in q), timeout=max(self.link.timeout, 30.0))
            if reply.ok:
                task.q_deg = q
                tip = [reply.fields.get(axis) for axis in "xyz"]
                self.say("  %d %s %.1f deg%s" % (
                    task.joint + 1, arm.names[task.joint], q[task.joint],
                    "   tip %.1f %.1f %.1f mm" % tuple(tip) if None not in tip else ""))
            else:
                self.say("  board refused: %s" % reply.final)

    def calibrate_tool(self, minimum=4, max_residual_mm=None):
        """The TCP step: touches of one fixed point, then armctl.tcp's fit; returns its report.

        The touch with the largest residual over the threshold is asked for
        again (the person jogs and touches anew, or quits) until every touch agrees.
        Raises armctl.tcp.DegenerateTouches for orientations too alike.
        """
        from armctl import tcp
        limit = tcp.MAX_RESIDUAL_MM if max_residual_mm is None else max_residual_mm
        self.say(touch_help())
        self.say("tool centre point: touch one fixed point with the tool tip from %d or more clearly "
                 "different orientations (vary pitch, roll and base)" % minimum)
        touches = []
        while True:
            self.say(" touch %d: jog the tip onto the point, then Enter%s"
                     % (len(touches) + 1, " (f: finish)" if len(touches) >= minimum else ""))
            q = self.touch(len(touches) + 1, len(touches) >= minimum)
            if q is None:
                break
            touches.append(q)
        while True:
            report = tcp.solve_from_joints(self.board.solver, [[v * DEG for v in q] for q in touches],
                                           max_residual_mm=limit)
            for i, r in enumerate(report["residual_mm"]):
                self.say(" touch %d: residual %.2f mm%s" % (i + 1, r, "  REDO" if r > limit else ""))
            if not report["redo"]:
                break
            # The worst touch first: one slipped touch pulls the fit and so
            # every residual; the others usually agree again once it is redone.
            number = max(report["redo"], key=lambda k: report["residual_mm"][k - 1])
            self.say(" touch %d disagrees with the others by %.2f mm (over %.2f): touch the point again"
                     % (number, report["residual_mm"][number - 1], limit))
            touches[number - 1] = self.touch(number)
        t = report["offset_mm"]
        self.say(" tool offset: across %.2f, lateral %.2f, along %.2f mm; point %s mm; rms %.2f mm"
                 % (t[0], t[1], t[2], " ".join("%.1f" % v for v in report["point_mm"]), report["rms_mm"]))
        report["touches_deg"] = touches
        return report

    def measure_lengths(self, poses_deg):
        """Move to each pose with `joints`, ask for the measured tip; returns fit_lengths' report."""
        arm = self.board.solver
        dims = 2 if arm.kind == "planar" else 3
        axes = "x y" if dims == 2 else "x y z"
        poses = []
        measured = []
        self.say("link lengths: measure the tool tip (mm, base frame) at %d poses" % len(poses_deg))
        for pose in poses_deg:
            request = "joints " + " ".join("%g" % d for d in pose)
            reply = self.link.request(request, timeout=max(self.link.timeout, 30.0))
            if not reply.ok:
                self.say(" %s refused: %s; pose skipped" % (request, reply.final))
                continue
            while True:
                text = self.lines(" tip at joints %s deg: %s = " % (" ".join("%g" % d for d in pose), axes))
                try:
                    values = [float(v) for v in text.replace(",", " ").split()]
                except ValueError:
                    values = []
                if len(values) == dims and all(math.isfinite(v) for v in values):
                    break
                self.say("  type %d numbers in mm, for example: %s" % (dims, " ".join(["120.5"] * dims)))
            poses.append([d * DEG for d in pose])
            measured.append(values)
        report = fit_lengths(arm, poses, measured)
        for i, pose in enumerate(poses):
            self.say(" pose %d: nominal model misses by %.2f mm, fitted model by %.2f mm"
                     % (i + 1, report["before_mm"][i], report["after_mm"][i]))
        for name, value in report["lengths"].items():
            self.say(" %s: %.2f mm (board %.2f mm)" % (name, value, report["nominal"][name]))
        self.say(" rms miss: %.2f mm with the board's lengths, %.2f mm fitted" % (
            report["rms_before_mm"], report["rms_after_mm"]))
        if report["rms_after_mm"] > 2.0:
            self.say(" the fitted model still misses: suspect servo calibration or play in the joints, "
                     "not the lengths (and not the solver: FK reproduces every IK answer)")
        elif report["rms_before_mm"] > 2.0 * max(report["rms_after_mm"], 0.5):
            self.say(" the board's lengths are the error (model error): copy the fitted lengths "
                     "into the board file's \"arm\" section")
        return report


# Board-side rename, armfw.store's own: atomic on littlefs and the Unix port;
# FAT cannot rename over a file, there the old file goes first, and a power
# cut in between leaves calibration.json.tmp (whole), which main.py boots with.
RENAME_SCRIPT = "from armfw.store import commit\ncommit('calibration.json')\n"


# What the board would boot with (armfw.store: calibration.json, or a lone whole .tmp a
# power cut left), settled into place first so that the new .tmp never replaces the only copy.
READ_SCRIPT = ("import json\nfrom armfw import store\nstore.settle('calibration.json')\n"
               "print(json.dumps(store.read_json('calibration.json', {})))\n")


def read_from_board(port):
    """The board's calibration.json as a dict ({} when it has none), read as a file, not loaded.

    Leaves the board in its REPL (main.py stopped): write_to_board or
    armctl.deploy.restart next.
    """
    from armctl.deploy import mpremote
    text = "\n".join(mpremote(port, [["exec", READ_SCRIPT]]))
    try:
        return json.loads(text)
    except ValueError:
        return {}


BACKUP = "calibration.json.bak"


def write_to_board(port, calibration, baud=115200, out=sys.stdout, previous=None):
    """Write calibration.json on the board (temporary file, then rename) and restart it.

    previous (the calibration it replaces), when there is one, is kept on the
    board as calibration.json.bak, written before the new file. Returns the
    board's `help` Reply after the restart. Raises LinkError.
    """
    import tempfile
    from armctl.deploy import mpremote, restart
    with tempfile.TemporaryDirectory(prefix="armctl-cal-") as tmp:
        path = os.path.join(tmp, "calibration.json")
        write_json_atomically(path, calibration)
        actions = []
        if previous:
            backup = os.path.join(tmp, BACKUP)
            write_json_atomically(backup, previous)
            actions.append(["fs", "cp", "-f", backup, ":" + BACKUP])
            print("keeping the calibration it replaces as %s on the board" % BACKUP, file=out, flush=True)
        print("writing calibration.json to the board on %s" % port, file=out, flush=True)
        mpremote(port, actions + [["fs", "cp", "-f", path, ":calibration.json.tmp"], ["exec", RENAME_SCRIPT]])
    return restart(port, baud)


# -- by hand, for bus servos (LeRobot's way) ------------------------------------
#
# A bus servo reports where it is, so nothing is jogged: with every torque off
# the person puts the arm in a known pose (each joint at known_deg, the board's
# home by default) and then moves each joint through its whole range. From the
# ticks read:
#
#     offset_deg  the servo angle at mathematical zero: the known pose's tick is
#                 center + (offset + sign * q_known) * ticks_per_rad
#     limits      the extremes each joint reached, a margin inside, as joint limits
#                 (min_deg, max_deg) and as the tick window (min_us, max_us)
#
# sign and center_us stay the board's; us_per_rad is the servo's ticks per
# radian (ticks_per_rev / 2 pi), exact for a bus servo. A calibration file
# carries the servo map (offset_deg, ...); the limits go into the board file
# (limits_into), which the loader checks again against the window.

BY_HAND_MARGIN_DEG = 1.0


class ByHandError(ValueError):
    """A by-hand reading that cannot give a calibration (names the joint and why)."""


def extremes(samples, ticks_per_rev):
    """(lowest, highest) tick among samples of one joint, in the order read; ByHandError where
    two readings in a row are more than half a turn apart: the joint crossed the servo's
    wrap (tick ticks_per_rev - 1 to 0), where its lowest and highest reads mean nothing."""
    for a, b in zip(samples, samples[1:]):
        if abs(b - a) > ticks_per_rev // 2:
            raise ByHandError("the range crosses the servo's tick 0 (read %d then %d): turn the horn "
                              "half a turn on the servo, or the servo's own offset, and start again" % (a, b))
    return min(samples), max(samples)


def by_hand_fit(board, known_ticks, ranges, known_deg=None, margin_deg=BY_HAND_MARGIN_DEG):
    """The calibration of a bus servo board from what a person did by hand.

    known_ticks[j]: joint j's tick at the known pose (known_deg[j] degrees, default
    the board's home); ranges[j]: (lowest, highest) tick it reached (extremes()).
    Returns (fits, limits): per joint fit_servo's form (sign, us_per_rad, offset_deg,
    center_us) and {"min_deg", "max_deg", "min_us", "max_us"}.
    """
    s = board.servos
    arm = board.solver
    per_rad = board.driver["ticks_per_rev"] / (2 * math.pi)
    known = [q / DEG for q in arm.home] if known_deg is None else list(known_deg)
    fits = {}
    limits = []
    for j in range(s.n):
        sign = s.signs[j]
        center = s.center_us[j]
        offset_rad = (known_ticks[j] - center) / per_rad - sign * known[j] * DEG
        low, high = ranges[j]
        if high - low < 2 * margin_deg * DEG * per_rad:
            raise ByHandError("%s: it moved only %d ticks (%d..%d): move it through its whole range"
                              % (arm.names[j], high - low, low, high))
        if not low <= known_ticks[j] <= high:
            raise ByHandError("%s: the known pose (tick %d) is outside the range it was moved "
                              "through (%d..%d)" % (arm.names[j], known_ticks[j], low, high))
        ends = sorted(sign * ((t - center) / per_rad - offset_rad) / DEG for t in (low, high))
        fits[j] = {"sign": sign, "us_per_rad": round(per_rad, 4), "offset_deg": round(offset_rad / DEG, 3),
                   "center_us": center}
        limits.append({"min_deg": round(ends[0] + margin_deg, 1), "max_deg": round(ends[1] - margin_deg, 1),
                       "min_us": int(low), "max_us": int(high)})
    return fits, limits


def limits_into(board_dict, limits):
    """board_dict (a parsed board file) with each joint's limits and tick window replaced;
    a home outside the new limits moves to the nearest one."""
    out = json.loads(json.dumps(board_dict))
    for joint, new in zip(out["joints"], limits):
        joint.update(new)
        home = joint.get("home_deg", 0.0)
        joint["home_deg"] = min(max(home, new["min_deg"]), new["max_deg"])
    return out


class ByHand:
    """The by-hand procedure: relax, the known pose, each joint through its range.

    read_ticks(): every joint's present tick (a list, joint order); relax(): every
    torque off; ask(text): says text and waits for the person (Enter);
    moving(joint): called between samples while joint is being moved, True once the
    person says it has been through its range; say(text): a line to the person.
    """

    def __init__(self, read_ticks, relax, ask, moving, say=print):
        self.read_ticks = read_ticks
        self.relax = relax
        self.ask = ask
        self.moving = moving
        self.say = say

    def run(self, board, known_deg=None, margin_deg=BY_HAND_MARGIN_DEG):
        """(fits, limits), as by_hand_fit."""
        arm = board.solver
        ticks = board.driver["ticks_per_rev"]
        self.relax()
        known = [q / DEG for q in arm.home] if known_deg is None else list(known_deg)
        self.ask("Torque is off. Put the arm in its known pose (%s), then press Enter"
                 % ", ".join("%s %g deg" % (n, d) for n, d in zip(arm.names, known)))
        known_ticks = list(self.read_ticks())[:arm.n]
        ranges = []
        for j, name in enumerate(arm.names):
            self.say("Move %s slowly through its whole range, end to end, then press Enter" % name)
            samples = [known_ticks[j]]
            while True:
                samples.append(self.read_ticks()[j])
                if self.moving(j):
                    samples.append(self.read_ticks()[j])
                    break
            try:
                ranges.append(extremes(samples, ticks))
            except ByHandError as e:
                raise ByHandError("%s: %s" % (name, e))
            self.say("%s: ticks %d..%d" % (name, ranges[-1][0], ranges[-1][1]))
        return by_hand_fit(board, known_ticks, ranges, known, margin_deg)
