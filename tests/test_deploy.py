# SPDX-License-Identifier: MIT
"""armctl deploy against the MicroPython simulator's pseudo-terminal: files land on its flash, it answers."""

import re
import subprocess
import sys

import pytest

from armctl import FIRMWARE_DIR, cli
from armctl import deploy as deploy_module
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
    done = _armctl("deploy", "--port", sim.port, "--board", str(BOARDS / "sim_arm5.json"), "--source")
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


@pytest.mark.parametrize("form", [[], ["--mpy"]])
def test_deploy_mpy_runs_compiled_modules(planar_sim, form):
    """.mpy is the default (--mpy says it explicitly)."""
    sim = planar_sim
    done = _armctl("deploy", "--port", sim.port, "--board", str(BOARDS / "sim_arm5.json"), *form)
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
    # The Unix port has no I2C bus for a PCA9685: the firmware answers BAD_BOARD. (As source:
    # .mpy for the Pico's CPU would not load on this one.)
    done = _armctl("deploy", "--port", planar_sim.port, "--board", str(BOARDS / "pico_pca9685.json"), "--source")
    assert done.returncode == cli.EXIT_REFUSED, done.stdout + done.stderr
    assert "BAD_BOARD" in done.stderr
    assert (planar_sim.flash_dir / "board.json").read_bytes() == (BOARDS / "pico_pca9685.json").read_bytes()


def test_deploy_reads_the_free_heap_first(planar_sim):
    done = _armctl("deploy", "--port", planar_sim.port, "--board", str(BOARDS / "sim_arm5.json"))
    assert done.returncode == cli.EXIT_OK, done.stdout + done.stderr
    said = re.search(r"^board heap: (\d+) KB free; the firmware compiled to .mpy needs (\d+) KB$", done.stdout, re.M)
    assert said, done.stdout
    assert int(said.group(2)) == deploy_module.HEAP_NEED_KB["mpy"]
    assert int(said.group(1)) >= int(said.group(2))
    assert done.stdout.index("board heap:") < done.stdout.index("[1/")        # before any file is copied


@pytest.mark.parametrize("source", [False, True])
def test_deploy_refuses_a_board_the_firmware_will_not_fit(planar_sim, monkeypatch, capsys, source):
    """The simulator's heap is the Unix port's (megabytes): a need just above what it reports
    free stands for a small board. Nothing is copied; exit 1 with what to do instead."""
    free = deploy_module.free_heap(planar_sim.port)
    route = "source" if source else "mpy"
    monkeypatch.setitem(deploy_module.HEAP_NEED_KB, route, free // 1024 + 1)
    before = {p: p.read_bytes() for p in planar_sim.flash_dir.rglob("*") if p.is_file()}
    code = cli.main(["deploy", "--port", planar_sim.port, "--board", str(BOARDS / "sim_arm5.json")]
                    + (["--source"] if source else []))
    err = capsys.readouterr().err
    assert code == cli.EXIT_REFUSED, err
    how = "as source" if source else "compiled to .mpy"
    assert ("the firmware will not fit: the board has %d KB of heap free and the firmware %s needs %d KB; "
            "nothing was copied." % (free // 1024, how, free // 1024 + 1)) in err
    assert ("without --source" in err) == source and ("frozen in" in err) != source
    assert "or --anyway copies it regardless" in err
    assert {p: p.read_bytes() for p in planar_sim.flash_dir.rglob("*") if p.is_file()} == before


def test_deploy_anyway_copies_what_will_not_fit_and_says_so(planar_sim, monkeypatch):
    """anyway: the same small board (a need just above what it reports free) gets the
    firmware, and the deploy says what the board will answer where its heap runs out."""
    import io
    free = deploy_module.free_heap(planar_sim.port)
    monkeypatch.setitem(deploy_module.HEAP_NEED_KB, "mpy", free // 1024 + 1)
    said = io.StringIO()
    info = deploy_module.deploy(planar_sim.port, BOARDS / "sim_arm5.json", out=said, anyway=True)
    out = said.getvalue()
    assert "deploying anyway (--anyway): a request that does not fit the board's heap will be answered " \
           "error NO_MEMORY" in out
    assert out.index("deploying anyway") < out.index("[1/")       # said before any file is copied
    assert (planar_sim.flash_dir / "board.json").read_bytes() == (BOARDS / "sim_arm5.json").read_bytes()
    assert info.fields["name"] == "sim_arm5"


def test_deploy_passes_anyway_on(monkeypatch):
    from armctl.commands import deploy as deploy_command
    given = {}
    monkeypatch.setattr(deploy_command, "deploy", lambda port, board, **options: given.update(options))
    for flag, anyway in (([], False), (["--anyway"], True)):
        assert cli.main(["deploy", "--port", "/dev/null", "--board", str(BOARDS / "sim_arm5.json")] + flag) \
            == cli.EXIT_OK
        assert given["anyway"] is anyway
