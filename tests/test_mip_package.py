"""package.json (mip): it installs exactly the firmware armctl deploy copies, from the files in this repository.

`mpremote mip install --target / github:OWNER/REPO` reads it from the
repository root; its URLs are relative to it. The live test runs mpremote's
own mip against the simulated board, from the local file.
"""

import json
import subprocess
import sys
from importlib.metadata import version

import pytest

from armctl.deploy import firmware_files
from armctl.sim import Simulator
from conftest import BOARDS, ROOT

PACKAGE_JSON = ROOT / "package.json"


def _package():
    return json.loads(PACKAGE_JSON.read_text())


def test_package_json_lists_every_firmware_file_and_nothing_else():
    urls = _package()["urls"]
    targets = [target for target, _ in urls]
    assert len(targets) == len(set(targets)), "a file listed twice"
    assert sorted(targets) == sorted(flash for _, flash in firmware_files())
    for target, url in urls:
        source = ROOT / url
        assert source.is_file(), url
        assert source == ROOT / "firmware" / target


def test_package_json_metadata():
    package = _package()
    assert package["license"] == "MIT"
    assert package["version"] == version("armctl")
    assert package.get("deps", []) == []     # the firmware needs nothing beyond MicroPython itself


def test_mpremote_mip_installs_the_firmware_on_the_simulated_board(micropython):
    with Simulator(BOARDS / "sim_planar.json", pty=True) as sim:
        flash = sim.flash_dir
        (flash / "main.py").unlink()
        (flash / "armfw" / "twolink.py").unlink()
        with open(flash / "armfw" / "kinematics.py", "a") as f:
            f.write("# an older build\n")
        # The simulator's flash is its working directory: "." is what "/" is on a board.
        done = subprocess.run([sys.executable, "-m", "mpremote", "connect", sim.port,
                               "mip", "install", "--target", ".", str(PACKAGE_JSON)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        for src, target in firmware_files():
            assert (flash / target).read_bytes() == src.read_bytes(), target
