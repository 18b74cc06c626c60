# SPDX-License-Identifier: MIT
"""armctl.link and `armctl send`/`shell`: reply framing, timeouts, missing/busy ports.

The framing tests use a tiny fake board on a pseudo-terminal (a thread that
answers lines); the end-to-end tests talk to the MicroPython simulator.
"""

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
import tty

import pytest

from armctl import cli, link
from armctl.link import BoardAtRepl, Link, LinkError
from armctl.sim import Simulator

from conftest import BOARDS, EXIT_S, OnATerminal


class FakeBoard:
    """A pty whose far end answers requests from a dict: line -> list of reply lines."""

    def __init__(self, answers):
        self.answers = answers
        self.received = []
        self.syncs = 0
        self.max_waiting = 0        # most request lines received and not yet answered at once
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.port = os.ttyname(self.slave)
        # close() wakes the thread through this pipe and waits for it: a thread still
        # running after its fds are closed would read the next test's pty, whose
        # openpty() may reuse the same fd numbers, and answer (and count) its lines.
        self._wake, self._stop = os.pipe()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        pending = b""
        while True:
            ready, _, _ = select.select([self.master, self._wake], [], [])
            if self._wake in ready:
                return
            try:
                chunk = os.read(self.master, 1024)
            except OSError:
                return
            if not chunk:
                return
            pending += chunk
            self.max_waiting = max(self.max_waiting, pending.count(b"\n"))
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                text = line.decode().strip()
                if text.startswith("sync ") or not text.replace("\x02", ""):
                    # The link's resynchronisation (Ctrl-B LF, then sync), answered as the firmware does.
                    self.syncs += 1
                    replies = (["ok " + text[5:]] if text.startswith("sync ")
                               else ["error BAD_COMMAND control character 0x02 in line"] if text else ["ok"])
                else:
                    self.received.append(text)
                    replies = self.answers.get(text, ["error BAD_INPUT unknown command"])
                for out in replies:
                    if out.startswith("@"):     # "@0.5 text": the board takes 0.5 s for this line
                        delay, _, out = out[1:].partition(" ")
                        if select.select([self._wake], [], [], float(delay))[0]:
                            return
                    os.write(self.master, (out + "\r\n").encode())

    def close(self):
        os.write(self._stop, b"x")
        self._thread.join(30)
        assert not self._thread.is_alive(), "the fake board's thread did not stop"
        for fd in (self.slave, self.master, self._wake, self._stop):
            os.close(fd)


@pytest.fixture
def fake():
    board = FakeBoard({
        "help": ["# commands: help ik", "ok"],
        "ik 150 0 200 90": ["# elbow up", "# second info", "ok SINGULAR q=-0.5,1.25,3 err_mm=0.001 elbow=up"],
        "ik 900 0 0 90": ["error TOO_FAR target is 900.0 mm away"],
        "silent": [],
        "half": ["# working"],
        "late": ["@2 ok late"],
        "slow": ["@0.02 ok slow"],
        "progress": ["@0.4 # moving", "@0.4 # moving", "@0.4 # moving", "@0.4 ok arrived"],
    })
    yield board
    board.close()


def test_reply_fields_status_and_info(fake):
    with Link(fake.port, timeout=10) as lk:
        r = lk.request("ik 150 0 200 90")
    assert r.ok is True
    assert r.status == "SINGULAR"
    assert r.fields == {"q": [-0.5, 1.25, 3], "err_mm": 0.001, "elbow": "up"}
    assert r.info_lines == ["elbow up", "second info"]
    assert r.raw == ["# elbow up", "# second info", "ok SINGULAR q=-0.5,1.25,3 err_mm=0.001 elbow=up"]


def test_error_reply_is_an_answer_not_a_link_failure(fake):
    with Link(fake.port, timeout=10) as lk:
        r = lk.request("ik 900 0 0 90")
        assert (r.ok, r.status, r.message) == (False, "TOO_FAR", "target is 900.0 mm away")
        assert lk.request("help").ok  # the link is still usable afterwards


def test_plain_ok_and_error_status_names():
    assert link.parse(["ok"]).status == "OK"
    assert link.parse(["error bad number 'x'"]).status == "ERROR"
    assert link.parse(["error bad number 'x'"]).message == "bad number 'x'"
    assert not link.is_final("okay")
    assert not link.is_final("# ok")


def test_timeout_raises_link_error(fake):
    with Link(fake.port, timeout=0.3) as lk:
        with pytest.raises(LinkError, match="no answer"):
            lk.request("silent")


def test_cut_off_reply_is_not_resent(fake):
    with Link(fake.port, timeout=1.0) as lk:
        with pytest.raises(LinkError, match="not resent"):
            lk.request("half")
    assert fake.received.count("half") == 1


def test_missing_port_is_link_error(tmp_path):
    with pytest.raises(LinkError, match="does not exist"):
        Link(str(tmp_path / "ttyNOPE"))


def test_busy_port_is_link_error(fake):
    with Link(fake.port, timeout=1):
        with pytest.raises(LinkError, match="busy"):
            Link(fake.port)


def test_multiline_request_is_refused(fake):
    with Link(fake.port) as lk, pytest.raises(ValueError):
        lk.request("help\nik 1 2 3 4")


def _armctl(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "armctl.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=30)


def test_send_exit_codes(fake, tmp_path):
    ok = _armctl("send", "--port", fake.port, "--timeout", "10", "help")
    assert ok.returncode == cli.EXIT_OK, ok.stderr
    assert ok.stdout.splitlines() == ["> help", "# commands: help ik", "ok"]

    refused = _armctl("send", "--port", fake.port, "--timeout", "10", "help", "ik 900 0 0 90")
    assert refused.returncode == cli.EXIT_REFUSED
    assert refused.stdout.splitlines()[-1] == "error TOO_FAR target is 900.0 mm away"

    missing = _armctl("send", "--port", str(tmp_path / "nope"), "help")
    assert missing.returncode == cli.EXIT_LINK
    assert "does not exist" in missing.stderr


def test_send_reads_stdin(fake):
    out = _armctl("send", "--port", fake.port, "--timeout", "10", "-",
                  stdin="help\n\n# a comment line\nik 150 0 200 90\n")
    assert out.returncode == cli.EXIT_OK, out.stderr
    assert [line for line in out.stdout.splitlines() if line.startswith(">")] == [
        "> help", "> ik 150 0 200 90"]


def test_shell_runs_piped_lines_until_eof(fake):
    out = _armctl("shell", "--port", fake.port, "--timeout", "10", stdin="help\nik 900 0 0 90\n")
    assert out.returncode == cli.EXIT_OK, out.stderr
    assert "error TOO_FAR target is 900.0 mm away" in out.stdout
    assert fake.received == ["help", "ik 900 0 0 90"]


def test_shell_on_a_terminal_saves_history_and_ctrl_d_exits(fake, tmp_path):
    history = tmp_path / "history"
    env = dict(os.environ, ARMCTL_HISTORY=str(history))
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "armctl.cli", "shell", "--port", fake.port, "--timeout", "10"],
                            stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    try:
        for keys, wait_for in ((b"", b"arm> "), (b"help\r", b"arm> "), (b"\x04", None)):
            os.write(master, keys)
            while wait_for is not None and seen.count(wait_for) < 1 + (keys != b""):
                assert select.select([master], [], [], 30)[0], "no prompt: %r" % seen
                seen += os.read(master, 1024)
        assert proc.wait(timeout=EXIT_S) == cli.EXIT_OK
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert b"# commands: help ik" in seen
    assert "help" in history.read_text().split()


def test_help_texts_name_the_exit_codes():
    for name in ("send", "shell"):
        out = _armctl(name, "--help")
        assert out.returncode == 0
        assert "Exit status" in out.stdout


def test_closed_link_reopens_on_next_request(fake):
    with Link(fake.port, timeout=10) as lk:
        lk.close()
        assert lk.request("help").ok


def test_reconnect_waits_for_a_port_that_comes_back(fake, tmp_path):
    # A board that resets re-enumerates: its port path vanishes for a moment.
    alias = tmp_path / "ttyACM0"
    alias.symlink_to(fake.port)
    with Link(str(alias), timeout=10, reconnect_s=5) as lk:
        lk.close()
        alias.unlink()
        timer = threading.Timer(0.5, alias.symlink_to, (fake.port,))
        timer.start()
        try:
            assert lk.request("help").ok
        finally:
            timer.join()


# -- against the MicroPython simulator -------------------------------------------


@pytest.fixture(scope="module")
def sim(micropython):
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as s:
        yield s


def test_link_to_the_simulator(sim):
    with Link(sim.port, timeout=5) as lk:
        helped = lk.request("help")
        assert helped.ok and any(line.startswith("servo CH US") for line in helped.info_lines)
        # docs/KINEMATICS.md worked example: tip (157.3, 0, 342.4) mm, tool horizontal. Of
        # its two solutions only q2 -50.024, q3 105.019, q4 35.004 deg keeps the
        # wrist inside +-135 deg (the other needs q4 = 140.024).
        solved = lk.request("ik 157.3 0 342.4 90 elbow=down")
        assert solved.ok and solved.status == "OK"
        assert solved.values[1:4] == pytest.approx([-50.024, 105.019, 35.004], abs=0.05)
        assert solved.fields["err_mm"] < 0.01
        assert solved.fields["elbow"] == "up"
        assert any("no valid solution" in line for line in solved.info_lines)
        far = lk.request("ik 900 0 0 90")
        assert (far.ok, far.status) == (False, "TOO_FAR")


def test_send_to_the_simulator_exit_codes(sim):
    ok = _armctl("send", "--port", sim.port, "home", "where")
    assert ok.returncode == cli.EXIT_OK, ok.stderr
    lines = ok.stdout.splitlines()
    assert lines[0] == "> home" and lines[2] == "> where"
    assert lines[3].startswith("ok OK 0.000 0.000 90.000 0.000 0.000 ")   # boards/sim_arm5.json home pose
    refused = _armctl("send", "--port", sim.port, "-", stdin="where\nmove 900 0 0 90\n")
    assert refused.returncode == cli.EXIT_REFUSED
    assert refused.stdout.splitlines()[-1].startswith("error TOO_FAR")


def test_a_late_reply_is_never_taken_for_the_next_requests(fake):
    with Link(fake.port, timeout=0.3) as lk:
        with pytest.raises(LinkError, match="no answer"):
            lk.request("late")
        # "ok late" arrives during the resync before the next request, and is discarded.
        # It comes 2 s after the request, far past the 0.3 s timeout even if this
        # process is held up; the board answers the sync only after it: a silence
        # allowance of seconds, not 0.3 s, keeps the resync from racing a loaded machine.
        lk.timeout = 5.0
        reply = lk.request("help")
    assert reply.raw == ["# commands: help ik", "ok"]


def test_silence_decides_not_total_time(fake):
    # 1.6 s in all, never more than 0.4 s without a line: progress keeps the link alive
    # (a silence timeout of 1.4 s: 1 s to spare for a loaded machine, still under the total).
    with Link(fake.port, timeout=1.4) as lk:
        reply = lk.request("progress")
    assert reply.final == "ok arrived" and reply.info_lines == ["moving"] * 3


def test_every_open_resynchronises_before_the_first_request(fake):
    with Link(fake.port, timeout=10) as lk:
        lk.request("help")
        lk.request("help")
    assert fake.syncs == 2          # the leading LF and the sync line of one resync, no more


@pytest.fixture
def realtime_sim(micropython, tmp_path):
    with Simulator(BOARDS / "sim_arm5.json", pty=True, flash_dir=tmp_path / "flash", realtime=True) as s:
        yield s


def _start_slow_move(port):
    """From home (elbow 90 deg) to all zeros at 30 deg/s: 3 s of motion, then the port is closed."""
    import serial
    with serial.Serial(port, 115200, timeout=5) as raw:
        raw.write(b"speed 30\n")
        line = raw.readline()
        if line.startswith(b"# armfw "):         # the boot banner
            line = raw.readline()
        assert line.startswith(b"ok 30.000")
        raw.write(b"joints 0 0 0 0 0\n")
        time.sleep(0.2)


def test_board_still_moving_when_the_host_connects(realtime_sim):
    _start_slow_move(realtime_sim.port)
    out = _armctl("send", "--port", realtime_sim.port, "where")
    assert out.returncode == cli.EXIT_OK, out.stderr
    lines = out.stdout.splitlines()
    # Its own reply: `where` (grip=), not the move's (steps=), at the pose the move reached.
    assert lines[0] == "> where" and len(lines) == 2
    assert "grip=" in lines[1] and "steps=" not in lines[1]
    assert lines[1].startswith("ok SINGULAR 0.000 0.000 0.000 0.000 0.000 ")


def test_long_motion_is_not_a_dead_link(realtime_sim):
    # 3 s of motion against a 2 s silence timeout: the move's own length is allowed for.
    out = _armctl("send", "--port", realtime_sim.port, "--timeout", "2", "speed 30", "joints 0 0 0 0 0")
    assert out.returncode == cli.EXIT_OK, out.stderr
    assert "steps=" in out.stdout.splitlines()[-1]


@contextlib.contextmanager
def at_the_repl(sim, raw=False):
    """The simulator left at its REPL (Ctrl-C), or its raw REPL (then Ctrl-A, what a file tool
    interrupted half way leaves: it says nothing); main.py runs again afterwards."""
    import serial
    with serial.Serial(sim.port, 115200, timeout=0.1) as port:
        got = b""
        deadline = time.monotonic() + 30
        for keys, shown in ((b"\x03", b">>> "), (b"\r\x01", b"raw REPL; CTRL-B to exit\r\n>"))[:1 + raw]:
            port.write(keys)
            while not got.endswith(shown):
                assert time.monotonic() < deadline, got[-300:]
                got += port.read(256)
    try:
        yield
    finally:
        with Link(sim.port, timeout=5) as lk:
            lk.write_raw(b"\x04")                # soft reset: main.py runs again
            assert lk.wait_ready(timeout=30).ok


def test_board_at_the_repl_is_recognised(sim):
    with at_the_repl(sim):
        out = _armctl("send", "--port", sim.port, "where")
        assert out.returncode == cli.EXIT_REPL, out.stdout + out.stderr
        assert "MicroPython REPL" in out.stderr and "Ctrl-D" in out.stderr and "armctl deploy" in out.stderr
        with Link(sim.port, timeout=5) as lk, pytest.raises(BoardAtRepl):
            lk.request("where")


def test_board_left_in_the_raw_repl_is_recognised(sim):
    with at_the_repl(sim, raw=True):
        started = time.monotonic()
        out = _armctl("send", "--port", sim.port, "where")
        assert out.returncode == cli.EXIT_REPL, out.stdout + out.stderr
        assert time.monotonic() - started < 8           # at once, not after the 10 s timeout


def test_plain_micropython_without_firmware_is_recognised(micropython, tmp_path):
    flash = tmp_path / "flash"
    with Simulator(BOARDS / "sim_arm5.json", flash_dir=flash) as s:
        pass
    (flash / "main.py").write_text("")          # a board that runs nothing: its REPL
    with Simulator(flash_dir=flash, pty=True) as bare:
        started = time.monotonic()
        out = _armctl("shell", "--port", bare.port, stdin="where\n")
        assert out.returncode == cli.EXIT_REPL, out.stdout + out.stderr
        assert "armctl deploy" in out.stderr
        assert time.monotonic() - started < 8       # recognised at once, not after the 10 s timeout


def test_shell_completes_commands_and_ctrl_c_stops_the_arm(realtime_sim, tmp_path):
    term = OnATerminal([sys.executable, "-m", "armctl.cli", "shell", "--port", realtime_sim.port],
                       env=dict(os.environ, ARMCTL_HISTORY=str(tmp_path / "history")))
    try:
        term.until(b"arm> ")
        term.type(b"wh\t\r")                          # Tab completes the board's own command words
        assert b"grip=" in term.until(b"arm> ")
        term.type(b"speed 10\r")
        term.until(b"arm> ")
        # The elbow from 90 deg to 0 at 10 deg/s: 9 s of motion, under way once its first
        # progress line is shown: a Ctrl-C sent seconds late still lands mid-motion.
        term.type(b"joints 0 0 0 0 0\r")
        term.until(b"# progress state=run")
        term.proc.send_signal(signal.SIGINT)
        assert b"stopping the arm" in term.until(b"stopped")
        term.until(b"arm> ")
        term.type(b"where\r")
        reply = term.until(b"arm> ")
        assert b"grip=" in reply and b"steps=" not in reply   # its own reply, not the move's
        elbow = float(reply.split(b"\nok ")[1].split()[3])
        assert 0.0 < elbow < 90.0, reply                    # stopped part way
        term.type(b"\x04")
        assert term.finish() == cli.EXIT_OK
    finally:
        term.close()


def test_pipelined_requests_stay_inside_their_window(fake):
    requests = ["slow", "help", "ik 900 0 0 90"] * 10
    with Link(fake.port, timeout=10) as lk:
        replies = lk.pipeline(requests, window=4)
        assert lk.request("help").ok                  # in step afterwards
    assert [r.final for r in replies] == ["ok slow", "ok", "error TOO_FAR target is 900.0 mm away"] * 10
    assert fake.received[:30] == requests
    assert 1 < fake.max_waiting <= 4


def test_pipelined_replies_match_one_at_a_time_on_the_simulator(sim):
    requests = ["ik 150 %d 300 90" % y for y in range(-40, 41, 8)] + ["ik 600 0 0 90", "fk 0 10 20 30 0", "where"]
    with Link(sim.port, timeout=5) as lk:
        one_by_one = [lk.request(r).raw for r in requests]
        pipelined = [r.raw for r in lk.pipeline(requests, window=8)]
    assert pipelined == one_by_one


def test_send_window_pipelines_and_keeps_motions_in_step(sim):
    lines = "ik 150 0 300 90\nfk 0 0 0 0 0\nhome\nwhere\nik 600 0 0 90\n"
    one = _armctl("send", "--port", sim.port, "-", stdin=lines)
    piped = _armctl("send", "--port", sim.port, "--window", "4", "-", stdin=lines)
    assert piped.returncode == one.returncode == cli.EXIT_REFUSED, piped.stderr
    assert piped.stdout == one.stdout


def test_shell_shows_progress_lines_as_they_arrive(fake, tmp_path):
    term = OnATerminal([sys.executable, "-m", "armctl.cli", "shell", "--port", fake.port],
                       env=dict(os.environ, ARMCTL_HISTORY=str(tmp_path / "history")))
    try:
        term.until(b"arm> ")
        term.type(b"progress\r")                 # "# moving" every 0.4 s, then "ok arrived"
        term.until(b"# moving")
        first = time.monotonic()
        term.until(b"ok arrived")
        assert time.monotonic() - first > 0.6     # the first line was shown long before the reply ended
        term.until(b"arm> ")
        term.type(b"\x04")
        assert term.finish() == cli.EXIT_OK
    finally:
        term.close()
