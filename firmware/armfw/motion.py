# SPDX-License-Identifier: MIT
"""Motion: the arm controller, the front of the motion modules for the protocol and the REPL.

The controller knows the pose it commanded (joint angles, radians) and moves
the arm by plans: a short list of operations (joint moves, tool moves,
straight tool lines, gripper actions) that run one after another. Its parts,
one job each:

    armfw.planner    the plan and its checking walk, and why a plan was refused
    armfw.linestep   the rule a straight line is stepped by
    armfw.executor   the live run: the ring of checked steps, replay and refill
    armfw.output     what the servos were sent, and whether the pose is known
    armfw.clock      when the next step starts, in real time

Every plan is checked whole before anything moves: a path that leaves the
workspace halfway is refused before the first pulse. begin() checks, each
step() sends one step and returns how long to wait; run() is begin() plus
waiting, for Python calls at the REPL.

Speed: each step lasts step_ms. A joint move is one synchronized trapezoid
within every joint's speed and acceleration; a straight line ramps the
tool's speed within its acceleration (armfw.profile) and takes shorter
steps where a joint would turn too fast. A line that would need a joint to
jump is refused.
"""

from math import pi

from armfw.compat import sleep_ms as _sleep_ms
from armfw.solver import MIN_MOTION
from armfw.numeric import DEG
from armfw.status import JOINT_LIMIT, COLLISION
from armfw.planner import (Planner, JOINTS, MOVE, LINE, GRIP_OPEN, GRIP_CLOSE, PATH, WAIT, OP_NAMES,  # noqa: F401
                           MAX_WAYPOINTS, MIN_SPEED_DEG_S, REASON_LIMITS, REASON_PULSE, REASON_ZONE)
from armfw.executor import Executor
from armfw.output import ServoOutput


class ArmController:
    """The arm controller: the board description (board), its solver (solver), the
    servo driver, an optional gripper (armfw.gripper.Gripper) and the commanded pose
    q (radians).

    Units: mm and radians everywhere; joint speeds in rad/s (planner.speed_rad_s,
    the current limit; planner.max_speed_rad_s, the board's ceiling);
    set_speed_deg_s takes deg/s, as the protocol's `speed` command does.

    sleep_ms(ms): how run() waits between steps; default the driver's own (the
    simulated driver keeps a virtual clock), otherwise real time on clock
    (armfw.clock.StepClock), where each step starts step_ms after the previous
    one however long computing it took.
    """

    def __init__(self, board, driver, gripper=None, sleep_ms=None, clock=None):
        self.board = board
        self.solver = board.solver
        self.servos = board.servos
        self.driver = driver
        self.gripper = gripper
        if sleep_ms is None:
            sleep_ms = getattr(driver, "sleep_ms", None)
        if sleep_ms is None:
            sleep_ms = _sleep_ms
            if clock is None:
                from armfw.clock import StepClock
                clock = StepClock()
        self.sleep_ms = sleep_ms
        self.clock = clock
        self.approach_mm = float(board.motion["approach_mm"])
        self.q = list(self.solver.home)
        self.output = ServoOutput(driver, board.servos, self.q)
        self.planner = Planner(board, gripper)
        self.refusal = self.planner.refusal
        self.executor = Executor(self.planner, self.output, gripper)
        # measure(read=True): the joint angles the servos report (armfw.feedback.measure);
        # None where the driver cannot read them back.
        self.measure = None
        if getattr(driver, "positions", None) is not None:
            # Bus servos report where they are: each step sent is checked against it.
            from armfw import feedback
            limits = feedback.limits(board)
            self.executor.monitor = lambda commanded: feedback.check(driver, commanded, limits)
            self.measure = lambda read=True: feedback.measure(driver, board.servos, limits, read)

    # -- pose -----------------------------------------------------------

    def tool(self, out=None):
        """Tool coordinates of the commanded pose (mm; arm5 pitch in radians)."""
        if out is None:
            out = [0.0] * len(self.solver.targets)
        return self.solver.tool_pose(self.q, out)

    def tool_of(self, q, out):
        """Tool coordinates (mm; arm5 pitch in radians, in (-pi, pi]) of joints q (radians), into out.

        The pitch is the one the protocol speaks: measured in the direction
        the tool reaches, so a base turned half a turn reports it unchanged.
        """
        return self.solver.tool_pose(q, out)

    def set_speed_deg_s(self, deg_s):
        """Joint speed limit in deg/s, MIN_SPEED_DEG_S..the board's max_speed_deg_s; False if refused."""
        planner = self.planner
        if not (deg_s >= MIN_SPEED_DEG_S and deg_s <= planner.max_speed_rad_s / DEG + 1e-9):
            return False
        planner.speed_rad_s = deg_s * DEG
        return True

    def park(self):
        """Send the home pose at once (boot): the servos' first pulse moves them at their own speed."""
        return self.output.send_pose(self.solver.home)

    def relax(self):
        """Stop every servo's pulses (the arm can be moved by hand); the pose is then unknown."""
        self.executor.stop()
        self.output.relax()
        if self.gripper is not None:
            self.gripper.state = None

    def pose_known(self):
        """True when every joint has been sent a pulse since boot or the last relax()."""
        return self.output.pose_known()

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

        With the pose unknown (boot, relax) q is sent at once (see ServoOutput.send_pose).
        """
        if not self.plan_joints(q):
            return False
        if not self.pose_known():
            # No path to check, only the pose the servos are sent to.
            zones = self.solver.zones
            if zones is not None and not zones.clear(q):
                return self.planner.refuse(COLLISION, REASON_ZONE, 0, 1)
            return self.output.send_pose(q) or self.planner.refuse(JOINT_LIMIT, REASON_PULSE, 0, 1)
        return self.run()

    def plan_joints(self, q):
        """Plan a joint-interpolated move to q (radians); False if q is outside the joint limits."""
        self.plan()
        self.add(JOINTS, q)
        if not self.solver.within_limits(q):
            return self.planner.refuse(JOINT_LIMIT, REASON_LIMITS, 0, 0)
        return True

    def plan_path(self):
        """Plan the motion through the path's waypoints (planner.path_add; a path runs once)."""
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

    def pick_plan(self, where, pick):
        """Plan a pick (pick=True) or place at where: arm5 (x, y, z), planar (x, y), mm.

        Above the object by approach_mm, straight down to it, close (pick) or
        open (place) the gripper, straight back up. A pick opens the gripper
        above the object first. An arm5 points the tool straight down (pitch
        180 deg); a planar arm works in its vertical plane, y up.
        """
        up = [0.0] * len(self.solver.targets)
        down = [0.0] * len(up)
        for i in range(len(where)):
            up[i] = down[i] = where[i]
        if len(up) == 4:
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

    def raw_pulse_plan(self, joint, us):
        """Plan a speed-limited move of one joint to the angle pulse us (µs) commands.

        The pulse must lie in the joint's window; the angle may lie outside the
        joint's limits (that is what a wiring check is for). False if refused.
        """
        s = self.servos
        if us < s.min_us[joint] or us > s.max_us[joint]:
            return False
        target = list(self.q)
        target[joint] = s.angle(joint, us)
        if s.pulse(joint, target[joint]) != us:
            return False
        self.plan()
        self.add(JOINTS, target)
        return True

    # -- plans ----------------------------------------------------------

    def plan(self):
        """Start a new plan."""
        self.planner.plan()

    def add(self, op, target=None, rule=MIN_MOTION, roll=None, step_mm=0.0):
        """Append an operation to the plan (armfw.planner.Planner.add)."""
        self.planner.add(op, target, rule, roll, step_mm)

    def begin(self):
        """Check the whole plan; True if it may run (step() runs it), False if refused (see refusal)."""
        return self.executor.begin()

    def step(self):
        """Send the next step of the plan begun; ms to wait before the next one, -1 when the plan is done."""
        return self.executor.step()

    def refill(self):
        """Use the idle time after a step (armfw.executor.Executor.refill)."""
        return self.executor.refill()

    def stop(self):
        """Drop the rest of the running plan; the arm stays at the last step sent."""
        self.executor.stop()

    def running(self):
        """True while a plan begun has steps left."""
        return self.executor.running()

    def run(self):
        """Check the whole plan, then run it, waiting between steps; True if it ran, False if refused (see refusal)."""
        if not self.begin():
            return False
        clock = self.clock
        if clock is not None:
            clock.start()
        while True:
            wait_ms = self.step()
            if wait_ms < 0:
                return True
            self.refill()
            if clock is not None:
                clock.due_after(wait_ms)
                wait_ms = clock.left(wait_ms)
                if wait_ms <= 0:
                    continue
            self.sleep_ms(wait_ms)
