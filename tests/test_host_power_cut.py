# SPDX-License-Identifier: MIT
"""The files `armctl calibrate` keeps on the PC (SAVE.progress.json, the SAVE calibration) survive
a power cut at any point of a write: a process killed there leaves the old file or the new one,
whole, and the next run reads it."""

import json
import os
import subprocess
import sys

import pytest

from armctl import calibrate_store

# A writer killed (SIGKILL: no cleanup, no buffered output flushed) at one point of
# armctl.calibrate_store.write_json_atomically, by wrapping the call that comes next.
CHILD = r"""
import json, os, signal, sys
from armctl import calibrate_store

point, what, path = sys.argv[1:4]
new = json.loads(sys.argv[4])
real_dump, real_fsync, real_replace = json.dump, os.fsync, os.replace


def cut():
    os.kill(os.getpid(), signal.SIGKILL)


if point == "mid-write":
    def dump(data, f, **options):
        text = json.dumps(data, **options)
        f.write(text[:len(text) // 2])
        f.flush()
        cut()
    json.dump = dump
elif point == "written, before fsync":
    os.fsync = lambda fd: cut()
elif point == "after fsync, before rename":
    os.replace = lambda src, dst: cut()
elif point == "after rename, before the folder's fsync":
    def replace(src, dst):
        real_replace(src, dst)
        cut()
    os.replace = replace
if what == "progress":
    progress = calibrate_store.Progress(path, "sim_arm5", [0.0, 90.0])
    progress.record(1, 1, new["pulses"]["1"][1])
else:
    calibrate_store.write_json_atomically(path, new)
cut()                                   # "done": the cut right after the write returned
"""

OLD_PROGRESS = {"board": "sim_arm5", "poses_deg": [0.0, 90.0], "pulses": {"1": [1552, None]}}
NEW_PROGRESS = {"board": "sim_arm5", "poses_deg": [0.0, 90.0], "pulses": {"1": [1552, 2219]}}
OLD_CALIBRATION = {"version": 1, "date": "2026-12-01T10:00:00Z", "board": "sim_arm5",
                   "joints": [{"offset_deg": 0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500}] * 5}
NEW_CALIBRATION = dict(OLD_CALIBRATION, date="2026-12-04T03:10:00Z",
                       joints=[{"offset_deg": 7.0, "sign": 1, "us_per_rad": 424.3, "center_us": 1500}] * 5)

# Where the cut falls, and which file it must leave.
POINTS = [("mid-write", "old"), ("written, before fsync", "old"), ("after fsync, before rename", "old"),
          ("after rename, before the folder's fsync", "new"), ("done", "new")]


@pytest.mark.parametrize("point, left", POINTS)
@pytest.mark.parametrize("what", ["progress", "calibration"])
def test_a_cut_at_any_point_leaves_the_old_file_or_the_new_one_whole(tmp_path, what, point, left):
    old, new = (OLD_PROGRESS, NEW_PROGRESS) if what == "progress" else (OLD_CALIBRATION, NEW_CALIBRATION)
    path = tmp_path / ("cal.json.progress.json" if what == "progress" else "cal.json")
    path.write_text(json.dumps(old))
    child = subprocess.run([sys.executable, "-c", CHILD, point, what, str(path), json.dumps(new)],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == -9, child.stderr          # killed where it was meant to be
    expected = old if left == "old" else new
    assert json.loads(path.read_text()) == expected
    if what == "progress":
        # The next run resumes from that file and says what it holds.
        assert calibrate_store.Progress(str(path), "sim_arm5", [0.0, 90.0]).recorded(1) == expected["pulses"]["1"]
    # A cut before the rename leaves at most a stale .tmp: the next write goes through it.
    calibrate_store.write_json_atomically(str(path), new)
    assert json.loads(path.read_text()) == new and not os.path.exists(str(path) + ".tmp")
