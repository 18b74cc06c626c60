# SPDX-License-Identifier: MIT
"""The simulated servo driver: records pulses instead of driving pins.

Same interface as every driver (see armfw.drivers): set_us(channel, us),
set_many(channels, pulses), off(channel=None), deinit(). It also keeps a virtual clock, so the motion
code can step a long move in no real time while every pulse still carries
the time a board would have sent it:

    sleep_ms(ms)    advance the clock (and really sleep when realtime)
    advance_ms(ms)  advance the clock only (armfw.session waits on the console)
    now_ms          the clock, milliseconds since the driver was made

Records, for tests and for `armctl sim`:
- the last _KEEP pulses in memory (preallocated ring): records() yields
  (t_ms, channel, us) oldest first; count is the total ever sent;
- optionally every pulse appended to a text log, one "t_ms channel us" line
  each (us 0: that channel was switched off; channel -1: all were), so a
  test can read what the simulator did from outside its process. The log
  path comes from the driver settings ("log") or the environment
  (ARMFW_PULSE_LOG); ARMFW_SIM_REALTIME=1 (or "realtime": true) makes
  sleep_ms really sleep, as a board would.

"model": "pca9685" (with "osc_hz", 25 MHz if absent) simulates a PCA9685's
4096 counts per period: each pulse is recorded as the width the chip makes
of it (float microseconds, the nearest count's), so the record shows the
chip's grid, about 4.9 us at 50 Hz, where a board's direct PWM keeps every
microsecond.
"""

from array import array

from armfw.compat import const, getenv, sleep_ms as _sleep_ms

# The whole record is the log; the ring is for a look from inside the process.
_KEEP = const(64)
ALL_CHANNELS = const(-1)
# An already open pulse log (the simulator's boot sets it), else the path is opened.
pulse_log = None


class SimServo:
    """A driver that drives nothing and remembers everything."""

    def __init__(self, cfg):
        freq = cfg.get("freq_hz", 50)
        self.period_us = 1000000 // freq
        realtime = cfg.get("realtime")
        if realtime is None:
            realtime = getenv("ARMFW_SIM_REALTIME") in ("1", "yes", "true")
        self.realtime = bool(realtime)
        self.now_ms = 0
        self.count = 0
        self._t = array("i", bytes(4 * _KEEP))      # zeros, with no list of _KEEP ints made first
        self._ch = array("i", bytes(4 * _KEEP))
        self._grid = None       # (num, den): a simulated PCA9685's count is us * num / den
        if cfg.get("model") == "pca9685":
            from armfw.pca9685 import OSC_HZ, count_fraction, count_of
            self._grid = count_fraction(freq, cfg.get("osc_hz", OSC_HZ))
            self._count_of = count_of
        self._us = array("f" if self._grid else "i", bytes(4 * _KEEP))
        path = cfg.get("log") or getenv("ARMFW_PULSE_LOG")
        self._log = pulse_log if pulse_log is not None else (open(path, "a") if path else None)

    def _record(self, channel, us):
        grid = self._grid
        if grid is not None and us:
            us = self._count_of(us, grid[0], grid[1]) * grid[1] / grid[0]
        i = self.count % _KEEP
        self._t[i] = self.now_ms
        self._ch[i] = channel
        self._us[i] = us
        self.count += 1
        if self._log is not None:
            self._log.write(("%d %d %.3f\n" if grid else "%d %d %d\n") % (self.now_ms, channel, us))

    def _check(self, us):
        if type(us) is not int or us <= 0 or us >= self.period_us:
            raise ValueError("pulse must be an int 1..%d us, got %r" % (self.period_us - 1, us))

    def set_us(self, channel, us):
        """Record a pulse of us (int microseconds, 0 < us < period) on channel."""
        self._check(us)
        self._record(channel, us)

    def set_many(self, channels, pulses):
        """Record pulses[i] on channels[i] for every i (all checked before any is recorded)."""
        if len(pulses) != len(channels):
            raise ValueError("one pulse per channel")
        for us in pulses:
            self._check(us)
        for i in range(len(channels)):
            self._record(channels[i], pulses[i])

    def off(self, channel=None):
        """Record that channel (None: every channel) stopped pulsing."""
        self._record(ALL_CHANNELS if channel is None else channel, 0)

    def deinit(self):
        """Record that every channel stopped; close the log."""
        self.off()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.deinit()

    def sleep_ms(self, ms):
        """Advance the virtual clock by ms; sleep for real only when realtime."""
        self.now_ms += ms
        if self.realtime:
            _sleep_ms(ms)

    def advance_ms(self, ms):
        """Advance the virtual clock by ms without waiting (the caller keeps real time)."""
        self.now_ms += ms

    def records(self):
        """The remembered pulses, oldest first, as (t_ms, channel, us)."""
        first = self.count - _KEEP if self.count > _KEEP else 0
        for k in range(first, self.count):
            i = k % _KEEP
            yield (self._t[i], self._ch[i], self._us[i])


# -- the board file's driver section (armfw.drivers) -----------------------

FIELDS = ("kind", "freq_hz", "realtime", "log", "model", "osc_hz")


def check(settings, mcu, where, outputs):
    """The simulated driver's settings; returns its PWM period (us)."""
    from armfw.fields import BoardError, integer, text
    if "realtime" in settings and not isinstance(settings["realtime"], bool):
        raise BoardError("%s.realtime: must be true or false" % where)
    if "log" in settings:
        text(settings, "log", where)
    freq = integer(settings, "freq_hz", where, 1, 100000)
    if "model" in settings:
        text(settings, "model", where, ("pca9685",))
        from armfw.pca9685 import OSC_HZ, prescale_for
        osc = integer(settings, "osc_hz", where, 1000000, 50000000) if "osc_hz" in settings else OSC_HZ
        try:
            prescale_for(freq, osc)
        except ValueError as e:
            raise BoardError("%s.freq_hz: %s" % (where, e))
    return 1000000 // freq


def make(board):
    return SimServo(board.driver)
