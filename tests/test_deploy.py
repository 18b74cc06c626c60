# SPDX-License-Identifier: MIT
"""armctl deploy against the MicroPython simulator's pseudo-terminal: files land on its flash, it answers."""

import subprocess
import sys

import pytest

from armctl import FIRMWARE_DIR, cli
from armctl.link import Link
from armctl.sim import Simulator

from conftest import BOARDS


def _armctl(*args):
    return subprocess.run([sys.executable, "-m", "armctl.cli", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def planar_sim(micropython):
    """A simulated board that boots the planar board, with an outdated module and a stale one on its flash."""
    with Simulator(BOARDS / "sim_planar.json", pty=True) as sim:
        with open(sim.flash_dir / "armfw" / "kinematics.py", "a") as f:
            f.write("# an older build\n")
        (sim.flash_dir / "armfw" / "retired.py").write_text("RETIRED = True\n")
        yield sim


def _sources():
    return [FIRMWARE_DIR / "main.py"] + sorted((FIRMWARE_DIR / "armfw").glob("*.py"))


def test_deploy_copies_firmware_and_board_and_the_board_answers(planar_sim):
    sim = planar_sim
    boots = sim.boots
    done = _armctl("deploy", "--port", sim.port, "--board", str(BOARDS / "sim_arm5.json"))
    assert done.returncode == cli.EXIT_OK, done.stdout + done.stderr
    flash = sim.flash_dir
    for src in _sources():
        dest = flash / src.relative_to(FIRMWARE_DIR)
        assert dest.read_bytes() == src.read_bytes(), dest
    assert (flash / "board.json").read_bytes() == (BOARDS / "sim_arm5.json").read_bytes()
    assert not (flash / "armfw" / "retired.py").exists()
    # One progress line per file, numbered, and the count of rewritten ones.
    files = len(_sources()) + 1
    progress = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert len(progress) == files
    assert progress[-1].startswith("[%d/%d] board.json" % (files, files))
    assert "copied 2 files, %d already up to date" % (files - 2) in done.stdout  # kinematics.py, board.json
    assert sim.boots > boots                     # it was soft-reset...
    with Link(sim.port, timeout=5) as link:      # ...and now runs the new board file
        info = link.request("info")
    assert info.ok and info.fields["name"] == "sim_arm5" and info.fields["arm"] == "arm5"


def test_deploy_mpy_runs_compiled_modules(planar_sim):
    sim = planar_sim
    done = _armctl("deploy", "--port", sim.port, "--board", str(BOARDS / "sim_arm5.json"), "--mpy")
    assert done.returncode == cli.EXIT_OK, done.stdout + done.stderr
    package = sim.flash_dir / "armfw"
    modules = sorted(p.stem for p in (FIRMWARE_DIR / "armfw").glob("*.py"))
    assert sorted(p.name for p in package.iterdir()) == sorted(m + ".mpy" for m in modules)
    assert (sim.flash_dir / "main.py").read_bytes() == (FIRMWARE_DIR / "main.py").read_bytes()
    assert all(p.read_bytes()[:1] == b"M" for p in package.iterdir())   # .mpy files start with "M"
    with Link(sim.port, timeout=5) as link:
        # The docs/KINEMATICS.md worked example, solved by the compiled firmware.
        reply = link.request("ik 157.3 0 342.4 90")
    assert reply.ok, reply.final
    assert reply.values[1:4] == pytest.approx([-50.024, 105.019, 35.004], abs=0.05)


def test_deploy_missing_port_is_exit_3(tmp_path):
    done = _armctl("deploy", "--port", str(tmp_path / "ttyACM9"), "--board", str(BOARDS / "sim_arm5.json"))
    assert done.returncode == cli.EXIT_LINK
    assert "does not exist" in done.stderr


def test_deploy_busy_port_is_exit_3(planar_sim):
    with Link(planar_sim.port):
        done = _armctl("deploy", "--port", planar_sim.port, "--board", str(BOARDS / "sim_arm5.json"))
    assert done.returncode == cli.EXIT_LINK
    assert "busy" in done.stderr


def test_deploy_bad_board_file_is_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x"}')
    done = _armctl("deploy", "--port", "/dev/null", "--board", str(bad))
    assert done.returncode == cli.EXIT_USAGE
    assert "mcu" in done.stderr


def test_deploy_of_a_board_the_device_cannot_run_is_exit_1(planar_sim):
    # The Unix port has no I2C bus for a PCA9685: the firmware answers BAD_BOARD.
    done = _armctl("deploy", "--port", planar_sim.port, "--board", str(BOARDS / "pico_pca9685.json"))
    assert done.returncode == cli.EXIT_REFUSED, done.stdout + done.stderr
    assert "BAD_BOARD" in done.stderr
    assert (planar_sim.flash_dir / "board.json").read_bytes() == (BOARDS / "pico_pca9685.json").read_bytes()
