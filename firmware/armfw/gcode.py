# SPDX-License-Identifier: MIT
"""The G-code face: G-code lines translated onto the line protocol's own commands.

Nothing here moves the arm: a G-code line is turned into the words of a
protocol command (G0 -> move, G1 -> line, G28 -> home, M3/M5 -> grip, ...)
and answered by that command (armfw.protocol), so there is one dispatch and
one motion path. firmware/PROTOCOL.md lists the subset.

Marlin senders (Printrun's printcore, OctoPrint) number their lines and add a
checksum: `N12 G1 X10*93`, the checksum the XOR of every byte before `*`.
A bad checksum or a skipped number is answered as Marlin answers it:
`Error:...`, `Resend: N`, `ok`, and the line is not run. Such a sender
advances only on `ok`, so a refused framed line is answered `Error:WORD
message` and then `ok`; an unframed line gets the protocol's own
`error WORD message`.

A refused motion line locks G-code motion (an alarm, as GRBL's): the lines
that follow are answered but move nothing until M999 or $X clears it, so the
rest of a stream cannot move the arm on from the wrong place.

G1 lines from a console are queued and blended (armfw.gcodeblend): each is
answered `ok` once checked and queued, and any other line first waits for
the queued ones to run (the protocol hands it back to the console's queue).
"""

from math import sqrt

import armfw
from armfw import planner, status
from armfw.commands import GCODE_MOTION
from armfw.compat import const
from armfw.numeric import DEG

# The first letters of G-code words and what each means here.
_AXES = const("XYZAB")
_ARC_WORDS = const("XYZIJRF")
FIRMWARE = "armfw"


def checksum(text):
    """XOR of every byte of text (Marlin's line checksum)."""
    cs = 0
    for ch in text:
        cs ^= ord(ch)
    return cs


def strip_comment(text):
    """text without `; comment` and `(comment)` parts."""
    semi = text.find(";")
    if semi >= 0:
        text = text[:semi]
    while "(" in text:
        a = text.find("(")
        b = text.find(")", a)
        if b < 0:
            text = text[:a]
            break
        text = text[:a] + " " + text[b + 1:]
    return text


class GCode:
    """G-code lines for a protocol.Protocol (its commands and write)."""

    def __init__(self, protocol, refused, number):
        self.protocol = protocol
        # armfw.protocol's Refused and number parser (passed in: protocol imports this module).
        self.Refused = refused
        self._number = number
        self.relative = False           # G91
        self.feed_mm_min = 0.0          # last F; 0: the board's line speed
        self.last_line = 0              # Marlin line number of the last framed line
        self.framed = False
        self._saved = None
        self.blend = None               # armfw.gcodeblend.Blend: the queued G1 lines

    def save_state(self):
        """Keep the modal state (G90/G91, F) while check mode runs a program."""
        self._saved = (self.relative, self.feed_mm_min)

    def restore_state(self):
        """Back to the state save_state kept, or to the defaults where the face was made in
        check mode: a checked program leaves no trace."""
        self.relative, self.feed_mm_min = self._saved or (False, 0.0)
        self._saved = None

    # -- framing ----------------------------------------------------------

    def _resend(self, why):
        w = self.protocol.write
        w("Error:%s, Last Line: %d" % (why, self.last_line))
        w("Resend: %d" % (self.last_line + 1))
        return "ok"

    def handle(self, text):
        """Answer one G-code line (text, ASCII); returns the final line. Raises Refused
        only for unframed lines (a framed line's refusal is Error: + ok)."""
        self.framed = False
        text = text.strip()
        if text[0] in "Nn":
            star = text.find("*")
            if star < 0:
                return self._resend("No Checksum with line number")
            try:
                given = int(text[star + 1:].strip())
            except ValueError:
                given = -1
            if given != checksum(text[:star]):
                return self._resend("checksum mismatch")
            head = text[:star].split(None, 1)
            try:
                number = int(head[0][1:])
            except ValueError:
                return self._resend("bad line number")
            body = head[1] if len(head) > 1 else ""
            self.framed = True
            words = strip_comment(body).upper().split()
            if words and words[0] == "M110":
                new = number
                for w in words[1:]:
                    if w[0] == "N":
                        try:
                            new = int(w[1:])
                        except ValueError:
                            self.protocol.write("Error:M110 needs a whole line number: %s" % w[:20])
                            return "ok"
                self.last_line = new
                return "ok"
            if number != self.last_line + 1:
                return self._resend("Line Number is not Last Line Number+1")
            self.last_line = number
            text = body
        elif "*" in text:
            return self._resend("No Line Number with checksum")
        try:
            return self.run(strip_comment(text))
        except self.Refused as e:
            if not self.framed:
                raise
            self.protocol.write("Error:%s %s" % (e.word, e.message))
            return "ok"

    # -- words ------------------------------------------------------------

    def _int(self, text, letter):
        try:
            return int(text)
        except ValueError:
            raise self.Refused(status.NAMES[status.BAD_INPUT], "%s needs a whole number: %s" % (letter, text[:20]))

    def _words(self, text):
        """{letter: number text} of the words after the command word; repeats refused."""
        words = {}
        for w in text:
            letter = w[0]
            if not ("A" <= letter <= "Z") or len(w) < 2:
                raise self.Refused(status.NAMES[status.BAD_INPUT], "not a G-code word: %s" % w[:20])
            if letter in words:
                raise self.Refused(status.NAMES[status.BAD_INPUT], "%s given twice" % letter)
            words[letter] = self._number(w[1:])
        return words

    def run(self, text):
        """Answer one G-code line without its framing; returns the final line."""
        # G-code allows words without spaces between them ("G1X10Y5"): split them.
        spaced = ""
        for ch in text.upper():
            if "A" <= ch <= "Z" or ch == "$":
                spaced += " "
            spaced += ch
        words = spaced.split()
        if not words:
            return "ok"
        head = words[0]
        if head[0] == "$":
            return self._dollar(text.strip().upper())
        # G01 is G1, M03 is M3.
        code = head[0] + str(self._int(head[1:], head[0])) if head[0] in "GM" else head
        p = self.protocol
        if code in GCODE_MOTION and p.machine.alarm:
            raise self.Refused(status.ALARM, "motion locked: %s (M999 or $X unlocks)" % p.machine.alarm_reason)
        handler = _CODES.get(code)
        if handler is None:
            raise self.Refused(status.BAD_COMMAND, "unsupported G-code %s" % head[:20])
        try:
            # A motion line with a malformed word is a refused motion line like any other.
            return handler(self, self._words(words[1:]))
        except self.Refused as e:
            if code in GCODE_MOTION and e.word != status.ALARM:
                # The rest of a stream must not move the arm on from the wrong place
                # (nor the lines queued before it).
                p.machine.lock("%s refused (%s)" % (code, e.word))
                self.drop_lines()
            raise

    def _dollar(self, text):
        p = self.protocol
        if text == "$C":
            return p.command("check", ["off" if p.checking else "on"])
        if text == "$X":
            return self._unlock({})
        if text == "$H":
            return self._home({})
        raise self.Refused(status.BAD_COMMAND, "unsupported $ command %s ($C check mode, $X unlock, $H home)"
                           % text[:20])

    # -- the codes --------------------------------------------------------

    def _target(self, args):
        """Protocol words X Y [Z PITCH] of a G0/G1 target (mm, deg), absolute or relative."""
        p = self.protocol
        nt = p.nt
        for letter in args:
            if letter not in _AXES and letter != "F":
                raise self.Refused(status.NAMES[status.BAD_INPUT], "G0/G1 take X Y Z A B F, not %s" % letter)
        if nt == 2 and ("Z" in args or "A" in args or "B" in args):
            raise self.Refused(status.NAMES[status.BAD_INPUT], "a planar arm has X and Y only")
        blend = self.blend
        now = blend.end() if blend is not None and blend.count else p.controller.tool()
        out = []
        for i in range(nt):
            letter = _AXES[i] if i < 3 else "A"
            v = now[i] / DEG if i == 3 else now[i]
            if letter in args:
                v = v + args[letter] if self.relative else args[letter]
            out.append(repr(v))
        if "B" in args:
            # The wrist roll (degrees), absolute or relative like the axes.
            roll = args["B"]
            if self.relative:
                roll += p.controller.q[4] / DEG
            out.append(repr(roll))
        return out

    def _move(self, args):
        return self.protocol.command("move", self._target(args))

    def _step_mm(self, args):
        """The tool's travel per step F sets (modal; 0: the board's own line speed)."""
        if "F" in args:
            if not args["F"] > 0:
                raise self.Refused(status.NAMES[status.BAD_INPUT], "F must be > 0 mm/min")
            self.feed_mm_min = args["F"]
        return self.feed_mm_min / 60000.0 * self.protocol.controller.planner.step_ms

    def _line(self, args):
        p = self.protocol
        # F sets the tool speed of this line, up to the board's own line speed.
        step_mm = self._step_mm(args)
        target = self._target(args)
        if p.console is None or p.checking or "B" in args:
            # No stream to queue from, check mode, or a wrist roll: the line alone, from
            # rest to rest, answered with its pose when it ends.
            return p.family("motion").line(p, target, step_mm)
        from armfw.gcodeblend import queue
        return queue(self, target, step_mm)

    # -- the queued G1 lines (armfw.gcodeblend) ---------------------------

    def waiting(self):
        """True while G1 lines are queued and not yet moving."""
        blend = self.blend
        return blend is not None and blend.count > 0 and not blend.running

    def queues(self, raw):
        """True where request line raw (bytes) joins the queued G1 lines (armfw.gcodeblend.joins)."""
        from armfw.gcodeblend import joins
        return joins(raw)

    def start_lines(self):
        """Start the queued G1 lines (armfw.gcodeblend.start)."""
        from armfw.gcodeblend import start
        start(self)

    def lines_ended(self):
        """The running motion ended; True if it was the queued lines (answered already)."""
        blend = self.blend
        if blend is None or not blend.running:
            return False
        blend.running = False
        blend.count = 0
        return True

    def drop_lines(self):
        """Forget the queued G1 lines that have not started (an alarm, Ctrl-X); how many."""
        blend = self.blend
        if blend is None or blend.running:
            return 0
        dropped = blend.count
        blend.count = 0
        return dropped

    def _arc(self, args, clockwise):
        """G2 (clockwise) / G3: an arc in the XY plane (armfw.gcodearc), its chords walked
        under one tool ramp up to the speed F sets, in one plan checked whole."""
        p = self.protocol
        for letter in args:
            if letter not in _ARC_WORDS or p.nt == 2 and letter == "Z":
                raise self.Refused(status.NAMES[status.BAD_INPUT], "G2/G3 take %s, not %s"
                                   % (" ".join(_ARC_WORDS if p.nt == 4 else "XYIJRF"), letter))
        if "R" in args and ("I" in args or "J" in args):
            raise self.Refused(status.NAMES[status.BAD_INPUT], "G2/G3 take I J (the centre) or R, not both")
        if not ("R" in args or "I" in args or "J" in args):
            raise self.Refused(status.NAMES[status.BAD_INPUT], "G2/G3 need I J (the centre's offset) or R")
        p.closed_form()
        step_mm = self._step_mm(args)
        start = p.controller.tool()
        end = list(start)
        for i in range(3 if p.nt == 4 else 2):
            letter = _AXES[i]
            if letter in args:
                end[i] = end[i] + args[letter] if self.relative else args[letter]
        from armfw.gcodearc import arc
        try:
            if "R" in args:
                chords = arc(start, end, clockwise, radius=args["R"])
            else:
                chords = arc(start, end, clockwise, (args.get("I", 0.0), args.get("J", 0.0)))
        except ValueError as e:
            raise self.Refused(status.NAMES[status.BAD_INPUT], "G%d: %s" % (2 if clockwise else 3, e))
        p.may_move()
        controller = p.controller
        controller.plan()
        plan = controller.planner
        most = step_mm if step_mm > 0.0 else plan.line_step_mm
        # No faster than the tool's acceleration allows round the bend: v^2 / r <= accel.
        bend = sqrt(plan.tool_accel * chords.radius) * plan.step_s
        if bend < most:
            most = bend
        chords.split(most)
        chords.top = plan.line_top(most)
        controller.add(planner.ARC, chords)
        return p.start()

    def _clockwise(self, args):
        return self._arc(args, True)

    def _counterclockwise(self, args):
        return self._arc(args, False)

    def _dwell(self, args):
        ms = 0.0
        if "P" in args:
            ms = args["P"]
        elif "S" in args:
            ms = args["S"] * 1000.0
        return self.protocol.command("wait", [repr(ms)])

    def _home(self, args):
        return self.protocol.command("home", [])

    def _absolute(self, args):
        self.relative = False
        return "ok"

    def _relative(self, args):
        self.relative = True
        return "ok"

    def _set_position(self, args):
        raise self.Refused(status.NAMES[status.BAD_INPUT], "G92 refused: the arm's position is the forward "
                           "kinematics of its joint angles and cannot be redefined")

    def _millimetres(self, args):
        return "ok"

    def _report(self, args):
        p = self.protocol
        now = p.controller.tool()
        text = "X:%.3f Y:%.3f" % (now[0], now[1])
        if p.nt == 4:
            text += " Z:%.3f A:%.3f B:%.3f" % (now[2], now[3] / DEG, p.controller.q[4] / DEG)
        p.write(text)
        return "ok"

    def _wait(self, args):
        # A motion has finished when its command is answered, and queued G1 lines
        # have run before any other line is answered.
        return "ok"

    def _grip_close(self, args):
        return self.protocol.command("grip", ["close"])

    def _grip_open(self, args):
        return self.protocol.command("grip", ["open"])

    def _firmware(self, args):
        p = self.protocol
        p.write("FIRMWARE_NAME:%s %s PROTOCOL_VERSION:1.0 MACHINE_TYPE:%s EXTRUDER_COUNT:0"
                % (FIRMWARE, armfw.VERSION, p.controller.board.name))
        return "ok"

    def _temperature(self, args):
        # Printrun and OctoPrint probe a fresh port with M105 until "ok": an arm has no heater.
        return "ok"

    def _unlock(self, args):
        return self.protocol.command("unlock", [])

    def _xy_plane(self, args):
        # G17: arcs in the XY plane, the only one.
        return "ok"

    def _other_plane(self, args):
        raise self.Refused(status.BAD_COMMAND, "only the XY plane (G17): G18 and G19 are not supported")

    def _no_op(self, args):
        # G94 (feed per minute: F is mm/min already), G54 (the one coordinate system):
        # header words CAM tools and plotters emit; M2/M30 (program end): nothing to end;
        # M1 (optional stop): as in GRBL, the optional-stop switch is off (there is none).
        return "ok"

    def _pause(self, args):
        # M0: a dwell that starts held, as GRBL's program pause is a feed hold;
        # `~` (cycle start) resumes. Check mode runs on through it.
        p = self.protocol
        if not p.checking:
            p.machine.hold()
        try:
            reply = p.command("wait", ["0"])
        except self.Refused:
            p.machine.ended()       # not paused: nothing started
            raise
        if not p.checking:
            p.write("# paused (M0): ~ resumes")
        return reply

    def _relax(self, args):
        return self.protocol.command("relax", [])

    def _line_number(self, args):
        # Unframed M110 N: set the line number the next framed line must follow.
        if "N" in args:
            self.last_line = int(args["N"])
        return "ok"


_CODES = {
    "G0": GCode._move, "G1": GCode._line, "G4": GCode._dwell, "G21": GCode._millimetres,
    "G28": GCode._home, "G90": GCode._absolute, "G91": GCode._relative, "G92": GCode._set_position,
    "M3": GCode._grip_close, "M5": GCode._grip_open, "M105": GCode._temperature,
    "M110": GCode._line_number, "M114": GCode._report, "M115": GCode._firmware,
    "M400": GCode._wait, "M999": GCode._unlock,
    "G17": GCode._xy_plane, "G18": GCode._other_plane, "G19": GCode._other_plane,
    "G54": GCode._no_op, "G94": GCode._no_op, "M2": GCode._no_op, "M30": GCode._no_op,
    "M18": GCode._relax, "M84": GCode._relax,
    "G2": GCode._clockwise, "G3": GCode._counterclockwise, "M0": GCode._pause, "M1": GCode._no_op,
}
