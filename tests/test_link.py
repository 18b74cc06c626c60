# SPDX-License-Identifier: MIT
"""armctl.link and `armctl send`/`shell`: reply framing, timeouts, missing/busy ports.

The framing tests use a tiny fake board on a pseudo-terminal (a thread that
answers lines); the end-to-end tests talk to the MicroPython simulator.
"""

import os
import select
import subprocess
import sys
import threading
import tty

import pytest

from armctl import cli, link
from armctl.link import Link, LinkError
from armctl.sim import Simulator

from conftest import BOARDS


class FakeBoard:
    """A pty whose far end answers requests from a dict: line -> list of reply lines."""

    def __init__(self, answers):
        self.answers = answers
        self.received = []
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.port = os.ttyname(self.slave)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        pending = b""
        while True:
            try:
                chunk = os.read(self.master, 1024)
            except OSError:
                return
            if not chunk:
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                text = line.decode().strip()
                self.received.append(text)
                for out in self.answers.get(text, ["error BAD_INPUT unknown command"]):
                    os.write(self.master, (out + "\r\n").encode())

    def close(self):
        os.close(self.slave)
        os.close(self.master)


@pytest.fixture
def fake():
    board = FakeBoard({
        "help": ["# commands: help ik", "ok"],
        "ik 150 0 200 90": ["# elbow up", "# second info", "ok SINGULAR q=-0.5,1.25,3 err_mm=0.001 elbow=up"],
        "ik 900 0 0 90": ["error TOO_FAR target is 900.0 mm away"],
        "silent": [],
        "half": ["# working"],
    })
    yield board
    board.close()


def test_reply_fields_status_and_info(fake):
    with Link(fake.port, timeout=2) as lk:
        r = lk.request("ik 150 0 200 90")
    assert r.ok is True
    assert r.status == "SINGULAR"
    assert r.fields == {"q": [-0.5, 1.25, 3], "err_mm": 0.001, "elbow": "up"}
    assert r.info_lines == ["elbow up", "second info"]
    assert r.raw == ["# elbow up", "# second info", "ok SINGULAR q=-0.5,1.25,3 err_mm=0.001 elbow=up"]


def test_error_reply_is_an_answer_not_a_link_failure(fake):
    with Link(fake.port, timeout=2) as lk:
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
    with Link(fake.port, timeout=0.3) as lk:
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
    ok = _armctl("send", "--port", fake.port, "--timeout", "2", "help")
    assert ok.returncode == cli.EXIT_OK, ok.stderr
    assert ok.stdout.splitlines() == ["> help", "# commands: help ik", "ok"]

    refused = _armctl("send", "--port", fake.port, "--timeout", "2", "help", "ik 900 0 0 90")
    assert refused.returncode == cli.EXIT_REFUSED
    assert refused.stdout.splitlines()[-1] == "error TOO_FAR target is 900.0 mm away"

    missing = _armctl("send", "--port", str(tmp_path / "nope"), "help")
    assert missing.returncode == cli.EXIT_LINK
    assert "does not exist" in missing.stderr


def test_send_reads_stdin(fake):
    out = _armctl("send", "--port", fake.port, "--timeout", "2", "-",
                  stdin="help\n\n# a comment line\nik 150 0 200 90\n")
    assert out.returncode == cli.EXIT_OK, out.stderr
    assert [line for line in out.stdout.splitlines() if line.startswith(">")] == [
        "> help", "> ik 150 0 200 90"]


def test_shell_runs_piped_lines_until_eof(fake):
    out = _armctl("shell", "--port", fake.port, "--timeout", "2", stdin="help\nik 900 0 0 90\n")
    assert out.returncode == cli.EXIT_OK, out.stderr
    assert "error TOO_FAR target is 900.0 mm away" in out.stdout
    assert fake.received == ["help", "ik 900 0 0 90"]


def test_shell_on_a_terminal_saves_history_and_ctrl_d_exits(fake, tmp_path):
    history = tmp_path / "history"
    env = dict(os.environ, ARMCTL_HISTORY=str(history))
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "armctl.cli", "shell", "--port", fake.port, "--timeout", "2"],
                            stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    try:
        for keys, wait_for in ((b"", b"arm> "), (b"help\r", b"arm> "), (b"\x04", None)):
            os.write(master, keys)
            while wait_for is not None and seen.count(wait_for) < 1 + (keys != b""):
                assert select.select([master], [], [], 10)[0], "no prompt: %r" % seen
                seen += os.read(master, 1024)
        assert proc.wait(timeout=10) == cli.EXIT_OK
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
    with Link(fake.port, timeout=2) as lk:
        lk.close()
        assert lk.request("help").ok


def test_reconnect_waits_for_a_port_that_comes_back(fake, tmp_path):
    # A board that resets re-enumerates: its port path vanishes for a moment.
    alias = tmp_path / "ttyACM0"
    alias.symlink_to(fake.port)
    with Link(str(alias), timeout=2, reconnect_s=5) as lk:
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
