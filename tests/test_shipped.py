"""Shipped boards by name: --board NAME, `armctl boards`, and where shipped files are found."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from armctl import BOARDS_DIR, FIRMWARE_DIR, cli, shipped
from armfw.board import BoardError
from conftest import BOARDS


def _armctl(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "armctl.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_checkout_ships_the_repository_folders():
    assert BOARDS_DIR == BOARDS
    assert (FIRMWARE_DIR / "main.py").is_file() and (FIRMWARE_DIR / "armfw" / "twolink.py").is_file()


def test_board_name_means_the_shipped_file_and_a_path_stays_a_path(tmp_path):
    assert shipped.board_path("sim_arm5") == str(BOARDS / "sim_arm5.json")
    assert shipped.board_path(Path("sim_arm5")) == BOARDS / "sim_arm5.json"
    own = tmp_path / "sim_arm5"            # a file of that name in the way wins: it is a path
    own.write_text("{}")
    assert shipped.board_path(str(own)) == str(own)
    assert shipped.board_path("missing/dir.json") == "missing/dir.json"   # loading names it


def test_unknown_board_name_lists_the_shipped_ones():
    with pytest.raises(BoardError) as e:
        shipped.board_path("sim_arm6")
    for name in ("sim_arm5", "pico_pca9685"):
        assert name in str(e.value)


def test_boards_lists_one_line_per_shipped_file(tmp_path):
    done = _armctl("boards", cwd=tmp_path)
    assert done.returncode == cli.EXIT_OK, done.stderr
    lines = done.stdout.splitlines()
    files = sorted(BOARDS.glob("*.json"))
    assert len(lines) == len(files)
    for line, path in zip(lines, files):
        data = json.loads(path.read_text())
        words = line.split()
        assert words[0] == path.stem == data["name"]
        assert words[1:4] == ["arm=" + data["arm"]["kind"], "driver=" + data["driver"]["kind"],
                              "joints=%d" % len(data["joints"])]


def test_boards_path_and_solve_by_name_from_another_directory(tmp_path):
    done = _armctl("boards", "--path", "pico_pca9685", cwd=tmp_path)
    assert done.returncode == cli.EXIT_OK and done.stdout.strip() == str(BOARDS / "pico_pca9685.json")
    assert _armctl("boards", "--path", "nope", cwd=tmp_path).returncode == cli.EXIT_USAGE
    # The worked example of the 5-joint arm, by the board's name.
    done = _armctl("solve", "--board", "sim_arm5", "157.3", "0", "342.4", "90", cwd=tmp_path)
    assert done.returncode == cli.EXIT_OK, done.stderr
    assert "status: OK" in done.stdout
    done = _armctl("solve", "--board", "sim_arm6", "100", "0", "100", cwd=tmp_path)
    assert done.returncode == cli.EXIT_USAGE and "sim_arm5" in done.stderr
