# SPDX-License-Identifier: MIT
"""The shared pieces stay shared: reply words, usage errors, link options, driver lifetimes.

- every reply word the firmware can send is a status to the host's link, and
  nothing else upper-case is;
- a command's UsageError is exit 2 with the command's name in front, from
  armctl.cli alone, also when the CLI runs as `python -m armctl.cli`;
- every command that opens a link takes the same --port and --baud;
- every driver releases its outputs when a `with` block ends, however it ends.
"""

import subprocess
import sys

import pytest

from armctl import cli, link
from armfw import status
from armfw.pca9685 import PCA9685
from armfw.pwmservo import PWMServos
from armfw.simservo import ALL_CHANNELS, SimServo
from fake_i2c import FakePCA9685, FakePWM


def test_every_reply_word_is_a_status_to_the_link():
    assert status.WORDS == status.NAMES + (status.BAD_COMMAND, status.BAD_BOARD, status.INTERNAL, status.FLASH,
                                           status.HOME_FIRST, status.ALARM, status.ABORTED, status.DROPPED,
                                           status.QUEUE_FULL, status.RELAXED, status.NO_CLOSED_FORM,
                                           status.NO_MEMORY, status.BLOCKED, status.OVERHEAT, status.VOLTAGE,
                                           status.BUS_ERROR)
    for word in status.WORDS:
        reply = link.parse(["error %s something went wrong" % word])
        assert (reply.status, reply.message) == (word, "something went wrong")
    # An upper-case word that is no reply word is message text, not a status.
    reply = link.parse(["error NOT_A_STATUS x"])
    assert reply.status == "ERROR" and reply.message == "NOT_A_STATUS x"


def test_usage_error_is_exit_2_with_the_command_name(capsys):
    assert cli.main(["bench", "--budget", "0"]) == cli.EXIT_USAGE
    assert capsys.readouterr().err == "armctl bench: --budget must be > 0\n"


def test_usage_error_through_python_m():
    proc = subprocess.run([sys.executable, "-m", "armctl.cli", "sim", "--link", "/tmp/x", "--board",
                           __file__], capture_output=True, text=True, timeout=60)
    assert proc.returncode == cli.EXIT_USAGE and proc.stderr == "armctl sim: --link needs --pty\n"


def _options(command):
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {opt: a for a in sub._actions for opt in a.option_strings}


@pytest.mark.parametrize("command", ["send", "shell", "calibrate", "deploy"])
def test_commands_that_open_a_link_share_its_options(command):
    opts = _options(command)
    reference = _options("send")
    for name in ("--port", "-p", "--baud"):
        assert opts[name].help == reference[name].help and opts[name].default == reference[name].default
    assert opts["--port"].required


def test_simulated_driver_releases_every_output_on_exit():
    with pytest.raises(RuntimeError):
        with SimServo({"freq_hz": 50}) as driver:
            driver.set_us(3, 1500)
            raise RuntimeError("the script failed mid-way")
    assert list(driver.records())[-1] == (0, ALL_CHANNELS, 0)


def test_pwm_driver_releases_its_pins_on_exit():
    made = []

    def make(pin, freq_hz):
        made.append(FakePWM(pin, freq=freq_hz, duty_u16=0))
        return made[-1]

    with PWMServos([2, 3], freq_hz=50, make_pwm=make) as driver:
        driver.set_us(2, 1500)
        assert made[0].pulse_us() == 1500
    assert [(p.deinited, p.pulse_us()) for p in made] == [(True, 0.0), (True, 0.0)]


def test_pca9685_goes_limp_and_sleeps_on_exit():
    chip = FakePCA9685()
    with PCA9685(chip, address=0x40, freq_hz=50, osc_hz=25000000) as driver:
        driver.set_us(0, 1500)
        assert not chip.channel(0)[3]
    assert all(chip.channel(ch)[3] for ch in range(16))        # every channel full off
    assert chip.regs[0x00] & 0x10                              # MODE1.SLEEP


def test_the_machine_state_changes_only_through_its_methods():
    """moving, held and alarm are one object (armfw.machinestate) that the protocol, the
    session and the G-code face change by calling it, never by writing its fields."""
    import re
    from armctl import FIRMWARE_DIR
    writes = re.compile(r"\.(moving|held|alarm|alarm_reason)\s*=(?!=)")
    users = ["protocol.py", "session.py", "gcode.py"] + [p.name for p in (FIRMWARE_DIR / "armfw").glob("cmd_*.py")]
    for name in users:
        assert not writes.search((FIRMWARE_DIR / "armfw" / name).read_text()), name
    from armfw.machinestate import MachineState
    m = MachineState()
    m.started()
    m.hold()
    assert (m.moving, m.held, m.word(False, False)) == (True, True, "hold")
    assert m.resume() and not m.resume() and m.word(False, False) == "run"
    m.ended()
    m.lock("a test")
    assert m.word(False, True) == "alarm" and m.word(True, False) == "check"
    m.unlock()
    assert (m.alarm, m.word(False, True), m.word(False, False)) == (False, "relaxed", "idle")


def test_private_constants_are_defined_above_their_first_use():
    """MicroPython puts a `_NAME = const(...)` where it is read only below its definition and
    makes no global of it, so a read above it (in a function defined earlier) is a NameError
    on the board alone: CPython, where armfw.compat.const returns its argument, runs it."""
    import ast
    from armctl import FIRMWARE_DIR
    misplaced, found = [], 0
    for path in sorted((FIRMWARE_DIR / "armfw").glob("*.py")):
        tree = ast.parse(path.read_text())
        defined = {}
        for node in tree.body:
            if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id.startswith("_") and isinstance(node.value, ast.Call)
                    and getattr(node.value.func, "id", None) == "const"):
                defined[node.targets[0].id] = node.lineno
        found += len(defined)
        misplaced += ["%s:%d %s" % (path.name, n.lineno, n.id) for n in ast.walk(tree)
                      if isinstance(n, ast.Name) and n.id in defined and n.lineno < defined[n.id]]
    assert found > 50 and misplaced == []
