# SPDX-License-Identifier: MIT
"""Board descriptions: every file loads under CPython and, with the same firmware
code, under the real MicroPython; a bad file is refused with a message that
names the bad field (the full JSON path), identically on both interpreters.

Whether the wiring a board file describes matches the real board (which GPIO
the servo lead is on, that a PCA9685 answers at that address) only hardware
can show; what is checked here is what the MCU datasheets fix: ESP32 flash
and input-only pins, the RP2040's fixed I2C pin functions and its PWM slices.
"""

import copy
import json
import math
import os
import subprocess
import sys

import pytest

from armfw import board, drivers
from armfw.board import BoardError
from conftest import BOARDS, MP_SCRIPTS, ROOT

sys.path.insert(0, str(ROOT / "tests"))
from fake_i2c import FakeMachine  # noqa: E402

BOARD_FILES = sorted(BOARDS.glob("*.json"))
LOADER = MP_SCRIPTS / "load_boards.py"


def raw(name):
    return json.loads((BOARDS / name).read_text())


def run_loader(interpreter, args):
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    out = subprocess.run([interpreter, str(LOADER), *map(str, args)], capture_output=True,
                         text=True, timeout=60, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_the_six_boards_exist():
    assert [p.name for p in BOARD_FILES] == ["esp32_pca9685.json", "esp32_pwm.json", "koch.json", "pico_pca9685.json",
                                             "sim_al5d.json", "sim_arm5.json", "sim_arm5_tool.json", "sim_planar.json",
                                             "so101.json"]


@pytest.mark.parametrize("path", BOARD_FILES, ids=lambda p: p.stem)
def test_board_loads_and_matches_its_json(path):
    data = json.loads(path.read_text())
    b = board.load(str(path))
    assert b.name == data["name"] == path.stem
    assert b.driver["kind"] == data["driver"]["kind"]
    for i, j in enumerate(data["joints"]):
        assert b.servos.channels[i] == j["channel"]
        assert math.isclose(b.solver.lo[i], math.radians(j["min_deg"]))
        assert math.isclose(b.solver.hi[i], math.radians(j["max_deg"]))
        # hand formula from the raw JSON: centre + (offset + sign * angle) * us/rad, rounded
        home = math.radians(j.get("home_deg", 0))
        expected = round(j["center_us"] + (math.radians(j["offset_deg"]) + j["sign"] * home) * j["us_per_rad"])
        assert b.servos.pulse(i, home) == expected
        for deg in (j["min_deg"], j["max_deg"]):
            us = j["center_us"] + (math.radians(j["offset_deg"]) + j["sign"] * math.radians(deg)) * j["us_per_rad"]
            assert j["min_us"] - 0.5 <= us <= j["max_us"] + 0.5


def test_spec_servo_scale_on_the_arm5_boards():
    """docs/KINEMATICS.md: 270-degree servos, pulse = 1500 + rad / 0.002356, so +-135 deg is 500..2500 us."""
    for name in ("sim_arm5.json", "pico_pca9685.json", "esp32_pca9685.json", "esp32_pwm.json"):
        b = board.load(str(BOARDS / name))
        for i in range(5):
            assert b.servos.pulse(i, math.radians(135)) == 2500
            assert b.servos.pulse(i, math.radians(-135)) == 500
            assert b.servos.pulse(i, 0.1) == round(1500 + 0.1 / 0.002356)


def test_every_board_loads_the_same_under_micropython(micropython):
    """The loader script prints one line per board; the same script under CPython
    must print the very same lines (same firmware code, two interpreters)."""
    mp = run_loader(micropython, BOARD_FILES)
    cp = run_loader(sys.executable, BOARD_FILES)
    assert len(mp) == len(BOARD_FILES)
    assert all(line.startswith("OK ") for line in mp), mp
    assert mp == cp
    sim_arm5 = next(line for line in mp if "name=sim_arm5 " in line)
    # elbow home 90 deg: 1500 + (pi/2) * 424.448 = 2166.7 -> 2167
    assert "home_us=1500,1500,2167,1500,1500" in sim_arm5
    assert "gripper=5:1000-1900" in sim_arm5


# (description of the defect, board file, mutation, the field the error must name)
def _set(*path_value):
    *path, value = path_value

    def mutate(d):
        for key in path[:-1]:
            d = d[key]
        if value is _DELETE:
            del d[path[-1]]
        else:
            d[path[-1]] = value
    return mutate


_DELETE = object()


def _rp2040_pwm(d):
    d["mcu"] = "rp2040"
    for i, j in enumerate(d["joints"]):
        j["channel"] = (0, 2, 4, 6, 16)[i]        # GPIO 16 is slice 0 channel A, as GPIO 0
    d["gripper"]["channel"] = 8


def _pico_sda_scl_swapped(d):
    d["driver"]["sda"], d["driver"]["scl"] = 5, 4


def _pico_i2c1_on_i2c0_pins(d):
    d["driver"]["i2c_id"] = 1


BAD = [
    ("missing name", "sim_arm5.json", _set("name", _DELETE), "name"),
    ("missing joint limit", "sim_arm5.json", _set("joints", 1, "min_deg", _DELETE), "joints[1].min_deg"),
    ("channel as text", "sim_arm5.json", _set("joints", 0, "channel", "0"), "joints[0].channel"),
    ("length as text", "sim_planar.json", _set("arm", "l1_mm", "100"), "arm.l1_mm"),
    ("sign 0", "sim_arm5.json", _set("joints", 3, "sign", 0), "joints[3].sign"),
    ("limit beyond the pulse window", "sim_arm5.json", _set("joints", 2, "max_deg", 150),
     "joints[2].max_deg"),
    ("window narrower than the limits", "esp32_pwm.json", _set("joints", 4, "min_us", 600),
     "joints[4].min_deg"),
    ("duplicate channel", "sim_arm5.json", _set("joints", 1, "channel", 0), "joints[1].channel"),
    ("gripper on a joint's channel", "sim_arm5.json", _set("gripper", "channel", 3), "gripper.channel"),
    ("gripper open outside its window", "sim_arm5.json", _set("gripper", "open_us", 2600),
     "gripper.open_us"),
    ("unknown driver kind", "sim_arm5.json", _set("driver", "kind", "servo"), "driver.kind"),
    ("misspelt driver setting", "pico_pca9685.json", _set("driver", "i2c_frq", 400000), "driver.i2c_frq"),
    ("pca9685 without i2c_id", "pico_pca9685.json", _set("driver", "i2c_id", _DELETE), "driver.i2c_id"),
    ("pca9685 without osc_hz", "esp32_pca9685.json", _set("driver", "osc_hz", _DELETE), "driver.osc_hz"),
    ("pca9685 at the All Call address", "pico_pca9685.json", _set("driver", "address", 0x70),
     "driver.address"),
    ("pca9685 address outside 40h..7Fh", "pico_pca9685.json", _set("driver", "address", 0x20),
     "driver.address"),
    ("pca9685 frame rate beyond prescale 3", "pico_pca9685.json", _set("driver", "freq_hz", 2000),
     "driver.freq_hz"),
    ("pca9685 frame rate below prescale 255", "pico_pca9685.json", _set("driver", "freq_hz", 20),
     "driver.freq_hz"),
    ("pca9685 oscillator not in whole kHz", "pico_pca9685.json", _set("driver", "osc_hz", 25000500),
     "driver.osc_hz"),
    ("I2C faster than Fm+", "esp32_pca9685.json", _set("driver", "i2c_freq", 2000000), "driver.i2c_freq"),
    ("pca9685 channel 16", "pico_pca9685.json", _set("joints", 4, "channel", 16), "joints[4].channel"),
    ("pca9685 gripper channel 20", "pico_pca9685.json", _set("gripper", "channel", 20), "gripper.channel"),
    ("rp2040 SDA and SCL swapped", "pico_pca9685.json", _pico_sda_scl_swapped, "driver.sda"),
    ("rp2040 I2C1 on I2C0 pins", "pico_pca9685.json", _pico_i2c1_on_i2c0_pins, "driver.sda"),
    ("esp32 I2C on an input-only pin", "esp32_pca9685.json", _set("driver", "scl", 34), "driver.scl"),
    ("esp32 I2C 2", "esp32_pca9685.json", _set("driver", "i2c_id", 2), "driver.i2c_id"),
    ("sda = scl", "esp32_pca9685.json", _set("driver", "scl", 21), "driver.scl"),
    ("esp32 PWM on an input-only pin", "esp32_pwm.json", _set("joints", 0, "channel", 34), "joints[0].channel"),
    ("esp32 PWM on a flash pin", "esp32_pwm.json", _set("joints", 2, "channel", 7), "joints[2].channel"),
    ("esp32 PWM on the UART0 TX pin", "esp32_pwm.json", _set("gripper", "channel", 1), "gripper.channel"),
    ("rp2040 PWM slice shared", "esp32_pwm.json", _rp2040_pwm, "joints[4].channel"),
    ("pwm on an unknown mcu", "esp32_pwm.json", _set("mcu", "unix"), "mcu"),
    ("pulse longer than the frame", "esp32_pwm.json", _set("driver", "freq_hz", 500), "driver.freq_hz"),
    ("pwm frame rate as a fraction", "esp32_pwm.json", _set("driver", "freq_hz", 50.5), "driver.freq_hz"),
    ("sim realtime as text", "sim_planar.json", _set("driver", "realtime", "yes"), "driver.realtime"),
    ("sim without freq_hz", "sim_planar.json", _set("driver", "freq_hz", _DELETE), "driver.freq_hz"),
    ("unknown motion setting", "sim_planar.json", _set("motion", "speed", 3), "motion.speed"),
    ("unknown servo class", "sim_arm5.json", _set("motion", "servo_class", "fast"), "motion.servo_class"),
    ("joint speeds not one per joint", "sim_arm5.json", _set("motion", "joint_speed_deg_s", [90, 90]),
     "motion.joint_speed_deg_s"),
    ("joint acceleration 0", "sim_planar.json", _set("motion", "joint_accel_deg_s2", [360, 0]),
     "motion.joint_accel_deg_s2"),
    ("tool acceleration as text", "sim_arm5.json", _set("motion", "tool_accel_mm_s2", "500"),
     "motion.tool_accel_mm_s2"),
    ("boot neither relaxed nor home", "sim_planar.json", _set("boot", "park"), "boot"),
    ("boot as a flag", "pico_pca9685.json", _set("boot", True), "boot"),
]


def test_boot_is_relaxed_unless_the_board_opts_in():
    # Real boards start with their servos off; the simulated ones opt in to the home pose.
    for path in (BOARDS / "pico_pca9685.json", BOARDS / "esp32_pwm.json"):
        assert "boot" not in raw(path.name) and board.load(str(path)).boot == board.BOOT_RELAXED
    for name in ("sim_arm5.json", "sim_planar.json"):
        assert board.load(str(BOARDS / name)).boot == board.BOOT_HOME


def write_bad(tmp_path, i, name, mutate):
    data = copy.deepcopy(raw(name))
    mutate(data)
    path = tmp_path / ("bad%02d_%s" % (i, name))
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_board_names_the_field(tmp_path, case):
    what, name, mutate, field = case
    path = write_bad(tmp_path, 0, name, mutate)
    with pytest.raises(BoardError) as e:
        board.load(str(path))
    assert str(e.value).startswith("%s.%s: " % (path, field)), str(e.value)


def test_bad_boards_are_refused_the_same_under_micropython(tmp_path, micropython):
    paths = [write_bad(tmp_path, i, name, mutate) for i, (_, name, mutate, _) in enumerate(BAD)]
    mp = run_loader(micropython, paths)
    assert len(mp) == len(BAD)
    for line, path, (what, _, _, field) in zip(mp, paths, BAD):
        with pytest.raises(BoardError) as e:
            board.load(str(path))
        assert line == "ERR %s %s" % (path, e.value), what
        assert line.startswith("ERR %s %s.%s: " % (path, path, field)), what


def test_not_json_and_not_an_object(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x",')
    with pytest.raises(BoardError, match="not valid JSON"):
        board.load(str(broken))
    with pytest.raises(BoardError, match="must be a JSON object"):
        board.from_dict([1, 2], "list")
    with pytest.raises(BoardError, match=r"joints\[0\]\.min_deg: must be a finite number"):
        d = raw("sim_arm5.json")
        d["joints"][0]["min_deg"] = float("nan")
        board.from_dict(d, "nan")


# --- calibration overlay ------------------------------------------------------

def write_cal(tmp_path, name, joints):
    path = tmp_path / name
    path.write_text(json.dumps({"joints": joints}))
    return path


def test_calibration_overlay_moves_the_pulses(tmp_path, micropython):
    cal = write_cal(tmp_path, "good.json", [{"offset_deg": -85, "center_us": 1490}, {"sign": -1}])
    planar = BOARDS / "sim_planar.json"
    b = board.load(str(planar), calibration=str(cal))
    assert b.source == "%s+%s" % (planar, cal)
    # shoulder at home 90 deg: 1490 + (90 - 85) deg * 318.31 us/rad = 1517.8;
    # elbow at home -90 deg with sign -1: 1500 + (pi/2) * 318.31 = 2000.0
    assert b.servos.pulse(0, math.radians(90)) == 1518
    assert b.servos.pulse(1, math.radians(-90)) == 2000
    arg = "%s@%s" % (planar, cal)
    (mp,) = run_loader(micropython, [arg])
    assert "home_us=1518,2000 " in mp
    assert mp == run_loader(sys.executable, [arg])[0]


@pytest.mark.parametrize("joints, field", [
    # a steeper scale would need 1500 + 2.356 * 450 = 2560 us at 135 deg
    ([{}, {}, {"us_per_rad": 450}, {}, {}], "joints[2].min_deg"),
    ([{}, {"offset_deg": 10}, {}, {}, {}], "joints[1].max_deg"),
    ([{}, {}, {}, {}, {"sign": 2}], "joints[4].sign"),
])
def test_calibration_cannot_push_a_limit_past_its_window(tmp_path, joints, field, micropython):
    cal = write_cal(tmp_path, "cal.json", joints)
    src = "%s+%s" % (BOARDS / "sim_arm5.json", cal)
    with pytest.raises(BoardError) as e:
        board.load(str(BOARDS / "sim_arm5.json"), calibration=str(cal))
    assert str(e.value).startswith("%s.%s: " % (src, field)), str(e.value)
    (mp,) = run_loader(micropython, ["%s@%s" % (BOARDS / "sim_arm5.json", cal)])
    assert mp.endswith(" " + str(e.value))


@pytest.mark.parametrize("content, message", [
    ({"joints": [{}, {}]}, "must list one entry per joint"),
    ({"joints": [{}, {"min_deg": -90}, {}, {}, {}]}, "joints[1].min_deg: not a calibrated field"),
    ({"joints": [{}, 3, {}, {}, {}]}, "joints[1]: must be an object"),
    ({"offsets": []}, "must list one entry per joint"),
])
def test_bad_calibration_file(tmp_path, content, message):
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps(content))
    with pytest.raises(BoardError) as e:
        board.load(str(BOARDS / "sim_arm5.json"), calibration=str(cal))
    assert str(e.value).startswith(str(cal)) and message in str(e.value)


# --- drivers.make builds the driver each board asks for -------------------------

@pytest.fixture
def machine(monkeypatch):
    fake = FakeMachine()
    monkeypatch.setitem(sys.modules, "machine", fake.module())
    return fake


def test_make_pca9685_from_the_pico_board(machine):
    b = board.load(str(BOARDS / "pico_pca9685.json"))
    drv = drivers.make(b)
    assert machine.i2c_args == (0, ("Pin", 4), ("Pin", 5), 400000)
    assert machine.chip.prescale() == 121 and machine.chip.errors == []
    drv.set_us(2, 1500)
    assert machine.chip.high_counts(2) == 307        # 1500 * 25 / 122 = 307.4
    drv.deinit()
    assert machine.chip.active_channels() == 0


def test_no_pca9685_at_the_address_names_what_a_scan_found(monkeypatch):
    fake = FakeMachine(0x41)        # the board file says 0x40: the chip's A0 jumper is bridged
    monkeypatch.setitem(sys.modules, "machine", fake.module())
    with pytest.raises(OSError) as e:
        drivers.make(board.load(str(BOARDS / "pico_pca9685.json")))
    assert str(e.value) == ("no PCA9685 answers at 0x40 on I2C 0 (SDA pin 4, SCL pin 5); an I2C scan found 0x41: "
                            "set driver.address in the board file")
    assert fake.chip.log == []      # nothing was written to the chip that is there


def test_make_pwm_from_the_esp32_board(machine):
    b = board.load(str(BOARDS / "esp32_pwm.json"))
    drv = drivers.make(b)
    assert sorted(machine.pwms) == [12, 13, 14, 25, 26, 27]     # joints and gripper
    assert all(p.freq() == 50 and p.pulse_us() == 0 for p in machine.pwms.values())
    drv.set_us(27, 1520)
    assert machine.pwms[27].ns == 1_520_000
    drv.off(27)
    assert machine.pwms[27].pulse_us() == 0
    drv.deinit()
    assert all(p.deinited for p in machine.pwms.values())


def test_make_sim_needs_no_machine():
    b = board.load(str(BOARDS / "sim_planar.json"))
    drv = drivers.make(b)
    drv.set_us(0, 1500)
    drv.off()
    drv.deinit()
    with pytest.raises(ValueError):
        drv.set_us(0, 1500.0)


def test_tool_offset_from_board_and_calibration(tmp_path):
    boardlib = board
    import json as _json
    data = _json.loads((BOARDS / "sim_arm5.json").read_text())
    assert boardlib.from_dict(_json.loads(_json.dumps(data))).tool_mm == [0.0, 0.0, 0.0]
    data["arm"]["tool_mm"] = [0, 4.5, 20]
    path = tmp_path / "b.json"
    path.write_text(_json.dumps(data))
    assert boardlib.load(str(path)).tool_mm == [0.0, 4.5, 20.0]
    cal = tmp_path / "calibration.json"
    cal.write_text(_json.dumps({"joints": [{} for _ in range(5)], "tool_mm": [1, -2, 30]}))
    assert boardlib.load(str(path), calibration=str(cal)).tool_mm == [1.0, -2.0, 30.0]
    for bad in ([1, 2], [0, float("nan"), 1], "x"):
        data["arm"]["tool_mm"] = bad
        with pytest.raises(boardlib.BoardError, match="tool_mm"):
            boardlib.from_dict(_json.loads(_json.dumps(data)))
    planar = _json.loads((BOARDS / "sim_planar.json").read_text())
    planar["arm"]["tool_mm"] = [0, 0, 1]
    with pytest.raises(boardlib.BoardError, match="only an arm5"):
        boardlib.from_dict(planar)
