# SPDX-License-Identifier: MIT
"""A power cut at every point of a write to the board's flash, under the real MicroPython
Unix port: the interpreter writing a file through armfw.store is killed (SIGKILL, no
clean-up runs) at each step, then the board boots again from that flash.

Every file the board writes goes through armfw.store: poses.json (`pose save`/`del`) and
calibration.json (`armctl calibrate` copies calibration.json.tmp, then calls
store.commit; the same two steps write_json takes). For each, on a rename that replaces
its target (littlefs, the Unix port) and on FAT's (which refuses, so the old file goes
first), from a flash with the old file, with none, and with the lone whole .tmp an earlier
cut on FAT left: after the boot the board runs with the old content or the new, whole,
never anything else, never the old again once it had the new, and the board says which
file it took: armfw.store.chosen for the poses, the board's source for the calibration
(read at boot, by an armfw.store let go since).
"""

import json
import math
import subprocess

import pytest

from armctl import FIRMWARE_DIR, upy
from armctl.sim import Simulator
from armctl.sim_flash import install
from conftest import BOARDS

ARM5 = BOARDS / "sim_arm5.json"

# The writer: armfw.store.write_json with a hook at every step that touches the flash.
# At the step numbered KILL_AT it says so and waits to be killed.
WRITER = r'''
import json
import os
import sys
from armfw import store

_real_open = open
steps = []


def point(name):
    steps.append(name)
    if len(steps) - 1 == KILL_AT:
        print("KILL %d %s" % (KILL_AT, name))
        sys.stdin.read(1)           # killed while waiting here


class Flash:
    """os as armfw.store uses it, with FAT's rename when FAT is set."""

    def stat(self, path):
        return os.stat(path)

    def rename(self, old, new):
        point("rename %s" % old)
        if FAT:
            try:
                os.stat(new)
                raise OSError(17)       # FAT: no rename over a file
            except OSError as e:
                if e.errno == 17:
                    raise
        os.rename(old, new)
        point("renamed to %s" % new)

    def remove(self, path):
        point("remove %s" % path)
        os.remove(path)
        point("removed %s" % path)


class Tmp:
    def __init__(self, f):
        self.f = f

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()
        point("tmp closed")

    def write(self, text):
        half = len(text) // 2
        self.f.write(text[:half])
        point("tmp half written")
        self.f.write(text[half:])
        point("tmp written")
        return len(text)


def opener(path, mode="r"):
    if "w" not in mode:
        return _real_open(path, mode)
    f = _real_open(path, mode)
    point("tmp opened")
    return Tmp(f)


store.os = Flash()
store._open = opener
point("start")
store.write_json(NAME, json.loads(NEW))
point("done")
print("STEPS " + json.dumps(steps))
'''

# After the boot (main.py served its input and ended): which file each read took.
CHOSEN = '''
try:
    exec(compile(open("main.py").read(), "main.py", "exec"))
except SystemExit:
    pass
import armfw.store
chosen = dict(armfw.store.chosen)
source = controller.board.source
chosen["calibration.json"] = source.rsplit("+", 1)[1] if "+" in source else None
print("# chosen " + repr(sorted(chosen.items())))
'''

POSES_OLD = {"rest": [0.0, 10.0, 120.0, 50.0, 0.0]}
POSES_NEW = {"rest": [0.0, 10.0, 120.0, 50.0, 0.0], "over": [5.0, 20.0, 60.0, 40.0, 0.0]}
# The elbow's scale tells the calibrations apart: its home pulse (at 90 deg) moves.
CAL_OLD = {"joints": [{}, {}, {"us_per_rad": 420}, {}, {}]}
CAL_NEW = {"joints": [{}, {}, {"us_per_rad": 400}, {}, {}]}
ELBOW = 2


def elbow_home_us(cal):
    """The elbow servo's pulse at home under calibration cal (None: none), from
    boards/sim_arm5.json by hand."""
    j = json.loads(ARM5.read_text())["joints"][ELBOW]
    if cal is not None:
        j.update(cal["joints"][ELBOW])
    return round(j["center_us"] + (math.radians(j["offset_deg"]) + j["sign"] * math.radians(j["home_deg"]))
                 * j["us_per_rad"])


def write_killed_at(flash, name, new, fat, kill_at):
    """Run the writer in flash, killed at step kill_at (-1: never); its steps when it finished."""
    code = "KILL_AT = %d\nFAT = %r\nNAME = %r\nNEW = %r\n%s" % (kill_at, fat, name, json.dumps(new), WRITER)
    proc = subprocess.Popen([upy.command(), "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, cwd=flash, env=upy.env(FIRMWARE_DIR), text=True)
    try:
        line = proc.stdout.readline()
        if kill_at >= 0:
            assert line.startswith("KILL %d " % kill_at), line + proc.stdout.read()
            proc.kill()                 # the power cut: nothing more runs, no file is closed
            proc.wait(30)
            return None
        assert line.startswith("STEPS "), line + proc.stdout.read()
        assert proc.wait(30) == 0
        return json.loads(line[len("STEPS "):])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def boot(flash):
    """Boot main.py from flash as the simulator does; (poses, elbow home pulse, chosen files)."""
    sim = Simulator(flash_dir=flash)
    sim.pulse_log.write_text("")
    argv = sim.argv(main=False, interactive=False)
    argv[-1] += CHOSEN
    proc = subprocess.run(argv, input="pose list\n", capture_output=True, text=True, timeout=60,
                          cwd=flash, env=sim.env())
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and lines[0].startswith("# armfw "), proc.stdout + proc.stderr
    end = [i for i, line in enumerate(lines) if line.startswith("ok ")][0]     # pose list's reply
    assert int(lines[end][3:]) == end - 1
    poses = {}
    for line in lines[1:end]:
        name, *q = line[2:].split()
        poses[name] = [float(v) for v in q]
    said = [line for line in lines if line.startswith("# chosen ")][0]
    chosen = dict(eval(said[len("# chosen "):]))          # a list of (str, str or None) pairs
    elbow = [us for _, ch, us in sim.pulses() if ch == ELBOW]
    return poses, elbow[0], chosen


def fresh_flash(tmp_path, name, old, start):
    """A flash with the firmware and, for name: start "old" (the file), "none", or "lone tmp"."""
    flash = tmp_path / "flash"
    install(flash, ARM5)
    for leftover in (name, name + ".tmp"):
        if (flash / leftover).exists():
            (flash / leftover).unlink()
    if start == "old":
        (flash / name).write_text(json.dumps(old))
    elif start == "lone tmp":
        (flash / (name + ".tmp")).write_text(json.dumps(old))
    return flash


FILES = {
    "poses.json": (POSES_OLD, POSES_NEW),
    "calibration.json": (CAL_OLD, CAL_NEW),
}


@pytest.mark.parametrize("start", ["old", "none", "lone tmp"])
@pytest.mark.parametrize("fat", [False, True], ids=["atomic rename", "FAT"])
@pytest.mark.parametrize("name", sorted(FILES))
def test_a_cut_at_every_step_leaves_the_old_file_or_the_new(micropython, tmp_path, name, fat, start):
    old, new = FILES[name]
    steps = write_killed_at(fresh_flash(tmp_path, name, old, start), name, new, fat, -1)
    assert steps[0] == "start" and steps[-1] == "done" and "tmp half written" in steps
    assert ("remove %s" % name in steps) == (fat and start != "none")
    had = []
    for k in range(len(steps)):
        flash = fresh_flash(tmp_path, name, old, start)
        write_killed_at(flash, name, new, fat, k)
        poses, elbow_us, chosen = boot(flash)
        if name == "poses.json":
            got = "new" if poses == new else "old" if poses == (old if start != "none" else {}) else poses
        else:
            pulses = {elbow_home_us(new): "new", elbow_home_us(old if start != "none" else None): "old"}
            got = pulses.get(elbow_us, elbow_us)
        assert got in ("old", "new"), (steps[k], got)
        # The board says which file it took: the one holding what it runs with.
        taken = chosen[name]
        if got == "old" and start == "none":
            assert taken is None, (steps[k], chosen)
        else:
            assert taken in (name, name + ".tmp"), (steps[k], chosen)
            assert json.loads((flash / taken).read_text()) == (new if got == "new" else old), steps[k]
        had.append(got)
    # Old until the step that puts the new file in place, new from then on.
    assert had[0] == "old" and had[-1] == "new"
    assert had == sorted(had, key=("old", "new").index), list(zip(steps, had))


def test_main_boots_with_a_lone_tmp_only_when_it_is_whole(micropython, tmp_path):
    # A first calibration cut short while copied: a lone, half calibration.json.tmp.
    flash = fresh_flash(tmp_path, "calibration.json", None, "none")
    (flash / "calibration.json.tmp").write_text(json.dumps(CAL_NEW)[:20])
    poses, elbow_us, chosen = boot(flash)
    assert elbow_us == elbow_home_us(None) and chosen["calibration.json"] is None   # the board file's own
    (flash / "calibration.json.tmp").write_text(json.dumps(CAL_NEW))
    poses, elbow_us, chosen = boot(flash)
    assert elbow_us == elbow_home_us(CAL_NEW) and chosen["calibration.json"] == "calibration.json.tmp"
