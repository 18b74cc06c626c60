# SPDX-License-Identifier: MIT
"""Plans and their check: the operations of a motion, the walk that checks every step, and why a plan was refused.

A plan is a short list of operations (joint moves, tool moves, straight tool
lines, G-code arcs as chords, a joint path, gripper actions, waits) that run one after another. The
walk goes through the whole plan from the pose it starts from, touching
nothing: every step's IK status, zone check and servo pulses. It hands each
event it reaches (a step with its pose and pulses, a gripper action, a wait)
to keep(), the executor's (armfw.executor), and stops at the first step that
fails, with the reason in refusal.

The walk is deterministic: walked again from the same start it reaches the
same events, bit for bit. The executor relies on that to refill a long plan's
ring as it runs.

Timing (armfw.jointprofile, armfw.profile): a joint move is one synchronized trapezoid, every
joint starting and stopping together within its speed (the lesser of its
own and `speed`) and its acceleration; a line ramps the tool's speed up and
down within the tool's acceleration, and slows smoothly where the joints'
speed limit needs it (armfw.linesurvey), stepped by armfw.linestep; a path is one
motion through its waypoints (armfw.pathprofile). A profile
changes only how far along its path each step ends: the path, and every
step's check, are those of the walk; walked again the profile is the same.
"""

from math import sqrt

from armfw.compat import const
from armfw.solver import MIN_MOTION
from armfw.jointprofile import JointProfile
from armfw.numeric import DEG, finite, floats, wrap_angle
from armfw.status import OK, SINGULAR, JOINT_LIMIT, BAD_INPUT, COLLISION, ABORTED, solved, name

# Plan operations.
JOINTS = const(0)          # joint interpolation to the angles of the target (radians)
MOVE = const(1)            # joint interpolation to the IK solution of a tool target
LINE = const(2)            # straight tool line, IK at every step
GRIP_OPEN = const(3)
GRIP_CLOSE = const(4)
PATH = const(5)            # joint interpolation through the waypoints of the path buffer
WAIT = const(6)            # a dwell (G4): target[0] ms, the arm holds still
ARC = const(7)             # an arc's chords, one tool ramp along them (armfw.gcodearc.Arc)
BLEND = const(8)           # queued G-code lines, one tool ramp blending them (armfw.gcodeblend.Blend)
OP_NAMES = ("joints", "move", "line", "grip open", "grip close", "path", "wait", "arc", "lines")

_MAX_OPS = const(6)

# Blocks a line's tool ramp holds: the stretches armfw.linesurvey queues ahead of the
# tool, each at least a quarter of its braking distance (twice that is room to spare).
LINE_STRETCHES = const(8)

# Joint waypoints a path may hold (the host's straight lines on arms the board
# cannot solve). float32 storage: 4 bytes per joint per waypoint, made for
# _PATH_WAYPOINTS first and doubled as a longer path needs (most paths are short).
MAX_WAYPOINTS = const(128)
_PATH_WAYPOINTS = const(16)

# Events the walk hands to keep(): a step, a gripper op (GRIP_OPEN, GRIP_CLOSE)
# or a wait (WAIT_EVENT + the plan index of its WAIT operation).
STEP_EVENT = const(255)
LINE_STEP_EVENT = const(254)    # a line's step (a hold keeps the tool's acceleration on it)
WAIT_EVENT = const(200)

# Slower than this a half-turn move takes minutes and looks like a hang.
MIN_SPEED_DEG_S = 1.0

# The walk calls poll() after every this many steps, so that a long check
# still hears the console's real-time characters (`?`, Ctrl-X).
_POLL_STEPS = const(8)

# Reasons a plan is refused besides the solver's status.
REASON_SOLVER = "unreachable"
REASON_PULSE = "pulse outside the servo window"
REASON_JUMP = "joint would jump"
REASON_GRIPPER = "no gripper"
REASON_LIMITS = "outside the joint limits"
REASON_PATH_FULL = "path full"
REASON_UNKNOWN_POSE = "servos off, pose unknown: home first"
REASON_ZONE = "would enter a zone"     # which zone and link: solver.zones.hit_zone, hit_link
REASON_CANCELLED = "aborted (Ctrl-X) while checking: nothing moved"


class Refusal:
    """Why the last plan was refused, and where; nt: the number of tool coordinates."""

    def __init__(self, nt):
        self.status = name(OK)      # a status word (armfw.status), e.g. "TOO_FAR"
        self.reason = ""
        self.op = 0                 # index into the plan
        self.kind = JOINTS          # that operation's kind
        self.step = 0               # step of that operation (1 = its first)
        self.point = [0.0] * nt     # tool target of the failing step (mm; arm5 pitch in radians)
        self.joint = -1             # the joint whose pulse left its window, or -1


class Planner:
    """The plan of the next motion and its checking walk, for board (armfw.board.Board)
    with gripper (armfw.gripper.Gripper or None).

    Speeds: speed_rad_s, the current joint speed limit (rad/s); max_speed_rad_s,
    the board's ceiling; step_ms, a step's period (ms); line_step_mm, a line's
    travel per step (mm).
    """

    def __init__(self, board, gripper):
        solver = board.solver
        self.solver = solver
        self.servos = board.servos
        self.gripper = gripper
        m = board.motion
        self.step_ms = int(m["step_ms"])
        self.line_step_mm = float(m["line_step_mm"])
        self.max_speed_rad_s = float(m["max_speed_deg_s"]) * DEG
        self.speed_rad_s = self.max_speed_rad_s
        n = solver.n
        # Each joint's own speed and acceleration (rad/s, rad/s^2; board.py's servo classes),
        # and the tool's (mm/s, mm/s^2).
        self.joint_speed = [float(v) * DEG for v in m["joint_speed_deg_s"]]
        self.joint_accel = [float(v) * DEG for v in m["joint_accel_deg_s2"]]
        self.tool_speed = float(m["tool_speed_mm_s"])
        self._speed = floats(n)         # a joint move's speed limits (the lesser of the two)
        self.profile = JointProfile()
        self._path_profile = None       # armfw.pathprofile.PathProfile, made by the first path run
        # The tool's acceleration (mm/s^2; `accel` sets it), its corners' junction deviation
        # (mm) and a step (s), for every tool ramp (armfw.profile.ToolRamp).
        self.tool_accel = float(m["tool_accel_mm_s2"])
        self.junction_deviation_mm = float(m["junction_deviation_mm"])
        self.step_s = self.step_ms / 1000.0
        self._ramp = None               # a line's armfw.profile.ToolRamp, made by the first line
        self._survey = None             # armfw.linesurvey.LineSurvey, made by the first line
        nt = len(solver.targets)
        self.refusal = Refusal(nt)
        # keep(event, q, us): the executor's, called for each event the walk reaches.
        self.keep = None
        # poll(): called during a long check walk (armfw.session reads the console in
        # it); cancel() makes the walk stop, refused with ABORTED.
        self.poll = None
        self.checking = False           # True while the check walk runs
        self.refilling = False          # True: the walk under way walks a checked plan again
        self.steps = 0                  # steps the check walk has reached
        self._cancelled = False
        # Check walks left that may slow corners a joint cannot take (the executor's), and the
        # armfw.cornerwatch.CornerWatch that does (made by the first check walk of blocks).
        self.corner_rounds = 0
        self.corner_watch = None
        # The plan. A target is tool coordinates (MOVE, LINE) or joint angles (JOINTS).
        self._ops = [0] * _MAX_OPS
        self._tools = [floats(nt) for _ in range(_MAX_OPS)]
        self._angles = [floats(n) for _ in range(_MAX_OPS)]
        self._rules = [MIN_MOTION] * _MAX_OPS
        self._rolls = [None] * _MAX_OPS
        self._waits = [0] * _MAX_OPS          # WAIT: ms
        self._line_steps = [0.0] * _MAX_OPS   # LINE: mm per step
        self._arcs = [None] * _MAX_OPS        # ARC, BLEND: its chords or lines (an Arc, a Blend)
        self._n_ops = 0
        # Joint path: waypoint w's angles (radians) at [w * n, (w + 1) * n), made by the
        # first `path add` (many sessions never send one); it holds path_room waypoints.
        self.path = None
        self.path_room = 0
        self.path_len = 0
        # The walk's scratch, allocated once.
        self.pose = floats(n)           # the pose the walk has reached
        self._start = floats(n)         # the pose the walk starts from
        self._from = floats(n)          # start of a joint interpolation
        self._goal = floats(n)          # end of a joint move
        self._rolled = floats(n)        # a pose with a commanded wrist roll
        self._pulses = [0] * n
        self._p0 = floats(nt)           # a line's start
        self._line = None               # armfw.linestep.LineStepper, made by the first line
        self._line_roll0 = 0.0
        self._line_roll1 = 0.0

    # -- the plan ---------------------------------------------------------

    def plan(self):
        """Start a new plan."""
        self._n_ops = 0

    def add(self, op, target=None, rule=MIN_MOTION, roll=None, step_mm=0.0):
        """Append an operation; target: joint angles (JOINTS, radians), tool coordinates
        (MOVE, LINE: mm, arm5 pitch in radians), [ms] (WAIT) or an armfw.gcodearc.Arc
        (ARC: its chords) or an armfw.gcodeblend.Blend (BLEND: its lines), each walked
        under one tool ramp (armfw.gcodeblend.walk_blocks); roll: the arm5 wrist roll
        a MOVE or LINE ends at (radians; None: unchanged); step_mm: a LINE's tool travel
        per step, at most line_step_mm (0: line_step_mm)."""
        k = self._n_ops
        if k >= _MAX_OPS:
            raise ValueError("plan too long")
        self._ops[k] = op
        self._rules[k] = rule
        self._rolls[k] = roll
        # Kept with the operation: a long plan's live pass walks it again.
        self._line_steps[k] = step_mm if 0.0 < step_mm < self.line_step_mm else self.line_step_mm
        self._arcs[k] = None
        if op == WAIT:
            self._waits[k] = target[0]
        elif op == ARC or op == BLEND:
            self._arcs[k] = target
        elif target is not None:
            t = self._angles[k] if op == JOINTS else self._tools[k]
            for i in range(len(t)):
                t[i] = target[i]
        self._n_ops = k + 1

    def first_op(self):
        """The first operation's kind, or -1 for an empty plan."""
        return self._ops[0] if self._n_ops else -1

    def wait_ms(self, event):
        """The dwell (ms) of a WAIT event."""
        return int(self._waits[event - WAIT_EVENT])

    def ended(self):
        """The plan ran or was stopped: a path runs once, and is not run again from elsewhere."""
        if self.first_op() == PATH:
            self.path_len = 0

    # -- the joint path ---------------------------------------------------

    def path_clear(self):
        """Empty the joint path."""
        self.path_len = 0

    def path_add(self, q):
        """Append waypoint q (radians) to the path; False (nothing stored, see refusal) if the
        buffer is full, an angle is outside its joint limits or its pulse outside its window."""
        n = self.solver.n
        self.plan()
        self.add(PATH)
        if self.path_len >= MAX_WAYPOINTS:
            return self.refuse(BAD_INPUT, REASON_PATH_FULL, 0, self.path_len + 1)
        base = self.path_len * n
        path = self.path
        if self.path_len >= self.path_room:
            room = min(MAX_WAYPOINTS, max(_PATH_WAYPOINTS, 2 * self.path_room))
            grown = floats(n * room, "f")
            for i in range(base):
                grown[i] = path[i]
            path = self.path = grown
            self.path_room = room
        goal = self._goal
        for i in range(n):
            path[base + i] = q[i]
            goal[i] = path[base + i]        # judged as stored (float32)
        if not self.solver.within_limits(goal):
            return self.refuse(JOINT_LIMIT, REASON_LIMITS, 0, self.path_len + 1)
        zones = self.solver.zones
        if zones is not None and not zones.clear(goal):
            return self.refuse(COLLISION, REASON_ZONE, 0, self.path_len + 1)
        bad = self.servos.pulses(goal, self._pulses)
        if bad >= 0:
            return self.refuse(JOINT_LIMIT, REASON_PULSE, 0, self.path_len + 1, None, bad)
        self.path_len += 1
        return True

    # -- refusals ---------------------------------------------------------

    def refuse(self, status, reason, op, step, point=None, joint=-1):
        """Record why the plan is refused (status: a solver status, or a protocol word); False."""
        r = self.refusal
        r.status = status if isinstance(status, str) else name(status)
        r.reason = reason
        r.op = op
        r.kind = self._ops[op]
        r.step = step
        r.joint = joint
        if point is not None:
            for i in range(len(r.point)):
                r.point[i] = point[i]
        return False

    def cancel(self):
        """Stop the check walk under way (from poll(): Ctrl-X); it is refused with ABORTED."""
        if self.checking:
            self._cancelled = True

    # -- the walk ---------------------------------------------------------

    def check(self, start):
        """Walk the whole plan from pose start (radians), checking every step; True if it passed
        (pose: where it ends; steps: how many it has), False if refused (see refusal)."""
        for i in range(len(start)):
            self._start[i] = start[i]
        walk = self.walk(False)
        self.track(True)
        self.checking = True
        self._cancelled = False
        if self.corner_watch is not None:
            self.corner_watch.slowed = False    # this walk's own finding
        try:
            next(walk)              # the check walk never yields
        except StopIteration as e:
            return bool(e.value)
        finally:
            self.checking = False
            self.track(False)

    def walk(self, refill):
        """Walk the plan from the pose check() started it at, handing each event to keep();
        refill: walk the checked plan again (steps are not counted, the console is not polled).

        A generator: the check walk never yields; walked again it yields after
        each event (the executor takes a few at a time). It returns True when
        the plan passed, False when refused.
        """
        self.refilling = refill
        q = self.pose
        for i in range(len(q)):
            q[i] = self._start[i]
        if not refill:
            self.steps = 0
        for k in range(self._n_ops):
            op = self._ops[k]
            if op == GRIP_OPEN or op == GRIP_CLOSE or op == WAIT:
                if op != WAIT and self.gripper is None:
                    return self.refuse(BAD_INPUT, REASON_GRIPPER, k, 0)
                self.keep(op if op != WAIT else WAIT_EVENT + k, None, None)
                if refill:
                    yield
                continue
            if op == LINE:
                if not (yield from self._walk_line(k, q, refill, self._tools[k])):
                    return False
                continue
            if op == ARC or op == BLEND:
                if not (yield from self._arcs[k].walk(self, k, q, refill)):
                    return False
                continue
            if op == PATH:
                if not (yield from self._walk_path(k, q, refill)):
                    return False
                continue
            goal = self._goal
            if op == MOVE:
                st = self.solver.ik(self._tools[k], goal, self.with_roll(q, self._rolls[k]), self._rules[k])
                if not solved(st):
                    return self.refuse(st, REASON_SOLVER, k, 1, self._tools[k])
            else:
                t = self._angles[k]
                for i in range(len(goal)):
                    goal[i] = t[i]
            if not (yield from self._walk_joints(k, q, goal, refill)):
                return False
        return True

    def track(self, on):
        """Tell the zones (armfw.zones.Zones.track) a walk's poses follow (on) or no longer."""
        zones = self.solver.zones
        if zones is not None:
            zones.track(on)

    def with_roll(self, q, roll):
        """q, or a copy of it with the wrist roll set (what IK keeps as the roll)."""
        if roll is None:
            return q
        c = self._rolled
        for i in range(len(c)):
            c[i] = q[i]
        c[4] = roll
        return c

    def _max_step(self):
        return self.speed_rad_s * self.step_ms / 1000.0

    def _check_step(self, k, step, q, point=None, zones_checked=False, last=False):
        """One step to pose q: check its zones and pulses and keep it.

        point: the tool target of a line's step (None: a joint-interpolated step);
        zones_checked: q is the solver's answer, whose branch choice checked this
        very pose against the zones; last: a line's last step.
        """
        if not zones_checked:
            zones = self.solver.zones
            if zones is not None and not zones.clear(q):
                return self.refuse(COLLISION, REASON_ZONE, k, step, self._failing_point(q, point))
        sent = q
        if point is None or last:   # a line's last step: its target, as a joint move's end
            bad = self.servos.pulses(q, self._pulses)
        else:       # a line step: its pulses chosen jointly, kept with the pose they command
            bad = self.servos.line_pulses(q, self._pulses, self.solver, self._p0, self._tools[k], point)
            sent = self.servos.line_pose
        if bad >= 0:
            return self.refuse(JOINT_LIMIT, REASON_PULSE, k, step, self._failing_point(q, point), bad)
        if not self.refilling:
            self.steps += 1
            if self.poll is not None and self.steps % _POLL_STEPS == 0:
                self.poll()
                if self._cancelled:
                    return self.refuse(ABORTED, REASON_CANCELLED, k, step, self._failing_point(q, point))
        self.keep(STEP_EVENT if point is None else LINE_STEP_EVENT, sent, self._pulses)
        return True

    def _failing_point(self, q, point):
        """The tool target of a refused step: the line's point, or for a joint-interpolated
        step the tool where pose q puts it (so a refusal never reports an older failure's)."""
        return point if point is not None else self.solver.tool_pose(q, self.refusal.point)

    # Motion timing: a joint move is a synchronized trapezoid (armfw.jointprofile.JointProfile),
    # a path one motion through its waypoints (armfw.pathprofile, loaded on the first path).

    def _speed_limits(self):
        """Each joint's speed limit (rad/s): the lesser of its own and `speed`."""
        limits = self._speed
        speed = self.speed_rad_s
        for i in range(len(limits)):
            v = self.joint_speed[i]
            limits[i] = v if v < speed else speed
        return limits

    def _walk_joints(self, k, q, goal, refill):
        start = self._from
        for i in range(len(q)):
            start[i] = q[i]
        profile = self.profile
        steps = profile.plan(start, goal, self._speed_limits(), self.joint_accel, self.step_ms / 1000.0)
        for s in range(1, steps + 1):
            f = profile.fraction(s)
            for i in range(len(q)):
                q[i] = start[i] + (goal[i] - start[i]) * f
            if not self._check_step(k, s, q):
                return False
            if refill:
                yield
        return True

    def _walk_path(self, k, q, refill):
        profile = self._path_profile
        if profile is None or profile.size < self.path_room:
            # Made again only where the path grew since (a walk again runs the plan its check made).
            from armfw.pathprofile import PathProfile
            profile = self._path_profile = None
            profile = self._path_profile = PathProfile(self.path_room, self.servos)
        start = self._from
        for i in range(len(q)):
            start[i] = q[i]
        if refill:
            profile.restart()           # the check walk's plan, not made again while the arm runs
        else:
            profile.plan(start, self.path, self.path_len, self._speed_limits(), self.joint_accel,
                         self.step_ms / 1000.0)
        s = 0
        while profile.step():
            profile.pose(start, self.path, q)
            s += 1
            if not self._check_step(k, s, q):
                return False
            if refill:
                yield
        return True

    def _line_length(self, p0, p1, roll0, roll1):
        """A line's travel (mm): the tool's distance, the pitch's and the roll's turn on the tool."""
        nt = len(p0)
        dist = 0.0
        for i in range(3 if nt == 4 else nt):
            d = p1[i] - p0[i]
            dist += d * d
        dist = sqrt(dist)
        if nt != 4:
            return dist
        # The pitch turns the wrist point on the tool's length (the solver's tool, as it is now).
        tool = getattr(self.solver, "tool", (0.0, 0.0, 0.0))
        offset_mm = sqrt(tool[0] * tool[0] + tool[1] * tool[1] + tool[2] * tool[2])
        # The roll turns the tool offset (and the jaws): a turn counts as travel.
        return dist + (self.solver.l3 + offset_mm) * abs(p1[3] - p0[3]) + (offset_mm + 10.0) * abs(roll1 - roll0)

    def _line_ramp(self):
        """A line's tool ramp (armfw.profile.ToolRamp, made by the first line), empty, at rest,
        with the tool's acceleration, junction deviation and step."""
        ramp = self._ramp
        if ramp is None:
            from armfw.profile import ToolRamp
            ramp = self._ramp = ToolRamp(LINE_STRETCHES)
        ramp.reset(self.tool_accel, self.junction_deviation_mm, self.step_s)
        return ramp

    def line_survey(self, q):
        """The survey of lines' joint limits (armfw.linesurvey, made by the first line), begun
        from pose q (radians) with this planner's solver, joint limits and tool acceleration."""
        survey = self._survey
        if survey is None:
            from armfw.linesurvey import LineSurvey
            survey = self._survey = LineSurvey(len(self.pose), len(self._p0))
        survey.begin(q, self.solver.ik_near, self._max_step(), self.step_s, self.joint_accel,
                     self.tool_accel, self.solver)
        return survey

    def line_top(self, step_mm):
        """A line's top speed (mm/s) at step_mm per step (as add() takes it) and the tool's own."""
        if not 0.0 < step_mm < self.line_step_mm:
            step_mm = self.line_step_mm
        top = step_mm / self.step_s
        return top if top < self.tool_speed else self.tool_speed

    def _rolled_at(self, t):
        """The walk's pose with the wrist roll a rolling line has at its fraction t."""
        roll0 = self._line_roll0
        return self.with_roll(self.pose, roll0 + (self._line_roll1 - roll0) * t)

    def _walk_line(self, k, q, refill, p1):
        """The line to p1 from the walk's pose q."""
        p0 = self._p0
        self.solver.tool_pose(q, p0)
        if len(p0) == 4:
            p0[3] = p1[3] + wrap_angle(p0[3] - p1[3])
        roll0 = q[4] if len(p0) == 4 else 0.0
        roll1 = self._rolls[k]
        if roll1 is None:
            roll1 = roll0
        length = self._line_length(p0, p1, roll0, roll1)
        if not finite(length):
            # Coordinates so large their squares overflow: far outside any arm.
            st = self.solver.ik(p1, self._goal, q, MIN_MOTION)
            return self.refuse(BAD_INPUT if solved(st) else st, REASON_SOLVER, k, 1, p1)
        if length <= 0.0:
            return True
        self._line_roll0 = roll0
        self._line_roll1 = roll1
        from armfw.linestep import JUMP, LineStepper
        line = self._line
        if line is None:
            line = self._line = LineStepper(len(self.pose), len(self._p0))
        # Each step's target is near the last one's: the solver continues its answer
        # (ik's own answer to the bit, proven cheaply or solved in full).
        # The tool's speed ramps up from rest and back down to it, within the tool's
        # acceleration; no faster than line_step_mm (the op's own, for G1 F) per step.
        # Where the joints' speed limit needs the tool slower, the survey lowers the
        # ramp's top there, ahead of the steps (armfw.linesurvey).
        current_at = self._rolled_at if roll1 != roll0 else None
        survey = self.line_survey(q)
        survey.line(self._line_ramp(), p0, p1, length, self.line_top(self._line_steps[k]), current_at)
        steps = line.walk(p0, p1, length, self._line_steps[k], q, self.solver.ik_near, self._max_step(),
                          current_at, ramp=survey)
        step = 0
        for st in steps:
            step += 1
            if st == JUMP:
                return self.refuse(SINGULAR, REASON_JUMP, k, step, line.point)
            if st > SINGULAR:
                return self.refuse(st, REASON_SOLVER, k, step, line.point)
            pose = line.pose
            for i in range(len(q)):
                q[i] = pose[i]
            if not self._check_step(k, step, q, line.point, True, line.t >= 1.0):
                return False
            if refill:
                yield
        return True
