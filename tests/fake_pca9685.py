# SPDX-License-Identifier: MIT
"""A register-level PCA9685 on a fake I2C bus (tests/fake_i2c.py re-exports it with
the other fakes; a board-like run loads this module alone, behind the stand-in
`machine`, so the heap it measures holds no scaffolding it does not use).

Runs under CPython and the MicroPython Unix port, so: no f-strings, no
dataclasses. The chip model follows the NXP datasheet
where a driver could get it wrong:
- register pointer auto-increments only when MODE1.AI is set (without it a
  4-byte channel write lands four times on the same register);
- PRE_SCALE is write-protected unless MODE1.SLEEP is 1, and forced to >= 3;
- ALL_LED_* registers are write-only and fan out to all 16 channels;
- bits 7..5 of the LEDn_ON_H / LEDn_OFF_H registers are read-only zeros;
- sleeping with a channel active sets RESTART; RESTART written as 1 clears
  it, and writing it less than 500 us after SLEEP went to 0 is an error
  (recorded in .errors: a driver must not do it).
A transfer to another address raises OSError(ENODEV), as machine.I2C does
when nothing acknowledges. What the fake cannot show: bus timing, clock
stretching, the analogue output.
"""

from armfw.compat import ticks_us, ticks_diff

MODE1 = 0x00
MODE2 = 0x01
LED0_ON_L = 0x06
ALL_LED_ON_L = 0xFA
PRESCALE = 0xFE
RESTART = 0x80
AI = 0x20
SLEEP = 0x10
FULL = 0x10


class FakePCA9685:
    """A PCA9685 behind an I2C bus with machine.I2C's memory-access methods.

    record: keep a log of (address, register, bytes) for every write; off for
    allocation measurements (the log itself allocates).
    """

    def __init__(self, address=0x40, record=True):
        self.address = address
        self.record = record
        self.log = []
        self.errors = []
        self.regs = bytearray(256)
        self._pointer = 0
        self._woke_at = None
        self.power_on()

    def power_on(self):
        """Datasheet power-up values."""
        r = self.regs
        for i in range(256):
            r[i] = 0
        r[MODE1] = SLEEP | 0x01       # SLEEP, ALLCALL
        r[MODE2] = 0x04               # OUTDRV
        r[0x02] = 0xE2
        r[0x03] = 0xE4
        r[0x04] = 0xE8
        r[0x05] = 0xE0
        for ch in range(16):
            r[LED0_ON_L + 4 * ch + 3] = FULL
        r[PRESCALE] = 0x1E

    # --- bus side ----------------------------------------------------------
    def _check(self, addr):
        if addr != self.address:
            raise OSError(19)   # ENODEV: nobody acknowledges that address

    def writeto_mem(self, addr, memaddr, buf, addrsize=8):
        self._check(addr)
        if self.record:
            self.log.append((addr, memaddr, bytes(buf)))
        self._pointer = memaddr
        for i in range(len(buf)):
            self._store(buf[i])

    def readfrom_mem_into(self, addr, memaddr, buf, addrsize=8):
        self._check(addr)
        self._pointer = memaddr
        for i in range(len(buf)):
            buf[i] = self._load()

    def writeto(self, addr, buf, stop=True):
        """machine.I2C.writeto: first byte is the register, the rest data."""
        self._check(addr)
        if len(buf):
            if self.record:
                self.log.append((addr, buf[0], bytes(buf[1:])))
            self._pointer = buf[0]
            for i in range(1, len(buf)):
                self._store(buf[i])
        return 1 + len(buf)

    def readfrom_into(self, addr, buf, stop=True):
        self._check(addr)
        for i in range(len(buf)):
            buf[i] = self._load()

    def scan(self):
        """machine.I2C.scan: the addresses that acknowledge (this chip's)."""
        return [self.address]

    # --- chip side ---------------------------------------------------------
    def _advance(self):
        if self.regs[MODE1] & AI:
            self._pointer = (self._pointer + 1) & 0xFF

    def _load(self):
        reg = self._pointer
        value = 0 if ALL_LED_ON_L <= reg <= ALL_LED_ON_L + 3 else self.regs[reg]
        self._advance()
        return value

    def _store(self, value):
        reg = self._pointer
        r = self.regs
        if reg == MODE1:
            self._store_mode1(value)
        elif reg == PRESCALE:
            if r[MODE1] & SLEEP:
                r[PRESCALE] = value if value >= 3 else 3
            else:
                self.errors.append("PRE_SCALE written while awake (ignored by the chip)")
        elif ALL_LED_ON_L <= reg <= ALL_LED_ON_L + 3:
            k = reg - ALL_LED_ON_L
            v = value & 0x1F if k & 1 else value
            for ch in range(16):
                r[LED0_ON_L + 4 * ch + k] = v
        elif LED0_ON_L <= reg < LED0_ON_L + 64:
            r[reg] = value & 0x1F if (reg - LED0_ON_L) & 1 else value
        else:
            r[reg] = value
        self._advance()

    def _store_mode1(self, value):
        r = self.regs
        old = r[MODE1]
        new = (value & 0x7F) | (old & RESTART)
        if value & RESTART and old & RESTART:
            if self._woke_at is None or old & SLEEP:
                self.errors.append("RESTART written while asleep")
            elif ticks_diff(ticks_us(), self._woke_at) < 500:
                self.errors.append("RESTART written less than 500 us after wake")
            new &= ~RESTART
        if not old & SLEEP and new & SLEEP and self.active_channels():
            new |= RESTART
        if old & SLEEP and not new & SLEEP:
            self._woke_at = ticks_us()
        r[MODE1] = new

    # --- what the chip outputs ----------------------------------------------
    def channel(self, ch):
        """(on, off, full_on, full_off) of channel ch as the chip holds them."""
        r = self.regs
        base = LED0_ON_L + 4 * ch
        on = r[base] | (r[base + 1] & 0x0F) << 8
        off = r[base + 2] | (r[base + 3] & 0x0F) << 8
        return on, off, bool(r[base + 1] & FULL), bool(r[base + 3] & FULL)

    def high_counts(self, ch):
        """Counts per cycle channel ch is high: 0 off, 4096 full on, else OFF - ON (mod 4096)."""
        on, off, full_on, full_off = self.channel(ch)
        if full_off:
            return 0
        if full_on:
            return 4096
        return (off - on) % 4096

    def active_channels(self):
        n = 0
        for ch in range(16):
            if self.high_counts(ch):
                n += 1
        return n

    def prescale(self):
        return self.regs[PRESCALE]

    def pulse_us(self, ch, osc_hz=25000000):
        """Pulse width (float us) channel ch outputs, from its counts and the prescale."""
        return self.high_counts(ch) * (self.regs[PRESCALE] + 1) * 1e6 / osc_hz

    def running(self):
        """Oscillator on and not waiting for a restart."""
        return not self.regs[MODE1] & SLEEP
