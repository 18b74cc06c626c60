# SPDX-License-Identifier: MIT
"""`armctl sim`: the firmware on the MicroPython Unix port, over pipes and over a pty.

The pty must behave like a board's USB port for pyserial (armctl.link) and
for mpremote: Ctrl-C drops to the REPL with the arm as a global, the raw REPL
works, a soft reset restarts the interpreter with the same flash folder.
"""

import os
import select
import signal
import subprocess
import sys
import time

import pytest
import serial

from armctl.link import Link
from armctl.sim import Simulator, SimulatorError
from conftest import BOARDS, EXIT_S, ROOT, stop

ARM5 = BOARDS / "sim_arm5.json"
ARMCTL = [sys.executable, "-m", "armctl.cli"]
MPREMOTE = [sys.executable, "-m", "mpremote"]


# Deadlines for what should come at once: generous, so a loaded machine is no failure
# (they only cost time when something is wrong).
ANSWER_S = 30.0


def read_until(port, marker, timeout=ANSWER_S):
    """Bytes from a pyserial port until marker shows (AssertionError on timeout)."""
    got = b""
    deadline = time.monotonic() + timeout
    while marker not in got:
        assert time.monotonic() < deadline, "no %r in %r" % (marker, got[-300:])
        got += port.read(port.in_waiting or 1)
    return got


def read_line_with(port, word, timeout=ANSWER_S):
    """Bytes from a pyserial port up to the end of the line that holds word."""
    got = b""
    deadline = time.monotonic() + timeout
    while word not in got or b"\r\n" not in got[got.index(word):]:
        assert time.monotonic() < deadline, "no line with %r in %r" % (word, got[-300:])
        got += port.read(port.in_waiting or 1)
    return got


def serving(sim):
    """sim, once main.py answers the protocol: a board that has booted, as a person finds it
    (a Ctrl-C sent sooner interrupts the boot, on a board too: no `controller` then)."""
    with Link(sim.port, timeout=5) as link:
        link.wait_ready(timeout=ANSWER_S)
    return sim


@pytest.fixture
def pty_sim(micropython, tmp_path):
    with Simulator(ARM5, pty=True, flash_dir=tmp_path / "flash", link=str(tmp_path / "arm")) as sim:
        yield serving(sim)


def test_cli_stdio_answers_piped_requests(micropython):
    proc = subprocess.run(ARMCTL + ["sim", "--board", str(ARM5), "--fast"],
                          input="where\nik 157.3 0 342.4 90\nfly\n", capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    banner, *lines = proc.stdout.splitlines()
    assert banner.startswith("# armfw ") and "sim_arm5" in banner   # one banner line
    assert len(lines) == 3                                    # no prompt, no echo
    assert lines[0].startswith("ok OK 0.000 0.000 90.000")
    assert lines[1].startswith("ok OK 0.000 -50.0")
    assert lines[2].startswith("error BAD_COMMAND")


def test_cli_without_a_board_serves_the_default_simulated_arm(micropython, tmp_path):
    # Run outside the checkout: the default is a shipped board's name, not a relative path.
    proc = subprocess.run(ARMCTL + ["sim", "--fast"], input="info\n", capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    banner, info = proc.stdout.splitlines()
    assert "sim_arm5" in banner
    assert info.startswith("ok name=sim_arm5 arm=arm5 ")


def test_cli_usage_errors():
    assert subprocess.run(ARMCTL + ["sim", "--board", "no/such.json"], capture_output=True,
                          timeout=30).returncode == 2


def test_pty_speaks_the_protocol_through_pyserial(pty_sim, tmp_path):
    assert os.path.realpath(tmp_path / "arm") == pty_sim.port
    with Link(str(tmp_path / "arm"), timeout=5) as link:
        reply = link.request("move 150 100 150 180")
        assert reply.ok and reply.status == "OK", reply.final
        # No echo of the request, no prompt; the boot banner may come first, and the move's
        # progress (it lasts 62 steps, 1.24 s with its acceleration: over PROGRESS_AFTER_MS).
        assert reply.raw[-1] == reply.final
        assert all(line.startswith(("# armfw ", "# progress ")) for line in reply.raw[:-1])
        assert abs(reply.fields["z"] - 150) < 0.001
        assert not link.request("ik 600 0 0 90").ok
    moved = pty_sim.pulses()
    assert moved and all(500 <= us <= 2500 for _, _, us in moved)
    assert (pty_sim.flash_dir / "main.py").exists() and (pty_sim.flash_dir / "board.json").exists()


def test_ctrl_c_leaves_the_arm_at_the_repl_and_soft_reset_restarts(pty_sim):
    with serial.Serial(pty_sim.port, 115200, timeout=0.1) as port:
        port.write(b"where\n")
        assert b"ok OK" in read_line_with(port, b"grip=unknown")
        port.write(b"\x03")
        read_until(port, b">>> ")
        port.write(b"print(type(controller).__name__, len(controller.q), controller.solver.kind)\r")
        assert b"ArmController 5 arm5" in read_until(port, b"arm5\r\n>>> ")
        # Python calls on the same arm, mm and radians.
        port.write(b"print(controller.move((150, 100, 150, 3.14159265)), [round(v) for v in controller.tool()])\r")
        assert b"True [150, 100, 150, 3]" in read_until(port, b"]\r\n>>> ")
        boots = pty_sim.boots
        port.write(b"\x04")                              # soft reset at the friendly REPL
        read_until(port, b"soft reboot\r\n")
        port.write(b"speed\n")                          # held until the interpreter takes input
        assert b"ok 90.000" in read_until(port, b"ok 90.000")
        assert pty_sim.boots == boots + 1


def test_mpremote_against_the_pty(pty_sim, tmp_path):
    env = dict(os.environ)

    def mpremote(*args):
        proc = subprocess.run(MPREMOTE + ["connect", pty_sim.port, *args], capture_output=True,
                              text=True, timeout=60, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    # Without a soft reset mpremote interrupts main.py and finds the controller.
    assert mpremote("resume", "exec", "print(type(controller).__name__, len(controller.q))").strip() == "ArmController 5"
    listing = mpremote("fs", "ls")
    for name in ("main.py", "board.json", "armfw/"):
        assert name in listing
    assert mpremote("exec", "print(6 * 7)").strip() == "42"
    note = tmp_path / "note.txt"
    note.write_text("kept in flash\n")
    mpremote("fs", "cp", str(note), ":note.txt")
    assert (pty_sim.flash_dir / "note.txt").read_text() == "kept in flash\n"
    # A real board stays in the REPL after mpremote; a soft reset runs main.py again.
    with Link(pty_sim.port, timeout=5) as link:
        link.write_raw(b"\x04")
        assert link.wait_ready(timeout=ANSWER_S).ok
        assert link.request("where").ok
    assert "kept in flash" in mpremote("exec", "print(open('note.txt').read())")


def test_cli_pty_prints_its_port_and_stops_on_ctrl_c(micropython, tmp_path):
    link = tmp_path / "arm"
    proc = subprocess.Popen(ARMCTL + ["sim", "--board", str(ARM5), "--pty", "--fast", "--link", str(link)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], ANSWER_S)
        assert ready
        first = proc.stdout.readline()
        assert first.startswith("/dev/pts/")
        port = first.split()[0]
        assert os.path.realpath(link) == port
        with Link(str(link), timeout=5) as conn:
            assert conn.request("info").fields["name"] == "sim_arm5"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(EXIT_S) == 0
    finally:
        stop(proc)
    assert not link.exists()


def test_ctrl_c_mid_motion_stops_at_the_last_step_sent(micropython, tmp_path):
    with Simulator(ARM5, pty=True, flash_dir=tmp_path / "flash", realtime=True) as sim:
        with serial.Serial(sim.port, 115200, timeout=0.1) as port:
            port.write(b"where\n")
            read_line_with(port, b"grip=unknown")
            port.write(b"speed 10\n")
            read_line_with(port, b"ok 10.000")
            home_us = [us for _, ch, us in sim.pulses() if ch == 2][-1]
            port.write(b"joints 0 0 0 0 0\n")          # the elbow swings 90 deg: 9 s of real time
            deadline = time.monotonic() + ANSWER_S
            while abs([us for _, ch, us in sim.pulses() if ch == 2][-1] - home_us) < 40:
                assert time.monotonic() < deadline    # until the elbow is over 5 deg on its way
                time.sleep(0.02)
            port.write(b"\x03")
            got = read_until(port, b">>> ")
            assert b"ok" not in got.split(b"\r\n")[0]  # the motion never finished
            port.write(b"print('elbow %.3f' % (controller.q[2] * 57.29577951308232))\r")
            text = read_until(port, b"\r\n>>> ").decode()
        elbow = float(text.split("elbow ")[-1].split()[0])
        sent = [us for _, ch, us in sim.pulses() if ch == 2]
    assert 0.5 < elbow < 85                     # stopped on the way
    # The arm's pose is the last pulse the elbow servo got (one pulse is 0.135 deg).
    assert abs((sent[-1] - 1500) / 424.448 * 57.29577951308232 - elbow) < 0.2


def test_flash_folder_is_kept_like_a_board(micropython, tmp_path):
    flash = tmp_path / "flash"
    with Simulator(ARM5, flash_dir=flash) as sim:
        assert sim.request("info")[-1].startswith("ok name=sim_arm5")
    with Simulator(flash_dir=flash) as sim:                 # no board: what the flash holds
        assert sim.request("info")[-1].startswith("ok name=sim_arm5")
    with pytest.raises(SimulatorError):
        Simulator(flash_dir=tmp_path / "empty")


def test_a_slow_reader_loses_no_reply(pty_sim):
    with serial.Serial(pty_sim.port, 115200, timeout=0.1) as port:
        port.write(b"help\n" * 60)            # 60 x ~1.4 KB, far more than a pty buffers
        time.sleep(0.5)                       # read late: the replies pile up meanwhile
        got = b""
        deadline = time.monotonic() + ANSWER_S
        while got.count(b"\r\nok\r\n") < 60 and time.monotonic() < deadline:
            got += port.read(65536)
    assert got.count(b"\r\nok\r\n") == 60
    assert got.count(b"# help ") == 60


def _mpremote(port, *args, check=True):
    proc = subprocess.run(MPREMOTE + ["connect", port, *args], capture_output=True, text=True, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_the_flash_folder_is_the_whole_filesystem(pty_sim):
    listed = _mpremote(pty_sim.port, "exec", "import os; print(sorted(os.listdir('/')), os.getcwd())").stdout
    assert listed.strip() == "%s /" % sorted(os.listdir(pty_sim.flash_dir))
    outside = _mpremote(pty_sim.port, "exec", "open('/etc/hostname')", check=False)
    assert "OSError" in outside.stdout + outside.stderr


def test_mpremote_file_commands_as_on_a_board(pty_sim):
    _mpremote(pty_sim.port, "cp", "-r", "boards", "firmware", ":")
    assert (pty_sim.flash_dir / "boards" / "sim_arm5.json").read_bytes() == ARM5.read_bytes()
    listing = _mpremote(pty_sim.port, "fs", "ls", ":boards").stdout.splitlines()[1:]
    sizes = {line.split()[1]: int(line.split()[0]) for line in listing}
    assert sizes == {p.name: p.stat().st_size for p in BOARDS.iterdir()}
    assert "0 armfw/" in " ".join(_mpremote(pty_sim.port, "fs", "ls").stdout.split())


def test_mpremote_reset_restarts_main_like_a_board(pty_sim):
    boots = pty_sim.boots
    _mpremote(pty_sim.port, "reset")       # its soft reset into the raw REPL, then machine.reset()
    with Link(pty_sim.port, timeout=5) as link:
        # No Ctrl-D from the host: the reset alone brought main.py back.
        assert link.wait_ready(timeout=ANSWER_S).ok
        assert link.request("where").ok
    assert pty_sim.boots == boots + 2


def test_miniterm_shows_one_prompt_per_enter(pty_sim):
    # miniterm sends Enter as CR LF; a board's REPL takes that as one Enter.
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "serial.tools.miniterm", pty_sim.port, "115200"],
                            stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)

    def screen_until(marker, count=1):
        seen = b""
        deadline = time.monotonic() + ANSWER_S
        while seen.count(marker) < count:
            assert time.monotonic() < deadline, seen
            if select.select([master], [], [], 0.1)[0]:
                seen += os.read(master, 4096)
        return seen

    try:
        screen_until(b"--- Quit")
        os.write(master, b"where\r")
        assert b"ok OK" in screen_until(b"grip=")
        os.write(master, b"\x03")
        screen_until(b">>> ")
        os.write(master, b"print(6 * 7)\r")
        seen = screen_until(b">>> ")
        time.sleep(0.5)
        while select.select([master], [], [], 0.2)[0]:
            seen += os.read(master, 4096)
        assert b"42" in seen and seen.count(b">>> ") == 1, seen
    finally:
        os.write(master, b"\x1d")             # Ctrl-]: miniterm quits
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)


def test_a_second_simulator_on_the_same_link_refuses(pty_sim, tmp_path):
    link = str(tmp_path / "arm")
    second = Simulator(ARM5, pty=True, flash_dir=tmp_path / "flash2", link=link)
    with pytest.raises(SimulatorError, match="pid %d" % os.getpid()):
        second.start()
    second.close()
    assert os.path.realpath(link) == pty_sim.port        # still the first one's, still there
    proc = subprocess.run(ARMCTL + ["sim", "--board", str(ARM5), "--pty", "--link", link],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 3 and "pid %d" % os.getpid() in proc.stderr
    with Link(link, timeout=5) as conn:
        assert conn.request("info").ok


def test_a_ctrl_c_that_ends_the_interpreter_leaves_the_board_at_its_repl(pty_sim):
    # Between two REPL lines the Unix port gives SIGINT its default action: a Ctrl-C that
    # lands there ends the interpreter. A board would stay at its REPL, and so does the
    # simulator (main.py running instead would leave mpremote waiting for the REPL forever).
    with serial.Serial(pty_sim.port, 115200, timeout=0.1) as port:
        port.write(b"\x03")
        read_until(port, b">>> ")
        boots = pty_sim.boots
        os.kill(pty_sim.pid, signal.SIGINT)
        shown = read_until(port, b">>> ")
        assert b"soft reboot" not in shown and b"# armfw" not in shown
        port.write(b"print(6 * 7)\r")
        assert b"42\r\n>>> " in read_until(port, b"42\r\n>>> ")
    assert pty_sim.boots == boots + 1
    assert _mpremote(pty_sim.port, "resume", "exec", "print(7 * 6)").stdout.strip() == "42"


def test_a_ctrl_c_during_the_boot_lands_once_main_serves(micropython, tmp_path):
    # The Unix port raises KeyboardInterrupt from its SIGINT handler wherever it is: in
    # the middle of an import it left the parser's lock held (the next REPL line hung)
    # or was swallowed by the import. The simulator holds a Ctrl-C until the interpreter
    # waits for input: sent at once, it stops main.py once main.py serves.
    with Simulator(ARM5, pty=True, flash_dir=tmp_path / "flash") as sim:
        with serial.Serial(sim.port, 115200, timeout=0.1) as port:
            port.write(b"\x03")
            assert b"armfw.serve()" in read_until(port, b">>> ")      # main.py's Ctrl-C hint
            port.write(b"import os, machine; print(os.getcwd(), 'board.json' in os.listdir(), "
                       b"hasattr(machine, 'reset'), type(controller).__name__)\r")
            assert b"/ True True ArmController\r\n" in read_until(port, b"ArmController\r\n>>> ")
