# SPDX-License-Identifier: MIT
"""Robot-arm firmware: kinematics, servo bridge, drivers, motion and the line protocol.

Everything in this package runs unmodified on MicroPython (RP2040, ESP32, the
Unix port) and on CPython, where the host imports it instead of keeping a copy.
Units inside the firmware: millimetres and radians.
"""
