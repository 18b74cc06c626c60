# SPDX-License-Identifier: MIT
# A `machine` module for the MicroPython Unix port, which has no I2C: on
# MICROPYPATH ahead of the built-in one (with tests/ for fake_pca9685), it lets
# main.py boot a PCA9685 board file against the register-level fake chip, and a
# bus servo board (UART) against fake STS3215 servos
# (armctl.memory.FAKE_MACHINE_PATH).
#
#     ARMCTL_FAKE_I2C=0x41   the chip's address (default 0x40); "none": no chip
#                            on the bus, so nothing acknowledges and a scan is empty
#
# The fake chip keeps no time, so the PCA9685 driver is given the simulated
# driver's virtual clock (advance_ms, realtime False): the session steps its
# motions without waiting 20 ms a step, as it does for the "sim" driver.
import os

from armfw import pca9685
from fake_pca9685 import FakePCA9685

pca9685.PCA9685.realtime = False
pca9685.PCA9685.advance_ms = lambda self, ms: None


def _address():
    text = os.getenv("ARMCTL_FAKE_I2C") or "0x40"
    return None if text == "none" else int(text, 16)


class _EmptyBus:
    """A bus with nothing on it: every transfer is unacknowledged."""

    def writeto_mem(self, addr, memaddr, buf, addrsize=8):
        raise OSError(19)   # ENODEV, as machine.I2C raises it

    readfrom_mem_into = writeto_mem

    def scan(self):
        return []


def Pin(n, *args, **kwargs):
    return ("Pin", n)


def I2C(i2c_id, sda=None, scl=None, freq=400000):
    address = _address()
    if address is None:
        return _EmptyBus()
    # No write log: it would grow with every pulse of a long run.
    return FakePCA9685(address, record=False)


def UART(uart_id, baudrate=115200, tx=None, rx=None, timeout=0, timeout_char=0):
    """A UART with STS3215 servos on it (tests/fake_uart.py), at the IDs of
    ARMCTL_FAKE_BUS ("1,2,3,4,5,6" by default: the SO-101's), stepped in virtual time."""
    from armfw import servobus
    from fake_uart import FakeSTSBus
    servobus.BusServos.realtime = False
    servobus.BusServos.advance_ms = lambda self, ms: None
    text = os.getenv("ARMCTL_FAKE_BUS") or "1,2,3,4,5,6"
    return FakeSTSBus([int(t) for t in text.split(",") if t])
