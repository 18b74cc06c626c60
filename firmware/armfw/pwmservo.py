# SPDX-License-Identifier: MIT
"""Servos driven straight from the microcontroller's PWM pins (machine.PWM).

One machine.PWM per GPIO, all at the servo frame rate (freq_hz, usually 50).
The pulse is set with duty_ns where the port has it (ESP32 and RP2040 both do
in MicroPython >= 1.20), else with duty_u16 computed from the microseconds
(exact nearest value, integers only). The PWM objects are made once; set_us
and off allocate nothing. The duty_u16 product stays a 32-bit small int at
50 and 60 Hz (13107/4000 and 39321/10000 per us); at odd frame rates such as
333 Hz it needs a long int, which only a port without duty_ns would pay.

Port facts (only hardware can show the rest: the real edge timing, and
whether a servo holds or goes limp when its pulses stop):
- RP2040: GPIO n and n + 16 share a PWM slice channel and so one waveform;
  board.py refuses such pairs. Pins of one slice share the frequency.
- ESP32: LEDC channels on one timer share a frequency; duty_ns is quantised
  to the timer resolution the port picks for 50 Hz.
"""

from armfw.compat import const
from armfw.numeric import gcd

# machine.PWM: "duty_u16 sets the duty cycle as a ratio duty_u16 / 65535" (the
# rp2 port rounds cc = (duty_u16 * (top + 1) + 32767) / 65535), so
# duty_u16 = us * freq * 65535 / 1e6.
_U16_FULL = const(65535)
_US_PER_S = const(1000000)


def _machine_pwm(pin, freq_hz):
    from machine import Pin, PWM
    return PWM(Pin(pin), freq=freq_hz, duty_u16=0)


class PWMServos:
    """Servo pulses on GPIO pins: set_us(pin, us), set_many(pins, pulses), off(pin=None), deinit().

    pins: the GPIO numbers to drive (a board's joint and gripper channels);
    freq_hz: the frame rate (whole Hz); make_pwm(pin, freq_hz): builds one
    PWM output with no pulse yet (default: machine.PWM(Pin(pin), freq=freq_hz,
    duty_u16=0), so no pin ever shows the port's default 50 % duty).
    """

    def __init__(self, pins, freq_hz=50, make_pwm=_machine_pwm):
        if type(freq_hz) is not int or freq_hz <= 0:
            raise ValueError("freq_hz must be a whole number of Hz > 0, got %r" % (freq_hz,))
        self.freq_hz = freq_hz
        self.period_us = 1000000 // freq_hz
        num = _U16_FULL * freq_hz
        g = gcd(num, _US_PER_S)
        self._num = num // g
        self._den = _US_PER_S // g
        self._half = self._den // 2
        self._pwms = {}
        for pin in pins:
            if pin in self._pwms:
                raise ValueError("pin %r listed twice" % (pin,))
            self._pwms[pin] = make_pwm(pin, freq_hz)
        self._all = list(self._pwms.values())   # a list iterates without allocating
        self._ns = all(hasattr(p, "duty_ns") for p in self._all)

    def duty_u16(self, us):
        """duty_u16 value nearest to a pulse of us microseconds (rounded half up)."""
        return (us * self._num + self._half) // self._den

    def _pwm(self, pin):
        pwm = self._pwms.get(pin)
        if pwm is None:
            raise ValueError("no PWM output on that pin")
        return pwm

    def _checked(self, pin, us):
        pwm = self._pwm(pin)
        if type(us) is not int or us < 0 or us > self.period_us:
            raise ValueError("pulse must be an int 0..period_us microseconds")
        return pwm

    def set_us(self, pin, us):
        """Pulse of us microseconds (int, 0..period_us) on pin, every frame."""
        self._duty(self._checked(pin, us), us)

    def set_many(self, pins, pulses):
        """pulses[i] on pins[i] for every i (all checked before any is set)."""
        if len(pulses) != len(pins):
            raise ValueError("one pulse per pin")
        for i in range(len(pins)):
            self._checked(pins[i], pulses[i])
        for i in range(len(pins)):
            self._duty(self._pwms[pins[i]], pulses[i])

    def _duty(self, pwm, us):
        if self._ns:
            pwm.duty_ns(us * 1000)
        else:
            pwm.duty_u16(self.duty_u16(us))

    def off(self, pin=None):
        """Hold the pin low (no pulses) on one pin, or on all of them (None)."""
        if pin is None:
            for pwm in self._all:
                pwm.duty_u16(0)
        else:
            self._pwm(pin).duty_u16(0)

    def deinit(self):
        """Stop every pulse and release the PWM hardware."""
        self.off()
        for pwm in self._all:
            pwm.deinit()
        self._pwms = {}
        self._all = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.deinit()


# -- the board file's driver section (armfw.drivers) -----------------------

FIELDS = ("kind", "freq_hz")


def check(settings, mcu, where, outputs):
    """PWM outputs: each a GPIO that can drive one, no two sharing a waveform; returns the period (us)."""
    from armfw.fields import OUTPUT_PINS, BoardError, gpio, integer
    if mcu not in OUTPUT_PINS:
        raise BoardError("%s: the pwm driver needs a known mcu (%s), got %r"
                         % (where.rsplit(".", 1)[0] + ".mcu", ", ".join(sorted(OUTPUT_PINS)), mcu))
    slices = {}
    for field, pin in outputs:
        gpio(pin, field, mcu)
        if mcu == "rp2040":
            # GPIO n and n + 16 are the same PWM slice channel: one waveform for both.
            other = slices.get(pin % 16)
            if other is not None:
                raise BoardError("%s: GPIO %d shares PWM slice %d channel %s with %s"
                                 % (field, pin, pin // 2 % 8, "AB"[pin % 2], other))
            slices[pin % 16] = "%s (GPIO %d)" % (field, pin)
    return 1000000 // integer(settings, "freq_hz", where, 1, 100000)


def make(board):
    from armfw.drivers import channels
    return PWMServos(channels(board), freq_hz=board.driver["freq_hz"])
