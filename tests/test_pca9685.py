# SPDX-License-Identifier: MIT
"""PCA9685 driver against a register-level model of the chip (tests/fake_i2c.py).

Expected numbers come from the NXP datasheet, worked by hand or with exact
fractions here, never from the driver. Only hardware can show the real
oscillator error, I2C timing and what the servo does; none of that is faked.
"""

import math
import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_i2c import FakePCA9685  # noqa: E402

from armfw import pca9685  # noqa: E402
from armfw.pca9685 import PCA9685, prescale_for  # noqa: E402
from conftest import MP_SCRIPTS, ROOT  # noqa: E402

OSC = 25_000_000


def round_half_up(x):
    return math.floor(Fraction(x) + Fraction(1, 2))


def datasheet_prescale(freq, osc=OSC):
    return round_half_up(Fraction(osc, 4096) / Fraction(freq)) - 1


def test_register_map_is_the_datasheets():
    assert (pca9685._MODE1, pca9685._MODE2, pca9685._LED0_ON_L) == (0x00, 0x01, 0x06)
    assert (pca9685._ALL_LED_ON_L, pca9685._ALL_LED_ON_H, pca9685._ALL_LED_OFF_L,
            pca9685._ALL_LED_OFF_H, pca9685._PRESCALE) == (0xFA, 0xFB, 0xFC, 0xFD, 0xFE)
    # LED15_OFF_H is 45h: four registers per channel after LED0_ON_L
    assert pca9685._LED0_ON_L + 4 * 15 + 3 == 0x45
    assert (pca9685._RESTART, pca9685._EXTCLK, pca9685._AI, pca9685._SLEEP, pca9685._ALLCALL) == (
        0x80, 0x40, 0x20, 0x10, 0x01)
    assert (pca9685._INVRT, pca9685._OCH, pca9685._OUTDRV, pca9685._FULL) == (0x10, 0x08, 0x04, 0x10)


@pytest.mark.parametrize("freq, expected", [
    (50, 121),     # 25e6 / (4096*50) = 122.07 -> 122 - 1
    (60, 101),     # 101.73 -> 102 - 1
    (100, 60),     # 61.04 -> 61 - 1
    (200, 30),     # the datasheet's own example: 30.52 -> 31 - 1 = 1Eh, the power-up value
    (330, 17),     # 18.50 (18.4956) -> 18 - 1
    (1526, 3),     # the datasheet's maximum
    (24, 253),     # 254.31 -> 254 - 1; 24 Hz is "about" the minimum
])
def test_prescale_hand_values(freq, expected):
    assert prescale_for(freq, OSC) == expected


def test_prescale_matches_equation_1_over_the_whole_range():
    for freq in range(24, 1744):
        assert prescale_for(freq, OSC) == datasheet_prescale(freq), freq
    for osc in (24_060_000, 26_075_000, 27_000_000):
        for freq in (50, 60, 333):
            assert prescale_for(freq, osc) == datasheet_prescale(freq, osc)


@pytest.mark.parametrize("freq", [0, -50, 23, 1744, 5000])
def test_prescale_outside_3_255_is_refused(freq):
    with pytest.raises(ValueError):
        prescale_for(freq, OSC)


def test_init_sequence_and_resulting_chip_state():
    chip = FakePCA9685()
    PCA9685(chip, 0x40, 50, OSC)
    assert chip.errors == []
    regs = [(reg, data) for _, reg, data in chip.log]
    # all channels off first, totem-pole outputs, sleep, prescale, wake
    assert regs[0] == (0xFD, b"\x10")
    assert regs[1] == (0x01, b"\x04")
    assert regs[2][0] == 0x00 and regs[2][1][0] & 0x10          # SLEEP set
    assert regs[3] == (0xFE, bytes([121]))
    assert regs[4][0] == 0x00 and not regs[4][1][0] & 0x10      # awake
    assert chip.prescale() == 121
    assert chip.regs[0x00] == 0x20                              # AI only: awake, ALLCALL off
    assert chip.active_channels() == 0


def test_restart_after_sleep_waits_for_the_oscillator(monkeypatch):
    chip = FakePCA9685()
    p = PCA9685(chip, 0x40, 50, OSC)
    p.set_us(3, 1500)
    p.sleep()
    assert chip.regs[0x00] & 0x90 == 0x90       # asleep with channels active: RESTART set
    p.wake()
    assert chip.errors == []
    assert chip.regs[0x00] & 0x90 == 0          # running, RESTART cleared by the write
    assert chip.high_counts(3) == 307

    # The model does catch a driver that skips the 500 us wait.
    monkeypatch.setattr(pca9685, "sleep_us", lambda us: None)
    p.sleep()
    p.wake()
    assert chip.errors == ["RESTART written less than 500 us after wake"]


def expected_counts(us, freq=50, osc=OSC):
    """Datasheet: one count lasts (prescale + 1) / osc; nearest count, half up."""
    return round_half_up(Fraction(us) * osc / (1_000_000 * (datasheet_prescale(freq, osc) + 1)))


@pytest.mark.parametrize("freq, osc", [(50, OSC), (60, OSC), (330, OSC), (50, 26_075_000)])
def test_every_pulse_width_gives_the_nearest_count(freq, osc):
    chip = FakePCA9685(record=False)
    p = PCA9685(chip, 0x40, freq, osc)
    tick_us = Fraction((datasheet_prescale(freq, osc) + 1) * 1_000_000, osc)
    assert p.period_us == int(4096 * tick_us)
    for us in range(0, p.period_us + 1):
        p.set_us(7, us)
        n = expected_counts(us, freq, osc)
        on, off, full_on, full_off = chip.channel(7)
        if n == 0:
            assert full_off
        elif n >= 4096:
            assert full_on and not full_off
        else:
            assert (on, off, full_on, full_off) == (0, n, False, False)
            assert on != off                   # datasheet: never program them equal
            assert abs(chip.high_counts(7) * tick_us - us) <= tick_us / 2
    assert chip.errors == []


def test_hand_computed_servo_pulses_at_50_hz():
    chip = FakePCA9685()
    p = PCA9685(chip, 0x40, 50, OSC)
    # count = us * 25e6 / (1e6 * 122) = us * 25 / 122
    for us, count in ((500, 102), (1000, 205), (1500, 307), (2000, 410), (2500, 512)):
        p.set_us(0, us)
        assert chip.high_counts(0) == count
    chip.log.clear()
    p.set_us(9, 1520)           # 311.48 -> 311 = 0x137: ON 0, OFF 0x137 in one 4-byte write
    assert chip.log == [(0x40, 0x06 + 4 * 9, b"\x00\x00\x37\x01")]


@pytest.mark.parametrize("bad", [1500.0, True, -1, 20000 + 1, None, "1500", float("nan")])
def test_bad_pulse_is_refused_and_nothing_is_written(bad):
    chip = FakePCA9685()
    p = PCA9685(chip, 0x40, 50, OSC)
    chip.log.clear()
    with pytest.raises(ValueError):
        p.set_us(0, bad)
    assert chip.log == []


@pytest.mark.parametrize("bad", [16, -1, 1.0, None])
def test_bad_channel_is_refused(bad):
    p = PCA9685(FakePCA9685(), 0x40, 50, OSC)
    with pytest.raises(ValueError):
        p.set_us(bad, 1500)
    if bad is not None:             # off(None) means every channel
        with pytest.raises(ValueError):
            p.off(bad)


def test_off_one_channel_and_all_channels():
    chip = FakePCA9685()
    p = PCA9685(chip, 0x40, 50, OSC)
    for ch in range(16):
        p.set_us(ch, 1000 + 50 * ch)
    p.off(4)
    assert chip.high_counts(4) == 0
    assert all(chip.high_counts(ch) for ch in range(16) if ch != 4)
    chip.log.clear()
    p.off()
    assert chip.log == [(0x40, 0xFD, b"\x10")]      # one write: ALL_LED_OFF_H full off
    assert chip.active_channels() == 0
    p.set_us(4, 1500)                               # a channel write clears its full-off bit
    assert chip.high_counts(4) == 307


def test_deinit_goes_limp_and_sleeps():
    chip = FakePCA9685()
    p = PCA9685(chip, 0x40, 50, OSC)
    p.set_us(0, 1500)
    p.deinit()
    assert chip.active_channels() == 0
    assert not chip.running()


def test_wrong_address_raises_the_bus_error():
    with pytest.raises(OSError):
        PCA9685(FakePCA9685(address=0x41), 0x40, 50, OSC)


def test_count_arithmetic_stays_in_32_bit_small_ints(monkeypatch):
    """us * num + half must stay below 2**30 (MicroPython small int on RP2040/ESP32),
    else every write would allocate a long int; true for osc in whole kHz."""
    monkeypatch.setattr(pca9685, "sleep_us", lambda us: None)
    for osc in (23_000_000, 25_000_000, 25_001_000, 27_000_000, 49_999_000):
        for freq in range(max(24, -(-osc // (4096 * 256))), osc // (4096 * 4)):
            try:
                p = PCA9685(FakePCA9685(record=False), 0x40, freq, osc)
            except ValueError:
                continue
            assert p.period_us * p._num + p._den // 2 < 2 ** 30, (osc, freq)


def test_no_allocation_per_write_under_micropython(micropython, report):
    """gc.mem_alloc before/after 4000 writes, and again under heap_lock, on the real port.

    A 32-bit board's small-int range is narrower than the Unix port's, which is
    what test_count_arithmetic_stays_in_32_bit_small_ints covers; machine.I2C's
    own C code is not measured here.
    """
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    out = subprocess.run([micropython, str(MP_SCRIPTS / "driver_alloc.py")], capture_output=True,
                         text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    rows = {m[0]: (int(m[1]), int(m[2]), m[3])
            for m in re.findall(r"^(\w+) writes=(\d+) alloc=(-?\d+) locked=(\w+)$", out.stdout, re.M)}
    assert set(rows) == {"pca9685", "pwm_ns", "pwm_u16", "control_logging_bus"}, out.stdout
    for name in ("pca9685", "pwm_ns", "pwm_u16"):
        writes, alloc, locked = rows[name]
        assert writes > 1000 and alloc == 0 and locked == "ok", (name, rows[name])
        report("%s: %d writes under MicroPython allocated %d bytes" % (name, writes, alloc))
    writes, alloc, locked = rows["control_logging_bus"]
    assert alloc > 0 and locked == "MemoryError"
    assert "chip errors" not in out.stdout
    # Same counts as the datasheet, summed over every pulse width 0..period, on the real port.
    counts = re.findall(r"^counts freq=(\d+) prescale=(\d+) sum=(\d+)$", out.stdout, re.M)
    assert [int(f) for f, _, _ in counts] == [50, 60, 330]
    for freq, prescale, total in counts:
        freq, prescale = int(freq), int(prescale)
        assert prescale == datasheet_prescale(freq)
        period = 4096 * (prescale + 1) * 1_000_000 // OSC
        expected = 0
        for us in range(period + 1):
            n = expected_counts(us, freq)
            expected += 4096 if n >= 4096 else n
        assert int(total) == expected, freq
    assert "make sim_arm5 SimServo" in out.stdout.splitlines()


@pytest.mark.parametrize("chip, boot", [
    ("0x41", "error BAD_BOARD OSError: no PCA9685 answers at 0x40 on I2C 0 (SDA pin 4, SCL pin 5); "
             "an I2C scan found 0x41: set driver.address in the board file"),
    ("none", "error BAD_BOARD OSError: no PCA9685 answers at 0x40 on I2C 0 (SDA pin 4, SCL pin 5); "
             "an I2C scan found no device: check the wiring, pull-ups and the chip's 3.3 V"),
    ("0x40", "# armfw "),
])
def test_a_missing_chip_is_answered_bad_board_under_micropython(micropython, chip, boot):
    """main.py on the Unix port with a stand-in `machine` whose I2C bus holds the fake chip at
    another address, or nothing: the boot line and every request say what the scan found."""
    from armctl import BOARDS_DIR, FIRMWARE_DIR, memory
    lines = ["info", "home", "G0 X200"]
    _, out = memory.answer(micropython, FIRMWARE_DIR, BOARDS_DIR / "pico_pca9685.json", lines, 512,
                           extra_path=memory.FAKE_MACHINE_PATH, extra_env={"ARMCTL_FAKE_I2C": chip})
    banner, replies = memory.replies(out)
    assert banner.startswith(boot), banner
    if boot.startswith("error"):
        assert replies == [[boot]] * len(lines)
    else:
        assert replies[1][-1].startswith("ok OK"), replies
