# SPDX-License-Identifier: MIT
"""The G-code face (firmware/PROTOCOL.md) on the real MicroPython Unix port: the subset,
Marlin line numbers and checksums, the alarm after a refused motion, check mode, and real
senders (Printrun's printcore, an ok-per-line sender like grbl's simple_stream.py,
`armctl run`) over a pseudo-terminal."""

import argparse
import io
import time
from functools import reduce

import pytest
import serial

from armctl import cli
from armctl.commands import run as run_command
from armctl.sim import Simulator
from armfw.gcodeblend import joins
from conftest import BOARDS
from test_protocol import arm5_fk, numbers

ARM5 = BOARDS / "sim_arm5.json"


def cs(text):
    """Marlin's checksum, written out: XOR of the bytes before the '*'."""
    return reduce(lambda a, b: a ^ b, text.encode(), 0)


def framed(n, command):
    head = "N%d %s" % (n, command)
    return "%s*%d" % (head, cs(head))


def m114(sim):
    lines = sim.request("M114")
    assert lines[-1] == "ok" and len(lines) == 2, lines
    return {w.split(":")[0]: float(w.split(":")[1]) for w in lines[0].split()}


def booted(sim):
    """The simulator once its boot banner is read (the first line the board sends)."""
    assert sim.readline().startswith("# armfw ")
    return sim


@pytest.fixture
def arm(micropython):
    with Simulator(ARM5) as sim:
        yield booted(sim)


def test_moves_positions_and_modes(arm):
    assert arm.request("M105") == ["ok"]
    info = arm.request("M115")
    assert info[0].startswith("FIRMWARE_NAME:armfw ") and "MACHINE_TYPE:sim_arm5" in info[0]
    reply = arm.request("G0 X150 Y100 Z150 A180")[-1]
    assert reply.startswith("ok OK")
    # The joint angles the G0 reached put the tool where it was sent (FK by hand).
    assert arm5_fk(numbers(reply)[:5]) == pytest.approx((150, 100, 150), abs=0.01)   # angles at 0.001 deg
    assert m114(arm) == pytest.approx({"X": 150, "Y": 100, "Z": 150, "A": 180, "B": 0}, abs=1e-3)
    assert arm.request("G91") == ["ok"]
    # A G1 is answered ok once checked and queued (tests/test_gcode_blend.py); M114 waits for it.
    assert arm.request("G1 X-10 Z5") == ["ok"]
    assert m114(arm) == pytest.approx({"X": 140, "Y": 100, "Z": 155, "A": 180, "B": 0}, abs=1e-3)
    assert arm.request("G90") == ["ok"]
    assert arm.request("G1X150Z150") == ["ok"]                      # words without spaces
    assert m114(arm)["X"] == pytest.approx(150, abs=1e-3)
    # B: the wrist roll, a line alone (answered when it ends)
    assert arm.request("G1 B30")[-1].startswith("ok OK")
    assert m114(arm)["B"] == pytest.approx(30, abs=1e-3) and m114(arm)["X"] == pytest.approx(150, abs=1e-3)
    assert arm.request("G91") == ["ok"] and arm.request("G0 B-45")[-1].startswith("ok OK")
    assert m114(arm)["B"] == pytest.approx(-15, abs=1e-3)
    assert arm.request("G90") == ["ok"]
    # G4 is `wait`: a motion that holds still (its reply the pose, 0 steps).
    assert arm.request("G4 P50")[-1].endswith("steps=0") and arm.request("M400") == ["ok"]
    assert arm.request("G28")[-1].startswith("ok OK 0.000 0.000 90.000 0.000 0.000")


@pytest.mark.parametrize("feed, steps", [(60, 500), (600, 50), (100000, 14)])
def test_feed_sets_the_tool_speed_of_straight_lines(arm, feed, steps):
    # 10 mm at F mm/min with 20 ms steps: at most F/60 * 0.02 mm per step and the board's
    # line_step_mm (2 mm, reached above F6000), from rest to rest within 500 mm/s^2 (0.2 mm
    # more or less a step). F60: 0.02 mm every step, 500; F600: 0.2 mm, 50. F100000: 0.2,
    # 0.4, ... 1.4, 1.4, ... 0.2 (14 steps) is the fewest that reach 10 mm (11.2; 13 give 9.8).
    # Check mode answers a G1 with its steps; run, its pulses span no more of them.
    assert arm.request("G0 X150 Y0 Z300 A90")[-1].startswith("ok OK")
    assert arm.request("$C") == ["ok check on"]
    reply = arm.request("G1 X160 F%d" % feed)[-1]
    assert reply.startswith("ok OK") and reply.endswith("steps=%d" % steps), reply
    assert arm.request("$C") == ["ok check off"]
    since = arm.pulses()[-1][0] + 1
    assert arm.request("G1 X160 F%d" % feed) == ["ok"] and arm.request("M400")[-1] == "ok"
    times = [t for t, _, _ in arm.pulses() if t >= since]
    assert 0 < (times[-1] - times[0]) // 20 + 1 <= steps


def test_refused_motion_moves_nothing_and_locks_the_rest(arm):
    assert arm.request("G0 X150 Y0 Z300 A90")[-1].startswith("ok OK")
    pulses = len(arm.pulses())
    assert arm.request("G1 X600")[-1].startswith("error TOO_FAR")
    # A sender that keeps streaming: every motion line answered, none moves.
    for line in ("G1 X160", "G0 X100 Y0 Z300 A90", "G28", "M3"):
        assert arm.request(line)[-1].startswith("error ALARM motion locked: G1 refused (TOO_FAR)")
    assert m114(arm)["X"] == pytest.approx(150, abs=1e-3)          # reports still answer
    assert len(arm.pulses()) == pulses
    assert arm.request("M999") == ["ok"]
    assert arm.request("G1 X160") == ["ok"]


@pytest.mark.parametrize("line, word", [
    ("G92 X0", "error BAD_INPUT G92 refused"),
    ("G1 X1 X2", "error BAD_INPUT X given twice"),
    ("G1 Q5", "error BAD_INPUT G0/G1 take X Y Z A B F, not Q"),
    ("G1 Xabc", "error BAD_INPUT not a G-code word: X"),         # letters are words: X, A, B, C
    ("G1 X1.2.3", "error BAD_INPUT not a number: 1.2.3"),
    ("G1 X1 F0", "error BAD_INPUT F must be > 0"),
    ("G18", "error BAD_COMMAND only the XY plane (G17)"),
    ("G19", "error BAD_COMMAND only the XY plane (G17)"),
    ("M104 S200", "error BAD_COMMAND unsupported G-code M104"),
    ("$J=G91X1", "error BAD_COMMAND unsupported $ command"),
])
def test_refusals_name_the_reason(arm, line, word):
    assert arm.request("where")[-1].startswith("ok")         # booted: its first pulses are logged
    pulses = len(arm.pulses())
    assert arm.request(line)[-1].startswith(word)
    assert len(arm.pulses()) == pulses


def test_marlin_line_numbers_and_checksums(arm):
    assert arm.request(framed(-1, "M110 N-1")) == ["ok"]
    assert arm.request(framed(0, "G0 X150 Y0 Z300 A90"))[-1].startswith("ok OK")
    pulses = len(arm.pulses())
    bad = framed(1, "G1 X160")[:-1] + "0"
    if bad == framed(1, "G1 X160"):
        bad = bad[:-1] + "1"
    assert arm.request(bad) == ["Error:checksum mismatch, Last Line: 0", "Resend: 1", "ok"]
    assert arm.request(framed(2, "G1 X160")) == ["Error:Line Number is not Last Line Number+1, Last Line: 0",
                                                 "Resend: 1", "ok"]
    assert arm.request("N1 G1 X160") == ["Error:No Checksum with line number, Last Line: 0", "Resend: 1", "ok"]
    assert arm.request("G1 X160*12") == ["Error:No Line Number with checksum, Last Line: 0", "Resend: 1", "ok"]
    assert len(arm.pulses()) == pulses                               # none of them ran
    assert arm.request(framed(1, "G1 X160")) == ["ok"]
    assert m114(arm)["X"] == pytest.approx(160, abs=1e-3)
    # A refused framed line: Marlin's Error: line, then ok (the sender advances), nothing moves.
    pulses = len(arm.pulses())
    reply = arm.request(framed(2, "G1 X600"))
    assert len(reply) == 2 and reply[1] == "ok"
    assert reply[0].startswith("Error:TOO_FAR line step ") and reply[0].endswith(": unreachable")
    assert arm.request(framed(3, "G1 X170"))[0].startswith("Error:ALARM")
    assert len(arm.pulses()) == pulses


def test_check_mode_validates_without_moving(arm):
    assert arm.request("G0 X150 Y0 Z300 A90")[-1].startswith("ok OK")
    pulses = len(arm.pulses())
    assert arm.request("$C") == ["ok check on"]
    assert arm.request("G91")
    assert arm.request("G1 X20")[-1].startswith("ok OK")
    assert m114(arm)["X"] == pytest.approx(170, abs=1e-3)           # the pose the program would reach
    assert arm.request("G1 X500")[-1].startswith("error TOO_FAR")
    assert arm.request("$C") == ["ok check off"]
    assert len(arm.pulses()) == pulses
    assert m114(arm)["X"] == pytest.approx(150, abs=1e-3)           # the real pose again
    assert arm.request("G1 X160") == ["ok"]                         # G90 and no alarm: as before the check
    assert m114(arm)["X"] == pytest.approx(160, abs=1e-3)


def test_check_mode_entered_before_any_g_code_leaves_its_defaults(arm):
    """`check on` before the first G-code line: the G-code face made in check mode (G91,
    F60, a refusal's alarm) ends with it, as it began: G90, the board's line speed, no
    alarm. A program checked leaves no trace."""
    home = arm.request("home")[-1]
    assert home.startswith("ok OK")
    assert arm.request("check on") == ["ok check on"]
    assert arm.request("G91")
    reply = arm.request("G1 Z-10 F60")[-1]                        # 10 mm at 1 mm/s: 0.02 mm a step
    assert reply.startswith("ok OK") and reply.endswith("steps=500"), reply
    assert arm.request("G1 X900")[-1].startswith("error TOO_FAR")
    assert arm.request("check off") == ["ok check off"]
    assert arm.request("where")[-1].split()[1:7] == home.split()[1:7]    # the real pose
    assert arm.request("check on") == ["ok check on"]
    reply = arm.request("G1 Z305")[-1]                            # G90: 10 mm down, at the board's speed
    assert reply.startswith("ok OK") and not reply.endswith("steps=500"), reply
    assert m114(arm)["Z"] == pytest.approx(305, abs=1e-3)
    assert arm.request("check off") == ["ok check off"]
    assert arm.request("G0 X150 Y0 Z300 A90")[-1].startswith("ok OK")     # not locked


PROGRAM = """\
; a square at z 300, pitch 90: Printrun strips this comment
G21
G90
G0 X150 Y-20 Z300 A90
G1 X190 F1200
G1 Y20
G1 X150
G1 Y-20
M400
M114
G28
"""


def _pty_arm(tmp_path):
    return Simulator(ARM5, pty=True, link=str(tmp_path / "arm"))


def test_printcore_streams_a_file_with_line_numbers_and_checksums(micropython, tmp_path):
    from printrun import gcoder
    from printrun.printcore import printcore

    with _pty_arm(tmp_path) as sim:
        core = printcore()
        sent = []
        received = []
        core.sendcb = lambda command, gline: sent.append(command)
        core.recvcb = lambda line: received.append(line.strip())
        # One line's checksum is spoiled once on its way out: the firmware must ask for it again.
        real_send = core._send
        spoiled = []

        def send(command, lineno=0, calcchecksum=False):
            if calcchecksum and lineno == 3 and not spoiled:
                spoiled.append(lineno)
                head = "N%d %s" % (lineno, command)
                core.sentlines[lineno] = "%s*%d" % (head, cs(head))      # what a resend sends
                core.printer.write(("%s*%d\n" % (head, (cs(head) + 1) % 256)).encode())
                return
            real_send(command, lineno, calcchecksum)
        core._send = send
        core.connect(str(sim.port), 115200)
        try:
            deadline = time.monotonic() + 30
            while not core.online:
                assert time.monotonic() < deadline, received
                time.sleep(0.05)
            assert core.startprint(gcoder.LightGCode(PROGRAM.splitlines()))
            job = core.print_thread
            while core.printing:
                assert time.monotonic() < deadline + 30 and job.is_alive(), received
                time.sleep(0.05)
            # printing goes False before the job's thread has started printcore's sender
            # again; disconnecting in between joins a thread not yet started.
            job.join(30)
            assert not job.is_alive()
        finally:
            core.disconnect()
    assert spoiled == [3]
    assert any(r.startswith("Resend: 3") for r in received), received
    # Online after M105's ok; the job starts by resetting the line number.
    job = sent[sent.index(framed(-1, "M110 N-1")):]
    assert all(s == "M105" for s in sent[:sent.index(job[0])])
    assert all("*" in s for s in job)
    # The square's corners each reached once, in order (a resent line runs once).
    corners = [r for r in received if r.startswith("X:")]
    assert len(corners) == 1
    assert corners[0].startswith("X:150.000 Y:-20.000 Z:300.000 A:90.000")
    moves = [r for r in received if r.startswith("ok OK")]
    assert len(moves) == 2                       # G0, G28 (a G1 is answered ok once queued)
    assert len([r for r in received if r == "ok"]) >= 4 + 3 + 1      # four G1, G21 G90 M400, M114
    # Printrun counts only lines starting "ok"; no error reached it.
    assert not [r for r in received if r.startswith("error") or r.startswith("Error:") and "checksum" not in r]


def test_an_ok_per_line_sender(micropython, tmp_path):
    """What grbl's simple_stream.py does: send a line, read until its ok/error, next line."""
    with _pty_arm(tmp_path) as sim:
        with serial.Serial(str(sim.port), 115200, timeout=10) as port:
            answers = []
            for line in PROGRAM.splitlines():
                line = line.split(";")[0].strip()
                if not line:
                    continue
                port.write((line + "\n").encode())
                while True:
                    reply = port.readline().decode().strip()
                    assert reply, "no answer to %s" % line
                    if reply.startswith("ok") or reply.startswith("error"):
                        answers.append((line, reply))
                        break
    assert all(reply.startswith("ok") for _, reply in answers), answers
    assert answers[-1][1].startswith("ok OK 0.000 0.000 90.000")


def _run(sim, path, **options):
    args = argparse.Namespace(port=str(sim.port), baud=115200, timeout=10.0, file=str(path),
                              check_only=False, no_check=False)
    for k, v in options.items():
        setattr(args, k, v)
    out, err = io.StringIO(), io.StringIO()
    return run_command.run(args, out=out, err=err), out.getvalue(), err.getvalue()


def test_armctl_run_checks_first_then_streams(micropython, tmp_path):
    good = tmp_path / "square.gcode"
    good.write_text(PROGRAM)
    bad = tmp_path / "bad.gcode"
    bad.write_text(PROGRAM.replace("G1 Y20", "G1 Y20\nG1 X900"))
    protocol_file = tmp_path / "moves.txt"
    protocol_file.write_text("# protocol lines work too\nmove 150 0 300 90\nline 170 0 300 90\npose save end\n")
    with _pty_arm(tmp_path) as sim:
        pulses = 0          # motion pulses (t > 0; the boot's park pulses are at t = 0)
        code, out, err = _run(sim, bad)
        assert code == cli.EXIT_REFUSED
        assert "check failed, nothing moved" in err and "bad.gcode:7: G1 X900 -> error TOO_FAR" in err
        assert len([p for p in sim.pulses() if p[0] > 0]) == pulses
        code, out, err = _run(sim, good)
        assert code == cli.EXIT_OK, err
        assert "checked 10 lines: all valid" in out and "ran 10 lines" in out
        assert "[%s] 10/10 lines" % ("#" * run_command.PROGRESS_WIDTH) in err
        assert len([p for p in sim.pulses() if p[0] > 0]) > pulses
        code, out, err = _run(sim, protocol_file)
        assert code == cli.EXIT_OK, err
        assert "end" in (sim.flash_dir / "poses.json").read_text()


def test_armctl_run_stops_at_an_alarm_line():
    """Queued G1 lines are answered `ok` before they move; when they fail later the board
    writes an alarm line, which comes before the next reply: the run stops there and says so."""
    from armctl.link import parse
    answers = {"G1 X150": ["ok"], "G1 X160": ["ok"],
               "M114": ["alarm ABORTED aborted (Ctrl-X) at step 3 of 40: 1 2 3 4 5", "X:150.000 Y:0.000", "ok"]}

    class Board:
        sent = []

        def request(self, line, motion_s=0.0):
            self.sent.append(line)
            return parse(answers[line])

    board = Board()
    lines = [(1, "G1 X150"), (2, "G1 X160"), (4, "M114"), (5, "G1 X170")]
    ok, failure = run_command._stream(board, "f.gcode", lines, None, 120.0, io.StringIO(), False)
    assert not ok and board.sent == ["G1 X150", "G1 X160", "M114"]
    assert failure == "f.gcode:4: M114 -> ok (before it: alarm ABORTED aborted (Ctrl-X) at step 3 of 40: 1 2 3 4 5)"


# -- fuzz: G-code words, numbers, line numbers and checksums ----------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

# M0 waits for `~`, which this sender never sends: tests/test_gcode_arcs.py has it.
CODES = ["G0", "G1", "G00", "G01", "G2", "G3", "G02", "G4", "M1", "G28", "G90", "G91", "G92", "G21", "G17", "G18", "G54", "G94", "M2",
         "M30", "M84", "M3", "M5", "M105",
         "M110", "M114", "M115", "M400", "M999", "M104", "G", "M", "G-1", "G1.5", "$C", "$X", "$H", "$$"]
LETTERS = "XYZABFPSNQEIJRK"
NUMBER = st.one_of(st.integers(-400, 400).map(str), st.floats(-400, 400, allow_nan=False).map(lambda v: "%.2f" % v),
                   st.sampled_from(["", "-", ".", "1.2.3", "1e3", "nan", "inf", "+5", "--1", "9" * 40]))
FINALS = ("ok", "error")
INFO = ("# ", "Error:", "Resend: ", "X:", "FIRMWARE_NAME:", "alarm ")


@st.composite
def gcode_lines(draw):
    words = [draw(st.sampled_from(CODES))]
    for _ in range(draw(st.integers(0, 5))):
        words.append(draw(st.sampled_from(LETTERS)) + draw(NUMBER))
    body = draw(st.sampled_from([" ", "", "  ", "\t"])).join(words)
    if draw(st.booleans()):
        body += draw(st.sampled_from([" ; comment", " (note) ", "(", ";"]))
    frame = draw(st.integers(0, 3))
    if frame == 0:
        return body
    n = draw(st.integers(-2, 60))
    head = "N%d %s" % (n, body)
    check = cs(head)
    if frame == 2:
        check = draw(st.integers(0, 300))
    if frame == 3 and draw(st.booleans()):
        return head
    return "%s*%d" % (head, check)


@pytest.fixture(scope="module")
def fuzz_arm(micropython):
    from test_gcode_blend import LONG_QUIET_MS
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ARMFW_GCODE_QUIET_MS", LONG_QUIET_MS)   # queued G1 lines start as the program starts them
        with Simulator(ARM5) as sim:
            assert booted(sim).request("G0 X150 Y0 Z300 A90")[-1].startswith("ok OK")
            yield sim


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(gcode_lines(), min_size=1, max_size=25))
def test_fuzzed_gcode_gets_one_answer_and_refusals_move_nothing(fuzz_arm, program):
    sim = fuzz_arm
    queued = False          # G1 lines answered ok and not run yet: a line that is not a G1 runs them first
    for line in program:
        before = len(sim.pulses())
        reply = sim.request(line)
        final = reply[-1]
        assert final.split(" ", 1)[0] in FINALS, (line, reply)
        assert all(r.startswith(INFO) for r in reply[:-1]), (line, reply)
        assert "INTERNAL" not in final and "Traceback" not in "".join(reply), (line, reply)
        refused = final.startswith("error") or any(r.startswith(("Error:", "alarm ")) for r in reply)
        joining = joins(line.encode())
        if refused and (joining or not queued):
            assert len(sim.pulses()) == before, (line, reply)
        queued = joining and (queued or not refused and reply == ["ok"] and "G1" in line.upper())
        if any(r.startswith("Resend: ") for r in reply):
            assert final == "ok"
    # Every pulse ever sent lies inside its servo's window.
    assert all(500 <= us <= 2500 for _, ch, us in sim.pulses() if us)


# -- G-code on the live console: real-time characters, M400, the queue --------------

def test_gcode_hold_resume_abort_and_m400_on_the_live_console(micropython, tmp_path, monkeypatch):
    """GRBL's real-time bytes act on a G1 as on any motion; M400 sent during a G1 is answered
    after it; Ctrl-X mid-G1 stops it and locks G-code motion until M999."""
    from test_console import Port, fields, held
    from test_gcode_blend import LONG_QUIET_MS
    monkeypatch.setenv("ARMFW_GCODE_QUIET_MS", LONG_QUIET_MS)  # queued G1 lines wait for M400 or Ctrl-X
    with _pty_arm(tmp_path) as sim:
        port = Port(sim.port)
        try:
            assert port.line().startswith("# armfw ")
            assert port.request("G0 X150 Y-50 Z300 A90")[-1].startswith("ok OK")
            # 100 mm at F300 (5 mm/s, 0.1 mm per 20 ms step): 1000 steps. The G1 is answered
            # once queued; M400 starts it and waits for its end.
            assert port.request("G1 Y50 F300") == ["ok"]
            port.write("M400\n!")
            assert held(port)["steps"] in ("0/1000", "1/1000")
            sent = len(sim.pulses())
            port.write("?")
            assert fields(port.line())["state"] == "hold"           # M400 waits in the queue
            assert len(sim.pulses()) == sent
            port.write("~")
            reply = port.reply(timeout=60)                          # M400, after the motion
            assert reply[-1] == "ok" and all(r.startswith("# ") for r in reply[:-1]), reply
            assert port.request("M114")[0].startswith("X:150.000 Y:50.000")
            # Ctrl-X drops queued G1 lines that have not started, and locks.
            assert port.request("G1 Y-50") == ["ok"]
            port.write("\x18")
            assert port.line().startswith("alarm DROPPED aborted before they ran")
            assert port.request("G1 Y0")[-1].startswith("error ALARM")
            assert port.request("M999")[-1] == "ok"
            # Ctrl-X mid-run stops the queued lines and drops the line that waits for them.
            assert port.request("G1 Y-50") == ["ok"]
            port.write("M400\n\x18")
            # Their `ok` went out: the stop is an alarm line, and M400's answer is its drop.
            reply = port.reply()
            assert reply[-2].startswith("alarm ABORTED ") and reply[-1].startswith(
                "error DROPPED aborted before it ran: M400"), reply
            assert port.request("G1 Y0")[-1].startswith("error ALARM")
            assert port.request("M999")[-1] == "ok"
            assert port.request("G1 Y0") == ["ok"]
            assert port.request("M400")[-1] == "ok"
        finally:
            port.close()


def test_check_mode_switches_nothing(arm):
    """Check mode touches no output: no gripper, no relax, no flash write, no pulse."""
    assert arm.request("G0 X150 Y0 Z300 A90")[-1].startswith("ok OK")
    pulses = len(arm.pulses())
    assert arm.request("check on") == ["ok check on"]
    assert arm.request("M3")[-1] == "ok closed"
    assert arm.request("servo 5 1900")[-1] == "ok 5 1900"                 # the gripper channel
    assert arm.request("relax")[-1].startswith("error BAD_COMMAND relax switches the servos off")
    assert arm.request("pose save checked")[-1].startswith("ok checked")
    assert arm.request("G4 P100")[-1].endswith("steps=0")
    assert arm.request("check off") == ["ok check off"]
    assert len(arm.pulses()) == pulses
    assert arm.request("pose list")[-1] == "ok 0"
    assert arm.request("where")[-1].split()[1] == "OK"                    # still powered, not relaxed


def test_g4_dwells_in_the_board_clock(arm):
    """G4 P500 between two moves: the next move's first pulse comes >= 500 ms after the last one."""
    assert arm.request("G0 X150 Y0 Z300 A90")[-1].startswith("ok OK")
    last = arm.pulses()[-1][0]
    assert arm.request("G4 P500")[-1].endswith("steps=0")
    assert arm.request("G1 X160") == ["ok"] and arm.request("M400") == ["ok"]
    first = next(t for t, _, _ in arm.pulses() if t > last)
    assert first - last >= 500 + 20           # the dwell, then one step period
    assert arm.request("G4 S0.2")[-1].endswith("steps=0")


def test_the_header_and_footer_words_generators_write_are_answered(arm):
    """A plotter's G-code as vpype-gcode and CAM tools write it starts with G17 G21 G90 G94 G54
    and ends with M2 or M30: every word is answered ok and moves nothing; M84 / M18 switch
    the servos off as relax does (the pose is then unknown until home)."""
    assert arm.request("where")[-1].startswith("ok")
    pulses = len(arm.pulses())
    for line in ("G17", "G21", "G90", "G94", "G54", "M2", "M30"):
        assert arm.request(line) == ["ok"], line
    assert len(arm.pulses()) == pulses
    assert arm.request("M84") == ["ok RELAXED"]
    assert arm.request("where") == ["ok RELAXED grip=unknown"]
    assert arm.request("G28")[-1].startswith("ok OK")
    assert arm.request("M18") == ["ok RELAXED"]
    assert arm.request("G28")[-1].startswith("ok OK")
