# SPDX-License-Identifier: MIT
"""The live run of a checked plan: the ring of checked events, replayed one step at a time.

begin() has the planner (armfw.planner) check the whole plan; the check keeps
what it computed, each step's pulses and pose, in a ring made here once
(ring_steps() events), and the live run only sends them: each step of a plan
that fits is solved once. A longer plan is checked whole all the same; its
live run refills the ring as it empties, an event or two after each step sent
(refill()), by walking the plan again from its start through the same code,
which takes exactly the same steps as the check did (the walk is
deterministic). A refilled step has passed every check again before it goes
into the ring, and the walk again must agree with what the check kept (the
kept steps, the number of events, the final pose): where it did not, step()
raises instead of sending anything it did not check.

The run is a stepper: each step() sends one event and returns how long to
wait before the next, so the caller (armfw.session) serves the console
between steps and may stop at any step (abort); after each step it calls
refill(), which refills a long plan's ring in the idle time. A hold re-times
the ring's steps to rest and back (armfw.hold, loaded on the first one).
"""

from array import array
import gc

from armfw.compat import const
from armfw.numeric import FLOAT_SIZE, floats
from armfw.planner import LINE_STEP_EVENT, WAIT_EVENT, GRIP_OPEN, REASON_UNKNOWN_POSE
from armfw.status import BUS_ERROR, HOME_FIRST

# Events (steps, gripper actions, waits) of a plan the ring keeps for the live
# run: per step the pulses (2 bytes each) and the pose (a float each, 4 bytes
# where floats are single as on the boards). The size trades heap for a long
# plan's second walk: RING_STEPS where the heap is roomy, halved (down to
# _MIN_RING_STEPS) while the ring would take more than a _RING_SHARE-th of the
# heap free when the arm is built (ring_steps()). A plan longer than the ring
# runs exactly as one the ring holds; only its check is walked a second time.
RING_STEPS = const(128)
_MIN_RING_STEPS = const(32)
_RING_SHARE = const(8)
# Events the second walk of a long plan reaches per refill() (once per step,
# the live run sending one): REFILL_EVENTS while it is fewer than _REFILL_LEAD
# events ahead of the live run, then one. Ahead, it leaves the live run an
# event in hand however a step's work varies (an event is one step's IK, a
# few where a line slows down), and the work between two steps stays one
# event but for the first few.
REFILL_EVENTS = const(2)
_REFILL_LEAD = const(8)

# Check walks of a plan that may slow corners a joint cannot take (armfw.cornerwatch); a
# walk after them keeps what it finds.
_CORNER_ROUNDS = const(3)

# A hobby-servo gripper takes this long to close on an object before the arm
# may lift it.
GRIP_DWELL_MS = const(400)

# What step() raises where a long plan's second walk disagrees with its check.
_DISAGREE = const("the plan walked again is not the plan checked: stopped")


def ring_steps(n):
    """The events the ring keeps for an arm of n joints: RING_STEPS, fewer where the heap
    free now is small (MicroPython's gc.mem_free; CPython has none)."""
    free = getattr(gc, "mem_free", None)
    steps = RING_STEPS
    if free is not None:
        budget = free() // _RING_SHARE
        while steps > _MIN_RING_STEPS and steps * (1 + n * (2 + FLOAT_SIZE)) > budget:
            steps //= 2
    return steps


class MotionStopped(Exception):
    """What step() raises where the servos stop a motion: word (armfw.status), message.
    The arm stays at the last step sent; nothing more is sent."""

    def __init__(self, word, message):
        super().__init__(message)
        self.word = word
        self.message = message


class Executor:
    """Runs the plans of planner (armfw.planner.Planner) on output (armfw.output.ServoOutput),
    with gripper (armfw.gripper.Gripper or None).

    check_only: plans are checked, never run; the pose they would reach becomes
    the commanded pose (the caller keeps the real one).

    monitor(commanded): called after each step sent with its pulses, None or a
    failure (word, joint, message) that stops the motion (bus servos report
    where they are: armfw.feedback); None: no check.
    """

    def __init__(self, planner, output, gripper):
        self.planner = planner
        self.output = output
        self.gripper = gripper
        planner.keep = self._keep
        n = len(output.q)
        self.check_only = False
        self.monitor = None
        self.steps = 0                    # steps of the plan begun sent so far
        self.total = 0                    # steps of the plan begun
        self._live = False                # True while a plan begun has events left
        self._hold = None                 # the re-timed run (armfw.hold), loaded on the first hold
        self._held_at_start = False       # held before its first step: at rest where the plan starts
        self._prev_q = floats(n)          # the pose before the last step sent
        ring = self.ring_size = ring_steps(n)
        # Event e in slot e % ring; a step's pulses and pose at slot * n.
        # (the poses in the interpreter's own float, so a kept pose is the walked one bit for bit)
        self._ring_us = array("H", bytes(2 * ring * n))     # zeros (raw items from bytes)
        self._ring_q = floats(ring * n)
        self._events = bytearray(ring)   # a step (STEP_EVENT, LINE_STEP_EVENT), a gripper op or a wait
        self._n_events = 0                # events of the plan (the check counted)
        self._n_walked = 0                # events the walk under way has reached
        self._refill = None               # the second walk of a long plan (a generator), or None
        self._sent = 0                    # events the live run has sent
        self._end_q = floats(n)           # the pose the check ended at

    def begin(self):
        """Check the whole plan; True if it may run (step() runs it), False if refused
        (see planner.refusal). A check that slows a corner walks the plan again."""
        planner = self.planner
        output = self.output
        self._live = False
        self._refill = None
        self._held_at_start = False
        if self._hold is not None:
            self._hold.engaged = self._hold.holding = False
        if not output.pose_known():
            # Interpolating from a pose the servos never got would be fiction.
            return planner.refuse(HOME_FIRST, REASON_UNKNOWN_POSE, 0, 0)
        # Walked again while the walk slows corners a joint cannot take (armfw.cornerwatch).
        planner.corner_rounds = _CORNER_ROUNDS
        try:
            while True:
                self._n_walked = 0
                if not planner.check(output.q):
                    return False
                watch = planner.corner_watch    # made by the first walk of blocks
                if watch is None or not watch.slowed:
                    break
                planner.corner_rounds -= 1
        finally:
            planner.corner_rounds = 0
        self._n_events = self._n_walked
        self.total = planner.steps
        self.steps = 0
        end = planner.pose
        for i in range(len(end)):
            self._end_q[i] = end[i]
        if self.check_only:
            for i in range(len(end)):
                output.q[i] = end[i]
            return True
        if self._n_events > self.ring_size:
            self._n_walked = 0          # the second walk has reached nothing yet
            self._refill = planner.walk(True)
        self._sent = 0
        for i in range(len(end)):
            self._prev_q[i] = output.q[i]
        self._live = True
        return True

    def kept_whole(self):
        """True when the ring holds the whole plan begun (it is not walked again)."""
        return self._n_events <= self.ring_size

    def step(self):
        """Send the next event of the plan begun; ms to wait before the next one, -1 when the plan is done."""
        if not self._live:
            return -1
        try:
            hold = self._hold
            if hold is not None and hold.engaged:
                return hold.step()
            wait = self._send_next()
            if wait < 0:
                self.stop()
            return wait
        except Exception:
            self.stop()                 # nothing more is sent (see _refill_event)
            raise

    def refill(self):
        """Use the idle time after a step: a long plan's second walk refills the ring by
        one event, or up to REFILL_EVENTS while it is less than _REFILL_LEAD ahead (into
        slots the live run has sent). True while it has more to do. Raises as step()
        does where the walk disagrees with the check."""
        if self._refill is None:
            return False
        budget = REFILL_EVENTS if self._n_walked < self._sent + _REFILL_LEAD else 1
        self.planner.track(True)
        try:
            while budget and self._refill is not None and self._n_walked < self._sent + self.ring_size:
                self._refill_event()
                budget -= 1
        except Exception:
            self.stop()
            raise
        finally:
            self.planner.track(False)
        return self._refill is not None

    def running(self):
        """True while a plan begun has steps left."""
        return self._live

    def stop(self):
        """Drop the rest of the running plan at once (Ctrl-X); the arm stays at the last step sent."""
        if self._live:
            self.planner.ended()
        self._live = False
        self._refill = None
        self._held_at_start = False
        if self._hold is not None:
            self._hold.engaged = self._hold.holding = False

    def hold(self):
        """`!`: decelerate along the checked steps to rest, within the acceleration limits."""
        if self._live and self._sent == 0 and not self._held_at_start:
            # Nothing sent yet: the arm rests where the plan starts from rest, so `~`
            # simply runs the plan, as if it had never been held.
            self._held_at_start = True
        elif self._live and not self._held_at_start:
            from armfw.hold import engaged
            engaged(self).holding = True

    def resume(self):
        """`~`: accelerate back along the same steps to the plan's pace."""
        self._held_at_start = False
        hold = self._hold
        if hold is not None and hold.engaged:
            hold.holding = False
            hold.resting = False

    def resting(self):
        """True when a held motion has come to rest."""
        hold = self._hold
        return self._held_at_start or hold is not None and hold.engaged and hold.holding and hold.resting

    def motion_fields(self):
        """(the tool's speed over the last step, mm/s; its travel until a hold from now rests, mm)."""
        if not self._live or self._held_at_start:
            return 0.0, 0.0
        from armfw.hold import motion_fields
        return motion_fields(self)

    def _keep(self, event, q, us):
        """Keep the walk's next event (a step: its pose q and pulses us) in the ring.

        The check keeps the first ring_size and counts the rest; the second
        walk of a long plan keeps the later ones in the slots the live run has
        sent (refill() sees they are), and raises where it does not agree with
        what the check kept.
        """
        e = self._n_walked
        self._n_walked = e + 1
        refilling = self.planner.refilling
        ring = self.ring_size
        if e >= ring and not refilling:
            return
        slot = e % ring
        agree = e < ring and refilling
        events = self._events
        if agree and events[slot] != event:
            raise RuntimeError(_DISAGREE)
        events[slot] = event
        if q is None:
            return
        n = len(q)
        j = slot * n
        ring_us = self._ring_us
        ring_q = self._ring_q
        if agree:
            for i in range(n):
                if ring_us[j + i] != us[i] or ring_q[j + i] != q[i]:
                    raise RuntimeError(_DISAGREE)
            return
        for i in range(n):
            ring_us[j + i] = us[i]
            ring_q[j + i] = q[i]

    def _refill_event(self):
        """Let the second walk of a long plan reach one more event; raise where it ends
        otherwise than the check did (refused, fewer or more events, another pose)."""
        try:
            next(self._refill)
            return
        except StopIteration as e:
            ended = e.value
        self._refill = None
        if ended and self._n_walked == self._n_events:
            end = self.planner.pose
            for i in range(len(end)):
                if end[i] != self._end_q[i]:
                    break
            else:
                return
        raise RuntimeError(_DISAGREE)

    def _emit(self, passed):
        """Send output's next pulses (the pose in output.q), which pass passed steps of the
        plan, and check the servos' feedback."""
        try:
            self.output.send()
        except OSError as e:    # a bus or I2C transfer failed: the servos may not have it
            raise MotionStopped(BUS_ERROR, str(e))
        self.steps += passed
        if self.monitor is not None:
            failure = self.monitor(self.output.next_us)
            if failure is not None:
                raise MotionStopped(failure[0], failure[2])

    def _send_next(self):
        """The live run: send the next event of the ring (a step's pulses, recording its pose;
        a gripper action; a wait); nothing is solved or checked again. An event the
        second walk has not reached yet is walked first (nothing is sent unwalked).
        The ms to wait before the next, -1 when the plan is done."""
        e = self._sent
        if e >= self._n_events:
            return -1
        output = self.output
        q = output.q
        prev = self._prev_q
        n = len(q)
        ring = self.ring_size
        slot = e % ring
        while e >= ring and self._n_walked <= e:
            self._refill_event()    # not reached yet (the walk ran slow): now, before it is sent
        event = self._events[slot]
        for i in range(n):
            prev[i] = q[i]
        if event >= LINE_STEP_EVENT:
            us = output.next_us
            ring_us = self._ring_us
            ring_q = self._ring_q
            j = slot * n
            for i in range(n):
                us[i] = ring_us[j + i]
                q[i] = ring_q[j + i]
            self._emit(1)
            wait = self.planner.step_ms
        elif event >= WAIT_EVENT:
            wait = self.planner.wait_ms(event)
        else:
            if event == GRIP_OPEN:
                self.gripper.open()
            else:
                self.gripper.close()
            wait = GRIP_DWELL_MS
        self._sent = e + 1          # its slot may take event e + ring_size
        return wait
