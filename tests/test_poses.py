# SPDX-License-Identifier: MIT
"""Named poses: the atomic store (power cut, full flash, FAT rename), name checks, the
`pose` commands under the real MicroPython Unix port, and `armctl poses` over a pty."""

import io
import json
import os
import re
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from armctl import cli
from armctl.commands import poses as poses_command
from armctl.sim import Simulator
from armfw import poses, store

from conftest import BOARDS, ROOT

OLD = {"rest": [0.0, 10.0, 120.0, 50.0, 0.0]}


@pytest.fixture
def flash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store.write_json("poses.json", OLD)
    return tmp_path


class CutOpen:
    """An opener whose files take only `room` bytes: then the write fails as the given error."""

    def __init__(self, room, error):
        self.room = room
        self.error = error

    def __call__(self, path, mode="r"):
        f = open(path, mode)
        if "w" not in mode:
            return f
        opener = self

        class Limited:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                f.close()

            def write(self, text):
                f.write(text[:opener.room])
                f.flush()
                raise opener.error
        return Limited()


def test_write_then_read_round_trips(flash):
    assert store.read_json("poses.json") == OLD
    assert not (flash / "poses.json.tmp").exists()
    assert store.read_json("missing.json", {"none": 1}) == {"none": 1}


def test_power_cut_mid_write_keeps_the_old_file(flash, monkeypatch):
    # The cut: half the new text reached the .tmp, then nothing more ran.
    monkeypatch.setattr(store, "_open", CutOpen(10, KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        store.write_json("poses.json", {"rest": [1, 2, 3, 4, 5], "other": [0, 0, 0, 0, 0]})
    monkeypatch.setattr(store, "_open", open)
    assert len((flash / "poses.json.tmp").read_text()) == 10        # half-written, beside the old one
    assert store.read_json("poses.json") == OLD                     # ...and ignored


def test_full_flash_is_an_error_and_leaves_no_half_file(flash, monkeypatch):
    monkeypatch.setattr(store, "_open", CutOpen(7, OSError(28, "No space left on device")))
    with pytest.raises(store.StoreError, match="flash full"):
        store.write_json("poses.json", {"big": [0.0] * 5})
    assert not (flash / "poses.json.tmp").exists()
    assert store.read_json("poses.json") == OLD


def test_short_write_counts_as_a_full_flash(flash, monkeypatch):
    class Short:
        def __init__(self, path, mode="r"):
            self.f = open(path, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, text):      # MicroPython's VFS returns the count it managed
            return self.f.write(text[:5])
    monkeypatch.setattr(store, "_open", Short)
    with pytest.raises(store.StoreError, match="short write"):
        store.write_json("poses.json", {"x": [1.0]})
    monkeypatch.setattr(store, "_open", open)
    assert store.read_json("poses.json") == OLD


def test_fat_rename_removes_first_and_a_lone_tmp_is_read(flash, monkeypatch):
    real_rename = os.rename

    def fat_rename(a, b):
        if os.path.exists(b):
            raise OSError(17, "exists")
        real_rename(a, b)
    monkeypatch.setattr(os, "rename", fat_rename)
    store.write_json("poses.json", {"new": [1.0]})
    assert store.read_json("poses.json") == {"new": [1.0]}
    # The cut between remove and rename: only the complete .tmp is left.
    os.replace(flash / "poses.json", flash / "poses.json.tmp")
    assert store.readable("poses.json") == "poses.json.tmp"
    assert store.read_json("poses.json") == {"new": [1.0]}


NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,15}\Z")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=300), max_size=20))
def test_name_check_matches_the_documented_rule(name):
    assert (poses.name_error(name) is None) == bool(NAME_RE.match(name))


def test_table_full_is_refused(tmp_path):
    table = poses.Poses(2, str(tmp_path / "p.json"))
    for i in range(poses.MAX_POSES):
        table.put("p%d" % i, [0.0, float(i)])
    with pytest.raises(ValueError, match="delete one"):
        table.put("one_more", [0.0, 0.0])
    table.put("p3", [1.0, 1.0])                     # replacing is no new entry
    assert poses.Poses(2, str(tmp_path / "p.json")).get("p3") == [1.0, 1.0]


def test_pose_commands_under_micropython(micropython, tmp_path):
    with Simulator(BOARDS / "sim_arm5.json", flash_dir=tmp_path / "flash") as sim:
        assert sim.readline().startswith("# armfw ")        # the boot banner
        assert sim.request("joints 10 20 30 40 50")[-1].startswith("ok OK")
        assert sim.request("pose save Over_1")[-1] == "ok Over_1 10.000 20.000 30.000 40.000 50.000"
        assert sim.request("home")[-1].startswith("ok")
        pulses = len(sim.pulses())
        for line, reply in (("pose save 9lives", "error BAD_INPUT a pose name starts with a letter: 9lives"),
                            ("pose save a.b", "error BAD_INPUT a pose name holds letters, digits, _ and - only: a.b"),
                            ("pose save abcdefghijklmnopq", "error BAD_INPUT a pose name has 1..16 characters: "
                                                            "abcdefghijklmnopq"),
                            ("pose go nowhere", "error BAD_INPUT no pose named nowhere"),
                            ("pose set far 0 0 0 0 200", "error JOINT_LIMIT wrist_roll 200.000 deg is outside "
                                                         "-135.000..135.000"),
                            ("pose fly x", "error BAD_INPUT pose save|go|del NAME, pose set NAME Q1..QN, pose list")):
            assert sim.request(line)[-1] == reply
        assert len(sim.pulses()) == pulses                  # nothing refused moved anything
        reply = sim.request("pose go Over_1")
        assert reply[-1].startswith("ok OK 10.000 20.000 30.000 40.000 50.000")
        assert sim.request("pose set Flat 0 90 0 0 0")[-1] == "ok Flat 0.000 90.000 0.000 0.000 0.000"
        assert sim.request("pose list") == ["# Flat 0.000 90.000 0.000 0.000 0.000",
                                            "# Over_1 10.000 20.000 30.000 40.000 50.000", "ok 2"]
        assert sim.request("pose del Flat")[-1] == "ok Flat"
        saved = json.loads((sim.flash_dir / "poses.json").read_text())
        assert saved == {"Over_1": [10.0, 20.0, 30.0, 40.0, 50.0]}
        # The flash refuses the write (here: the .tmp cannot be created): an error, the old file kept.
        (sim.flash_dir / "poses.json.tmp").mkdir()
        assert sim.request("pose save Again")[-1].startswith("error FLASH poses.json not written")
        assert json.loads((sim.flash_dir / "poses.json").read_text()) == saved
        (sim.flash_dir / "poses.json.tmp").rmdir()
    # After a reboot (a new process on the same flash) the poses are still there.
    with Simulator(flash_dir=tmp_path / "flash") as sim:
        assert sim.request("pose list")[-1] == "ok 1"


def test_store_full_flash_under_micropython(micropython, tmp_path):
    """The short-write path under the real port: its file write returns a count."""
    script = """
import os
from armfw import store
store.write_json('p.json', {'a': [1]})
real = open
class Short:
    def __init__(self, path, mode='r'):
        self.f = real(path, mode)
    def __enter__(self):
        return self
    def __exit__(self, *e):
        self.f.close()
    def write(self, text):
        return self.f.write(text[:3])
store._open = Short
try:
    store.write_json('p.json', {'b': [2]})
    print('written')
except store.StoreError as e:
    print('refused', e)
store._open = real
print(store.read_json('p.json'), 'p.json.tmp' in os.listdir('.'))
"""
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    out = subprocess.run([micropython, "-c", script], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=60).stdout.splitlines()
    assert out[0].startswith("refused p.json not written (flash full?)"), out
    assert out[1] == "{'a': [1]} False"


def test_armctl_poses_over_a_pty(micropython, tmp_path):
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as sim:
        base = dict(port=sim.port, baud=115200, timeout=10.0)
        exported = tmp_path / "out.json"
        (tmp_path / "in.json").write_text(json.dumps({"a": [0, 30, 60, 30, 0], "b": [5, 0, 0, 0, 0],
                                                      "bad": [0, 0, 0, 0, 999]}))

        def run(action, name=None):
            out = io.StringIO()
            import argparse
            code = poses_command.run(argparse.Namespace(action=action, name=name, **base), out=out)
            return code, out.getvalue()
        code, text = run("import", str(tmp_path / "in.json"))
        assert code == cli.EXIT_REFUSED and "bad: error JOINT_LIMIT" in text
        assert run("go", "a")[0] == cli.EXIT_OK
        assert run("save", "here")[0] == cli.EXIT_OK
        assert run("del", "b")[0] == cli.EXIT_OK
        assert run("del", "b")[0] == cli.EXIT_REFUSED
        assert run("export", str(exported))[0] == cli.EXIT_OK
        assert json.loads(exported.read_text()) == {"a": [0, 30, 60, 30, 0], "here": [0, 30, 60, 30, 0]}
        code, text = run("list")
        assert code == cli.EXIT_OK and text.split()[0] == "a"
