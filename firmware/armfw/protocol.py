# SPDX-License-Identifier: MIT
"""The line protocol spoken on the USB serial console (firmware/PROTOCOL.md describes it).

One request line; any number of informational lines starting "# "; exactly
one final line starting "ok" or "error". Anything that is not a well-formed
command gets one "error" line and moves nothing. A motion is checked whole,
then started: its final line comes when it ends (armfw.session steps it and
calls motion_done or motion_stopped); the bytes themselves are armfw.console's.

This module is the protocol's core: dispatch by the command table
(armfw.commands), parsing, replies and the console state. The commands
themselves live in their families' modules (armfw.cmd_motion, cmd_settings,
cmd_poses, cmd_teach) and the G-code face in armfw.gcode, each imported when first used.
"""

from math import isfinite

from armfw import commands, planner, status
from armfw.compat import const
from armfw.console import MAX_LINE, TOO_LONG
from armfw.machinestate import ALARM_ABORTED, STATE_ALARM, MachineState
from armfw.solver import MIN_MOTION, RULES
from armfw.numeric import DEG, wrap_angle
from armfw.status import (ABORTED, ALARM, BAD_BOARD, BAD_COMMAND, HOME_FIRST, INTERNAL, NO_CLOSED_FORM,
                          NO_MEMORY)

BAD_INPUT = status.NAMES[status.BAD_INPUT]

_TAB = const(9)
_NO_HEAP_FOR_REPLY = "error " + NO_MEMORY + " out of memory making the reply"
_NO_HEAP_FOR_REPLY_LINE = _NO_HEAP_FOR_REPLY + "\n"
_NO_HEAP_FOR_ALARM = "alarm " + NO_MEMORY + " out of memory making the alarm line"
_NO_HEAP_FOR_ALARM_LINE = _NO_HEAP_FOR_ALARM + "\n"


class Refused(Exception):
    """A request answered with an error line: status word and message."""

    def __init__(self, word, message):
        super().__init__(message)
        self.word = word
        self.message = message


# Below half the last digit shown a value prints as 0.000, never -0.000.
_HALF_DIGIT = const(0.0005)


def fmt(v):
    if -_HALF_DIGIT < v < _HALF_DIGIT:
        v = 0.0
    return "%.3f" % v


# "%.3f %.3f ...", by count: a reply's joint angles in one format operation.
_JOINT_FORMATS = {}


def angles_text(q, n, comma=False):
    """The first n angles of q (radians) in degrees, as fmt shows each, between spaces
    (comma: between commas, as a status line's field)."""
    shown = [q[i] / DEG for i in range(n)]
    for i in range(n):
        if -_HALF_DIGIT < shown[i] < _HALF_DIGIT:
            shown[i] = 0.0
    key = -n if comma else n
    form = _JOINT_FORMATS.get(key)
    if form is None:
        form = _JOINT_FORMATS[key] = ("," if comma else " ").join(["%.3f"] * n)
    return form % tuple(shown)


_NUMBER_CHARS = const("0123456789+-.eE")
_NOT_DIGITS = const("+-.eE")


def number(word):
    # float() alone is too lenient on MicroPython (float(".") is 0.0): number
    # characters only, at least one digit. (str.strip loops in C, not in Python.)
    digits = not word.strip(_NUMBER_CHARS) and word.strip(_NOT_DIGITS) != ""
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

    def __init__(self, controller, write, boot_error=None, console=None, boot_word=BAD_BOARD):
        self.controller = controller
        self.write = write
        self.boot_error = boot_error
        self.boot_word = boot_word      # the reply word of boot_error: BAD_BOARD, or NO_MEMORY
        self.console = console
        self.machine = MachineState()   # moving, held, alarm: shared with armfw.session
        self.progress = True
        if controller is not None:
            self.n = controller.solver.n
            self.nt = len(controller.solver.targets)
            self.q_scratch = [0.0] * self.n
            self.target = [0.0] * self.nt
            self.tool_scratch = [0.0] * self.nt
        self.checking = False
        self.real_q = None              # the real pose while check mode walks a program
        self.real_alarm = None          # and the real alarm: (alarm, alarm_reason)
        self.gcode = None               # armfw.gcode.GCode, made by the first G-code line
        self.poses = None               # armfw.poses.Poses, made by the first pose command
        self.roll = None
        self._families = {}             # family name -> its armfw.cmd_<family> module, as imported

    def handle(self, raw):
        """Answer one request line given as bytes without its line end (TOO_LONG: an overlong line).

        A motion that starts gets its final line later (motion_done/motion_stopped).
        """
        try:
            g = self.gcode
            if g is not None and g.waiting() and (raw == TOO_LONG or not g.queues(raw)):
                # Queued G1 lines run first; this line waits for their end (armfw.gcode).
                self.console.unread()
                g.start_lines()
                return
            self._answer(raw)
        except MemoryError:
            self.no_heap_for_reply()

    def no_heap_for_reply(self, answered=False):
        """The final line when the heap ran out while the reply itself was being made (its
        words are formatted after the request's garbage): words that need no formatting.
        answered: the request was answered already, so this is an alarm line (see final)."""
        import gc
        gc.collect()
        if answered:
            line, whole_line = _NO_HEAP_FOR_ALARM, _NO_HEAP_FOR_ALARM_LINE
        else:
            line, whole_line = _NO_HEAP_FOR_REPLY, _NO_HEAP_FOR_REPLY_LINE
        try:
            self.write(line)
        except MemoryError:
            if self.console is None:
                raise
            self.console.write_whole_line(whole_line)

    def _answer(self, raw):
        doing = "the request"
        try:
            if raw == TOO_LONG:
                raise Refused(BAD_COMMAND, "line too long (max %d bytes)" % MAX_LINE)
            for c in raw:
                if c < 32 and c != _TAB or c == 127:
                    raise Refused(BAD_COMMAND, "control character 0x%02x in line" % c)
                if c > 127:
                    raise Refused(BAD_COMMAND, "not ASCII text")
            text = bytes(raw).decode()
            if commands.is_gcode(text.lstrip()):
                if self.controller is None:
                    raise Refused(self.boot_word, self.boot_error)
                doing = "G-code"
                reply = self.gcode_face().handle(text)
                if reply is not None:
                    self.write(reply)
                return
            words = text.split()
            if not words:
                self.write("ok")
                return
            name = words[0].lower()
            doing = name[:20]
            entry = commands.find(name)
            if entry is None:
                raise Refused(BAD_COMMAND, "unknown command %s (try help)" % words[0][:20])
            if self.controller is None and name not in commands.WITHOUT_ARM:
                raise Refused(self.boot_word, self.boot_error)
            reply = getattr(self.family(entry[1]), name)(self, words[1:])
            if reply is not None:
                self.write(reply)
        except Refused as e:
            self.write("error %s %s" % (e.word, e.message))
        except MemoryError:
            # Checked before anything moves: a plan that ran out of heap has not started.
            if self.machine.moving:
                self.controller.stop()
            self.machine.ended()
            self.out_of_memory(doing + ": nothing moved")
        except Exception as e:  # the last line of defence (Ctrl-C is no Exception): an answer, never a traceback
            self.write("error %s %s: %s" % (INTERNAL, type(e).__name__, e))

    def gcode_face(self):
        """The G-code translator (armfw.gcode.GCode), made on first use."""
        if self.gcode is None:
            from armfw.gcode import GCode
            self.gcode = GCode(self, Refused, number)
        return self.gcode

    def family(self, name):
        """The module answering a command family (armfw.commands), imported on first use."""
        module = self._families.get(name)
        if module is None:
            module = self._families[name] = getattr(__import__("armfw.cmd_" + name), "cmd_" + name)
        return module

    def command(self, name, args):
        """Answer command name with args (words) as if it had been sent: its final line,
        or None while its motion runs (G-code lines are translated onto these)."""
        return getattr(self.family(commands.find(name)[1]), name)(self, args)

    def numbers(self, args, count, what):
        if len(args) != count:
            raise Refused(BAD_INPUT, "expected %d numbers (%s), got %d words" % (count, what, len(args)))
        return [number(w) for w in args]

    def target_words(self):
        return "X Y Z PITCH [ROLL]" if self.nt == 4 else "X Y"

    def current(self):
        """The IK's current pose: the commanded one, with the roll a target sets."""
        return self.controller.planner.with_roll(self.controller.q, self.roll)

    def parse_target(self, args, allow_elbow):
        """Tool target from X Y [Z PITCH [ROLL]] (mm, deg) into self.target, the roll
        (radians, or None: unchanged) into self.roll; returns the IK rule."""
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
        self.roll = None
        if self.nt == 4 and len(plain) == 5:
            self.roll = wrap_angle(number(plain.pop()), 180.0) * DEG
        # X Y Z alone: the pitch the board sets, where its arm has one (armfw.chain5).
        pitch = getattr(self.controller.solver, "default_pitch", None) if self.nt == 4 and len(plain) == 3 else None
        v = self.numbers(plain, self.nt if pitch is None else 3, self.target_words())
        t = self.target
        for i in range(len(v)):
            t[i] = v[i]
        if self.nt == 4:
            # Whole turns of pitch are the same tool direction; reduced here,
            # an absurd 1e300 deg is just an angle.
            t[3] = wrap_angle(v[3], 180.0) * DEG if pitch is None else pitch
        return rule

    def parse_joints(self, args):
        kin = self.controller.solver
        v = self.numbers(args, self.n, " ".join(kin.names))
        q = self.q_scratch
        for i in range(self.n):
            q[i] = v[i] * DEG
        return q

    def tool_fields(self):
        p = self.controller.tool(self.tool_scratch)
        keys = ("x", "y") if self.nt == 2 else ("x", "y", "z")
        text = ""
        for i in range(len(keys)):
            text += " %s=%s" % (keys[i], fmt(p[i]))
        if self.nt == 4:
            text += " pitch=%s" % fmt(p[3] / DEG)
        return text

    def pose_reply(self, extra=""):
        q = self.controller.q
        return "ok %s %s%s%s" % (status.name(self.controller.solver.pose_status(q)), angles_text(q, self.n),
                                 self.tool_fields(), extra)

    def start(self, planned=True, begun=None):
        """Check the planned motion and start it (no reply yet), or raise its refusal;
        begun: what the caller's own begin() answered (None: check it here)."""
        controller = self.controller
        if begun is None:
            begun = planned and controller.begin()
        if not begun:
            self.machine.ended()        # a `!` during the check holds nothing now
            if controller.refusal.reason == planner.REASON_CANCELLED:
                # Ctrl-X during the check: locked as after any abort.
                self.machine.lock(ALARM_ABORTED)
            raise Refused(controller.refusal.status, self.refusal())
        self.machine.started()
        return None

    def may_move(self):
        """Refuse motion while the pose is unknown or an abort's alarm holds."""
        if not self.controller.pose_known():
            raise Refused(HOME_FIRST, "servos off, pose unknown: send home (or joints Q1..Qn)")
        if self.machine.alarm:
            raise Refused(ALARM, "%s: send unlock (or home) before moving" % self.machine.alarm_reason)

    def motion_done(self):
        """Final line of the motion that ran to its end."""
        self.machine.ended()
        if self.gcode is not None and self.gcode.lines_ended():
            return                      # queued G1 lines: each was answered when queued
        self.write(self.pose_reply(" steps=%d" % self.controller.executor.total))

    def motion_stopped(self, why, word=ABORTED):
        """Final line of a motion stopped before its end (why: what stopped it); the arm stays put.
        Queued G1 lines were answered when queued: theirs is an alarm line, not a reply."""
        controller = self.controller
        controller.stop()
        self.machine.ended()
        answered = self.gcode is not None and self.gcode.lines_ended()
        try:
            self.final(answered, word, "%s at step %d of %d: %s%s" % (
                why, controller.executor.steps, controller.executor.total, angles_text(controller.q, self.n),
                self.tool_fields()))
        except MemoryError:
            self.no_heap_for_reply(answered)

    def final(self, answered, word, message):
        """`error WORD message`, the reply to a request; or, where the request was answered
        already (queued G1 lines), `alarm WORD message`, a line that answers no request
        (`Error:WORD message` after Marlin's numbered lines, which their senders log)."""
        if not answered:
            self.write("error %s %s" % (word, message))
        elif self.gcode is not None and self.gcode.framed:
            self.write("Error:%s %s" % (word, message))
        else:
            self.write("alarm %s %s" % (word, message))

    def out_of_memory(self, doing, answered=False):
        """The line for a request or a step that ran out of heap (doing: what it was doing;
        answered: its request was answered already, see final)."""
        import gc
        gc.collect()
        free = getattr(gc, "mem_free", None)        # MicroPython's; CPython has none
        self.final(answered, NO_MEMORY, "out of memory in %s%s" % (
            doing, " (%d bytes free)" % free() if free is not None else ""))

    def state(self):
        """The console state: idle, check, run, hold, relaxed or alarm (armfw.machinestate)."""
        controller = self.controller
        if controller is None:
            return STATE_ALARM
        return self.machine.word(controller.planner.checking, not controller.pose_known())

    def status_line(self, kind="status"):
        """`# status ...` (or `# progress ...`): state, commanded joints, tool pose, steps done/total."""
        controller = self.controller
        text = "# %s state=%s" % (kind, self.state())
        if controller is None:
            return text
        known = controller.pose_known()
        text += " joints=" + ",".join([fmt(controller.q[i] / DEG) if controller.output.us[i] >= 0 else "?"
                                       for i in range(self.n)])
        if controller.measure is not None:
            # Mid-motion, each step's feedback check has just read the servos: no extra read.
            try:
                text += " measured=" + angles_text(
                    controller.measure(not (self.machine.moving and controller.executor.steps)), self.n, True)
            except OSError:         # armfw.servobus.BusError: a status line never fails
                text += " measured=?"
        if known:
            text += self.tool_fields()
        if self.machine.moving:
            executor = controller.executor
            text += " steps=%d/%d" % (executor.steps, executor.total)
            if kind == "status":
                speed, stop = executor.motion_fields()
                text += " speed=%s stop=%s" % (fmt(speed), fmt(stop))
        return text

    def refusal(self):
        controller = self.controller
        if controller.refusal.reason == planner.REASON_GRIPPER:
            return "no gripper on this board"
        text = "%s step %d" % (planner.OP_NAMES[controller.refusal.kind], controller.refusal.step)
        if controller.refusal.kind in (planner.MOVE, planner.LINE, planner.ARC, planner.BLEND):
            p = controller.refusal.point
            text += " at " + " ".join([fmt(p[i] / DEG if i == 3 else p[i]) for i in range(self.nt)])
        if controller.refusal.joint >= 0:
            text += " joint %s" % controller.solver.names[controller.refusal.joint]
        if controller.refusal.status == status.NAMES[status.COLLISION]:
            return text + ": " + self.zone_hit()
        return text + ": " + controller.refusal.reason

    def zone_hit(self):
        """'<link> would enter zone <name>' for the last failed zone check."""
        z = self.controller.solver.zones
        return "%s would enter zone %s" % (z.link_names[z.hit_link], z.zone_names[z.hit_zone])

    def unsolved(self, st, args):
        if st == status.COLLISION:
            return Refused(status.name(st), "every solution for %s: %s" % (
                " ".join(args[:self.nt]), self.zone_hit()))
        return Refused(status.name(st), "no solution for %s" % " ".join(args[:self.nt]))

    def closed_form(self):
        """Refuse a tool-space command on an arm whose IK only the host can solve."""
        if not self.controller.solver.closed_form:
            raise Refused(NO_CLOSED_FORM, "%s arm: no IK on the board; the host solves it "
                          "(armctl move) and sends joints or a path" % self.controller.solver.kind)

    def check_limits(self, q):
        # The solver's own test (its float32 slack included): an angle ik answers is accepted back.
        kin = self.controller.solver
        if kin.within_limits(q):
            return q
        for i in range(self.n):
            if not kin.lo[i] <= q[i] <= kin.hi[i]:
                raise Refused(status.name(status.JOINT_LIMIT), "%s %s deg is outside %s..%s" % (
                    kin.names[i], fmt(q[i] / DEG), fmt(kin.lo[i] / DEG), fmt(kin.hi[i] / DEG)))
        return q

    def go_to(self, q):
        """Joint move to q; with the pose unknown, q is sent at once (nothing to interpolate from)."""
        controller = self.controller
        if controller.pose_known():
            if self.machine.alarm:
                self.may_move()
            return self.start(controller.plan_joints(q))
        if self.checking:
            raise Refused(HOME_FIRST, "servos off, pose unknown: check mode starts from a known pose")
        if not controller.joints(q):
            raise Refused(controller.refusal.status, self.refusal())
        self.machine.unlock()
        return self.pose_reply(" steps=1")

    def on_off(self, args, what):
        if len(args) != 1 or args[0].lower() not in ("on", "off"):
            raise Refused(BAD_INPUT, "%s on|off" % what)
        return args[0].lower() == "on"

    def clearance(self):
        """' clear_mm=<gap> zone=<name> link=<link>': the commanded pose's nearest zone."""
        z = self.controller.solver.zones
        if z is None or z.n_zones == 0:
            return " clear_mm=none"
        gap = z.clearance(self.controller.q)
        return " clear_mm=%s zone=%s link=%s" % (fmt(gap), z.zone_names[z.nearest_zone],
                                                z.link_names[z.nearest_link])

