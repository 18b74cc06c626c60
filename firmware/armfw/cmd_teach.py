# SPDX-License-Identifier: MIT
"""Teach by hand (armfw.commands): what bus servos report, read back. `engage`, and for
the other families: `path record`, `servo read`, the measured= field of `where`, and
the pose `pose save` keeps when relaxed.

Imported the first time one is used (a board whose servos cannot report its pose
loads it only to refuse them): firmware/PROTOCOL.md, "Teach by hand".
"""

from armfw.numeric import DEG
from armfw.protocol import Refused, angles_text
from armfw.status import BAD_COMMAND, BUS_ERROR, HOME_FIRST

# A recorded sample this close (every joint) to the last waypoint adds nothing: a person
# pausing while the host samples at its rate would fill the path with one pose.
MIN_RECORD_STEP = 0.5 * DEG


def measure(p):
    """The joint angles the bus servos report now (radians); BUS_ERROR when the bus fails."""
    try:
        return p.controller.measure()
    except OSError as e:    # armfw.servobus.BusError
        raise Refused(BUS_ERROR, str(e))


def measured_field(p):
    """' measured=Q1,..,Qn' (degrees), read now."""
    return " measured=" + angles_text(measure(p), p.n, True)


def taught_pose(p):
    """The pose to save or record (radians, in p.q_scratch): the commanded one while the
    servos hold it; relaxed, the one a person moved the arm to, as the bus servos report it."""
    controller = p.controller
    q = p.q_scratch
    if controller.pose_known():
        for i in range(p.n):
            q[i] = controller.q[i]
        return q
    if controller.measure is None:
        raise Refused(HOME_FIRST, "servos off, pose unknown: these servos cannot report where they are "
                                  "(send home, or joints Q1..Qn)")
    measured = measure(p)
    for i in range(p.n):
        q[i] = measured[i]
    return p.check_limits(q)


def record(p):
    """path record: the taught pose onto the path, unless within MIN_RECORD_STEP of the last waypoint."""
    q = taught_pose(p)
    pl = p.controller.planner
    if pl.path_len:
        last = (pl.path_len - 1) * p.n
        for i in range(p.n):
            if abs(q[i] - pl.path[last + i]) > MIN_RECORD_STEP:
                break
        else:
            return
    p.family("motion").path_add(p, q)


def servo_read(p, args):
    """`ok T1 .. Tn [TG]`: every bus servo's present position in its own ticks, the joints'
    then the gripper's, raw (no servo map): what `armctl calibrate --by-hand` reads."""
    p.numbers(args, 0, "none")
    if p.controller.measure is None:
        raise Refused(BAD_COMMAND, "these servos cannot report where they are (servo read needs bus servos)")
    measure(p)
    return "ok " + " ".join([str(t) for t in p.controller.driver.position])


def engage(p, args):
    """Torque back on where a person left the relaxed arm: its measured pose becomes the commanded one."""
    p.numbers(args, 0, "none")
    if p.controller.pose_known():
        return p.pose_reply()
    return p.go_to(taught_pose(p))
