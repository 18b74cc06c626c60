# SPDX-License-Identifier: MIT
"""The live console (firmware/PROTOCOL.md, "Real-time characters" and after).

The unmodified firmware on the real MicroPython Unix port, through the
simulator's pseudo-terminal as a person's terminal or a host would use it.
Where a claim is about steps (answered within one step, held within one
step) the real-time bytes are sent in the same write as the line that starts
the motion, so they are waiting before its first step: the reply must then
come after at most one step, on any machine, in virtual time. Claims about
real time use a 4 s motion and margins of seconds.

Expected pulses come from the servo formula of sim_arm5 (1500 us + 424.448 us
per radian, every joint), expected poses from the request's own numbers.
"""

import json
import os
import select
import subprocess
import termios
import time
import tty
from math import radians

import pytest
import serial

from armctl import upy
from armctl.sim import Simulator
from conftest import BOARDS, MP_SCRIPTS

ARM5 = BOARDS / "sim_arm5.json"
US_PER_RAD = 424.448
STEP_MS = 20
# A 100 mm line at 0.5 mm per step (25 mm/s), ramped at 500 mm/s^2 (10 mm/s more or less
# per step): the fewest steps that cover 100 mm with step speeds of at most 10, 20, 25, ...,
# 25, 20, 10 mm/s (each 20 ms) are 202 (0.6 + 0.5 * 198 + 0.6 = 100.2 mm; 201 cover 99.7).
LINE_STEPS = 202
START = "move 150 -50 150 180"
LONG_LINE = "line 150 50 150 180"


def fields(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


def held(port):
    """The status fields once a motion is held: `?` until the state is hold (while its plan
    is still checked the state is check; a `!` that came then holds it before its first step)."""
    seen = {}
    while seen.get("state") != "hold":
        port.write("?")
        seen = fields(port.line())
        assert seen["state"] in ("check", "hold"), seen
    return seen


def joints_of(line):
    """Joint angles (deg) of a pose reply or of a status line's joints= field."""
    f = fields(line)
    if "joints" in f:
        return [float(v) for v in f["joints"].split(",")]
    words = line.split()
    out = []
    for w in words[2:]:
        if "=" in w:
            break
        out.append(float(w.rstrip(":")))
    return out


def expected_us(q_deg):
    return [round(1500 + radians(q) * US_PER_RAD) for q in q_deg]


class Port:
    """Lines from the simulator's pty, as a terminal program reads them."""

    def __init__(self, path):
        self.serial = serial.Serial(path, 115200, timeout=0.05)
        self.pending = b""

    def write(self, data):
        self.serial.write(data.encode() if isinstance(data, str) else data)

    def raw_until(self, marker, timeout=10.0):
        deadline = time.monotonic() + timeout
        while marker not in self.pending:
            assert time.monotonic() < deadline, "no %r in %r" % (marker, self.pending[-300:])
            self.pending += self.serial.read(self.serial.in_waiting or 1)
        head, _, self.pending = self.pending.partition(marker)
        return head + marker

    def line(self, timeout=10.0):
        return self.raw_until(b"\r\n", timeout)[:-2].decode()

    def reply(self, timeout=10.0):
        """Lines up to and including the next final (ok/error) line."""
        lines = []
        while True:
            lines.append(self.line(timeout))
            if lines[-1].split(" ", 1)[0] in ("ok", "error"):
                return lines

    def request(self, text, timeout=10.0):
        self.write(text + "\n")
        return self.reply(timeout)

    def close(self):
        self.serial.close()


def board_file(tmp_path, **changes):
    data = json.loads(ARM5.read_text())
    data["motion"]["line_step_mm"] = 0.5
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path = tmp_path / "board.json"
    path.write_text(json.dumps(data))
    return path


def _started(tmp_path, realtime):
    """(simulator, port) at the starting pose of LONG_LINE, booted."""
    with Simulator(board_file(tmp_path), pty=True, flash_dir=tmp_path / "flash", realtime=realtime) as sim:
        port = Port(sim.port)
        try:
            assert port.line().startswith("# armfw ")
            assert port.request(START)[-1].startswith("ok OK")
            yield sim, port
        finally:
            port.close()


@pytest.fixture
def console(micropython, tmp_path):
    """In virtual time: motions take no real time, the console is still read before every step."""
    yield from _started(tmp_path, False)


@pytest.fixture
def realtime_console(micropython, tmp_path):
    yield from _started(tmp_path, True)


def line_pulses(sim, since):
    """(ch, us) of every pulse after the first `since` records."""
    return [(ch, us) for _, ch, us in sim.pulses()[since:]]


def wait_moving(sim, since, steps=5):
    """Return once the motion has sent pulses for `steps` steps after the first `since`
    records (counted, not slept for: a loaded machine only makes it later)."""
    deadline = time.monotonic() + 30
    while len({t for t, _, _ in sim.pulses()[since:]}) < steps:
        assert time.monotonic() < deadline, "the motion did not start"
        time.sleep(0.02)


def test_status_is_answered_within_one_step_of_a_long_line(console):
    """A `?` sent with a 202-step line is answered before the line has taken a second step."""
    sim, port = console
    before = len(sim.pulses())
    port.write(LONG_LINE + "\n?")
    status = port.line()
    f = fields(status)
    # Read while the plan is checked (nothing sent yet) or as its first step goes out.
    assert status.startswith("# status ") and f["state"] in ("check", "run")
    done = 0
    if f["state"] == "run":
        done, total = map(int, f["steps"].split("/"))
        assert total == LINE_STEPS and done <= 1
    else:
        assert "steps" not in f
    final = port.reply()[-1]
    # The status's joints are the pose of the pulses of the steps done then
    # (each step's pulses carry one time stamp).
    pulses = sim.pulses()
    last = {}
    for _, ch, us in pulses[:before]:
        last[ch] = us
    stamps = sorted({t for t, _, _ in pulses[before:]})
    for t, ch, us in pulses[before:]:
        if t in stamps[:done]:
            last[ch] = us
    assert expected_us(joints_of(status)) == [last[ch] for ch in range(5)]
    assert final.startswith("ok OK") and final.endswith("steps=%d" % LINE_STEPS)
    assert abs(float(fields(final)["y"]) - 50) < 0.001


def test_status_mid_motion_in_real_time(realtime_console, report):
    sim, port = realtime_console
    before = len(sim.pulses())
    port.write(LONG_LINE + "\n")
    wait_moving(sim, before)
    sent = time.monotonic()
    port.write("?")
    status = port.line(timeout=5)
    while status.startswith("# progress "):           # sent before the `?` was
        status = port.line(timeout=5)
    latency = time.monotonic() - sent
    f = fields(status)
    assert status.startswith("# status ")
    done, total = map(int, f["steps"].split("/"))
    # The line lasts at least 4 s: a `?` sent after its first steps is answered while it runs.
    assert f["state"] == "run" and 0 < done < total == LINE_STEPS
    lines = port.reply(timeout=20)
    assert lines[-1].endswith("steps=%d" % LINE_STEPS)
    report("console: `?` mid-line answered after %.1f ms (step %d of %d, step period %d ms)"
           % (latency * 1000, done, LINE_STEPS, STEP_MS))


def test_hold_stops_the_pulses_and_resume_finishes_the_same_path(console, tmp_path):
    sim, port = console
    before = len(sim.pulses())
    port.write(LONG_LINE + "\n!")
    # The `!` holds the line before its first step, or at it where it came after the check.
    steps = held(port)["steps"]
    assert steps in ("0/%d" % LINE_STEPS, "1/%d" % LINE_STEPS)
    sent = len(sim.pulses())
    time.sleep(0.5)
    assert len(sim.pulses()) == sent                 # nothing moves while held
    port.write("?")
    assert fields(port.line())["steps"] == steps
    port.write("~")
    final = port.reply()[-1]
    assert final.startswith("ok OK") and final.endswith("steps=%d" % LINE_STEPS)
    with_hold = line_pulses(sim, before)
    # The same line without a hold: the same pulses in the same order.
    assert port.request(START)[-1].startswith("ok OK")
    again = len(sim.pulses())
    assert port.request(LONG_LINE)[-1].endswith("steps=%d" % LINE_STEPS)
    plain = line_pulses(sim, again)
    if steps.startswith("0/"):
        assert plain == with_hold       # held before the first step: the line as if never held
        return
    # Held after the first step: the hold brakes and `~` speeds up again between the
    # checked steps, so the pulses between differ; each channel still stays within the
    # checked line's pulses and ends on its last.
    for ch in {c for c, _ in plain}:
        checked = [us for c, us in plain if c == ch]
        held_run = [us for c, us in with_hold if c == ch]
        assert held_run[-1] == checked[-1]
        assert min(checked) <= min(held_run) and max(held_run) <= max(checked), ch


def test_abort_replies_error_with_the_pose_reached_and_drops_queued_lines(console):
    sim, port = console
    before = len(sim.pulses())
    start = joints_of(port.request("where")[-1])
    port.write(LONG_LINE + "\nwhere\nhome\n\x18")
    stopped = port.line()
    # Ctrl-X reaches the line while its plan is checked (nothing sent) or at its first step.
    assert stopped.startswith("error ABORTED ")
    assert port.line().startswith("error DROPPED ") and port.line().startswith("error DROPPED ")
    if "while checking: nothing moved" in stopped:
        assert len(sim.pulses()) == before
        q = start
    else:
        assert "at step 1 of %d" % LINE_STEPS in stopped
        q = [float(w) for w in stopped.split(": ", 1)[1].split() if "=" not in w]
    last = {}
    for _, ch, us in sim.pulses():
        last[ch] = us
    assert expected_us(q) == [last[ch] for ch in range(5)]
    where = port.request("where")[-1]
    assert joints_of(where) == q
    # Motion stays locked until unlock: nothing sent after an abort runs by accident.
    assert port.request("move 150 0 150 180")[-1].startswith("error ALARM")
    assert fields(port.request("?")[0])["state"] == "alarm"
    assert port.request("unlock")[-1] == "ok"
    assert port.request("move 150 0 150 180")[-1].startswith("ok OK")


def test_real_time_bytes_inside_a_pipelined_batch_act_where_they_stand(console):
    # One write, so the firmware takes it in one read: each real-time byte acts when
    # the console reaches it, after the lines before it are answered, before the ones after.
    sim, port = console
    ik = "ik 150 30 300 90"
    alone = port.request(ik)[-1]
    assert alone.startswith("ok OK")
    port.write((ik + "\n") * 3 + "?" + (ik + "\n") * 2 + "!~" + "fk 1 2\x18where\n")
    lines = [port.line() for _ in range(7)]
    assert lines[:3] == [alone] * 3
    status = fields(lines[3])
    assert lines[3].startswith("# status ") and status["state"] == "idle"
    assert lines[4:6] == [alone] * 2
    # Idle, hold and resume change nothing; Ctrl-X drops the half-typed line: `where` is answered alone.
    assert lines[6].startswith("ok OK") and "clear_mm=" in lines[6]
    assert joints_of(lines[6]) == [float(v) for v in status["joints"].split(",")]
    assert port.request("info")[-1].startswith("ok name=")      # nothing left over


def test_lines_sent_during_a_move_are_answered_in_order_after_it(console):
    sim, port = console
    port.write(LONG_LINE + "\n" + "".join("fk 0 0 %d 0 0\n" % k for k in range(10)))
    # The queue holds 8: the 9th and 10th are refused at once, by name.
    assert port.line().startswith("error QUEUE_FULL ") and port.line().startswith("error QUEUE_FULL ")
    assert port.reply()[-1].endswith("steps=%d" % LINE_STEPS)
    for k in range(8):
        assert port.line().startswith("ok ")
    assert port.request("info")[-1].startswith("ok name=")      # nothing left over


def test_progress_lines_during_a_long_move(console):
    sim, port = console
    lines = port.request(LONG_LINE)
    progress = [fields(line) for line in lines if line.startswith("# progress ")]
    # 4 s of motion: a line at least every 0.5 s (25 steps) of it.
    steps = [0] + [int(f["steps"].split("/")[0]) for f in progress] + [LINE_STEPS]
    assert len(progress) >= 8 and max(b - a for a, b in zip(steps, steps[1:])) <= 25
    assert all(f["state"] == "run" for f in progress)
    assert port.request("progress off")[-1] == "ok"
    assert port.request(START)[-1].startswith("ok OK")
    assert not [line for line in port.request(LONG_LINE) if line.startswith("#")]


def test_boot_sends_no_pulse_until_home(micropython, tmp_path):
    with Simulator(board_file(tmp_path, boot=None), pty=True, flash_dir=tmp_path / "flash") as sim:
        port = Port(sim.port)
        try:
            banner = port.line()
            assert banner.startswith("# armfw ") and "send home" in banner
            assert port.request("where")[-1] == "ok RELAXED grip=unknown"
            assert fields(port.request("?")[0])["state"] == "relaxed"
            assert port.request("move 150 0 150 180")[-1].startswith("error HOME_FIRST ")
            assert port.request("line 150 0 150 180")[-1].startswith("error HOME_FIRST ")
            # joints says where to go, so it may start the arm, but not into the table.
            assert port.request("joints 0 120 0 0 0")[-1].startswith("error COLLISION ")
            assert sim.pulses() == []
            assert port.request("home")[-1].startswith("ok OK 0.000 0.000 90.000 0.000 0.000")
            home_deg = [0, 0, 90, 0, 0]
            assert [(ch, us) for _, ch, us in sim.pulses()] == list(enumerate(expected_us(home_deg)))
            # relax: every output off, pose unknown again.
            assert port.request("relax")[-1] == "ok RELAXED"
            assert sim.pulses()[-1][1:] == (-1, 0)
            assert port.request("jog 0 0 -10")[-1].startswith("error HOME_FIRST ")
            # One servo: that pulse only, at once; the others stay off.
            count = len(sim.pulses())
            assert port.request("servo 1 1600")[-1] == "ok 1 1600"
            assert [(ch, us) for _, ch, us in sim.pulses()[count:]] == [(1, 1600)]
            assert fields(port.request("?")[0])["joints"].split(",")[1] != "?"
        finally:
            port.close()


def test_jog_moves_relative_to_the_pose(console):
    sim, port = console
    start = fields(port.request("where")[-1])
    reply = port.request("jog 0 0 -10")[-1]
    f = fields(reply)
    assert reply.startswith("ok OK")
    assert abs(float(f["z"]) - (float(start["z"]) - 10)) < 0.001
    assert abs(float(f["x"]) - float(start["x"])) < 0.001
    q = joints_of(reply)
    after = port.request("jog j1 15")[-1]
    assert abs(joints_of(after)[0] - (q[0] + 15)) < 0.001 and joints_of(after)[1:] == q[1:]
    assert port.request("jog j1 500")[-1].startswith("error JOINT_LIMIT ")
    assert port.request("jog j7 5")[-1].startswith("error BAD_INPUT ")


def test_a_person_edits_the_line_and_echo_shows_it(console):
    sim, port = console
    # Backspace (DEL and BS) and Ctrl-U edit before the line is answered.
    assert port.request("fk 0 0 90 0 9\x7f0")[-1] == port.request("fk 0 0 90 0 90")[-1]
    assert port.request("fk 0 0 90 0 8\x080")[-1] == port.request("fk 0 0 90 0 80")[-1]
    assert port.request("fly away\x15info")[-1].startswith("ok name=")
    # echo on: characters come back as typed, a prompt after each reply.
    port.write("echo on\n")
    assert port.raw_until(b"> ") == b"ok\r\n> "
    port.write("speex\x7fd\n")
    assert port.raw_until(b"> ") == b"speex\b \bd\r\nok 90.000\r\n> "
    port.write("echo off\n")
    assert port.raw_until(b"ok\r\n") == b"echo off\r\nok\r\n"
    assert port.request("speed")[-1] == "ok 90.000"


def test_back_from_the_repl_with_the_arm_where_it_was(realtime_console):
    sim, port = realtime_console
    before = len(sim.pulses())
    port.write(LONG_LINE + "\n")
    wait_moving(sim, before)
    port.write(b"\x03")
    hint = port.raw_until(b">>> ")
    assert b"armfw.serve()" in hint
    sent = len(sim.pulses())
    port.write("armfw.serve()\r")
    stopped = port.line()
    while not stopped.startswith("error"):                 # the REPL echoes the call
        stopped = port.line()
    assert stopped.startswith("error ABORTED interrupted (Ctrl-C) at step ")
    assert port.request("unlock")[-1] == "ok"
    where = port.request("where")[-1]
    assert len(sim.pulses()) == sent                       # no snap: nothing sent on the way back
    last = {}
    for _, ch, us in sim.pulses():
        last[ch] = us
    assert expected_us(joints_of(where)) == [last[ch] for ch in range(5)]
    # The protocol runs on from there: the rest of the line, to its end.
    final = port.request(LONG_LINE, timeout=20)[-1]
    assert final.startswith("ok OK") and abs(float(fields(final)["y"]) - 50) < 0.001


def _run_console_wait(micropython, terminal):
    """tests/mp/console_wait.py's two lines, its input on a pipe or on a raw pty;
    with the pty, also the terminal's VMIN after it ended."""
    traffic = b"?!~\x18fk 1\x7f0 0\nwhere\x15info\n?"
    script = [micropython, str(MP_SCRIPTS / "console_wait.py")]
    if not terminal:
        proc = subprocess.Popen(script, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=upy.env())
        try:
            lines = [proc.stdout.readline().decode()]
            proc.stdin.write(traffic)
            proc.stdin.flush()
            lines.append(proc.stdout.readline().decode())
        finally:
            proc.stdin.close()
            proc.wait(30)
        return lines, None
    master, slave = os.openpty()
    tty.setraw(slave)
    proc = subprocess.Popen(script, stdin=slave, stdout=slave, stderr=slave, env=upy.env())
    pending = b""
    lines = []
    try:
        deadline = time.monotonic() + 30
        while len(lines) < 2:
            assert time.monotonic() < deadline, pending
            if select.select([master], [], [], 0.1)[0]:
                pending += os.read(master, 4096)
            if b"\n" in pending:
                line, _, pending = pending.partition(b"\n")
                lines.append(line.decode() + "\n")
                if len(lines) == 1:
                    os.write(master, traffic)
        proc.wait(30)
        vmin = termios.tcgetattr(slave)[6][termios.VMIN]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(slave)
    return lines, vmin


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "pty"])
def test_the_console_wait_allocates_nothing(micropython, terminal):
    # Heap locked around every wait: an allocation is a MemoryError there.
    lines, vmin = _run_console_wait(micropython, terminal)
    # A pipe gives a byte per read; the raw pty every waiting byte, its settings given back at the end.
    assert lines[0] == "idle waits: ok reads_all_waiting=%s\n" % terminal
    assert lines[1] == "traffic waits: ok realtime=[63, 33, 126, 24, 63] lines=['fk 0 0', 'info']\n"
    if terminal:
        assert vmin == 1            # tty.setraw's, as before the console took the terminal


def test_a_long_check_hears_the_console_status_and_ctrl_x_stop_it_before_anything_moves():
    """The check walk of a long line polls the console: a `?` arriving during it is answered
    with state=check, a Ctrl-X stops it; the move is refused with ABORTED and locked as
    after an abort, and no pulse was sent (the simulated driver's record)."""
    from armfw import board, console as con, protocol, session
    from armfw.motion import ArmController
    from armfw.simservo import SimServo
    b = board.load(str(BOARDS / "sim_arm5.json"))
    driver = SimServo(b.driver)
    arm = ArmController(b, driver)
    arm.park()
    out = []

    class Console:
        closed = False
        refused = 0
        polls = 0

        def wait(self, timeout_ms, until_line=False):
            # Bytes that arrive while the check walks: `?` on the 2nd poll, Ctrl-X on the 5th.
            self.polls += 1
            if self.polls == 2:
                s.realtime(con.STATUS)
            if self.polls == 5:
                s.realtime(con.ABORT)

        def clear_typing(self):
            pass

        def next_line(self):
            return None

    terminal = Console()
    p = protocol.Protocol(arm, out.append)
    s = session.Session(p, terminal, driver)
    sent = driver.count
    arm.set_speed_deg_s(5.0)
    p.handle(b"line 200 -100 100 180")
    assert terminal.polls == 5
    assert out[0].startswith("# status state=check joints=")
    assert out[-1].startswith("error ABORTED line step ") and "while checking: nothing moved" in out[-1]
    assert not p.machine.moving and p.machine.alarm and driver.count == sent
    p.handle(b"line 200 -100 100 180")
    assert out[-1].startswith("error ALARM")
