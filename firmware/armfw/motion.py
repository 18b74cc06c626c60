# SPDX-License-Identifier: MIT
"""Motion: the arm controller (board + servo driver + gripper).

The controller knows the pose it commanded (joint angles, radians) and moves
the arm by plans: a short list of operations (joint moves, tool moves,
straight tool lines, gripper actions) that run one after another.

Every plan is checked whole before anything moves: a walk that touches
nothing (every IK status, zone check and servo pulse of every step, carried
through the whole sequence). A path that leaves the workspace halfway is
refused before the first pulse. The check keeps what it computed, each
step's pulses and pose, in a ring made here once (RING_STEPS events), and the
live run only sends them: each step of a plan that fits is solved once. A
longer plan is checked whole all the same; its live run refills the ring as
it empties, an event or two after each step sent (refill()), by walking the
plan again from its start through the same code, which takes exactly the
same steps as the check did (the walk is deterministic). A refilled step has
passed every check again before it goes into the ring, and the re-walk must
agree with what the check kept (the kept steps, the number of events, the
final pose): where it did not, step() raises instead of sending anything it
did not check.

The live run is a stepper: begin() checks the whole plan, then each step()
sends one step's pulses and returns how long to wait before the next, so the
caller (armfw.session) serves the console between steps and may stop at any
step (hold, abort); after each step it calls refill(), which refills a long
plan's ring in the idle time. run() is begin() plus waiting, for Python calls.

Speed: each step lasts step_ms and no joint moves more than speed * step_ms
in one step. Joint moves are split evenly; a straight line advances the tool
line_step_mm per step, and where that would turn a joint too fast (near the
workspace edge, near a singular pose) it takes shorter steps: the tool slows
down, the joints never jump. A line that would need a joint to jump (a branch
flip, the base turning through the axis) is refused.
"""

from array import array
from math import pi, sqrt, sin, cos

from armfw.compat import const, sleep_ms, ticks_ms, ticks_add, ticks_diff
from armfw.solver import MIN_MOTION
from armfw.numeric import DEG, finite, wrap_angle
from armfw.status import OK, SINGULAR, JOINT_LIMIT, BAD_INPUT, COLLISION, ABORTED, HOME_FIRST, solved, name

# Plan operations.
JOINTS = const(0)          # joint interpolation to the angles of the target (radians)
MOVE = const(1)            # joint interpolation to the IK solution of a tool target
LINE = const(2)            # straight tool line, IK at every step
GRIP_OPEN = const(3)
GRIP_CLOSE = const(4)
PATH = const(5)            # joint interpolation through the waypoints of the path buffer
WAIT = const(6)            # a dwell (G4): target[0] ms, the arm holds still
OP_NAMES = ("joints", "move", "line", "grip open", "grip close", "path", "wait")

# Joint waypoints a path may hold (the host's straight lines on arms the board
# cannot solve). float32 storage: 4 bytes per joint per waypoint, allocated once.
MAX_WAYPOINTS = const(128)

MAX_OPS = const(6)

# Events (steps, gripper actions, waits) of a plan the ring keeps for the live
# pass: per step the pulses (2 bytes each) and the pose (a float each, 4 bytes
# where floats are single as on the boards). A plan that fits is solved once:
# its live pass only sends what the check pass computed. A longer one is still
# checked whole before it moves; its live pass refills the ring from a second
# walk (see the module doc). The size trades heap for that second walk's work.
RING_STEPS = const(128)
# The ring's pose type: the interpreter's own float, so a kept pose is the walked one bit for bit.
_POSE_TYPE = "f" if array("f", (1 / 3,))[0] == 1 / 3 else "d"
# Events the second walk of a long plan reaches per refill() (once per step,
# the live pass sending one): REFILL_EVENTS while it is fewer than REFILL_LEAD
# events ahead of the live pass, then one. It starts with the plan; ahead, it
# leaves the live pass an event in hand however a step's work varies (an
# event is one step's IK, a few where a line slows down), and the work
# between two steps stays one event but for the first few.
REFILL_EVENTS = const(2)
REFILL_LEAD = const(8)
_STEP_EVENT = const(255)    # an event of the kept path that is a step (else a gripper op or a wait)
_WAIT_EVENT = const(200)    # + the plan index of a WAIT op: its dwell

# Slower than this a half-turn move takes minutes and looks like a hang.
MIN_SPEED_DEG_S = 1.0

# A hobby-servo gripper takes this long to close on an object before the arm
# may lift it.
GRIP_DWELL_MS = const(400)

# A line step shorter than this (mm) that still turns a joint faster than the
# speed limit is a jump, not a steep stretch: the path is refused there.
MIN_LINE_STEP_MM = 0.001

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

# The check walk calls poll() after every this many steps, so that a long
# check still hears the console's real-time characters (`?`, Ctrl-X).
POLL_STEPS = const(8)
# What step() raises where a long plan's second walk disagrees with its check.
_DISAGREE = "the plan walked again is not the plan checked: stopped"


class _Clock:
    """Real time: steps start every step_ms however long computing a step took.

    Uses time.ticks_ms / sleep_ms (armfw.compat stands in for them on CPython).
    """

    def __init__(self):
        self.sleep_ms = sleep_ms
        self._ticks_ms = ticks_ms
        self._ticks_add = ticks_add
        self._ticks_diff = ticks_diff
        self._next = None

    def start(self):
        """Steps start now: the first wait_step() returns one step after this."""
        self._next = self._ticks_ms()

    def wait_step(self, step_ms):
        now = self._ticks_ms()
        if self._next is None:
            self._next = now
        self._next = self._ticks_add(self._next, step_ms)
        left = self._ticks_diff(self._next, now)
        if left > 0:
            self.sleep_ms(left)
        else:
            self._next = now    # running late: catch up by starting afresh, never by rushing


class ArmController:
    """The arm controller: owns the board description, its solver (self.solver, an
    armfw.kinematics solver), the servo driver and an optional gripper
    (armfw.gripper.Gripper), and the commanded pose self.q (radians).

    Units: mm and radians everywhere, joint speeds in rad/s (speed_rad_s, the
    current limit; max_speed_rad_s, the board's ceiling); set_speed_deg_s takes
    deg/s, as the protocol's `speed` command does.

    sleep_ms: how to wait (ms) between steps; default the driver's own (the
    simulated driver keeps a virtual clock), otherwise real time, where each
    step starts step_ms after the previous one however long its IK took.
    """

    def __init__(self, board, driver, gripper=None, sleep_ms=None):
        self.board = board
        self.solver = board.solver
        self.servos = board.servos
        self.driver = driver
        self.gripper = gripper
        self._clock = None
        if sleep_ms is None:
            sleep_ms = getattr(driver, "sleep_ms", None)
        if sleep_ms is None:
            self._clock = _Clock()
            sleep_ms = self._clock.sleep_ms
        self.sleep_ms = sleep_ms
        m = board.motion
        self.step_ms = int(m["step_ms"])
        self.line_step_mm = float(m["line_step_mm"])
        self.approach_mm = float(m["approach_mm"])
        self.max_speed_rad_s = float(m["max_speed_deg_s"]) * DEG     # rad/s, the board's ceiling
        self.speed_rad_s = self.max_speed_rad_s                        # rad/s, the current limit
        n = self.solver.n
        nt = len(self.solver.targets)
        self.q = list(self.solver.home)      # commanded pose, radians
        self.us = [-1] * n                # last pulse sent per joint (-1: none since boot or relax)
        self.steps = 0                    # steps of the last plan (while it runs: steps sent so far)
        self.total = 0                    # steps of the plan begun
        self._live = None                 # the running plan's steps (a generator), or None
        # Check mode: plans are checked, never run; the pose they would reach
        # becomes the commanded pose (the caller keeps the real one).
        self.check_only = False
        # poll(): called during a long check walk (armfw.session reads the console in
        # it); cancel_check() makes the walk stop, refused with ABORTED.
        self.poll = None
        self.checking_plan = False        # True while begin() walks the plan
        self._cancelled = False
        # Plan: operation kinds, targets, IK rules.
        self._ops = [0] * MAX_OPS
        # A target is tool coordinates (MOVE, LINE) or joint angles (JOINTS).
        self._tools = [[0.0] * nt for _ in range(MAX_OPS)]
        self._angles = [[0.0] * n for _ in range(MAX_OPS)]
        self._rules = [MIN_MOTION] * MAX_OPS
        self._rolls = [None] * MAX_OPS
        self._waits = [0] * MAX_OPS          # WAIT: ms
        self._line_steps = [0.0] * MAX_OPS   # LINE: mm per step
        self._current = [0.0] * n          # the IK's current pose with a commanded roll
        self._n_ops = 0
        # Step scratch, allocated once.
        self._walk_q = [0.0] * n          # pose while walking a plan
        self._from = [0.0] * n            # start of a joint interpolation
        self._goal = [0.0] * n            # end of a joint move / next line pose
        self._step_us = [0] * n
        self._p0 = [0.0] * nt             # line start, tool coordinates
        self._p = [0.0] * nt              # line point
        self._up = [0.0] * nt             # pick and place waypoints
        # The ring of the checked plan's events for the live pass (see RING_STEPS):
        # event e in slot e % RING_STEPS; a step's pulses and pose at slot * n.
        # (zeros: an array made from bytes takes them as raw items)
        self._ring_us = array("H", bytes(2 * RING_STEPS * n))
        self._ring_q = array(_POSE_TYPE, bytes((4 if _POSE_TYPE == "f" else 8) * RING_STEPS * n))
        self._events = bytearray(RING_STEPS)   # _STEP_EVENT, a gripper op or a wait
        self._n_events = 0                # events of the plan (the check pass counted)
        self._n_walked = 0                # events the walk under way has reached
        self._kept_whole = True           # False: the plan has more events than RING_STEPS
        self._refill = None               # the second walk of a long plan (a generator), or None
        self._refilling = False           # True: the walk under way is that second walk
        self._sent = 0                    # events the live pass has sent
        self._start_q = [0.0] * n         # the pose the plan starts from
        self._end_q = [0.0] * n           # and ends at (the check pass's)
        self._dp = [0.0] * nt             # a line's tool move, end minus start
        self._fixed = [0.0] * nt          # and the coordinates it keeps
        self._down = [0.0] * nt
        # Joint path: waypoint w's angles (radians) at [w * n, (w + 1) * n).
        self.path = array("f", bytes(4 * n * MAX_WAYPOINTS))
        self.path_len = 0
        # The refusal of the last plan that failed.
        self.fail_status = name(OK)       # a status word (armfw.status), e.g. "TOO_FAR"
        self.fail_reason = ""
        self.fail_op = 0                  # index into the plan
        self.fail_kind = JOINTS           # that operation's kind
        self.fail_step = 0                # step of that operation (1 = its first)
        self.fail_point = [0.0] * nt      # tool target of the failing step
        self.fail_joint = -1

    # -- pose -----------------------------------------------------------

    def tool(self, out=None):
        """Tool coordinates of the commanded pose (mm; arm5 pitch in radians)."""
        if out is None:
            out = [0.0] * len(self.solver.targets)
        self.tool_of(self.q, out)
        return out

    def tool_of(self, q, out):
        """Tool coordinates (mm; arm5 pitch in radians, in (-pi, pi]) of joints q (radians), into out.

        The pitch is the one the protocol speaks: measured in the direction
        the tool reaches, so a base turned half a turn reports it unchanged.
        """
        return self.solver.tool_pose(q, out)

    def set_speed_deg_s(self, deg_s):
        """Joint speed limit in deg/s, MIN_SPEED_DEG_S..the board's max_speed_deg_s; False if refused."""
        if not (deg_s >= MIN_SPEED_DEG_S and deg_s <= self.max_speed_rad_s / DEG + 1e-9):
            return False
        self.speed_rad_s = deg_s * DEG
        return True

    def park(self):
        """Send the home pose at once (boot): the servos' first pulse moves them at their own speed."""
        return self.send_pose(self.solver.home)

    def send_pose(self, q):
        """Send pose q (radians) at once, with no interpolation: the servos move at their own speed.

        For an arm whose pose is unknown (boot, relax), where there is nothing
        to interpolate from. False (nothing sent) if a pulse is outside its window.
        """
        if self.servos.pulses(q, self._step_us) >= 0:
            return False
        for i in range(self.solver.n):
            self.q[i] = q[i]
        self._send_pulses()
        return True

    def send_joint_pulse(self, joint, us):
        """Send one joint's pulse us at once (its window was checked); the rest stay as they are."""
        self.driver.set_us(self.servos.channels[joint], us)
        self.us[joint] = us
        self.q[joint] = self.servos.angle(joint, us)

    def relax(self):
        """Stop every servo's pulses (the arm can be moved by hand); the pose is then unknown."""
        self.stop()
        self.driver.off()
        for i in range(self.solver.n):
            self.us[i] = -1
        if self.gripper is not None:
            self.gripper.state = None

    def pose_known(self):
        """True when every joint has been sent a pulse since boot or the last relax()."""
        for us in self.us:
            if us < 0:
                return False
        return True

    # -- one-operation motions (also for Python calls at the REPL) -------

    def move(self, target, rule=MIN_MOTION, roll=None):
        """Joint-interpolated move to the IK solution of target (mm, radians); roll: the
        arm5 wrist roll to reach (radians; None: unchanged). False if refused."""
        self.plan()
        self.add(MOVE, target, rule, roll)
        return self.run()

    def line(self, target, roll=None):
        """Straight tool line to target (mm, radians), the arm5 wrist roll turning
        evenly to roll (None: unchanged); False if refused."""
        self.plan()
        self.add(LINE, target, MIN_MOTION, roll)
        return self.run()

    def joints(self, q):
        """Joint-interpolated move to q (radians, inside the joint limits); False if refused.

        With the pose unknown (boot, relax) q is sent at once (see send_pose).
        """
        if not self.plan_joints(q):
            return False
        if not self.pose_known():
            # No path to check, only the pose the servos are sent to.
            zones = self.solver.zones
            if zones is not None and not zones.clear(q):
                return self._refuse(COLLISION, REASON_ZONE, 0, 1)
            return self.send_pose(q) or self._refuse(JOINT_LIMIT, REASON_PULSE, 0, 1)
        return self.run()

    def plan_joints(self, q):
        """Plan a joint-interpolated move to q (radians); False if q is outside the joint limits."""
        self.plan()
        self.add(JOINTS, q)
        if not self.solver.within_limits(q):
            return self._refuse(JOINT_LIMIT, REASON_LIMITS, 0, 0)
        return True

    def path_clear(self):
        """Empty the joint path buffer."""
        self.path_len = 0

    def path_add(self, q):
        """Append waypoint q (radians) to the path; False (nothing stored, see fail_*) if the
        buffer is full, an angle is outside its joint limits or its pulse outside its window."""
        n = self.solver.n
        self.plan()
        self.add(PATH)
        if self.path_len >= MAX_WAYPOINTS:
            return self._refuse(BAD_INPUT, REASON_PATH_FULL, 0, self.path_len + 1)
        base = self.path_len * n
        path = self.path
        goal = self._goal
        for i in range(n):
            path[base + i] = q[i]
            goal[i] = path[base + i]        # judged as stored (float32)
        if not self.solver.within_limits(goal):
            return self._refuse(JOINT_LIMIT, REASON_LIMITS, 0, self.path_len + 1)
        zones = self.solver.zones
        if zones is not None and not zones.clear(goal):
            return self._refuse(COLLISION, REASON_ZONE, 0, self.path_len + 1)
        bad = self.servos.pulses(goal, self._step_us)
        if bad >= 0:
            return self._refuse(JOINT_LIMIT, REASON_PULSE, 0, self.path_len + 1, None, bad)
        self.path_len += 1
        return True

    def plan_path(self):
        """Plan the motion through the path's waypoints (begin() checks it, step() runs it).

        A path runs once: the buffer is emptied when the motion ends or is stopped
        (and by the caller when begin() refuses it).
        """
        self.plan()
        self.add(PATH)

    def home(self):
        """Joint-interpolated move to the board's home pose (sent at once if the pose is unknown)."""
        return self.joints(self.solver.home)

    def pick(self, where):
        """Pick at where (arm5 x, y, z; planar x, y), see pick_plan; False if refused."""
        self.pick_plan(where, True)
        return self.run()

    def place(self, where):
        """Place at where, see pick_plan; False if refused."""
        self.pick_plan(where, False)
        return self.run()

    # -- plans ----------------------------------------------------------

    def plan(self):
        """Start a new plan."""
        self._n_ops = 0

    def add(self, op, target=None, rule=MIN_MOTION, roll=None, step_mm=0.0):
        """Append an operation; target: joint angles (JOINTS) or tool coordinates (MOVE, LINE);
        roll: the arm5 wrist roll a MOVE or LINE ends at (radians; None: unchanged);
        step_mm: a LINE's tool travel per step, at most line_step_mm (0: line_step_mm)."""
        k = self._n_ops
        if k >= MAX_OPS:
            raise ValueError("plan too long")
        self._ops[k] = op
        self._rules[k] = rule
        self._rolls[k] = roll
        # Kept with the operation: a long plan's live pass walks it again.
        self._line_steps[k] = step_mm if 0.0 < step_mm < self.line_step_mm else self.line_step_mm
        if op == WAIT:
            self._waits[k] = target[0]
            self._n_ops = k + 1
            return
        if target is not None:
            t = self._angles[k] if op == JOINTS else self._tools[k]
            for i in range(len(t)):
                t[i] = target[i]
        self._n_ops = k + 1

    def run(self):
        """Check the whole plan, then run it, waiting between steps; True if it ran, False if refused (see fail_*)."""
        if not self.begin():
            return False
        if self._clock is not None:
            self._clock.start()
        while True:
            wait_ms = self.step()
            if wait_ms < 0:
                return True
            self.refill()
            if self._clock is not None:
                self._clock.wait_step(wait_ms)
            else:
                self.sleep_ms(wait_ms)

    def begin(self):
        """Check the whole plan; True if it may run (step() runs it), False if refused (see fail_*)."""
        self._live = None
        if not self.pose_known():
            # Interpolating from a pose the servos never got would be fiction.
            self.fail_status = HOME_FIRST
            self.fail_reason = REASON_UNKNOWN_POSE
            self.fail_kind = self._ops[0]
            self.fail_step = 0
            self.fail_joint = -1
            return False
        self._refill = None
        self._refilling = False
        for i in range(self.solver.n):
            self._start_q[i] = self.q[i]
        checked = self._walk(False)
        self._track(True)
        self.checking_plan = True
        self._cancelled = False
        try:
            next(checked)           # the check walk never yields
        except StopIteration as e:
            if not e.value:
                return False
        finally:
            self.checking_plan = False
            self._track(False)
        self._n_events = self._n_walked
        self._kept_whole = self._n_events <= RING_STEPS
        self.total = self.steps
        self.steps = 0
        for i in range(self.solver.n):
            self._end_q[i] = self._walk_q[i]
        if self.check_only:
            # Nothing runs: the pose the plan would reach is the commanded one now.
            for i in range(self.solver.n):
                self.q[i] = self._walk_q[i]
            return True
        if not self._kept_whole:
            self._refill = self._walk(True)
            self._n_walked = 0          # it has reached nothing yet
        self._sent = 0
        self._live = self._replay()
        return True

    def step(self):
        """Send the next step of the plan begun; ms to wait before the next one, -1 when the plan is done."""
        if self._live is None:
            return -1
        try:
            return next(self._live)
        except StopIteration:
            self._live = None
            self._refill = None
            if self._n_ops and self._ops[0] == PATH:
                self.path_len = 0       # a path runs once
            return -1
        except Exception:
            self.stop()                 # nothing more is sent (see _refill_event)
            raise

    def refill(self):
        """Use the idle time after a step: a long plan's second walk refills the ring by
        one event, or up to REFILL_EVENTS while it is less than REFILL_LEAD ahead (into
        slots the live pass has sent). True while it has more to do. Raises as step()
        does where the walk disagrees with the check."""
        if self._refill is None:
            return False
        budget = REFILL_EVENTS if self._n_walked < self._sent + REFILL_LEAD else 1
        self._track(True)
        try:
            while budget and self._refill is not None and self._n_walked < self._sent + RING_STEPS:
                self._refill_event()
                budget -= 1
        except Exception:
            self.stop()
            raise
        finally:
            self._track(False)
        return self._refill is not None

    def cancel_check(self):
        """Stop the check walk under way (from poll(): Ctrl-X); begin() then refuses the plan."""
        if self.checking_plan:
            self._cancelled = True

    def _track(self, on):
        """Tell the zones (armfw.zones.Zones.track) a walk's poses follow (on) or no longer."""
        zones = self.solver.zones
        if zones is not None:
            zones.track(on)

    def running(self):
        """True while a plan begun has steps left."""
        return self._live is not None

    def stop(self):
        """Drop the rest of the running plan; the arm stays at the last step sent."""
        if self._live is not None and self._n_ops and self._ops[0] == PATH:
            self.path_len = 0       # a path stopped halfway is not run again from elsewhere
        self._live = None
        self._refill = None

    def _failing_point(self, q, point):
        """The tool target of a refused step: the line's point, or for a joint-interpolated
        step the tool where pose q puts it (so a refusal never reports an older failure's)."""
        return point if point is not None else self.tool_of(q, self.fail_point)

    def _refuse(self, status, reason, op, step, point=None, joint=-1):
        """Record why the plan is refused (status: a solver status, or a protocol word); False."""
        self.fail_status = status if isinstance(status, str) else name(status)
        self.fail_reason = reason
        self.fail_op = op
        self.fail_kind = self._ops[op]
        self.fail_step = step
        self.fail_joint = joint
        if point is not None:
            for i in range(len(self.fail_point)):
                self.fail_point[i] = point[i]
        return False

    def _walk(self, refill):
        """Walk the plan from the pose it starts from, checking every step and keeping its
        events in the ring (the check pass); refill: the second walk of a long plan,
        which keeps what the live pass has not yet sent.

        A generator: the check walk never yields; the second walk yields after
        each event it reaches (the live pass takes a few at a time). It returns
        True when the plan passed, False when refused.
        """
        self._refilling = refill
        self._n_walked = 0
        q = self._walk_q
        for i in range(self.solver.n):
            q[i] = self._start_q[i]
        if not refill:
            self.steps = 0
        for k in range(self._n_ops):
            op = self._ops[k]
            if op == GRIP_OPEN or op == GRIP_CLOSE or op == WAIT:
                if op != WAIT and self.gripper is None:
                    return self._refuse(BAD_INPUT, REASON_GRIPPER, k, 0)
                self._keep(op if op != WAIT else _WAIT_EVENT + k, None)
                if refill:
                    yield
                continue
            if op == LINE:
                if not (yield from self._walk_line(k, q, refill)):
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
                    return self._refuse(st, REASON_SOLVER, k, 1, self._tools[k])
            else:
                t = self._angles[k]
                for i in range(self.solver.n):
                    goal[i] = t[i]
            if not (yield from self._walk_joints(k, q, goal, refill)):
                return False
        return True

    def with_roll(self, q, roll):
        """q, or a copy of it with the wrist roll set (what IK keeps as the roll)."""
        if roll is None:
            return q
        c = self._current
        for i in range(self.solver.n):
            c[i] = q[i]
        c[4] = roll
        return c

    def _max_step(self):
        return self.speed_rad_s * self.step_ms / 1000.0

    def _check_step(self, k, step, q, point=None, zones_checked=False):
        """One step to pose q: check its zones and pulses and keep both in the ring.

        zones_checked: q is the solver's answer, whose branch choice checked this
        very pose against the zones.
        """
        # Zone hook (armfw.zones): every step of every motion, in the check run.
        if not zones_checked:
            zones = self.solver.zones
            if zones is not None and not zones.clear(q):
                return self._refuse(COLLISION, REASON_ZONE, k, step, self._failing_point(q, point))
        bad = self.servos.pulses(q, self._step_us)
        if bad >= 0:
            return self._refuse(JOINT_LIMIT, REASON_PULSE, k, step, self._failing_point(q, point), bad)
        if not self._refilling:
            self.steps += 1
            if self.poll is not None and self.steps % POLL_STEPS == 0:
                self.poll()
                if self._cancelled:
                    return self._refuse(ABORTED, REASON_CANCELLED, k, step, self._failing_point(q, point))
        self._keep(_STEP_EVENT, q)
        return True

    def _keep(self, event, q):
        """Keep the walk's next event (a step: its pulses in _step_us, its pose q) in the ring.

        The check walk keeps the first RING_STEPS and counts the rest; the
        second walk of a long plan keeps the later ones in the slots the live
        pass has sent (its caller sees they are), and raises where it does not
        agree with what the check walk kept.
        """
        e = self._n_walked
        self._n_walked = e + 1
        if e >= RING_STEPS and not self._refilling:
            return
        slot = e % RING_STEPS
        check = e < RING_STEPS and self._refilling
        events = self._events
        if check and events[slot] != event:
            raise RuntimeError(_DISAGREE)
        events[slot] = event
        if q is None:
            return
        n = self.solver.n
        j = slot * n
        us = self._step_us
        ring_us = self._ring_us
        ring_q = self._ring_q
        if check:
            for i in range(n):
                if ring_us[j + i] != us[i] or ring_q[j + i] != q[i]:
                    raise RuntimeError(_DISAGREE)
            return
        for i in range(n):
            ring_us[j + i] = us[i]
            ring_q[j + i] = q[i]

    def _refill_event(self):
        """Let the second walk of a long plan reach one more event; raise where it ends
        otherwise than the check walk did (refused, fewer or more events, another pose)."""
        try:
            next(self._refill)
            return
        except StopIteration as e:
            ended = e.value
        self._refill = None
        if ended and self._n_walked == self._n_events:
            for i in range(self.solver.n):
                if self._walk_q[i] != self._end_q[i]:
                    break
            else:
                return
        raise RuntimeError(_DISAGREE)

    def _replay(self):
        """The live pass: send each event of the ring (a step's pulses, recording its pose;
        a gripper action; a wait); nothing is solved or checked again. A long plan's
        ring is refilled by refill() between steps; an event the second walk has not
        reached yet is walked first (nothing is sent unwalked). A generator: it
        yields after each event the ms to wait before the next."""
        n = self.solver.n
        us = self._step_us
        ring_us = self._ring_us
        ring_q = self._ring_q
        events = self._events
        q = self.q
        for e in range(self._n_events):
            slot = e % RING_STEPS
            while e >= RING_STEPS and self._n_walked <= e:
                self._refill_event()    # not reached yet (the walk ran slow): now, before it is sent
            event = events[slot]
            if event == _STEP_EVENT:
                j = slot * n
                for i in range(n):
                    us[i] = ring_us[j + i]
                    q[i] = ring_q[j + i]
                self._send_pulses()
                self.steps += 1
                wait = self.step_ms
            elif event >= _WAIT_EVENT:
                wait = int(self._waits[event - _WAIT_EVENT])
            else:
                if event == GRIP_OPEN:
                    self.gripper.open()
                else:
                    self.gripper.close()
                wait = GRIP_DWELL_MS
            self._sent = e + 1          # its slot may take event e + RING_STEPS
            yield wait

    def _walk_joints(self, k, q, goal, refill):
        n = self.solver.n
        biggest = 0.0
        for i in range(n):
            d = abs(goal[i] - q[i])
            if d > biggest:
                biggest = d
        # Whole steps, rounded up; a float hair over a whole number is not one more step.
        steps = int(biggest / self._max_step() + 1.0 - 1e-9)
        start = self._from
        for i in range(n):
            start[i] = q[i]
        for s in range(1, steps + 1):
            f = s / steps
            for i in range(n):
                q[i] = start[i] + (goal[i] - start[i]) * f
            if not self._check_step(k, s, q):
                return False
            if refill:
                yield
        return True

    def _walk_path(self, k, q, refill):
        goal = self._goal
        path = self.path
        n = self.solver.n
        for w in range(self.path_len):
            base = w * n
            for i in range(n):
                goal[i] = path[base + i]
            if not (yield from self._walk_joints(k, q, goal, refill)):
                return False
        return True

    def _walk_line(self, k, q, refill):
        p0 = self._p0
        p1 = self._tools[k]
        p = self._p
        nt = len(p0)
        self.tool_of(q, p0)
        if nt == 4:
            p0[3] = p1[3] + wrap_angle(p0[3] - p1[3])
        dist = 0.0
        for i in range(3 if nt == 4 else nt):
            d = p1[i] - p0[i]
            dist += d * d
        dist = sqrt(dist)
        # The pitch turns the wrist point on the tool's length (the solver's tool, as it is now).
        tool = getattr(self.solver, "tool", (0.0, 0.0, 0.0))
        offset_mm = sqrt(tool[0] * tool[0] + tool[1] * tool[1] + tool[2] * tool[2])
        length = dist + ((self.solver.l3 + offset_mm) * abs(p1[3] - p0[3]) if nt == 4 else 0.0)
        roll0 = q[4] if nt == 4 else 0.0
        roll1 = self._rolls[k]
        if roll1 is None:
            roll1 = roll0
        # The roll turns the tool offset (and the jaws): a turn counts as travel.
        length += (offset_mm + 10.0) * abs(roll1 - roll0)
        if not finite(length):
            # Coordinates so large their squares overflow: far outside any arm.
            st = self.solver.ik(p1, self._goal, q, MIN_MOTION)
            return self._refuse(BAD_INPUT if solved(st) else st, REASON_SOLVER, k, 1, p1)
        if length <= 0.0:
            return True
        dt_nominal = self._line_steps[k] / length
        dt_floor = MIN_LINE_STEP_MM / length
        max_step = self._max_step()
        min_step = -max_step
        t_end = 1.0 - 1e-9
        dp = self._dp
        fixed = self._fixed
        for i in range(nt):
            dp[i] = p1[i] - p0[i]
            # A coordinate the line keeps: p0 + 0.0 * tn for every tn in (0, 1), as one
            # float made here instead of two each step (bit for bit, -0.0 included).
            fixed[i] = p0[i] + 0.0
        rolling = roll1 != roll0
        # Each step's target is near the last one's: the solver continues its answer
        # (ik's own answer to the bit, proven cheaply or solved in full).
        ik_near = self.solver.ik_near
        goal = self._goal
        n = self.solver.n
        t = 0.0
        step = 0
        while t < 1.0:
            step += 1
            dt = dt_nominal
            while True:
                tn = t + dt
                if tn > t_end:
                    tn = 1.0
                if tn < 1.0:
                    for i in range(nt):
                        p[i] = p0[i] + dp[i] * tn if dp[i] != 0.0 else fixed[i]
                else:
                    for i in range(nt):
                        p[i] = p1[i]
                current = self.with_roll(q, roll0 + (roll1 - roll0) * tn) if rolling else q
                st = ik_near(p, goal, current)
                if st > SINGULAR:
                    return self._refuse(st, REASON_SOLVER, k, step, p)
                # No joint turns more than max_step (|d| <= max_step, as comparisons).
                for i in range(n):
                    d = goal[i] - q[i]
                    if d > max_step or d < min_step:
                        break
                else:
                    break
                dt = (tn - t) * 0.5
                if dt < dt_floor:
                    return self._refuse(SINGULAR, REASON_JUMP, k, step, p)
            for i in range(n):
                q[i] = goal[i]
            if not self._check_step(k, step, q, p, True):
                return False
            if refill:
                yield
            t = tn
        return True

    # -- pulses ---------------------------------------------------------

    def _send_pulses(self):
        """Send the pulses of _step_us that differ from the last ones sent."""
        us = self._step_us
        channels = self.servos.channels
        for i in range(self.solver.n):
            if us[i] != self.us[i]:
                self.driver.set_us(channels[i], us[i])
                self.us[i] = us[i]

    def joint_of_channel(self, channel):
        """Joint index driven by channel, or -1."""
        channels = self.servos.channels
        for i in range(self.solver.n):
            if channels[i] == channel:
                return i
        return -1

    def raw_pulse_plan(self, joint, us):
        """Plan a speed-limited move of one joint to the angle pulse us commands.

        The pulse must lie in the joint's window; the angle may lie outside the
        joint's limits (that is what a wiring check is for). False if refused.
        """
        s = self.servos
        if us < s.min_us[joint] or us > s.max_us[joint]:
            return False
        target = self._goal
        for i in range(self.solver.n):
            target[i] = self.q[i]
        target[joint] = s.angle(joint, us)
        if s.pulse(joint, target[joint]) != us:
            return False
        self.plan()
        self.add(JOINTS, target)
        return True

    def pick_plan(self, where, pick):
        """Plan a pick (pick=True) or place at where: arm5 (x, y, z), planar (x, y).

        Above the object by approach_mm, straight down to it, close (pick) or
        open (place) the gripper, straight back up. A pick opens the gripper
        above the object first. Arm5Solver points the tool straight down (pitch
        180 deg); a planar arm works in its vertical plane, y up.
        """
        up = self._up
        down = self._down
        for i in range(len(where)):
            up[i] = down[i] = where[i]
        if len(self.solver.targets) == 4:
            up[3] = down[3] = pi
            up[2] += self.approach_mm
        else:
            up[1] += self.approach_mm
        self.plan()
        self.add(MOVE, up)
        if pick:
            self.add(GRIP_OPEN)
        self.add(LINE, down)
        self.add(GRIP_CLOSE if pick else GRIP_OPEN)
        self.add(LINE, up)
