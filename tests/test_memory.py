# SPDX-License-Identifier: MIT
"""Out of memory is an answer: the firmware at a heap just below what a mixed run of
requests needs answers every request, some with NO_MEMORY, none with a traceback or
INTERNAL, and moves nothing it did not check (armctl.memory runs it)."""

import json

from conftest import BOARDS, NoConsole

from armctl import memory

FIRMWARE = BOARDS.parent / "firmware"


def test_below_its_heap_the_board_answers_no_memory_and_keeps_its_console(micropython, report):
    board_file = BOARDS / "sim_arm5.json"
    lines = memory.mixed_run(json.loads(board_file.read_text()))
    need = memory.smallest_heap(micropython, str(FIRMWARE), board_file, lines, lo_kb=64, hi_kb=1024, step_kb=8)
    assert need is not None
    seen = {}
    # Just below the need, then lower, down to where the arm cannot even be built:
    # every line still gets its one final reply.
    for heap_kb in range(need - 8, 16, -24):
        code, out = memory.answer(micropython, str(FIRMWARE), board_file, lines, heap_kb)
        assert code == 0, out[-2000:]
        assert "Traceback" not in out and "INTERNAL" not in out, out[-2000:]
        finals = memory.finals(out)
        # Where the arm (or the board loader, or the console) could not be built, its error
        # stands where the banner would.
        at_boot = any(("out of memory " + doing) in out
                      for doing in ("building the arm", "loading the board", "loading the console"))
        assert len(finals) == len(lines) + at_boot, (heap_kb, out[-2000:])
        seen[heap_kb] = len([f for f in finals if f.startswith("error NO_MEMORY")])
    # A heap just below the need may still fit (fragmentation makes the fit not monotonic):
    # NO_MEMORY must be the answer somewhere below it, and is at the least of them.
    assert any(seen.values()) and seen[min(seen)], seen
    report("memory: sim_arm5 mixed run (%d lines) needs %d KB on this interpreter; below it: %s"
           % (len(lines), need, ", ".join("%d KB %d NO_MEMORY" % kv for kv in sorted(seen.items(), reverse=True))))


def _arm5_session():
    """A Protocol and Session on CPython over a simulated arm5 at home, its pulses recorded."""
    from armfw import board, protocol, session
    from armfw.motion import ArmController
    from armfw.simservo import SimServo

    b = board.load(str(BOARDS / "sim_arm5.json"))
    driver = SimServo(b.driver)
    arm = ArmController(b, driver)
    arm.park()
    out = []
    p = protocol.Protocol(arm, out.append)
    return p, session.Session(p, NoConsole(), driver), driver, out


def test_a_request_that_runs_out_of_heap_answers_no_memory_and_moves_nothing():
    p, _, driver, out = _arm5_session()
    sent = driver.count

    def no_heap():
        raise MemoryError("memory allocation failed, allocating 2048 bytes")

    p.controller.begin = no_heap
    p.handle(b"move 200 0 100 180")
    assert out == ["error NO_MEMORY out of memory in move: nothing moved"]
    assert not p.machine.moving and driver.count == sent
    p.handle(b"sync after")
    assert out[-1] == "ok after"


def test_a_refusal_whose_reply_runs_out_of_heap_is_still_answered_once():
    """A board-like .mpy run at 112 KB once ended in a traceback: the heap ran out while
    a refusal's words were being formatted, after the request itself was done."""
    p, _, driver, out = _arm5_session()
    sent = driver.count
    lines = []

    def write(line):
        if line.startswith("error BAD_INPUT"):
            raise MemoryError("memory allocation failed, allocating 88 bytes")
        lines.append(line)

    p.write = write
    p.handle(b"move 1 2")
    assert lines == ["error NO_MEMORY out of memory making the reply"]
    assert not p.machine.moving and driver.count == sent
    p.handle(b"sync after")
    assert lines[-1] == "ok after"


def test_a_move_that_runs_out_of_heap_stops_at_its_last_checked_step_and_locks():
    p, s, driver, out = _arm5_session()
    p.handle(b"move 200 0 100 180")
    assert p.machine.moving
    for _ in range(3):
        s._tick()
    step = p.controller.step
    stepped = [p.controller.executor.steps]

    def no_heap():
        raise MemoryError("memory allocation failed, allocating 64 bytes")

    p.controller.step = no_heap
    sent = driver.count
    try:
        s._tick()
    except MemoryError:
        s.stop_out_of_memory()
    p.controller.step = step
    assert not p.machine.moving and driver.count == sent
    assert out[-1].startswith("error NO_MEMORY out of memory during the move at step %d of " % stepped[0])
    p.handle(b"move 150 0 150 180")
    assert out[-1].startswith("error ALARM a move ran out of memory")
    p.handle(b"unlock")
    p.handle(b"move 150 0 150 180")
    assert p.machine.moving


def test_a_stopped_move_whose_reply_runs_out_of_heap_is_still_answered_once():
    """Seen at 116 KB as .mpy: the step ran out of heap, and so did the words of its stop."""
    p, s, driver, out = _arm5_session()
    p.handle(b"move 200 0 100 180")
    s._tick()
    lines = []

    def write(line):
        if "during the move at step" in line:
            raise MemoryError("memory allocation failed, allocating 160 bytes")
        lines.append(line)

    def no_heap():
        raise MemoryError("memory allocation failed, allocating 64 bytes")

    p.write = write
    p.controller.step = no_heap
    sent = driver.count
    s.tick()
    assert lines == ["error NO_MEMORY out of memory making the reply"]
    assert not p.machine.moving and driver.count == sent
    p.handle(b"move 150 0 150 180")
    assert lines[-1].startswith("error ALARM a move ran out of memory")


def test_with_no_heap_even_for_a_line_end_the_reply_goes_out_whole():
    """Seen as .mpy at 120 KB on the PCA9685 board: after the collection there was no
    room even to add the line end to the no-heap reply. The console sends that reply
    as it is, after what it had gathered."""
    from armfw.console import Console
    p, _, driver, out = _arm5_session()
    sent = []
    # Only the console's output side (its input needs MicroPython's select.poll).
    console = Console.__new__(Console)
    console._out, console._outbox, console._gather, console.echo = sent.append, [], True, False
    console.write_line("# gathered before")
    p.console = console

    def no_heap(line):
        raise MemoryError("memory allocation failed, allocating 48 bytes")

    p.write = no_heap
    p.handle(b"move 1 2")
    assert "".join(sent) == "# gathered before\nerror NO_MEMORY out of memory making the reply\n"
    assert not p.machine.moving


def _queued_g1_lines(p, out):
    """Three G1 lines queued from a console (answered `ok` each, nothing moved yet)."""
    p.console = NoConsole()
    for line in (b"G0 X200 Y0 Z150 A180", b"M400"):
        p.handle(line)
    for x in (190, 180, 170):
        p.handle(b"G1 X%d" % x)
    assert out[-3:] == ["ok", "ok", "ok"] and p.gcode.waiting()


def test_queued_g1_lines_that_run_out_of_heap_at_their_check_write_an_alarm_line():
    """Their `ok` went out when they were queued: the failure is an alarm line, which
    answers no request, so every request still has exactly one final line."""
    p, s, driver, out = _arm5_session()
    _queued_g1_lines(p, out)
    sent = driver.count
    answered = len(out)

    def no_heap():
        raise MemoryError("memory allocation failed, allocating 2048 bytes")

    p.controller.begin = no_heap
    p.gcode.start_lines()
    assert out[answered:] == ["alarm NO_MEMORY out of memory in the queued G1 lines: nothing moved"]
    assert not p.machine.moving and driver.count == sent
    p.handle(b"G1 X160")
    assert out[-1].startswith("error ALARM motion locked: G1 refused (NO_MEMORY)")


def test_queued_g1_lines_that_run_out_of_heap_mid_move_write_an_alarm_line():
    p, s, driver, out = _arm5_session()
    _queued_g1_lines(p, out)
    answered = len(out)
    p.gcode.start_lines()
    assert p.machine.moving and len(out) == answered
    for _ in range(3):
        s._tick()
    stepped = p.controller.executor.steps

    def no_heap():
        raise MemoryError("memory allocation failed, allocating 64 bytes")

    p.controller.step = no_heap
    sent = driver.count
    s.tick()
    assert not p.machine.moving and driver.count == sent
    assert len(out) == answered + 1
    assert out[-1].startswith("alarm NO_MEMORY out of memory during the move at step %d of " % stepped)
    p.handle(b"G1 X160")
    assert out[-1].startswith("error ALARM ")


def test_each_request_loads_only_its_own_family(micropython, tmp_path):
    """The heap probe on the 5-joint arm's mixed run, armfw as .mpy (as `armctl deploy` puts
    it; from source the board compiles the G-code face at boot): each module is loaded once,
    by the first request that needs it, and a command family's module by a request of that
    family. Check mode loads nothing of G-code's."""
    from armfw import commands
    arm5 = BOARDS / "sim_arm5.json"
    lines = memory.mixed_run(json.loads(arm5.read_text()))
    mpy = memory.compile_mpy(memory.FIRMWARE_DIR, tmp_path)
    samples, _ = memory.heap_profile(micropython, mpy, arm5, lines, 1024, every=1)
    rows = memory.loads(samples, lines)
    assert rows[0][0] is None and {"protocol", "planner", "executor", "arm5"} <= set(rows[0][1])
    assert "gcode" not in rows[0][1] and "cmd_motion" not in rows[0][1]
    loaded = [m for _, modules, _, _ in rows for m in modules]
    assert len(loaded) == len(set(loaded)), loaded
    by = dict((m, request) for request, modules, _, _ in rows for m in modules)
    families = {"cmd_" + family: set(entry[0] for entry in commands.COMMANDS if entry[1] == family)
                for family in (commands.MOTION, commands.SETTINGS, commands.POSES)}
    for module, names in families.items():
        assert by[module].split()[0] in names, (module, by[module])
    assert commands.is_gcode(by["gcode"]) and commands.is_gcode(by["gcodeblend"]), by
    assert not any(request.startswith("check") for request, _, _, _ in rows[1:]), rows
    assert all(kept > names >= 0 for _, _, kept, names in rows), rows
