# SPDX-License-Identifier: MIT
"""The servo drivers by kind: each is a module that owns its board-file fields,
their check and its constructor, imported only when a board names it.

A driver module has:

    FIELDS                         the settings its "driver" section takes
    check(settings, mcu, where, outputs)
                                   checks them and every output channel
                                   (outputs: [(field name, channel)]); returns
                                   the PWM period in microseconds (a bus driver:
                                   its ticks per turn, and a LIMIT saying so)
    make(board)                    the driver for a loaded board

and every driver has the same small interface, so the motion code never
knows which one it drives:

    set_us(channel, us)   one pulse width, int microseconds; ValueError for a
                          non-int or a value outside 0..period (defence in depth:
                          callers have already checked the joint's window;
                          the simulated driver also refuses 0 and the full
                          period, which no servo pulse is and which its record
                          would confuse with "off")
    set_many(channels, pulses)
                          pulses[i] to channels[i] for every i (checked as set_us,
                          all before any is sent); a bus driver sends them in one packet
    off(channel=None)     stop pulses on one channel (None: all); the servo goes limp
    deinit()              stop every pulse and release the hardware

A bus servo driver (armfw.sts, armfw.dynamixel) takes a goal in the servo's
ticks where the others take microseconds (armfw.servobus), and also reads the
servos back: positions(out), status(i) (armfw.feedback compares them).

Every driver is a context manager whose exit calls deinit(), so a script that drives
servos leaves them limp however it ends:

    with drivers.make(board) as driver:
        driver.set_us(0, 1500)
"""

from armfw.compat import const
from armfw.fields import BoardError, known_keys

# Driver kind (a board file's driver.kind) -> its module in armfw.
MODULES = {"sim": "simservo", "pca9685": "pca9685", "pwm": "pwmservo", "sts": "sts",
           "dynamixel": "dynamixel"}
KINDS = tuple(sorted(MODULES))


def module(kind):
    """The module of driver kind (imported on first use)."""
    name = MODULES[kind]
    return getattr(__import__("armfw." + name), name)


def channels(board):
    """Every output the board drives: the joints' channels, then the gripper's."""
    out = list(board.servos.channels)
    if board.gripper is not None:
        out.append(board.gripper["channel"])
    return out


# The bound of a PWM driver's pulses (a bus driver has its own: armfw.servobus.LIMIT).
_PWM_LIMIT = const(("freq_hz", "a %d us pulse does not fit the %d us period"))


def check(settings, mcu, where, outputs, longest_us):
    """The driver section (its kind's fields and check) and every output; longest_us:
    the longest pulse any output may be sent, which must fit the driver's period."""
    dw = where + ".driver"
    m = module(settings["kind"])
    known_keys(settings, m.FIELDS, dw, settings["kind"])
    period = m.check(settings, mcu, dw, outputs)
    if longest_us >= period:
        field, why = getattr(m, "LIMIT", _PWM_LIMIT)
        raise BoardError("%s.%s: %s" % (dw, field, why % (longest_us, period)))


def make(board):
    """The driver for board.driver["kind"]."""
    return module(board.driver["kind"]).make(board)

