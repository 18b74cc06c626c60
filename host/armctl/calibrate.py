# SPDX-License-Identifier: MIT
"""Servo calibration: a person jogs each joint to known poses, the host fits the servo map.

Per joint the person jogs the servo (raw `servo CH US` commands) until the
joint sits at each known pose (math zero, +90 degrees by default) and presses
Enter; armctl.calibrate_fit fits the servo map to the recorded pulses.
Optionally the person measures the tool tip at a few poses (the link lengths)
or touches one point from several orientations (the tool offset, armctl.tcp).
armctl.calibrate_store keeps the results, armctl.calibrate_keys reads the
keyboard, and armctl.calibrate_by_hand is the procedure for bus servos, which
report where they are and are not jogged.
"""

import math
import sys

from armctl.calibrate_fit import board_values, fit_lengths, fit_servo, window_misses
from armctl.calibrate_keys import (FINISH_KEYS, JOG_KEYS, QUIT_KEYS, RECORD_KEYS, TOUCH_KEYS, UNDO_KEY,
                                   jog_help, touch_help, verify_help)
from armctl.calibrate_store import Progress
from armfw.numeric import DEG

# What each pose looks like, by arm kind and joint index, for the prompt.
POSE_HINTS = {
    "arm5": (
        "0 deg: the arm faces forward (+x); +90 deg: it faces left (+y), seen from above counter-clockwise",
        "0 deg: upper arm vertical; +90 deg: upper arm horizontal, leaning forward",
        "0 deg: forearm in line with the upper arm; +90 deg: forearm bent forward at a right angle",
        "0 deg: tool in line with the forearm; +90 deg: tool bent forward at a right angle",
        "0 deg: gripper jaws in the arm's plane; +90 deg: turned a quarter turn (positive direction)",
    ),
    "planar": (
        "0 deg: first link along +x; +90 deg: first link along +y",
        "0 deg: second link in line with the first; +90 deg: bent counter-clockwise at a right angle",
    ),
}

# Measurement poses for the link-length fit, degrees per joint, the tip at
# least 50 mm above the base plane: chosen for a well-conditioned fit (design
# matrix condition number 1.5 for arm5), so a 0.5 mm ruler error moves each
# fitted length by about 0.2 mm.
MEASURE_POSES = {
    "arm5": ((45, 60, 120, 60, 0), (-45, 90, -60, 90, 0), (0, 60, -120, -60, 0),
             (-45, 90, 90, -90, 0), (0, -90, 30, 90, 0), (0, 30, -60, 60, 0)),
    "planar": ((30, 60), (90, -60), (150, -90), (60, 30), (10, 120)),
}


class CalibrationAborted(Exception):
    """The person quit before every pose was recorded; nothing was written."""


class Task:
    """What the screen asks for: jog joint to pose_deg; us is the pulse the servo has now."""

    def __init__(self, joint, name, channel, pose_deg, us):
        self.joint = joint
        self.name = name
        self.channel = channel
        self.pose_deg = pose_deg
        self.us = us


class Check:
    """What the screen asks for in --verify: joint (index, name) to pose_deg; q_deg is the
    angle the board commands it to now."""

    def __init__(self, joint, name, pose_deg):
        self.joint = joint
        self.name = name
        self.pose_deg = pose_deg
        self.q_deg = pose_deg


class Touch:
    """What the screen asks for in the TCP step: touch number (1-based), the joint being
    jogged (index) and the commanded joint angles (degrees)."""

    def __init__(self, number, joint, q_deg):
        self.number = number
        self.joint = joint
        self.q_deg = q_deg


class CalibrationRun:
    """One guided calibration over a Link.

    keys.read(task) returns the next key press (a one-character string, ""
    at end of input); lines(prompt) returns a line the person typed; out is
    where the guidance goes.
    """

    def __init__(self, link, board, keys, lines=input, out=sys.stdout, progress=None):
        self.link = link
        self.board = board
        self.keys = keys
        self.lines = lines
        self.out = out
        self.progress = progress
        self.window_misses = {}     # joint: window_misses() of its fit, where not []

    def say(self, text):
        print(text, file=self.out, flush=True)

    def _servo(self, channel, us):
        reply = self.link.request("servo %d %d" % (channel, us))
        if not reply.ok:
            self.say("  board refused %d us: %s" % (us, reply.final))
        return reply.ok

    def jog(self, task):
        """Jog task's servo from task.us (the pulse it has) until Enter; returns the recorded
        pulse, always one the servo took (CalibrationAborted on quit)."""
        servos = self.board.servos
        j = task.joint
        before = []     # pulses to go back to with undo
        while True:
            key = self.keys.read(task)
            if key in RECORD_KEYS:
                self.say("  recorded %s at %+g deg: %d us" % (task.name, task.pose_deg, task.us))
                return task.us
            if key in QUIT_KEYS:
                raise CalibrationAborted("quit at joint %s; nothing was written to the board" % task.name)
            if key == UNDO_KEY:
                if not before:
                    self.say("  nothing to undo")
                    continue
                us = before.pop()
                moved = self._servo(task.channel, us)
                self._drop_typed_ahead()
                if moved:
                    task.us = us
                    self.say("  %s %d us (undone)" % (task.name, us))
                continue
            step = JOG_KEYS.get(key)
            if step is None:
                self.say("  " + jog_help())
                continue
            us = min(max(task.us + step, servos.min_us[j]), servos.max_us[j])
            moved = us != task.us and self._servo(task.channel, us)
            # Keys typed while that jog ran are dropped before the screen shows where it went.
            self._drop_typed_ahead()
            if moved:
                before.append(task.us)
                task.us = us
                self.say("  %s %d us" % (task.name, us))

    def _drop_typed_ahead(self):
        drop = getattr(self.keys, "drop_typed_ahead", None)
        if drop is not None:
            drop()

    def _record_poses(self, j, name, poses_deg, progress):
        """The pulse at each pose of joint j: from the progress file, or jogged and recorded now."""
        servos = self.board.servos
        pulses = progress.recorded(j)
        if all(us is not None for us in pulses):
            self.say(" %s: every pose recorded earlier (%s us), resumed" % (name, " ".join(map(str, pulses))))
        for k, deg in enumerate(poses_deg):
            if pulses[k] is not None:
                continue
            start = self._reach(j, name, deg)
            task = Task(j, name, servos.channels[j], deg, start)
            self.say(" jog %s to %+g deg (now %d us), then press Enter" % (name, deg, start))
            pulses[k] = self.jog(task)
            progress.record(j, k, pulses[k])
        return pulses

    def _reach(self, j, name, deg):
        """Put joint j's servo at the pulse the board file gives deg, the other joints where
        the board lets it get there (see _clear). Returns that pulse, the one the screen
        shows and Enter records."""
        us = self.board.servos.pulse(j, deg * DEG)
        self._clear(j, name, deg, "servo %d %d" % (self.board.servos.channels[j], us), "(%d us) " % us)
        return us

    def _clear(self, j, name, deg, request, what=""):
        """Send request, which puts joint j at deg; when the board refuses it, move the other
        joints (j keeps its angle) to home, else straight (0 deg), and send it again.
        CalibrationAborted, saying what to do, when it is refused from all three."""
        arm = self.board.solver
        first = self.link.request(request, timeout=max(self.link.timeout, 30.0))
        if first.ok:
            return
        where = self.link.request("where")
        if not where.ok or where.status == "RELAXED":
            raise CalibrationAborted("the board refused %s at %+g deg %s: %s" % (name, deg, what, first.final))
        now = [float(v) for v in where.values[:arm.n]]
        for label, others in (("to home", [q / DEG for q in arm.home]), ("straight (0 deg)", [0.0] * arm.n)):
            pose = [min(max(v, arm.lo[i] / DEG), arm.hi[i] / DEG) for i, v in enumerate(others)]
            pose[j] = now[j]
            others_request = "joints " + " ".join("%g" % v for v in pose)
            if not self.link.request(others_request, timeout=max(self.link.timeout, 30.0)).ok:
                continue
            if self.link.request(request, timeout=max(self.link.timeout, 30.0)).ok:
                self.say("  %s at %+g deg %swas refused with the other joints as they were (%s): "
                         "moved them %s first" % (name, deg, what, first.final, label))
                return
        raise CalibrationAborted(
            "%s at %+g deg %sis refused with the other joints as they are, at home and straight: %s. "
            "Move the other joints clear first (armctl send \"joints ...\") or choose poses the arm "
            "reaches (--poses), then run the same command: it resumes" % (name, deg, what, first.final))

    def verify(self, joints, poses_deg):
        """Re-measure the calibration the board runs, writing nothing: per joint and pose the
        board moves the joint to the pose, the person jogs it (degrees) until it is really
        there. Returns {joint name: [error per pose, deg]}: the angle the board had to
        command minus the pose (0 for a right calibration)."""
        arm = self.board.solver
        self.say(verify_help())
        errors = {}
        for j in joints:
            name = arm.names[j]
            errors[name] = []
            for deg in poses_deg:
                q = list(self._pose_deg())       # a relaxed board goes home first: the zones need a pose
                q[j] = deg
                self._clear(j, name, deg, "joints " + " ".join("%g" % v for v in q))
                task = Check(j, name, deg)
                self.say(" jog %s until it really is at %+g deg, then press Enter" % (name, deg))
                while True:
                    key = self.keys.read(task)
                    if key in RECORD_KEYS:
                        break
                    if key in QUIT_KEYS:
                        raise CalibrationAborted("quit at joint %s; nothing was written" % name)
                    step = TOUCH_KEYS.get(key)
                    if step is None:
                        self.say("  " + verify_help())
                        continue
                    reply = self.link.request("jog j%d %g" % (j + 1, step), timeout=max(self.link.timeout, 30.0))
                    if reply.ok:
                        task.q_deg = reply.values[j]
                        self.say("  %s %.1f deg" % (name, task.q_deg))
                    else:
                        self.say("  board refused: %s" % reply.final)
                errors[name].append(round(task.q_deg - deg, 3))
                self.say("  %s at %+g deg: the board commands %+.2f deg, error %+.2f deg"
                         % (name, deg, task.q_deg, task.q_deg - deg))
        worst = max((abs(e), name) for name, row in errors.items() for e in row)
        self.say(" worst error %.2f deg (%s); nothing was written" % worst)
        return errors

    def _fit_joint(self, j, name, poses_deg, progress):
        """Joint j's servo fit; pulses that cannot be fitted are explained and measured again."""
        servos = self.board.servos
        poses_rad = [d * DEG for d in poses_deg]
        while True:
            pulses = self._record_poses(j, name, poses_deg, progress)
            if all(servos.pulse(j, q) == us for q, us in zip(poses_rad, pulses)):
                # Whole-microsecond pulses cannot tell a fit from the board's
                # values here; a fit a rounding away could break the limit check.
                self.say(" %s: the board's values give every recorded pulse; kept" % name)
                return board_values(servos, j, poses_rad, pulses)
            try:
                f = fit_servo(poses_rad, pulses, servos.center_us[j])
            except ValueError as e:
                self.say(" %s: %s us at %s deg cannot be fitted: %s" % (
                    name, " ".join(map(str, pulses)), " ".join("%+g" % d for d in poses_deg), e))
                self.say(" each pose needs its own pulse: measure %s again" % name)
                progress.forget(j)
                continue
            self.say(" fit %s: offset %+.3f deg, sign %+d, %.3f us/rad (board: %+.3f deg, %+d, %.3f)" % (
                name, f["offset_deg"], f["sign"], f["us_per_rad"],
                servos.offsets[j] / DEG, servos.signs[j], servos.us_per_rad[j]))
            self.say("  residuals (us): %s" % " ".join("%+.1f" % r for r in f["residual_us"]))
            misses = window_misses(self.board, j, f)
            for line in misses:
                self.say("  does not fit the board file: " + line)
            if misses:
                self.window_misses[j] = misses
            return f

    def calibrate_servos(self, joints, poses_deg):
        """Guide the person through every joint and pose; returns {joint: fit_servo result}."""
        arm = self.board.solver
        servos = self.board.servos
        hints = POSE_HINTS.get(arm.kind, ())
        progress = self.progress or Progress(None, self.board.name, poses_deg)
        self.say(jog_help())
        fits = {}
        for j in joints:
            name = arm.names[j]
            self.say("joint %d %s (channel %d)%s" % (j + 1, name, servos.channels[j],
                                                    ": " + hints[j] if j < len(hints) else ""))
            # Each joint is jogged from the pose the arm is in and put back after,
            # so the next joint's poses start from that known pose, not from
            # wherever this one was left (the board refuses a jog that would put
            # a link into a keep-out zone: COLLISION).
            before = self.link.request("where")
            fits[j] = self._fit_joint(j, name, poses_deg, progress)
            if before.ok:
                back = "joints " + " ".join("%g" % v for v in before.values[:arm.n])
                reply = self.link.request(back, timeout=max(self.link.timeout, 30.0))
                if not reply.ok:
                    self.say(" %s refused: %s" % (back, reply.final))
        return fits

    def _pose_deg(self):
        reply = self.link.request("where")
        if reply.ok and reply.status == "RELAXED":
            # Servos off (a board boots relaxed): jogging needs a known pose to start from.
            self.say("  the servos are off: the arm moves to its home pose first")
            home = self.link.request("home", timeout=max(self.link.timeout, 60.0))
            if not home.ok:
                raise CalibrationAborted("the board refused home: %s" % home.final)
            reply = self.link.request("where")
        if not reply.ok:
            raise CalibrationAborted("the board does not report its pose: %s" % reply.final)
        return reply.values[:self.board.solver.n]

    def touch(self, number, can_finish=False):
        """Jog joint by joint until the tool tip touches the point; returns the joint angles
        (degrees) at Enter, or None for f when can_finish."""
        arm = self.board.solver
        task = Touch(number, 0, self._pose_deg())
        self.say("  jogging %d %s (1..%d pick another)" % (task.joint + 1, arm.names[task.joint], arm.n))
        while True:
            key = self.keys.read(task)
            if key in RECORD_KEYS:
                self.say("  touch %d recorded at joints %s deg" % (number, " ".join("%.1f" % v for v in task.q_deg)))
                return list(task.q_deg)
            if key in FINISH_KEYS and can_finish:
                return None
            if key in QUIT_KEYS:
                raise CalibrationAborted("quit at touch %d; nothing was written" % number)
            if "1" <= key <= str(arm.n) and len(key) == 1:
                task.joint = int(key) - 1
                self.say("  jogging %d %s" % (task.joint + 1, arm.names[task.joint]))
                continue
            step = TOUCH_KEYS.get(key)
            if step is None:
                self.say("  " + touch_help())
                continue
            q = list(task.q_deg)
            q[task.joint] = round(q[task.joint] + step, 3)
            reply = self.link.request("joints " + " ".join("%g" % v for v in q), timeout=max(self.link.timeout, 30.0))
            if reply.ok:
                task.q_deg = q
                tip = [reply.fields.get(axis) for axis in "xyz"]
                self.say("  %d %s %.1f deg%s" % (
                    task.joint + 1, arm.names[task.joint], q[task.joint],
                    "   tip %.1f %.1f %.1f mm" % tuple(tip) if None not in tip else ""))
            else:
                self.say("  board refused: %s" % reply.final)

    def calibrate_tool(self, minimum=4, max_residual_mm=None):
        """The TCP step: touches of one fixed point, then armctl.tcp's fit; returns its report.

        The touch with the largest residual over the threshold is asked for
        again (the person jogs and touches anew, or quits) until every touch agrees.
        Raises armctl.tcp.DegenerateTouches for orientations too alike.
        """
        from armctl import tcp
        limit = tcp.MAX_RESIDUAL_MM if max_residual_mm is None else max_residual_mm
        self.say(touch_help())
        self.say("tool centre point: touch one fixed point with the tool tip from %d or more clearly "
                 "different orientations (vary pitch, roll and base)" % minimum)
        touches = []
        while True:
            self.say(" touch %d: jog the tip onto the point, then Enter%s"
                     % (len(touches) + 1, " (f: finish)" if len(touches) >= minimum else ""))
            q = self.touch(len(touches) + 1, len(touches) >= minimum)
            if q is None:
                break
            touches.append(q)
        while True:
            report = tcp.solve_from_joints(self.board.solver, [[v * DEG for v in q] for q in touches],
                                           max_residual_mm=limit)
            for i, r in enumerate(report["residual_mm"]):
                self.say(" touch %d: residual %.2f mm%s" % (i + 1, r, "  REDO" if r > limit else ""))
            if not report["redo"]:
                break
            # The worst touch first: one slipped touch pulls the fit and so
            # every residual; the others usually agree again once it is redone.
            number = max(report["redo"], key=lambda k: report["residual_mm"][k - 1])
            self.say(" touch %d disagrees with the others by %.2f mm (over %.2f): touch the point again"
                     % (number, report["residual_mm"][number - 1], limit))
            touches[number - 1] = self.touch(number)
        t = report["offset_mm"]
        self.say(" tool offset: across %.2f, lateral %.2f, along %.2f mm; point %s mm; rms %.2f mm"
                 % (t[0], t[1], t[2], " ".join("%.1f" % v for v in report["point_mm"]), report["rms_mm"]))
        report["touches_deg"] = touches
        return report

    def measure_lengths(self, poses_deg):
        """Move to each pose with `joints`, ask for the measured tip; returns fit_lengths' report."""
        arm = self.board.solver
        dims = 2 if arm.kind == "planar" else 3
        axes = "x y" if dims == 2 else "x y z"
        poses = []
        measured = []
        self.say("link lengths: measure the tool tip (mm, base frame) at %d poses" % len(poses_deg))
        for pose in poses_deg:
            request = "joints " + " ".join("%g" % d for d in pose)
            reply = self.link.request(request, timeout=max(self.link.timeout, 30.0))
            if not reply.ok:
                self.say(" %s refused: %s; pose skipped" % (request, reply.final))
                continue
            while True:
                text = self.lines(" tip at joints %s deg: %s = " % (" ".join("%g" % d for d in pose), axes))
                try:
                    values = [float(v) for v in text.replace(",", " ").split()]
                except ValueError:
                    values = []
                if len(values) == dims and all(math.isfinite(v) for v in values):
                    break
                self.say("  type %d numbers in mm, for example: %s" % (dims, " ".join(["120.5"] * dims)))
            poses.append([d * DEG for d in pose])
            measured.append(values)
        report = fit_lengths(arm, poses, measured)
        for i, pose in enumerate(poses):
            self.say(" pose %d: nominal model misses by %.2f mm, fitted model by %.2f mm"
                     % (i + 1, report["before_mm"][i], report["after_mm"][i]))
        for name, value in report["lengths"].items():
            self.say(" %s: %.2f mm (board %.2f mm)" % (name, value, report["nominal"][name]))
        self.say(" rms miss: %.2f mm with the board's lengths, %.2f mm fitted" % (
            report["rms_before_mm"], report["rms_after_mm"]))
        if report["rms_after_mm"] > 2.0:
            self.say(" the fitted model still misses: suspect servo calibration or play in the joints, "
                     "not the lengths (and not the solver: FK reproduces every IK answer)")
        elif report["rms_before_mm"] > 2.0 * max(report["rms_after_mm"], 0.5):
            self.say(" the board's lengths are the error (model error): copy the fitted lengths "
                     "into the board file's \"arm\" section")
        return report
