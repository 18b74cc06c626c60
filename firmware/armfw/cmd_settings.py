# SPDX-License-Identifier: MIT
"""The settings and information commands (armfw.commands): speed, accel, progress, echo,
check, unlock, info, sync, help. Each is f(protocol, args) -> its final line."""

from armfw import planner
from armfw.compat import const
from armfw.numeric import DEG
from armfw.protocol import BAD_INPUT, Refused, fmt
from armfw.status import BAD_COMMAND

# Gentler than this a stop from full speed takes minutes (deg/s^2, mm/s^2).
_MIN_ACCEL = const(1.0)

# A sync token: letters, digits, "-" and "_", at most this long.
_MAX_TOKEN = const(32)


def _is_token(word):
    for ch in word:
        if not ("0" <= ch <= "9" or "a" <= ch <= "z" or "A" <= ch <= "Z" or ch == "-" or ch == "_"):
            return False
    return True


def unlock(p, args):
    p.numbers(args, 0, "none")
    p.machine.unlock()
    return "ok"


def progress(p, args):
    p.progress = p.on_off(args, "progress")
    return "ok"


def echo(p, args):
    on = p.on_off(args, "echo")
    if p.console is None:
        raise Refused(BAD_COMMAND, "no console to echo on")
    p.console.echo = on
    return "ok"


def speed(p, args):
    controller = p.controller
    if args:
        v = p.numbers(args, 1, "DEG_PER_S")[0]
        if not controller.set_speed_deg_s(v):
            raise Refused(BAD_INPUT, "speed must be %s..%s deg/s" % (
                fmt(planner.MIN_SPEED_DEG_S), fmt(controller.planner.max_speed_rad_s / DEG)))
    return "ok %s" % fmt(controller.planner.speed_rad_s / DEG)


def _limits(p):
    limits = p.controller.planner
    return "joints=%s tool=%s" % (",".join([fmt(a / DEG) for a in limits.joint_accel]), fmt(limits.tool_accel))


def accel(p, args):
    """accel [DEG_PER_S2 [MM_PER_S2]]: each joint's acceleration at most DEG_PER_S2 (and its
    board's), the tool's MM_PER_S2 (at most its board's). Checked whole before any is set."""
    if len(args) > 2:
        raise Refused(BAD_INPUT, "accel [DEG_PER_S2 [MM_PER_S2]]")
    controller = p.controller
    limits = controller.planner
    m = controller.board.motion
    board_joint = [float(v) for v in m["joint_accel_deg_s2"]]
    board_tool = float(m["tool_accel_mm_s2"])
    values = p.numbers(args, len(args), "DEG_PER_S2 [MM_PER_S2]")
    if values and not _MIN_ACCEL <= values[0] <= max(board_joint):
        raise Refused(BAD_INPUT, "joint accel must be %s..%s deg/s^2" % (fmt(_MIN_ACCEL), fmt(max(board_joint))))
    if len(values) > 1 and not _MIN_ACCEL <= values[1] <= board_tool:
        raise Refused(BAD_INPUT, "tool accel must be %s..%s mm/s^2" % (fmt(_MIN_ACCEL), fmt(board_tool)))
    if values:
        for i in range(len(board_joint)):
            limits.joint_accel[i] = min(board_joint[i], values[0]) * DEG
    if len(values) > 1:
        limits.tool_accel = values[1]
    return "ok " + _limits(p)


def check(p, args):
    """Check mode (GRBL's $C): every motion is validated against the pose the
    previous ones would reach, nothing moves; off restores the real pose."""
    if len(args) > 1 or (args and args[0].lower() not in ("on", "off")):
        raise Refused(BAD_INPUT, "check [on|off]")
    controller = p.controller
    machine = p.machine
    if args:
        on = args[0].lower() == "on"
        if on and not p.checking:
            p.real_q = list(controller.q)
            p.real_alarm = (machine.alarm, machine.alarm_reason)
            if p.gcode is not None:     # a program's modal state (G91, F); no G-code yet, none
                p.gcode.save_state()
        elif not on and p.checking:
            for i in range(p.n):
                controller.q[i] = p.real_q[i]
            alarm, reason = p.real_alarm
            if alarm:
                machine.lock(reason)
            else:
                machine.unlock()
            if p.gcode is not None:
                p.gcode.restore_state()
        p.checking = on
        controller.executor.check_only = on
    return "ok check %s" % ("on" if p.checking else "off")


def info(p, args):
    p.numbers(args, 0, "none")
    controller = p.controller
    b = controller.board
    z = controller.solver.zones
    limits = controller.planner
    return ("ok name=%s arm=%s joints=%s gripper=%s step_ms=%d line_step_mm=%s speed_deg_s=%s joint_speed_deg_s=%s"
            " accel_deg_s2=%s tool_speed_mm_s=%s tool_accel_mm_s2=%s zones=%s calibration=%s%s") % (
        b.name, controller.solver.kind, ",".join(controller.solver.names),
        "none" if controller.gripper is None else controller.gripper.channel, limits.step_ms,
        fmt(limits.line_step_mm), fmt(limits.speed_rad_s / DEG), ",".join([fmt(v / DEG) for v in limits.joint_speed]),
        ",".join([fmt(a / DEG) for a in limits.joint_accel]), fmt(limits.tool_speed), fmt(limits.tool_accel),
        ",".join(z.zone_names) if z is not None and z.n_zones else "none", b.calibration, p.clearance())


def sync(p, args):
    # The host can tell this reply from any earlier one: everything before it is stale.
    if len(args) != 1 or len(args[0]) > _MAX_TOKEN or not _is_token(args[0]):
        raise Refused(BAD_INPUT, "sync TOKEN (letters, digits, - and _, at most %d)" % _MAX_TOKEN)
    return "ok " + args[0]


def help(p, args):
    import armfw
    import sys
    from armfw.helptext import HELP
    # Read once and let go: the text is not kept in the heap between two `help`s.
    sys.modules.pop("armfw.helptext", None)
    if hasattr(armfw, "helptext"):
        delattr(armfw, "helptext")
    for line in HELP:
        p.write("# " + line)
    return "ok"
