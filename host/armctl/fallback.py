# SPDX-License-Identifier: MIT
"""The host's numerical fallback, driving the board: what `armctl move` does.

A point move (Mover.move): the board's analytic solver answers first (`move`,
or `ik` then `joints` when a roll is given). Where the target leaves the tool
pitch free, or the board answers NO_CLOSED_FORM (a chain arm), the host
solves numerically (armctl.numik, DLS) seeded from the pose the board reports
(`where`), checks the answer with the firmware's own FK (armfw, imported
here), and moves with `joints`, which the board checks again (limits, pulse
windows). An unreachable target gets its honest status; the nearest pose found
is reported and never sent.

A straight line (Mover.line): where the board cannot solve it (free pitch,
chain arm) every step is solved on the host, each seeded by the one before,
and a step that would turn a joint further than the board's speed limit allows
in one control period is split (the tool slows down) until it does not, or the
line is refused as a jump (a branch flip), as the firmware's own lines do.
Every step becomes a waypoint moved onto the servos' pulse grid (see
armctl.fallback_line); a line with more steps than the board holds is thinned
instead to as few waypoints as keep every pose the board will command (its
joint interpolation at its own speed limit) within fallback_line.LINE_TOLERANCE_MM of the
line. Every pose the board will command is checked (FK against the line,
limits, zones, pulse windows) before anything is sent. The board takes them with
`path add` (each checked as it arrives), checks the whole path again, and
runs it as one motion (`path run`). A link lost while the path is being sent
leaves the arm where it was: nothing runs before `path run`.
"""

import math

import numpy as np

from armctl import numik
from armctl.fallback_line import plan_line
from armctl.pacing import MARGIN_S, Pacer
from armfw import status as fw_status
from armfw.numeric import DEG
from armfw.protocol import Refused as BoardRefused, number as board_number

# A host answer must reproduce the target this closely through the firmware's FK (mm).
FK_TOLERANCE_MM = 0.05
# Decimal places of the joint angles sent (degrees): 1e-6 deg moves a 400 mm arm's tip 7 nm.
ANGLE_DIGITS = 6

SOLVER_BOARD = "board"
SOLVER_HOST = "host-dls"
# The error figure's decimal places (mm), in replies and on the page alike (Outcome.error_mm).
ERROR_PLACES = 4


class Outcome:
    """What a move or line did.

    moved: True when the arm moved. status: a status word (armfw.status.WORDS). solver: SOLVER_BOARD or SOLVER_HOST. fk_error_mm: how
    far the firmware's FK of the answer misses the target (None if no answer).
    q_deg: the joint angles sent, or for a refused target the nearest pose
    found (never sent). reached: the board's `where` reply after the motion
    (None if nothing moved). message: the board's or the solver's words.
    waypoints: joint waypoints sent (lines solved on the host).
    """

    def __init__(self, moved, status, solver, fk_error_mm=None, q_deg=None, reached=None,
                 message="", waypoints=0, nearest=None):
        self.moved = moved
        self.status = status
        self.solver = solver
        self.fk_error_mm = fk_error_mm
        self.q_deg = q_deg
        self.reached = reached
        self.message = message
        self.waypoints = waypoints
        self.nearest = nearest      # tool position (mm) of the nearest pose found, for a refusal

    def error_mm(self):
        """The error figure (mm to ERROR_PLACES places; None if none): what figure() writes."""
        return None if self.fk_error_mm is None else round(self.fk_error_mm, ERROR_PLACES)

    def figure(self):
        """The figure for a reply: fk_err_mm=E (a move) or off_line_mm=E (a line), space first; "" if none."""
        e = self.error_mm()
        if e is None:
            return ""
        # A line's figure is the farthest any pose the board commands strays from the line.
        return " %s=%.*f" % ("off_line_mm" if self.waypoints else "fk_err_mm", ERROR_PLACES, e)

    def describe(self):
        """Lines for a person: solver, status, FK error, pose reached or the refusal."""
        out = ["solver=%s status=%s%s" % (self.solver, self.status, self.figure())]
        if self.waypoints:
            out.append("waypoints=%d" % self.waypoints)
        if self.moved and self.reached is not None:
            out.append("reached: " + self.reached.final)
        elif not self.moved:
            out.append("not moved: %s" % self.message if self.message else "not moved")
            if self.q_deg is not None:
                text = "nearest pose found (not sent): " + " ".join("%.3f" % a for a in self.q_deg)
                if self.nearest is not None:
                    text += " tool at " + " ".join("%.3f" % v for v in self.nearest)
                out.append(text)
        return out


class Mover:
    """Moves the arm of board (an armfw Board, the same file the board runs) over a link.

    link: anything with request(line, motion_s=0.0) -> armctl.link.Reply (armctl.link.Link:
    motion_s is how long the board may stay silent moving before its reply).
    """

    def __init__(self, link, board):
        self.link = link
        self.board = board
        self.solver = board.solver
        self.n = self.solver.n
        self.step_ms = int(board.motion["step_ms"])
        self.line_step_mm = float(board.motion["line_step_mm"])
        self._tip = [0.0] * len(self.solver.targets)
        self._us = [0] * self.n
        self._twin = None

    # -- board I/O -------------------------------------------------------

    def request(self, line, motion_s=0.0):
        return self.link.request(line, motion_s=motion_s)

    def _board_motion(self, line):
        """Send a motion request the board solves itself: a move may turn a joint by up to a
        full turn at the speed in force; a line gets armctl.pacing's allowance (its length)."""
        if line.startswith("move"):
            return self.request(line, motion_s=MARGIN_S + 2.0 * math.pi / self.speed_rad_s())
        # A new Pacer each time: the speed may have been changed by another request since.
        return self.request(line, motion_s=Pacer(self.link).allowance(line))

    def pose(self):
        """(joint angles in radians, the `where` reply) of the pose the board commands;
        (None, reply) while the servos are off (relaxed: no pose to start from)."""
        reply = self.request("where")
        if not reply.ok:
            raise RuntimeError("where: " + reply.final)
        values = reply.values
        if reply.status == fw_status.RELAXED or len(values) < self.n:
            return None, reply
        return np.radians(values[:self.n]), reply

    def _pose_unknown(self, solver):
        return Outcome(False, fw_status.HOME_FIRST, solver,
                       message="servos off, pose unknown: send home (or joints) first")

    def speed_rad_s(self):
        reply = self.request("speed")
        return reply.values[0] * DEG if reply.ok and reply.values else self.board.motion["max_speed_deg_s"] * DEG

    def _joints_line(self, verb, q):
        return verb + " " + " ".join("%.*f" % (ANGLE_DIGITS, math.degrees(a)) for a in q)

    def _motion_s(self, steps):
        """How long a motion of `steps` control periods keeps the board silent, with a margin."""
        return MARGIN_S + steps * self.step_ms / 1000.0

    # -- firmware FK ---------------------------------------------------------

    def tip(self, q):
        """Tool position (x, y[, z]) in mm of joints q (radians), by the firmware's FK."""
        self.solver.fk(list(q), self._tip)
        return np.array(self._tip[:3] if len(self._tip) > 2 else self._tip[:2])

    def twin(self):
        """The numpy twin of the board's FK (armctl.chain), built once."""
        if self._twin is None:
            from armctl import chain as chain_mod
            self._twin = chain_mod.from_board(self.board)
        return self._twin

    def _pulses_ok(self, q):
        return self.board.servos.pulses(list(q), self._us) < 0

    # -- point moves ---------------------------------------------------------

    def move(self, target, pitch_deg=None, roll_deg=None):
        """Move the tool to target (x, y[, z]) mm; arm5: pitch (deg) or None (free), roll (deg) or None."""
        kind = self.solver.kind
        if kind == "arm5" and pitch_deg is not None:
            return self._board_move(target, pitch_deg, roll_deg)
        if kind == "planar":
            return self._board_move(target, None, None)
        if kind == "chain":
            # The board's answer first: a chain arm without a closed form says NO_CLOSED_FORM.
            reply = self.request("move " + self._chain_words(target, pitch_deg))
            if reply.ok or reply.status != fw_status.NO_CLOSED_FORM:
                return self._board_outcome(reply, target)
        return self._host_move(target, roll_deg)

    def _chain_words(self, target, pitch_deg):
        """A chain arm's target words: with the pitch where its board solves a closed form
        (armfw.chain5: X Y Z PITCH), which then also takes X Y Z alone."""
        words = " ".join("%.6f" % v for v in target)
        if pitch_deg is not None and len(self.solver.targets) == 4:
            words += " %.6f" % pitch_deg
        return words

    def _board_move(self, target, pitch_deg, roll_deg):
        words = " ".join("%.6f" % v for v in target)
        if pitch_deg is not None:
            words += " %.6f" % pitch_deg
        if roll_deg is None:
            return self._board_outcome(self._board_motion("move " + words), target)
        reply = self.request("ik " + words)
        if not reply.ok:
            return Outcome(False, reply.status, SOLVER_BOARD, message=reply.final)
        q = np.radians(reply.values[:self.n])
        q[4] = math.radians(roll_deg)
        err = float(np.linalg.norm(self.tip(q) - np.asarray(target, dtype=float)))
        q0 = self.pose()[0]
        if q0 is None:
            return self._pose_unknown(SOLVER_BOARD)
        return self._send_joints(q, SOLVER_BOARD, err, q0)

    def _board_outcome(self, reply, target):
        """The outcome of a motion the board solved; the FK error is that of the pose it reports."""
        if not reply.ok:
            return Outcome(False, reply.status, SOLVER_BOARD, message=reply.final)
        q, where = self.pose()
        tip = self.tip(q)
        err = float(np.linalg.norm(tip - np.asarray(target, dtype=float)[:len(tip)]))
        return Outcome(True, reply.status, SOLVER_BOARD, err, np.degrees(q), where)

    def _host_move(self, target, roll_deg):
        q, err, q0, refusal = self._host_answer(target, roll_deg)
        if refusal is not None:
            return refusal
        return self._send_joints(q, SOLVER_HOST, err, q0)

    def host_preview(self, target, roll_deg=None):
        """What move() would do where the host solves target, nothing moved: an Outcome with
        moved False and status OK when the answer would be sent (q_deg, fk_error_mm), else
        its refusal."""
        q, err, _, refusal = self._host_answer(target, roll_deg)
        return refusal or Outcome(False, fw_status.name(fw_status.OK), SOLVER_HOST, err, np.degrees(q),
                                  message="solved on the host, not sent")

    def _host_answer(self, target, roll_deg):
        """(q radians, FK error mm, seed, None): the host's answer seeded from the pose the board
        reports; or (None, None, seed, the refusing Outcome)."""
        q0, _ = self.pose()
        if q0 is None:
            return None, None, None, self._pose_unknown(SOLVER_HOST)
        seed = q0.copy()
        if roll_deg is not None:
            seed[4] = min(max(math.radians(roll_deg), self.solver.lo[4]), self.solver.hi[4])
        target = np.asarray(target, dtype=float)
        result = numik.solve(self.board, target, mode=numik.POSITION, seed=seed)
        q = np.asarray(result.q, dtype=float)
        if roll_deg is not None:
            q[4] = math.radians(roll_deg)
        if not result.ok:
            return None, None, q0, Outcome(False, result.name, SOLVER_HOST, result.error_mm, np.degrees(q),
                                           message=self._miss(result, q), nearest=self.tip(q))
        # The firmware's FK is the judge of the host's answer.
        err = float(np.linalg.norm(self.tip(q) - target))
        if err > FK_TOLERANCE_MM or not self.solver.within_limits(list(q)) or not self._pulses_ok(q):
            status = fw_status.JOINT_LIMIT if err <= FK_TOLERANCE_MM else fw_status.NOT_CONVERGED
            return None, None, q0, Outcome(False, fw_status.name(status), SOLVER_HOST, err, np.degrees(q),
                                           message="the firmware refuses the host's answer", nearest=self.tip(q))
        return q, err, q0, None

    def _miss(self, result, q):
        """Why the host's nearest pose q is no answer: out of reach, or on the target but in a zone."""
        zones = getattr(self.solver, "zones", None)
        if result.status == fw_status.COLLISION and zones is not None and not zones.clear([float(a) for a in q]):
            return "%s: reaches it (within %.3f mm), but the %s would enter zone %s" % (
                result.name, result.error_mm, zones.link_names[zones.hit_link], zones.zone_names[zones.hit_zone])
        return "%s: no pose within %.3f mm (nearest misses by %.3f mm)" % (result.name, numik.TOL_MM,
                                                                           result.error_mm)

    def _send_joints(self, q, solver, err, q0):
        steps = float(np.max(np.abs(q - q0))) / (self.speed_rad_s() * self.step_ms / 1000.0)
        reply = self.request(self._joints_line("joints", q), motion_s=self._motion_s(steps + 1))
        if not reply.ok:
            return Outcome(False, reply.status, solver, err, np.degrees(q), message=reply.final)
        _, where = self.pose()
        return Outcome(True, reply.status, solver, err, np.degrees(q), where)

    # -- straight lines ------------------------------------------------------

    def line(self, target, pitch_deg=None):
        """Straight tool line from the current pose to target (mm); arm5: pitch (deg) or None (free)."""
        kind = self.solver.kind
        if kind == "planar" or (kind == "arm5" and pitch_deg is not None):
            words = " ".join("%.6f" % v for v in target)
            if pitch_deg is not None:
                words += " %.6f" % pitch_deg
            return self._board_outcome(self._board_motion("line " + words), target)
        if kind == "chain":
            reply = self.request("line " + self._chain_words(target, pitch_deg))
            if reply.ok or reply.status != fw_status.NO_CLOSED_FORM:
                return self._board_outcome(reply, target)
        q0, _ = self.pose()
        if q0 is None:
            return self._pose_unknown(SOLVER_HOST)
        plan = plan_line(self, q0, np.asarray(target, dtype=float), self.speed_rad_s())
        if not plan.ok:
            return Outcome(False, plan.status, SOLVER_HOST, plan.error_mm,
                           None if plan.nearest_q is None else np.degrees(plan.nearest_q),
                           message=plan.message,
                           nearest=None if plan.nearest_q is None else self.tip(plan.nearest_q))
        return self._send_path(plan)

    def _send_path(self, plan):
        reply = self.request("path clear")
        if not reply.ok:
            return Outcome(False, reply.status, SOLVER_HOST, plan.error_mm, message=reply.final)
        for q in plan.waypoints:
            reply = self.request(self._joints_line("path add", q))
            if not reply.ok:
                self.request("path clear")
                return Outcome(False, reply.status, SOLVER_HOST, plan.error_mm, np.degrees(q),
                               message="waypoint refused by the board: " + reply.final)
        reply = self.request("path run", motion_s=self._motion_s(plan.steps))
        if not reply.ok:
            return Outcome(False, reply.status, SOLVER_HOST, plan.error_mm, message=reply.final)
        _, where = self.pose()
        return Outcome(True, reply.status, SOLVER_HOST, plan.error_mm, np.degrees(plan.waypoints[-1]),
                       where, waypoints=len(plan.waypoints))


def board_for(link, board_file=None, calibration=None):
    """The description of the board at the other end of link: board_file (a path or a shipped
    board's name) if given, else the shipped board its `info` names. BoardError if neither.

    calibration: a calibration file (the board's calibration.json, or the host
    copy armctl calibrate saves) laid over it as the board lays its own.
    """
    from armctl import shipped
    from armfw import board as boardlib
    cal = None if calibration is None else str(calibration)
    if board_file is not None:
        return boardlib.load(str(shipped.board_path(str(board_file))), calibration=cal)
    reply = link.request("info")
    name = reply.fields.get("name") if reply.ok else None
    if name is None or str(name) not in shipped.board_names():
        raise boardlib.BoardError("the board on %s is %s, not a shipped board: give --board FILE (its board file)"
                                  % (link.port, name or reply.final))
    return boardlib.load(str(shipped.board_path(str(name))), calibration=cal)


def tool_request(line):
    """(verb, [X, Y, Z]) for a typed `move X Y Z` or `line X Y Z` (three finite numbers), else None."""
    words = line.split()
    if len(words) != 4 or words[0].lower() not in ("move", "line"):
        return None
    try:
        values = [board_number(w) for w in words[1:]]
    except BoardRefused:
        return None         # typos, NaN, inf: the board's to answer, by the same rule
    return words[0].lower(), values


def host_solves(kind):
    """True when an X Y Z target on an arm of this kind is the host's to solve (chain: no IK on
    the board; arm5: the pitch is free)."""
    return kind in ("chain", "arm5")
