# SPDX-License-Identifier: MIT
"""Pick the servo driver a board description asks for.

Every driver has the same small interface, so the motion code never knows
which one it drives:

    set_us(channel, us)   one pulse width, int microseconds; ValueError for a
                          non-int or a value outside 0..period (defence in depth:
                          callers have already checked the joint's window;
                          the simulated driver also refuses 0 and the full
                          period, which no servo pulse is and which its record
                          would confuse with "off")
    off(channel=None)     stop pulses on one channel (None: all); the servo goes limp
    deinit()              stop every pulse and release the hardware

and is a context manager whose exit calls deinit(), so a script that drives
servos leaves them limp however it ends:

    with drivers.make(board) as driver:
        driver.set_us(0, 1500)

`machine` is imported only inside the branch that needs it, so CPython and the
MicroPython Unix port can import this module (and use the "sim" driver).
"""


def channels(board):
    """Every output the board drives: the joints' channels, then the gripper's."""
    out = list(board.servos.channels)
    if board.gripper is not None:
        out.append(board.gripper["channel"])
    return out


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


def make(board):
    """The driver for board.driver["kind"]: "pca9685", "pwm" or "sim"."""
    d = board.driver
    kind = d["kind"]
    if kind == "pca9685":
        from machine import I2C, Pin
        from armfw.pca9685 import PCA9685
        i2c = I2C(d["i2c_id"], sda=Pin(d["sda"]), scl=Pin(d["scl"]), freq=d["i2c_freq"])
        try:
            return PCA9685(i2c, address=d["address"], freq_hz=d["freq_hz"], osc_hz=d["osc_hz"])
        except OSError:     # nothing acknowledged the address
            raise OSError(_no_chip(i2c, d))
    if kind == "pwm":
        from armfw.pwmservo import PWMServos
        return PWMServos(channels(board), freq_hz=d["freq_hz"])
    if kind == "sim":
        from armfw.simservo import SimServo
        return SimServo(board.driver)
    raise ValueError("driver.kind: unknown driver %r" % (kind,))
