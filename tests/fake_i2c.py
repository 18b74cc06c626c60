# SPDX-License-Identifier: MIT
"""Fakes for machine-dependent code: a register-level PCA9685 on a fake I2C bus
(tests/fake_pca9685.py says what the chip model follows), a busio-style adapter
for Adafruit's driver, fake machine.PWM/Pin, a recording driver.

Runs under CPython and the MicroPython Unix port (tests/mp scripts import it),
so: no f-strings, no dataclasses.
"""

from fake_pca9685 import FakePCA9685  # noqa: F401  (the chip, with the fakes around it)


class BusioI2C:
    """The busio.I2C calls Adafruit's I2CDevice makes, over the same fake chip."""

    def __init__(self, chip):
        self.chip = chip
        self.locked = False

    def try_lock(self):
        if self.locked:
            return False
        self.locked = True
        return True

    def unlock(self):
        self.locked = False

    def writeto(self, address, buffer, *, start=0, end=None):
        end = len(buffer) if end is None else end
        self.chip.writeto(address, bytes(buffer[start:end]))

    def readfrom_into(self, address, buffer, *, start=0, end=None):
        end = len(buffer) if end is None else end
        tmp = bytearray(end - start)
        self.chip.readfrom_into(address, tmp)
        buffer[start:end] = tmp

    def writeto_then_readfrom(self, address, out_buffer, in_buffer, *,
                              out_start=0, out_end=None, in_start=0, in_end=None):
        self.writeto(address, out_buffer, start=out_start, end=out_end)
        self.readfrom_into(address, in_buffer, start=in_start, end=in_end)


class FakePWMU16:
    """machine.PWM stand-in of a port without duty_ns: remembers freq and duty_u16."""

    def __init__(self, pin, freq=None, duty_u16=None):
        self.pin = pin
        self._freq = freq
        self.ns = None
        self.u16 = duty_u16
        self.deinited = False

    def freq(self, value=None):
        if value is None:
            return self._freq
        self._freq = value

    def duty_u16(self, value):
        if not 0 <= value <= 65535:
            raise ValueError("duty_u16 out of range")
        self.u16 = value
        self.ns = None

    def deinit(self):
        self.deinited = True

    def pulse_us(self):
        """Pulse width (float us) this output makes, whichever way it was set."""
        if self.ns is not None:
            return self.ns / 1000
        if self.u16 is None:
            return 0.0
        return self.u16 * 1e6 / (65535 * self._freq)     # machine.PWM: duty is duty_u16 / 65535


class FakePWM(FakePWMU16):
    """machine.PWM stand-in of a port with duty_ns (ESP32, RP2040)."""

    def duty_ns(self, ns):
        if ns < 0:
            raise ValueError("duty_ns out of range")
        self.ns = ns
        self.u16 = None


class RecordingDriver:
    """Any-driver stand-in: keeps every (channel, us) it is given, checking the interface."""

    def __init__(self, period_us=20000):
        self.period_us = period_us
        self.calls = []
        self.limp = set()

    def set_us(self, channel, us):
        if type(us) is not int or us < 0 or us > self.period_us:
            raise ValueError("pulse out of range")
        self.calls.append((channel, us))
        self.limp.discard(channel)

    def off(self, channel=None):
        self.calls.append((channel, None))
        if channel is not None:
            self.limp.add(channel)

    def deinit(self):
        self.calls.append(("deinit", None))


class FakeMachine:
    """A `machine` module stand-in (CPython tests): Pin, I2C onto one FakePCA9685, PWM
    as FakePWM; records how armfw.drivers constructs the hardware."""

    def __init__(self, address=0x40):
        self.chip = FakePCA9685(address)
        self.i2c_args = None
        self.pwms = {}

    def Pin(self, n):
        return ("Pin", n)

    def I2C(self, i2c_id, sda, scl, freq):
        self.i2c_args = (i2c_id, sda, scl, freq)
        return self.chip

    def PWM(self, pin, freq, duty_u16):
        pwm = FakePWM(pin[1], freq=freq, duty_u16=duty_u16)
        self.pwms[pin[1]] = pwm
        return pwm

    def module(self):
        """A module object to put in sys.modules["machine"]."""
        import sys
        m = type(sys)("machine")
        m.Pin = self.Pin
        m.I2C = self.I2C
        m.PWM = self.PWM
        return m
