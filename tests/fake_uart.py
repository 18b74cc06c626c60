# SPDX-License-Identifier: MIT
"""The simulated servo bus (host/armctl/sim_bus.py, which the simulator runs too) under the
name the tests and tests/mp scripts import, under CPython and MicroPython alike."""
import sys

_HOST = (__file__.rsplit("/", 1)[0] if "/" in __file__ else ".") + "/../host/armctl"
if _HOST not in sys.path:
    sys.path.append(_HOST)
from sim_bus import *  # noqa: E402,F401,F403
from sim_bus import FakeDynamixelBus, FakeSTSBus, SDKSerial, crc16_8005  # noqa: E402,F401
