# SPDX-License-Identifier: MIT
"""Where `armctl calibrate`'s results are kept: calibration.json on the board (its earlier
copy as calibration.json.bak), the files on the PC, and the progress file a calibration
resumes from.

calibration.json is written atomically (a temporary file renamed over the old
one). The board's earlier calibration.json is read only when the result is
written, after the measuring (the file tool stops the board's loop and a
restart follows, which must not change the arm the person is jogging): the
joints not measured now keep their earlier fits, and everything in it that is
not a joint fit (the tool offset of `calibrate --tcp`) is carried forward.
"""

import json
import os
import sys
import time

from armctl.calibrate_fit import board_values
from armfw import board as boardlib


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
