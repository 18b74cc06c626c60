# SPDX-License-Identifier: MIT
"""What bus servos report back, against what they were told: the check after each step.

A bus servo driver (armfw.sts, armfw.dynamixel) reads every servo's present
position, load, voltage and temperature in one packet (positions()). After a
step the motion code calls

    failure = feedback.check(driver, commanded, limits)

with commanded the goals just sent to the joints (ticks, joint order: the
driver's first len(commanded) servos). None: carry on. Otherwise (word,
joint, message), and the motion stops:

    BLOCKED    a joint lags its goal by more than max_lag ticks, its load is past
               max_load (per mille), or the servo reports an overload: a hand or an
               obstacle in the way
    OVERHEAT   a servo (the gripper's too) is over max_temp_c, or reports overheating
    VOLTAGE    a servo's supply is outside min_volts..max_volts, or it reports so
    BUS_ERROR  a servo did not answer the read, or answered garbled (joint -1)

The limits are the board file's driver fields (armfw.servobus); 0 or absent
turns that check off. The gripper is not checked for lag or load: it is
meant to stall on what it grips.
"""

from array import array

from armfw.compat import const
from armfw.servobus import BusError
from armfw.status import BLOCKED, BUS_ERROR, OVERHEAT, VOLTAGE

# Status ERROR bits the STS and the Dynamixel hardware-error register share in meaning.
_STS_VOLTAGE = const(1)
_STS_OVERHEAT = const(4)
_STS_OVERLOAD = const(32)


class Limits:
    """A board's feedback limits (its driver section) and the servos' names for messages.

    names: one per servo of the driver (the joints', then "gripper").
    """

    def __init__(self, settings, names):
        self.max_lag = settings.get("max_lag", 0)
        self.max_load = settings.get("max_load", 0)
        self.min_volts10 = int(settings.get("min_volts", 0) * 10 + 0.5)
        self.max_volts10 = int(settings.get("max_volts", 0) * 10 + 0.5)
        self.max_temp_c = settings.get("max_temp_c", 0)
        self.names = names
        self.measured = array("i", bytes(4 * len(names)))      # ticks, as the last read left them
        self.angles = array("f", bytes(4 * len(names)))        # radians, measure()'s answer


def limits(board):
    """The Limits of a loaded board whose driver is a bus driver."""
    names = list(board.solver.names)
    if board.gripper is not None:
        names.append("gripper")
    return Limits(board.driver, names)


def measure(driver, servos, limits, read=True):
    """The joint angles the servos report (radians, through the servo map; limits.angles,
    reused by every call): read now, or (read False) as the last read left them (during a
    motion each step's check has just read them). Raises BusError when the read fails."""
    ticks = limits.measured
    if read:
        driver.positions(ticks)
    out = limits.angles
    for i in range(servos.n):
        out[i] = servos.angle(i, ticks[i])
    return out


def check(driver, commanded, limits):
    """Read the servos and compare; None, or (word, joint, message) for the first failure."""
    measured = limits.measured
    try:
        driver.positions(measured)
    except BusError as e:
        return BUS_ERROR, -1, str(e)
    joints = len(commanded)
    max_lag = limits.max_lag
    max_load = limits.max_load
    for i in range(driver.n):
        load = driver.load[i]
        errors = driver.errors[i]
        if i < joints:
            lag = measured[i] - commanded[i]
            if (max_lag and (lag > max_lag or -lag > max_lag)) or (max_load and (load > max_load or -load > max_load)) \
                    or errors & _STS_OVERLOAD:
                return BLOCKED, i, "%s lags its goal by %d ticks with load %d per mille%s" % (
                    limits.names[i], lag, load, " (servo reports overload)" if errors & _STS_OVERLOAD else "")
        temp = driver.temp_c[i]
        if (limits.max_temp_c and temp > limits.max_temp_c) or errors & _STS_OVERHEAT:
            return OVERHEAT, i, "%s servo at %d C (limit %d C)%s" % (
                limits.names[i], temp, limits.max_temp_c, " and reports overheating" if errors & _STS_OVERHEAT else "")
        volts10 = driver.volts10[i]
        if (limits.min_volts10 and volts10 < limits.min_volts10) or \
                (limits.max_volts10 and volts10 > limits.max_volts10) or errors & _STS_VOLTAGE:
            return VOLTAGE, i, "%s servo supply at %d.%d V (limits %d.%d..%d.%d V)%s" % (
                limits.names[i], volts10 // 10, volts10 % 10, limits.min_volts10 // 10, limits.min_volts10 % 10,
                limits.max_volts10 // 10, limits.max_volts10 % 10,
                " and reports a voltage fault" if errors & _STS_VOLTAGE else "")
    return None
