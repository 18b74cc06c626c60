# SPDX-License-Identifier: MIT
"""The line protocol spoken on the USB serial console (firmware/PROTOCOL.md describes it).

One request line; any number of informational lines starting "# "; exactly
one final line starting "ok" or "error". Anything that is not a well-formed
command gets one "error" line and moves nothing. A motion is checked whole,
then started: its final line comes when it ends (armfw.session steps it and
calls motion_done or motion_stopped); the bytes themselves are armfw.console's.
"""

from math import isfinite, sin

from armfw import gcode, motion, status
from armfw.compat import const
from armfw.console import MAX_LINE, TOO_LONG
from armfw.kinematics import MIN_MOTION, RULES, ELBOW_NAMES
from armfw.numeric import DEG, wrap_angle
from armfw.status import ABORTED, ALARM, BAD_BOARD, BAD_COMMAND, HOME_FIRST, INTERNAL, NO_CLOSED_FORM, RELAXED
from armfw.twolink import SINGULAR_SIN

BAD_INPUT = status.NAMES[status.BAD_INPUT]

ALARM_ABORTED = "a move was aborted"

# Console states (the `?` status line).
IDLE = "idle"
RUN = "run"
HOLD = "hold"
STATE_RELAXED = "relaxed"
STATE_ALARM = "alarm"

_TAB = const(9)

HELP = (
    "ik X Y [Z PITCH [ROLL]] [elbow=up|down]  solve, do not move: ok STATUS q1..qn elbow= err_mm=",
    "fk Q1..QN                 tool position of joint angles: ok X Y [Z PITCH]",
    "move X Y [Z PITCH [ROLL]] [elbow=up|down]  joint-interpolated move to the IK solution",
    "line X Y [Z PITCH [ROLL]] straight tool line (IK every step, whole path checked first)",
    "joints Q1..QN             move to joint angles (deg)",
    "path add Q1..QN | run | clear  joint waypoints (deg) checked as added; run: one motion through them",
    "servo CH US               raw pulse on one channel (wiring check), inside its window",
    "where                     commanded pose: ok STATUS q1..qn x= y= [z= pitch= roll=] grip= clear_mm= zone= link=",
    "home                      move to the board's home pose",
    "grip open|close           open or close the gripper",
    "pick X Y [Z]              above, down, close gripper, lift (arm5: tool pointing down)",
    "place X Y [Z]             above, down, open gripper, lift",
    "jog DX DY [DZ DPITCH]     straight tool line by a relative amount",
    "jog jN DEG                turn joint N by a relative angle",
    "relax                     servo outputs off (move the arm by hand); then home",
    "unlock                    allow motion again after an abort (Ctrl-X)",
    "speed [DEG_PER_S]         show or set the joint speed limit",
    "progress on|off           '# progress' lines during moves longer than 1 s",
    "echo on|off               echo typed characters and prompt '> ' (people)",
    "check [on|off]            check mode: motions are validated, nothing moves ($C)",
    "wait MS                   dwell: wait MS milliseconds (G4)",
    "G0 G1 G4 G28 G90 G91 M3 M5 M114 M400 M115 ...  G-code (firmware/PROTOCOL.md)",
    "pose save|go|del NAME     save the pose as NAME, move to it, delete it",
    "pose set NAME Q1..QN      save joint angles (deg) as NAME;  pose list: one # line each",
    "info                      board name, arm kind, joint names, zones, clearance",
    "help                      this list",
    "sync TOKEN                answers ok TOKEN (host resynchronisation)",
    "? ! ~ Ctrl-X              real-time, no line end: status, hold, resume, abort",
)

# A sync token: letters, digits, "-" and "_", at most this long.
MAX_TOKEN = const(32)


class Refused(Exception):
    """A request answered with an error line: status word and message."""

    def __init__(self, word, message):
        super().__init__(message)
        self.word = word
        self.message = message


# Below half the last digit shown a value prints as 0.000, never -0.000.
_HALF_DIGIT = 0.0005


def _fmt(v):
    if -_HALF_DIGIT < v < _HALF_DIGIT:
        v = 0.0
    return "%.3f" % v


# "%.3f %.3f ...", by count: a reply's joint angles in one format operation.
_JOINT_FORMATS = {}


def _degrees(q, n):
    """The first n angles of q (radians) in degrees, as _fmt shows each."""
    shown = [q[i] / DEG for i in range(n)]
    for i in range(n):
        if -_HALF_DIGIT < shown[i] < _HALF_DIGIT:
            shown[i] = 0.0
    form = _JOINT_FORMATS.get(n)
    if form is None:
        form = _JOINT_FORMATS[n] = " ".join(["%.3f"] * n)
    return form % tuple(shown)


NUMBER_CHARS = "0123456789+-.eE"
_NOT_DIGITS = "+-.eE"


def _is_token(word):
    for ch in word:
        if not ("0" <= ch <= "9" or "a" <= ch <= "z" or "A" <= ch <= "Z" or ch == "-" or ch == "_"):
            return False
    return True


def _number(word):
    # float() alone is too lenient on MicroPython (float(".") is 0.0): number
    # characters only, at least one digit. (str.strip loops in C, not in Python.)
    digits = not word.strip(NUMBER_CHARS) and word.strip(_NOT_DIGITS) != ""
    if digits:
        try:
            v = float(word)
        except ValueError:
            digits = False
    if not digits:
        raise Refused(BAD_INPUT, "not a number: %s" % word[:20])
    if not isfinite(v):
        raise Refused(BAD_INPUT, "not a finite number: %s" % word[:20])
    return v


class Protocol:
    """Answers request lines for an arm (armfw.motion.ArmController).

    write(text): sends one reply line (without its line end).
    boot_error: when the arm could not be built (controller None), the message every
    request but help is answered with. console: the armfw.console.Console
    whose echo `echo on|off` sets (None: no echo command).

    A motion command checks its whole plan and starts it (moving becomes
    True) without a reply; the caller steps it (controller.step()) and ends it with
    motion_done() or motion_stopped(), which write its final line.
    """

    def __init__(self, controller, write, boot_error=None, console=None):
        self.controller = controller
        self.write = write
        self.boot_error = boot_error
        self.console = console
        self.moving = False
        self.held = False
        self.alarm = False
        self.alarm_reason = ALARM_ABORTED     # why motion is locked while alarm is set
        self.progress = True
        if controller is not None:
            self._n = controller.solver.n
            self._nt = len(controller.solver.targets)
            self._q = [0.0] * self._n
            self._target = [0.0] * self._nt
            self._tool = [0.0] * self._nt
        self._commands = {
            "ik": self.ik, "fk": self.fk, "move": self.move, "line": self.line,
            "joints": self.joints, "path": self.path, "servo": self.servo, "where": self.where,
            "home": self.home, "grip": self.grip, "pick": self.pick, "place": self.place,
            "speed": self.speed, "info": self.info, "help": self.help, "sync": self.sync,
            "jog": self.jog, "relax": self.relax, "unlock": self.unlock,
            "progress": self.set_progress, "echo": self.set_echo,
            "pose": self.pose, "check": self.check, "wait": self.wait,
        }
        self.checking = False
        self._real_q = None
        self._gcode = gcode.GCode(self, Refused, _number)
        self._poses = None
        self._roll = None

    def handle(self, raw):
        """Answer one request line given as bytes without its line end (TOO_LONG: an overlong line).

        A motion that starts gets its final line later (motion_done/motion_stopped).
        """
        try:
            if raw == TOO_LONG:
                raise Refused(BAD_COMMAND, "line too long (max %d bytes)" % MAX_LINE)
            for c in raw:
                if c < 32 and c != _TAB or c == 127:
                    raise Refused(BAD_COMMAND, "control character 0x%02x in line" % c)
                if c > 127:
                    raise Refused(BAD_COMMAND, "not ASCII text")
            text = bytes(raw).decode()
            if gcode.is_gcode(text.lstrip()):
                if self.controller is None:
                    raise Refused(BAD_BOARD, self.boot_error)
                reply = self._gcode.handle(text)
                if reply is not None:
                    self.write(reply)
                return
            words = text.split()
            if not words:
                self.write("ok")
                return
            name = words[0].lower()
            command = self._commands.get(name)
            if command is None:
                raise Refused(BAD_COMMAND, "unknown command %s (try help)" % words[0][:20])
            if self.controller is None and name != "help" and name != "sync":
                raise Refused(BAD_BOARD, self.boot_error)
            reply = command(words[1:])
            if reply is not None:
                self.write(reply)
        except Refused as e:
            self.write("error %s %s" % (e.word, e.message))
        except Exception as e:  # the last line of defence (Ctrl-C is no Exception): an answer, never a traceback
            self.write("error %s %s: %s" % (INTERNAL, type(e).__name__, e))

    # -- argument parsing -----------------------------------------------

    def _numbers(self, args, count, what):
        if len(args) != count:
            raise Refused(BAD_INPUT, "expected %d numbers (%s), got %d words" % (count, what, len(args)))
        return [_number(w) for w in args]

    def _target_words(self):
        return "X Y Z PITCH [ROLL]" if self._nt == 4 else "X Y"

    def _current(self):
        """The IK's current pose: the commanded one, with the roll a target sets."""
        return self.controller.with_roll(self.controller.q, self._roll)

    def _parse_target(self, args, allow_elbow):
        """Tool target from X Y [Z PITCH [ROLL]] (mm, deg) into self._target, the roll
        (radians, or None: unchanged) into self._roll; returns the IK rule."""
        rule = MIN_MOTION
        plain = []
        for w in args:
            if "=" in w:
                key, _, value = w.partition("=")
                if allow_elbow and key.lower() == "elbow" and value.lower() in ("up", "down"):
                    rule = RULES.index(value.lower())
                else:
                    raise Refused(BAD_INPUT, "unknown option %s (elbow=up|down)" % w[:20]
                                  if allow_elbow else "no options here: %s" % w[:20])
            else:
                plain.append(w)
        self._roll = None
        if self._nt == 4 and len(plain) == 5:
            self._roll = wrap_angle(_number(plain.pop()), 180.0) * DEG
        v = self._numbers(plain, self._nt, self._target_words())
        t = self._target
        for i in range(self._nt):
            t[i] = v[i]
        if self._nt == 4:
            # Whole turns of pitch are the same tool direction; reduced here,
            # an absurd 1e300 deg is just an angle.
            t[3] = wrap_angle(v[3], 180.0) * DEG
        return rule

    def _parse_joints(self, args):
        kin = self.controller.solver
        v = self._numbers(args, self._n, " ".join(kin.names))
        q = self._q
        for i in range(self._n):
            q[i] = v[i] * DEG
        return q

    # -- replies --------------------------------------------------------

    def _pose_status(self, q):
        if not self.controller.solver.closed_form:
            return status.OK        # a chain's singular poses are the host solver's business
        # Near full stretch or full fold of the elbow a small tool motion needs
        # a large joint motion: the same SINGULAR warning the solver gives.
        s = sin(q[1] if self._n == 2 else q[2])
        return status.SINGULAR if -SINGULAR_SIN < s < SINGULAR_SIN else status.OK

    def _tool_fields(self):
        p = self.controller.tool(self._tool)
        keys = ("x", "y") if self._nt == 2 else ("x", "y", "z")
        text = ""
        for i in range(len(keys)):
            text += " %s=%s" % (keys[i], _fmt(p[i]))
        if self._nt == 4:
            text += " pitch=%s" % _fmt(p[3] / DEG)
        return text

    def _pose_reply(self, extra=""):
        controller = self.controller
        return "ok %s %s%s%s" % (status.name(self._pose_status(controller.q)), _degrees(controller.q, self._n),
                                 self._tool_fields(), extra)

    def _start(self, planned=True, begun=None):
        """Check the planned motion and start it (no reply yet), or raise its refusal;
        begun: what the caller's own begin() answered (None: check it here)."""
        controller = self.controller
        if begun is None:
            begun = planned and controller.begin()
        if not begun:
            raise Refused(controller.fail_status, self._refusal())
        self.moving = True
        self.held = False
        return None

    def _may_move(self):
        """Refuse motion while the pose is unknown or an abort's alarm holds."""
        if not self.controller.pose_known():
            raise Refused(HOME_FIRST, "servos off, pose unknown: send home (or joints Q1..Qn)")
        if self.alarm:
            raise Refused(ALARM, "%s: send unlock (or home) before moving" % self.alarm_reason)

    def motion_done(self):
        """Final line of the motion that ran to its end."""
        self.moving = self.held = False
        self.write(self._pose_reply(" steps=%d" % self.controller.total))

    def motion_stopped(self, why):
        """Final line of a motion stopped before its end (why: what stopped it); the arm stays put."""
        controller = self.controller
        controller.stop()
        self.moving = self.held = False
        self.write("error %s %s at step %d of %d: %s%s" % (
            ABORTED, why, controller.steps, controller.total, _degrees(controller.q, self._n), self._tool_fields()))

    def state(self):
        """The console state: idle, run, hold, relaxed or alarm."""
        if self.moving:
            return HOLD if self.held else RUN
        if self.controller is None or self.alarm:
            return STATE_ALARM
        if not self.controller.pose_known():
            return STATE_RELAXED
        return IDLE

    def status_line(self, kind="status"):
        """`# status ...` (or `# progress ...`): state, commanded joints, tool pose, steps done/total."""
        controller = self.controller
        text = "# %s state=%s" % (kind, self.state())
        if controller is None:
            return text
        known = controller.pose_known()
        text += " joints=" + ",".join([_fmt(controller.q[i] / DEG) if controller.us[i] >= 0 else "?"
                                       for i in range(self._n)])
        if known:
            text += self._tool_fields()
        if self.moving:
            text += " steps=%d/%d" % (controller.steps, controller.total)
        return text

    def _refusal(self):
        controller = self.controller
        if controller.fail_reason == motion.REASON_GRIPPER:
            return "no gripper on this board"
        text = "%s step %d" % (motion.OP_NAMES[controller.fail_kind], controller.fail_step)
        if controller.fail_kind == motion.MOVE or controller.fail_kind == motion.LINE:
            p = controller.fail_point
            text += " at " + " ".join([_fmt(p[i] / DEG if i == 3 else p[i]) for i in range(self._nt)])
        if controller.fail_joint >= 0:
            text += " joint %s" % controller.solver.names[controller.fail_joint]
        if controller.fail_status == status.NAMES[status.COLLISION]:
            return text + ": " + self._zone_hit()
        return text + ": " + controller.fail_reason

    def _zone_hit(self):
        """'<link> would enter zone <name>' for the last failed zone check."""
        z = self.controller.solver.zones
        return "%s would enter zone %s" % (z.link_names[z.hit_link], z.zone_names[z.hit_zone])

    def _unsolved(self, st, args):
        if st == status.COLLISION:
            return Refused(status.name(st), "every solution for %s: %s" % (
                " ".join(args[:self._nt]), self._zone_hit()))
        return Refused(status.name(st), "no solution for %s" % " ".join(args[:self._nt]))

    # -- commands -------------------------------------------------------

    def _closed_form(self):
        """Refuse a tool-space command on an arm whose IK only the host can solve."""
        if not self.controller.solver.closed_form:
            raise Refused(NO_CLOSED_FORM, "%s arm: no IK on the board; the host solves it "
                          "(armctl move) and sends joints or a path" % self.controller.solver.kind)

    def ik(self, args):
        self._closed_form()
        rule = self._parse_target(args, True)
        kin = self.controller.solver
        q = self._q
        current = self._current()
        st = kin.ik(self._target, q, current, rule)
        if not status.solved(st):
            raise self._unsolved(st, args)
        err_mm, _ = kin.fk_error(self._target, q, current)
        self._note_branch(rule)
        return "ok %s %s elbow=%s err_mm=%s" % (status.name(st), _degrees(q, self._n),
                                                ELBOW_NAMES[kin.elbow], _fmt(err_mm))

    def _note_branch(self, rule):
        if rule != MIN_MOTION and RULES[rule] != ELBOW_NAMES[self.controller.solver.elbow]:
            self.write("# elbow %s has no valid solution here; elbow %s"
                       % (RULES[rule], ELBOW_NAMES[self.controller.solver.elbow]))

    def fk(self, args):
        q = self._parse_joints(args)
        p = self.controller.tool_of(q, self._tool)
        return "ok " + " ".join([_fmt(p[i] / DEG if i == 3 else p[i]) for i in range(self._nt)])

    def move(self, args):
        self._closed_form()
        rule = self._parse_target(args, True)
        self._may_move()
        controller = self.controller
        controller.plan()
        controller.add(motion.MOVE, self._target, rule, self._roll)
        # One IK: the check pass solves the target (from the pose and roll _current gives).
        begun = controller.begin()
        if not begun and controller.fail_reason == motion.REASON_SOLVER:
            raise self._unsolved(status.code(controller.fail_status), args)
        self._note_branch(rule)
        return self._start(True, begun)

    def line(self, args, step_mm=0.0):
        """line X Y [Z PITCH [ROLL]]; step_mm: tool travel per step below the board's (G-code F)."""
        self._closed_form()
        self._parse_target(args, False)
        self._may_move()
        self.controller.plan()
        self.controller.add(motion.LINE, self._target, MIN_MOTION, self._roll, step_mm)
        return self._start()

    def jog(self, args):
        """jog DX DY [DZ [DPITCH [DROLL]]] (a straight tool line) or jog jN DEG (one joint)."""
        if args and args[0][:1] in ("j", "J"):
            return self._jog_joint(args)
        self._closed_form()
        n = self._nt - 1 if self._nt == 4 else self._nt
        if len(args) == self._nt or (self._nt == 4 and len(args) == 5):
            n = len(args)
        v = self._numbers(args, n, "DX DY DZ [DPITCH [DROLL]]" if self._nt == 4 else "DX DY")
        self._may_move()
        t = self.controller.tool(self._target)
        for i in range(3 if self._nt == 4 else 2):
            t[i] += v[i]
        if n >= 4:
            t[3] = wrap_angle(t[3] + v[3] * DEG)
        roll = None
        if n == 5:
            roll = self.controller.q[4] + v[4] * DEG
        self.controller.plan()
        self.controller.add(motion.LINE, t, MIN_MOTION, roll)
        return self._start()

    def _jog_joint(self, args):
        if len(args) != 2:
            raise Refused(BAD_INPUT, "jog jN DEG: a joint number and an angle")
        word = args[0][1:]
        if not (word.isdigit() and 1 <= int(word) <= self._n):
            raise Refused(BAD_INPUT, "no joint %s (j1..j%d)" % (args[0][:20], self._n))
        joint = int(word) - 1
        d = self._numbers(args[1:], 1, "DEG")[0]
        self._may_move()
        q = self._q
        for i in range(self._n):
            q[i] = self.controller.q[i]
        q[joint] += d * DEG
        self._check_limits(q)
        return self._start(self.controller.plan_joints(q))

    def _check_limits(self, q):
        # The solver's own test (its float32 slack included): an angle ik answers is accepted back.
        kin = self.controller.solver
        if kin.within_limits(q):
            return q
        for i in range(self._n):
            if not kin.lo[i] <= q[i] <= kin.hi[i]:
                raise Refused(status.name(status.JOINT_LIMIT), "%s %s deg is outside %s..%s" % (
                    kin.names[i], _fmt(q[i] / DEG), _fmt(kin.lo[i] / DEG), _fmt(kin.hi[i] / DEG)))
        return q

    def _go_to(self, q):
        """Joint move to q; with the pose unknown, q is sent at once (nothing to interpolate from)."""
        controller = self.controller
        if controller.pose_known():
            if self.alarm:
                self._may_move()
            return self._start(controller.plan_joints(q))
        if self.checking:
            raise Refused(HOME_FIRST, "servos off, pose unknown: check mode starts from a known pose")
        if not controller.joints(q):
            raise Refused(controller.fail_status, self._refusal())
        self.alarm = False
        return self._pose_reply(" steps=1")

    def joints(self, args):
        q = self._parse_joints(args)
        self._check_limits(q)
        return self._go_to(q)

    def path(self, args):
        controller = self.controller
        action = args[0].lower() if args else ""
        if action == "add":
            q = self._parse_joints(args[1:])
            self._check_limits(q)
            if not controller.path_add(q):
                if controller.fail_reason == motion.REASON_PATH_FULL:
                    raise Refused(BAD_INPUT, "path full (%d waypoints); run or clear it" % motion.MAX_WAYPOINTS)
                raise Refused(controller.fail_status, "waypoint %d not added: %s" % (
                    controller.fail_step, self._refusal()))
        elif action == "run":
            self._numbers(args[1:], 0, "none")
            if controller.path_len == 0:
                raise Refused(BAD_INPUT, "the path is empty (path add Q1..QN first)")
            self._may_move()
            controller.plan_path()
            try:
                return self._start()
            except Refused:
                controller.path_clear()     # a path runs once, or not at all
                raise
        elif action == "clear":
            self._numbers(args[1:], 0, "none")
            controller.path_clear()
        elif action:
            raise Refused(BAD_INPUT, "path add Q1..QN | path run | path clear")
        return "ok %d" % controller.path_len

    def home(self, args):
        self._numbers(args, 0, "none")
        # Homing is the deliberate act that clears an abort's alarm, as in GRBL.
        self.alarm = False
        self.alarm_reason = ALARM_ABORTED
        return self._go_to(self.controller.solver.home)

    def relax(self, args):
        self._numbers(args, 0, "none")
        if self.checking:
            # Check mode moves nothing and switches nothing off; a program that relaxes
            # the arm cannot be checked past that line.
            raise Refused(BAD_COMMAND, "relax switches the servos off: not in check mode")
        self.controller.relax()
        return "ok " + RELAXED

    def unlock(self, args):
        self._numbers(args, 0, "none")
        self.alarm = False
        self.alarm_reason = ALARM_ABORTED
        return "ok"

    def _on_off(self, args, what):
        if len(args) != 1 or args[0].lower() not in ("on", "off"):
            raise Refused(BAD_INPUT, "%s on|off" % what)
        return args[0].lower() == "on"

    def set_progress(self, args):
        self.progress = self._on_off(args, "progress")
        return "ok"

    def set_echo(self, args):
        on = self._on_off(args, "echo")
        if self.console is None:
            raise Refused(BAD_COMMAND, "no console to echo on")
        self.console.echo = on
        return "ok"

    def servo(self, args):
        v = self._numbers(args, 2, "CH US")
        if v[0] != int(v[0]) or v[1] != int(v[1]):
            raise Refused(BAD_INPUT, "channel and pulse are whole numbers")
        ch = int(v[0])
        us = int(v[1])
        controller = self.controller
        g = controller.gripper
        if g is not None and ch == g.channel:
            if us < g.min_us or us > g.max_us:
                raise Refused(BAD_INPUT, "gripper pulse %d outside %d..%d us" % (us, g.min_us, g.max_us))
            if not self.checking:
                g.set_us(us)
            return "ok %d %d" % (ch, us)
        joint = controller.joint_of_channel(ch)
        if joint < 0:
            raise Refused(BAD_INPUT, "no servo on channel %d" % ch)
        s = controller.servos
        if not controller.raw_pulse_plan(joint, us):
            raise Refused(BAD_INPUT, "pulse %d outside %s's window %d..%d us" % (
                us, controller.solver.names[joint], s.min_us[joint], s.max_us[joint]))
        if not controller.pose_known():
            if self.checking:
                raise Refused(HOME_FIRST, "servos off, pose unknown: check mode starts from a known pose")
            # The other joints' servos are off: only this one gets its pulse, at once.
            controller.send_joint_pulse(joint, us)
            return "ok %d %d" % (ch, us)
        if self.alarm:
            self._may_move()
        return self._start()

    def where(self, args):
        self._numbers(args, 0, "none")
        g = self.controller.gripper
        grip = " grip=%s" % ("none" if g is None else (g.state or "unknown"))
        if not self.controller.pose_known():
            return "ok %s%s" % (RELAXED, grip)
        roll = " roll=%s" % _fmt(self.controller.q[4] / DEG) if self._n == 5 else ""
        return self._pose_reply(roll + grip + self._clearance())

    def _clearance(self):
        """' clear_mm=<gap> zone=<name> link=<link>': the commanded pose's nearest zone."""
        z = self.controller.solver.zones
        if z is None or z.n_zones == 0:
            return " clear_mm=none"
        gap = z.clearance(self.controller.q)
        return " clear_mm=%s zone=%s link=%s" % (_fmt(gap), z.zone_names[z.nearest_zone],
                                                z.link_names[z.nearest_link])

    def grip(self, args):
        if len(args) != 1 or args[0].lower() not in ("open", "close"):
            raise Refused(BAD_INPUT, "grip open|close")
        g = self.controller.gripper
        if g is None:
            raise Refused(BAD_COMMAND, "no gripper on this board")
        if self.checking:
            return "ok %s" % ("open" if args[0].lower() == "open" else "closed")
        if args[0].lower() == "open":
            g.open()
        else:
            g.close()
        return "ok %s" % g.state

    def _pick_place(self, args, pick):
        if self.controller.gripper is None:
            raise Refused(BAD_COMMAND, "no gripper on this board")
        self._closed_form()
        n = self._nt - 1 if self._nt == 4 else self._nt
        v = self._numbers(args, n, "X Y Z" if n == 3 else "X Y")
        self._may_move()
        self.controller.pick_plan(v, pick)
        return self._start()

    def pick(self, args):
        return self._pick_place(args, True)

    def place(self, args):
        return self._pick_place(args, False)

    def speed(self, args):
        controller = self.controller
        if args:
            v = self._numbers(args, 1, "DEG_PER_S")[0]
            if not controller.set_speed_deg_s(v):
                raise Refused(BAD_INPUT, "speed must be %s..%s deg/s" % (
                    _fmt(motion.MIN_SPEED_DEG_S), _fmt(controller.max_speed_rad_s / DEG)))
        return "ok %s" % _fmt(controller.speed_rad_s / DEG)

    def pose(self, args):
        from armfw import poses as named
        from armfw.store import StoreError
        if self._poses is None:
            self._poses = named.Poses(self._n)
        table = self._poses
        action = args[0].lower() if args else ""
        if action == "list":
            self._numbers(args[1:], 0, "none")
            names = table.names()
            for name in names:
                self.write("# %s %s" % (name, " ".join([_fmt(v) for v in table.get(name)])))
            return "ok %d" % len(names)
        if action not in ("save", "set", "go", "del") or len(args) < 2:
            raise Refused(BAD_INPUT, "pose save|go|del NAME, pose set NAME Q1..QN, pose list")
        name = args[1]
        why = named.name_error(name)
        if why is not None:
            raise Refused(BAD_INPUT, "%s: %s" % (why, name[:20]))
        try:
            if action == "save" or action == "set":
                if action == "save":
                    self._numbers(args[2:], 0, "none")
                    q = [self.controller.q[i] / DEG for i in range(self._n)]
                else:
                    q = [v / DEG for v in self._check_limits(self._parse_joints(args[2:]))]
                try:
                    if not self.checking:
                        table.put(name, q)
                except ValueError as e:
                    raise Refused(BAD_INPUT, str(e))
                return "ok %s %s" % (name, " ".join([_fmt(v) for v in q]))
            if action == "del":
                self._numbers(args[2:], 0, "none")
                if table.get(name) is None:
                    raise Refused(BAD_INPUT, "no pose named %s" % name)
                if not self.checking:
                    table.delete(name)
                return "ok %s" % name
            self._numbers(args[2:], 0, "none")
            q = table.get(name)
            if q is None:
                raise Refused(BAD_INPUT, "no pose named %s" % name)
            goal = self._q
            for i in range(self._n):
                goal[i] = q[i] * DEG
            return self._go_to(self._check_limits(goal))
        except StoreError as e:
            raise Refused(status.FLASH, str(e))

    def check(self, args):
        """Check mode (GRBL's $C): every motion is validated against the pose the
        previous ones would reach, nothing moves; off restores the real pose."""
        if len(args) > 1 or (args and args[0].lower() not in ("on", "off")):
            raise Refused(BAD_INPUT, "check [on|off]")
        controller = self.controller
        if args:
            on = args[0].lower() == "on"
            if on and not self.checking:
                self._real_q = list(controller.q)
                self._gcode.save_state()
            elif not on and self.checking:
                for i in range(self._n):
                    controller.q[i] = self._real_q[i]
                self._gcode.restore_state()
            self.checking = on
            controller.check_only = on
        return "ok check %s" % ("on" if self.checking else "off")

    def wait(self, args):
        """Dwell: the arm holds still for MS milliseconds (G4), a motion like any other."""
        ms = self._numbers(args, 1, "MS")[0]
        if not 0 <= ms <= 3600000:
            raise Refused(BAD_INPUT, "wait 0..3600000 ms")
        self._may_move()
        self.controller.plan()
        self.controller.add(motion.WAIT, (ms,))
        return self._start()

    def info(self, args):
        self._numbers(args, 0, "none")
        controller = self.controller
        b = controller.board
        z = controller.solver.zones
        return "ok name=%s arm=%s joints=%s gripper=%s step_ms=%d line_step_mm=%s zones=%s calibration=%s%s" % (
            b.name, controller.solver.kind, ",".join(controller.solver.names),
            "none" if controller.gripper is None else controller.gripper.channel, controller.step_ms,
            _fmt(controller.line_step_mm),
            ",".join(z.zone_names) if z is not None and z.n_zones else "none", b.calibration, self._clearance())

    def sync(self, args):
        # The host can tell this reply from any earlier one: everything before it is stale.
        if len(args) != 1 or len(args[0]) > MAX_TOKEN or not _is_token(args[0]):
            raise Refused(BAD_INPUT, "sync TOKEN (letters, digits, - and _, at most %d)" % MAX_TOKEN)
        return "ok " + args[0]

    def help(self, args):
        for line in HELP:
            self.write("# " + line)
        return "ok"
