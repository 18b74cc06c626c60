# SPDX-License-Identifier: MIT
"""The commands that solve or move the arm (armfw.commands): ik, fk, move, line, jog,
joints, path, servo, where, home, relax, grip, pick, place, wait. Each is
f(protocol, args) -> its final line, or None where a motion starts (its final
line comes when it ends: armfw.session)."""

from armfw import commands, planner, status
from armfw.numeric import DEG, wrap_angle
from armfw.protocol import BAD_INPUT, Refused, angles_text, fmt
from armfw.solver import ELBOW_NAMES, MIN_MOTION, RULES
from armfw.status import BAD_COMMAND, HOME_FIRST, RELAXED


def ik(p, args):
    p.closed_form()
    rule = p.parse_target(args, True)
    kin = p.controller.solver
    q = p.q_scratch
    current = p.current()
    st = kin.ik(p.target, q, current, rule)
    if not status.solved(st):
        raise p.unsolved(st, args)
    err_mm, _ = kin.fk_error(p.target, q, current)
    _note_branch(p, rule)
    return "ok %s %s elbow=%s err_mm=%s" % (status.name(st), angles_text(q, p.n),
                                            ELBOW_NAMES[kin.elbow], fmt(err_mm))


def _note_branch(p, rule):
    if rule != MIN_MOTION and RULES[rule] != ELBOW_NAMES[p.controller.solver.elbow]:
        p.write("# elbow %s has no valid solution here; elbow %s"
                   % (RULES[rule], ELBOW_NAMES[p.controller.solver.elbow]))


def fk(p, args):
    q = p.parse_joints(args)
    tip = p.controller.tool_of(q, p.tool_scratch)
    return "ok " + " ".join([fmt(tip[i] / DEG if i == 3 else tip[i]) for i in range(p.nt)])


def move(p, args):
    p.closed_form()
    rule = p.parse_target(args, True)
    p.may_move()
    controller = p.controller
    controller.plan()
    controller.add(planner.MOVE, p.target, rule, p.roll)
    # One IK: the check pass solves the target (from the pose and roll _current gives).
    begun = controller.begin()
    if not begun and controller.refusal.reason == planner.REASON_SOLVER:
        raise p.unsolved(status.code(controller.refusal.status), args)
    _note_branch(p, rule)
    return p.start(True, begun)


def line(p, args, step_mm=0.0):
    """line X Y [Z PITCH [ROLL]]; step_mm: tool travel per step below the board's (G-code F)."""
    p.closed_form()
    p.parse_target(args, False)
    p.may_move()
    p.controller.plan()
    p.controller.add(planner.LINE, p.target, MIN_MOTION, p.roll, step_mm)
    return p.start()


def jog(p, args):
    """jog DX DY [DZ [DPITCH [DROLL]]] (a straight tool line) or jog jN DEG (one joint)."""
    if args and args[0][:1] in ("j", "J"):
        return _jog_joint(p, args)
    p.closed_form()
    n = p.nt - 1 if p.nt == 4 else p.nt
    if len(args) == p.nt or (p.nt == 4 and len(args) == 5):
        n = len(args)
    v = p.numbers(args, n, "DX DY DZ [DPITCH [DROLL]]" if p.nt == 4 else "DX DY")
    p.may_move()
    t = p.controller.tool(p.target)
    for i in range(3 if p.nt == 4 else 2):
        t[i] += v[i]
    if n >= 4:
        t[3] = wrap_angle(t[3] + v[3] * DEG)
    roll = None
    if n == 5:
        roll = p.controller.q[4] + v[4] * DEG
    p.controller.plan()
    p.controller.add(planner.LINE, t, MIN_MOTION, roll)
    return p.start()


def _jog_joint(p, args):
    if len(args) != 2:
        raise Refused(BAD_INPUT, "jog jN DEG: a joint number and an angle")
    word = args[0][1:]
    if not (word.isdigit() and 1 <= int(word) <= p.n):
        raise Refused(BAD_INPUT, "no joint %s (j1..j%d)" % (args[0][:20], p.n))
    joint = int(word) - 1
    d = p.numbers(args[1:], 1, "DEG")[0]
    p.may_move()
    q = p.q_scratch
    for i in range(p.n):
        q[i] = p.controller.q[i]
    q[joint] += d * DEG
    p.check_limits(q)
    return p.start(p.controller.plan_joints(q))


def joints(p, args):
    q = p.parse_joints(args)
    p.check_limits(q)
    return p.go_to(q)


def path(p, args):
    controller = p.controller
    action = args[0].lower() if args else ""
    if action == "add":
        q = p.parse_joints(args[1:])
        path_add(p, p.check_limits(q))
    elif action == "run":
        p.numbers(args[1:], 0, "none")
        if controller.planner.path_len == 0:
            raise Refused(BAD_INPUT, "the path is empty (path add Q1..QN first)")
        p.may_move()
        controller.plan_path()
        try:
            return p.start()
        except Refused:
            controller.planner.path_clear()     # a path runs once, or not at all
            raise
    elif action == "record":
        p.numbers(args[1:], 0, "none")
        p.family(commands.TEACH).record(p)
    elif action == "clear":
        p.numbers(args[1:], 0, "none")
        controller.planner.path_clear()
    elif action:
        raise Refused(BAD_INPUT, "path add Q1..QN | path record | path run | path clear")
    return "ok %d" % controller.planner.path_len


def path_add(p, q):
    """path add's check and its refusal, for a waypoint q (radians) given or recorded."""
    if not p.controller.planner.path_add(q):
        if p.controller.refusal.reason == planner.REASON_PATH_FULL:
            raise Refused(BAD_INPUT, "path full (%d waypoints); run or clear it" % planner.MAX_WAYPOINTS)
        raise Refused(p.controller.refusal.status, "waypoint %d not added: %s" % (
            p.controller.refusal.step, p.refusal()))


def home(p, args):
    p.numbers(args, 0, "none")
    # Homing is the deliberate act that clears an abort's alarm, as in GRBL.
    p.machine.unlock()
    return p.go_to(p.controller.solver.home)


def relax(p, args):
    p.numbers(args, 0, "none")
    if p.checking:
        # Check mode moves nothing and switches nothing off; a program that relaxes
        # the arm cannot be checked past that line.
        raise Refused(BAD_COMMAND, "relax switches the servos off: not in check mode")
    p.controller.relax()
    return "ok " + RELAXED


def servo(p, args):
    if args and args[0].lower() == "read":
        return p.family(commands.TEACH).servo_read(p, args[1:])
    v = p.numbers(args, 2, "CH US")
    if v[0] != int(v[0]) or v[1] != int(v[1]):
        raise Refused(BAD_INPUT, "channel and pulse are whole numbers")
    ch = int(v[0])
    us = int(v[1])
    controller = p.controller
    g = controller.gripper
    if g is not None and ch == g.channel:
        if us < g.min_us or us > g.max_us:
            raise Refused(BAD_INPUT, "gripper pulse %d outside %d..%d us" % (us, g.min_us, g.max_us))
        if not p.checking:
            g.set_us(us)
        return "ok %d %d" % (ch, us)
    joint = controller.output.joint_of_channel(ch)
    if joint < 0:
        raise Refused(BAD_INPUT, "no servo on channel %d" % ch)
    s = controller.servos
    if not controller.raw_pulse_plan(joint, us):
        raise Refused(BAD_INPUT, "pulse %d outside %s's window %d..%d us" % (
            us, controller.solver.names[joint], s.min_us[joint], s.max_us[joint]))
    if not controller.pose_known():
        if p.checking:
            raise Refused(HOME_FIRST, "servos off, pose unknown: check mode starts from a known pose")
        # The other joints' servos are off: only this one gets its pulse, at once.
        controller.output.send_joint_pulse(joint, us)
        return "ok %d %d" % (ch, us)
    if p.machine.alarm:
        p.may_move()
    return p.start()


def where(p, args):
    p.numbers(args, 0, "none")
    g = p.controller.gripper
    grip = " grip=%s" % ("none" if g is None else (g.state or "unknown"))
    if p.controller.measure is not None:
        grip = p.family(commands.TEACH).measured_field(p) + grip
    if not p.controller.pose_known():
        return "ok %s%s" % (RELAXED, grip)
    roll = " roll=%s" % fmt(p.controller.q[4] / DEG) if p.n == 5 else ""
    return p.pose_reply(roll + grip + p.clearance())


def grip(p, args):
    if len(args) != 1 or args[0].lower() not in ("open", "close"):
        raise Refused(BAD_INPUT, "grip open|close")
    g = p.controller.gripper
    if g is None:
        raise Refused(BAD_COMMAND, "no gripper on this board")
    if p.checking:
        return "ok %s" % ("open" if args[0].lower() == "open" else "closed")
    if args[0].lower() == "open":
        g.open()
    else:
        g.close()
    return "ok %s" % g.state


def _pick_place(p, args, pick):
    if p.controller.gripper is None:
        raise Refused(BAD_COMMAND, "no gripper on this board")
    p.closed_form()
    n = p.nt - 1 if p.nt == 4 else p.nt
    v = p.numbers(args, n, "X Y Z" if n == 3 else "X Y")
    p.may_move()
    p.controller.pick_plan(v, pick)
    return p.start()


def pick(p, args):
    return _pick_place(p, args, True)


def place(p, args):
    return _pick_place(p, args, False)


def wait(p, args):
    """Dwell: the arm holds still for MS milliseconds (G4), a motion like any other."""
    ms = p.numbers(args, 1, "MS")[0]
    if not 0 <= ms <= 3600000:
        raise Refused(BAD_INPUT, "wait 0..3600000 ms")
    p.may_move()
    p.controller.plan()
    p.controller.add(planner.WAIT, (ms,))
    return p.start()
