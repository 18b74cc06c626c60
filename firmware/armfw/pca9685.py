# SPDX-License-Identifier: MIT
"""NXP PCA9685: 16-channel, 12-bit PWM controller on I2C, driving hobby servos.

Datasheet facts this driver relies on (NXP PCA9685 product data sheet, rev. 4):

- Registers: MODE1 00h, MODE2 01h, LED0_ON_L 06h (four registers per channel:
  ON_L, ON_H, OFF_L, OFF_H), ALL_LED_ON_L FAh .. ALL_LED_OFF_H FDh (write only),
  PRE_SCALE FEh.
- The output is high from count ON to count OFF of a 4096-count cycle; ON and
  OFF must never hold the same value. Bit 4 of LEDn_ON_H is "full on", bit 4
  of LEDn_OFF_H "full off" (full off wins). Power-up state: every channel full
  off, MODE1 = SLEEP | ALLCALL, MODE2 = OUTDRV (totem-pole outputs).
- Equation 1: prescale = round(osc / (4096 * update_rate)) - 1, 3..255 (the
  hardware forces at least 3): 24 Hz .. 1526 Hz with the 25 MHz oscillator.
  PRE_SCALE can be written only while MODE1.SLEEP is 1.
- After SLEEP goes to 0 the oscillator needs 500 us before RESTART is written.
- With MODE1.AI set, the register address auto-increments, so one I2C write of
  four bytes programs a whole channel; with MODE2.OCH = 0 (default) the outputs
  change at the I2C STOP, so a channel never shows half an update.

One count lasts (prescale + 1) / osc seconds: this driver converts microseconds
to counts with the prescale actually programmed, not the requested frequency
(at 50 Hz the prescale rounds to 121, a 50.03 Hz cycle; counting with the
nominal 50 Hz would be 0.06 % off). All of it in small integers: the hot path
(set_us, off) allocates nothing, writes from preallocated bytearrays, and its
intermediate products stay below 2**30, the small-int limit of 32-bit ports,
when osc_hz is a whole number of kHz.

Only hardware can show: the real oscillator frequency (typically 23..27 MHz,
calibrate osc_hz against a scope or the servo's travel), I2C timing and bus
errors (OSError from machine.I2C propagates to the caller), and whether a
given servo goes limp or holds its position when its pulses stop.
"""

from armfw.compat import const, sleep_us
from armfw.numeric import gcd

# Registers
_MODE1 = const(0x00)
_MODE2 = const(0x01)
_LED0_ON_L = const(0x06)
_ALL_LED_ON_L = const(0xFA)
_ALL_LED_ON_H = const(0xFB)
_ALL_LED_OFF_L = const(0xFC)
_ALL_LED_OFF_H = const(0xFD)
_PRESCALE = const(0xFE)
_REGISTERS_PER_CHANNEL = const(4)

# MODE1 bits
_RESTART = const(0x80)
_EXTCLK = const(0x40)
_AI = const(0x20)
_SLEEP = const(0x10)
_ALLCALL = const(0x01)

# MODE2 bits
_INVRT = const(0x10)
_OCH = const(0x08)
_OUTDRV = const(0x04)

# LEDn_ON_H / LEDn_OFF_H bit 4
_FULL = const(0x10)

_CHANNELS = const(16)
_COUNTS = const(4096)
_PRESCALE_MIN = const(3)
_PRESCALE_MAX = const(255)
OSC_HZ = const(25000000)           # internal oscillator, nominal
_WAKE_US = const(500)               # oscillator start-up after SLEEP -> 0


def prescale_for(freq_hz, osc_hz=OSC_HZ):
    """Datasheet equation 1, round half up: round(osc / (4096 * freq)) - 1.

    Raises ValueError when the result is outside 3..255 (the chip cannot make
    that frequency from that clock).
    """
    if freq_hz <= 0:
        raise ValueError("freq_hz must be > 0, got %r" % (freq_hz,))
    if isinstance(freq_hz, int) and isinstance(osc_hz, int):
        prescale = (osc_hz + 2048 * freq_hz) // (_COUNTS * freq_hz) - 1
    else:
        prescale = int(osc_hz / (_COUNTS * freq_hz) + 0.5) - 1
    if prescale < _PRESCALE_MIN or prescale > _PRESCALE_MAX:
        raise ValueError("%r Hz needs prescale %d, outside %d..%d at osc %r Hz"
                         % (freq_hz, prescale, _PRESCALE_MIN, _PRESCALE_MAX, osc_hz))
    return prescale


def count_fraction(freq_hz, osc_hz=OSC_HZ):
    """(num, den), the reduced fraction with count = us * num / den at the prescale
    programmed for freq_hz: one count lasts den / num microseconds."""
    den = 1000000 * (prescale_for(freq_hz, osc_hz) + 1)
    g = gcd(osc_hz, den)
    return osc_hz // g, den // g


def count_of(us, num, den):
    """The count (rounded half up) nearest to a pulse of us microseconds."""
    return (us * num + den // 2) // den


class PCA9685:
    """A PCA9685 as a servo driver: set_us(channel, us), set_many(channels, pulses),
    off(channel=None), deinit().

    i2c: a machine.I2C (or anything with writeto_mem/readfrom_mem_into);
    address: 7-bit I2C address (0x40 + A5..A0); freq_hz: servo frame rate;
    osc_hz: the oscillator frequency (25 MHz nominal; a calibrated value fixes
    a chip whose clock is off).

    Init leaves every channel full off: no servo gets a pulse until the motion
    layer commands one (after a soft reboot the chip would otherwise keep
    driving the last run's pulses at a possibly different prescale).
    """

    def __init__(self, i2c, address=0x40, freq_hz=50, osc_hz=OSC_HZ):
        self.i2c = i2c
        self.address = address
        self.osc_hz = osc_hz
        self.prescale = prescale_for(freq_hz, osc_hz)
        self._num, self._den = count_fraction(freq_hz, osc_hz)
        self.period_us = _COUNTS * self._den // self._num     # one PWM cycle, rounded down
        self._reg = bytearray(1)
        self._channel = bytearray(_REGISTERS_PER_CHANNEL)
        self.off()
        self._write(_MODE2, _OUTDRV)
        self._write(_MODE1, _SLEEP | _AI)          # ALLCALL off: answer only our address
        self._write(_PRESCALE, self.prescale)
        self.wake()

    @property
    def freq_hz(self):
        """The frame rate the programmed prescale really gives (float Hz)."""
        return self.osc_hz / (_COUNTS * (self.prescale + 1))

    def _write(self, reg, value):
        self._reg[0] = value
        self.i2c.writeto_mem(self.address, reg, self._reg)

    def _read(self, reg):
        self.i2c.readfrom_mem_into(self.address, reg, self._reg)
        return self._reg[0]

    def count(self, us):
        """12-bit count nearest to a pulse of us microseconds (rounded half up)."""
        return count_of(us, self._num, self._den)

    def pwm(self, channel, on, off):
        """Raw channel registers: high from count on to count off (0..4095 each,
        FULL in on's or off's bit 12 for full on / full off), one I2C write."""
        buf = self._channel
        buf[0] = on & 0xFF
        buf[1] = on >> 8
        buf[2] = off & 0xFF
        buf[3] = off >> 8
        self.i2c.writeto_mem(self.address, _LED0_ON_L + _REGISTERS_PER_CHANNEL * channel, buf)

    def set_us(self, channel, us):
        """Pulse of us microseconds (int, 0..period_us) on channel 0..15, every cycle.

        0 us (or a pulse shorter than half a count) is full off; a whole
        period is full on, since ON and OFF must never be equal.
        """
        self._check(channel, us)
        self._set(channel, us)

    def set_many(self, channels, pulses):
        """pulses[i] on channels[i] for every i (all checked before any is written)."""
        if len(pulses) != len(channels):
            raise ValueError("one pulse per channel")
        for i in range(len(channels)):
            self._check(channels[i], pulses[i])
        for i in range(len(channels)):
            self._set(channels[i], pulses[i])

    def _check(self, channel, us):
        if type(channel) is not int or channel < 0 or channel >= _CHANNELS:
            raise ValueError("channel must be an int 0..15")
        if type(us) is not int or us < 0 or us > self.period_us:
            raise ValueError("pulse must be an int 0..period_us microseconds")

    def _set(self, channel, us):
        n = self.count(us)
        if n == 0:
            self.pwm(channel, 0, _FULL << 8)
        elif n >= _COUNTS:
            self.pwm(channel, _FULL << 8, 0)
        else:
            self.pwm(channel, 0, n)

    def off(self, channel=None):
        """Stop the pulses of one channel (None: all, in one write of ALL_LED_OFF_H)."""
        if channel is None:
            self._write(_ALL_LED_OFF_H, _FULL)
            return
        if type(channel) is not int or channel < 0 or channel >= _CHANNELS:
            raise ValueError("channel must be an int 0..15")
        self.pwm(channel, 0, _FULL << 8)

    def sleep(self):
        """Stop the oscillator (low power); channel registers keep their values."""
        self._write(_MODE1, self._read(_MODE1) & ~_RESTART | _SLEEP)

    def wake(self):
        """Start the oscillator and, if channels were running when it slept, restart them."""
        mode = self._read(_MODE1)
        self._write(_MODE1, mode & ~(_SLEEP | _RESTART))
        sleep_us(_WAKE_US)
        # Writing RESTART = 1 clears it and resumes the PWM channels; it is
        # read back as 1 only if channels were active when SLEEP was set.
        if mode & _RESTART:
            self._write(_MODE1, (mode & ~_SLEEP) | _RESTART)

    def deinit(self):
        """Every channel full off, then sleep: the servos go limp, the chip idles."""
        self.off()
        self.sleep()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.deinit()


# -- the board file's driver section (armfw.drivers) -----------------------

FIELDS = ("kind", "i2c_id", "sda", "scl", "i2c_freq", "address", "freq_hz", "osc_hz")
I2C_IDS = {"esp32": (0, 1), "rp2040": (0, 1)}
_ALLCALL_ADDRESS = const(0x70)      # the chip's power-up All Call address: no board may sit there


def check(settings, mcu, where, outputs):
    """The I2C wiring, the chip settings and every channel; returns the PWM period (us)."""
    from armfw.fields import OUTPUT_PINS, BoardError, gpio, integer
    i2c_id = integer(settings, "i2c_id", where, 0, 255)
    if mcu in I2C_IDS and i2c_id not in I2C_IDS[mcu]:
        raise BoardError("%s.i2c_id: %s has I2C %s, got %d"
                         % (where, mcu, " and ".join(str(i) for i in I2C_IDS[mcu]), i2c_id))
    sda = gpio(integer(settings, "sda", where, 0, 255), where + ".sda", mcu)
    scl = gpio(integer(settings, "scl", where, 0, 255), where + ".scl", mcu)
    if sda == scl:
        raise BoardError("%s.scl: GPIO %d is already sda" % (where, scl))
    if mcu == "rp2040":
        # Pin functions are fixed on the RP2040: GPIO n is I2C(n // 2 % 2), SDA if n is even.
        for key, pin, parity in (("sda", sda, 0), ("scl", scl, 1)):
            if pin % 2 != parity or pin // 2 % 2 != i2c_id:
                usable = [p for p in OUTPUT_PINS["rp2040"] if p % 2 == parity and p // 2 % 2 == i2c_id]
                raise BoardError("%s.%s: GPIO %d is not an I2C%d %s pin on the rp2040 (those are: %s)"
                                 % (where, key, pin, i2c_id, key.upper(), " ".join(str(p) for p in usable)))
    integer(settings, "i2c_freq", where, 10000, 1000000)      # the PCA9685 runs up to Fm+ (1 MHz)
    address = integer(settings, "address", where, 0x40, 0x7F)
    if address == _ALLCALL_ADDRESS:
        raise BoardError("%s.address: 0x70 is the PCA9685 All Call address; strap A5..A0 to another" % where)
    osc = integer(settings, "osc_hz", where, 1000000, 50000000)
    if osc % 1000:
        raise BoardError("%s.osc_hz: must be a whole number of kHz (keeps the driver's pulse "
                         "arithmetic in small ints), got %d" % (where, osc))
    freq = integer(settings, "freq_hz", where, 1, 100000)
    try:
        prescale = prescale_for(freq, osc)
    except ValueError as e:
        raise BoardError("%s.freq_hz: %s" % (where, e))
    for field, channel in outputs:
        if channel >= _CHANNELS:
            raise BoardError("%s: %d is not a PCA9685 channel (0..15)" % (field, channel))
    return _COUNTS * (prescale + 1) * 1000000 // osc


def make(board):
    from machine import I2C, Pin
    d = board.driver
    i2c = I2C(d["i2c_id"], sda=Pin(d["sda"]), scl=Pin(d["scl"]), freq=d["i2c_freq"])
    try:
        return PCA9685(i2c, address=d["address"], freq_hz=d["freq_hz"], osc_hz=d["osc_hz"])
    except OSError:     # nothing acknowledged the address
        raise OSError(_no_chip(i2c, d))


def _no_chip(i2c, d):
    """Why the PCA9685 did not answer, with what an I2C scan of its bus found instead."""
    try:
        found = ", ".join("0x%02x" % a for a in i2c.scan())
    except OSError:
        found = ""
    where = "no PCA9685 answers at 0x%02x on I2C %d (SDA pin %d, SCL pin %d)" % (
        d["address"], d["i2c_id"], d["sda"], d["scl"])
    if found:
        return where + "; an I2C scan found %s: set driver.address in the board file" % found
    return where + "; an I2C scan found no device: check the wiring, pull-ups and the chip's 3.3 V"
