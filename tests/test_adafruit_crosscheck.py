# SPDX-License-Identifier: MIT
"""Our PCA9685 driver and Adafruit's adafruit_pca9685 (PyPI, 3.4.x) on the same chip model.

Both drivers talk to one register-level model of the chip (tests/fake_i2c.py;
Adafruit's through a busio.I2C-shaped adapter, no Blinka hardware), and the
registers they leave behind are compared.

What was found, and is asserted exactly below:

- Prescale: identical for every whole frequency 24..1743 Hz. Adafruit computes
  int(osc / 4096 / freq + 0.5) - 1, i.e. round half up, which is the
  datasheet's equation 1 (prescale = round(osc / (4096 * rate)) - 1); ours is
  the same in integers. (Adafruit releases before PR #59, Jan 2024, were one
  off; 3.4.x is not.)
- Mode registers after init: both leave MODE1 = AI (20h: awake, auto-
  increment, ALLCALL off). Adafruit leaves MODE2 at its power-up value, which
  is the OUTDRV that ours writes explicitly.
- Pulse counts: Adafruit has no microsecond API; adafruit_motor.servo turns a
  pulse into duty_cycle = int(us * frequency / 1e6 * 0xFFFF) with frequency
  read back from the prescale, and PWMChannel keeps duty_cycle >> 4 as the OFF
  count. With x = us * osc / (1e6 * (prescale + 1)) the exact number of counts
  (the datasheet's count length is (prescale + 1) / osc), that is
  floor(x * 65535 / 65536): scaling by 0xFFFF instead of 0x10000 and
  truncating twice. Ours is floor(x + 1/2), the nearest count. So Adafruit's
  count is ours or ours - 1, never more; its pulse is always short, by more
  than 0 and at most 1 count (4.9 us at 50 Hz; exactly 1 when the request is
  a whole number of counts) while ours is within half a count of the
  request. Ours is the one that matches the datasheet's timing. At 50 Hz
  from 500 to 2500 us they differ on about half the pulse widths.
- Both program ON = 0 and OFF = count, never ON = OFF; below 16/65536 of a
  cycle Adafruit writes full off, ours does that only for a zero count.
"""

import math
import sys
from fractions import Fraction
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_i2c import BusioI2C, FakePCA9685  # noqa: E402

from armfw import pca9685  # noqa: E402
from armfw.pca9685 import PCA9685  # noqa: E402

import adafruit_pca9685  # noqa: E402  (a test dependency: its absence is a failure)

OSC = 25_000_000


def both(freq, osc=OSC):
    ours_chip, theirs_chip = FakePCA9685(), FakePCA9685()
    ours = PCA9685(ours_chip, 0x40, freq, osc)
    theirs = adafruit_pca9685.PCA9685(BusioI2C(theirs_chip), address=0x40, reference_clock_speed=osc)
    theirs.frequency = freq
    return ours, ours_chip, theirs, theirs_chip


def adafruit_servo_duty(pca, us):
    """adafruit_motor.servo's pulse -> duty_cycle conversion (its min_duty line)."""
    return int((us * pca.frequency) / 1000000 * 0xFFFF)


def exact_counts(us, prescale, osc=OSC):
    return Fraction(us) * osc / (1_000_000 * (prescale + 1))


@pytest.mark.parametrize("freq, prescale", [(50, 121), (60, 101), (100, 60), (330, 17)])
def test_same_prescale_and_mode_registers(freq, prescale):
    _, ours_chip, _, theirs_chip = both(freq)
    assert ours_chip.prescale() == theirs_chip.prescale() == prescale
    assert ours_chip.regs[0x00] == theirs_chip.regs[0x00] == 0x20
    assert ours_chip.regs[0x01] == theirs_chip.regs[0x01] == 0x04
    assert ours_chip.errors == theirs_chip.errors == []


def test_same_prescale_over_the_whole_range(monkeypatch):
    # only the prescale is compared: skip both drivers' oscillator waits
    monkeypatch.setattr(adafruit_pca9685.time, "sleep", lambda s: None)
    monkeypatch.setattr(pca9685, "sleep_us", lambda us: None)
    for freq in range(24, 1744):
        ours_chip = FakePCA9685(record=False)
        theirs_chip = FakePCA9685(record=False)
        PCA9685(ours_chip, 0x40, freq, OSC)
        theirs = adafruit_pca9685.PCA9685(BusioI2C(theirs_chip), reference_clock_speed=OSC)
        theirs.frequency = freq
        assert ours_chip.prescale() == theirs_chip.prescale(), freq


@pytest.mark.parametrize("freq", [50, 60, 100, 330])
def test_pulse_counts_exact_relationship(freq, report):
    ours, ours_chip, theirs, theirs_chip = both(freq)
    prescale = ours_chip.prescale()
    period = ours.period_us
    differ = 0
    hi = min(2500, period)
    for us in range(500, hi + 1):
        ours.set_us(0, us)
        theirs.channels[0].duty_cycle = adafruit_servo_duty(theirs, us)
        x = exact_counts(us, prescale)
        mine = ours_chip.channel(0)
        adas = theirs_chip.channel(0)
        assert mine == (0, math.floor(x + Fraction(1, 2)), False, False)
        assert adas == (0, math.floor(x * 65535 / 65536), False, False)
        assert mine[1] - adas[1] in (0, 1)
        differ += mine[1] != adas[1]
        tick = Fraction((prescale + 1) * 1_000_000, OSC)
        assert abs(mine[1] * tick - us) <= tick / 2           # nearest count
        assert -tick <= adas[1] * tick - us < 0              # always short, by up to a count
    if freq == 50:
        report("adafruit vs ours at 50 Hz: %d of %d pulse widths 500..2500 us differ by one count"
               % (differ, hi - 499))
        assert 0.3 < differ / (hi - 499) < 0.7


def test_full_off_below_one_count():
    ours, ours_chip, theirs, theirs_chip = both(50)
    ours.set_us(1, 0)
    theirs.channels[1].duty_cycle = 0
    assert ours_chip.channel(1)[3] and theirs_chip.channel(1)[3]


def test_adafruit_needs_frequency_before_channel_writes():
    """Adafruit's reset() writes MODE1 = 0, clearing AI; until frequency is set, its
    4-byte channel write lands on LEDn_ON_L alone (datasheet: AI off = no increment).
    Ours sets AI in its constructor, so a channel write is always whole."""
    chip = FakePCA9685()
    theirs = adafruit_pca9685.PCA9685(BusioI2C(chip))
    theirs.channels[2].duty_cycle = 0x8000
    on, off, full_on, full_off = chip.channel(2)
    assert full_off and off == 0            # OFF registers never written
