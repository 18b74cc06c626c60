# SPDX-License-Identifier: MIT
"""Feed hold: the live run re-timed along its checked steps, to rest and back to speed.

Loaded the first time a motion is held (`!`) or a status line asks how far a
hold would take (`?`); until then it costs nothing.

The path is the sequence of the ring's checked steps (armfw.executor). Here
the arm's place on it is a fraction f of the way from the last step passed to
the next; each step sent is the pose and the pulses interpolated that far
between two consecutive checked steps, so every pulse lies between two
pulses the check passed, on the stretch the servos sweep between those two
steps on any run. Nothing is solved and no pose off that polyline is sent.

Each step advances sigma along the path (1: one checked step, the plan's own
pace), chosen so that no joint's displacement per step changes by more than
its acceleration x step^2 from the last step's and, on a line's steps, the
tool's travel per step (its speed along the path) by no more than the tool's
acceleration x step^2: held, the least such sigma (the quickest stop those
limits allow); resumed, the most, up to 1.

The tool's limit bounds the change of its speed along the path, not the turn
of its direction: a hold changes the timing, not the path, so at sigma times
the plan's pace the tool's acceleration across the path (v^2 / r round a
bend) is sigma^2 <= 1 times the plan's own there, which the plan kept within
its limits. Bounding the whole change of the tool's displacement instead
leaves no room round a bend the plan takes at the tool's full acceleration (a
blended circle): no sigma fits there. The joints keep their own limits
exactly, each step held to them (a joint's change mixes both parts).
Where even the plan's pace slows by more than the limits allow (the plan's
own ramp into a rest point), the hold keeps that pace: it slows as the plan
does and no faster, its change of speed no larger than the plan's own there.

At sigma 1 the arm runs the plan's own steps again, at a constant offset f
between them, until the next gripper action, wait or the plan's end, where
it lands on the checked step and the plain run takes over.
"""

from math import sqrt

from armfw.planner import LINE_STEP_EVENT

# Where no step fits the limits (a hold too close to a rest point the plan
# itself stops at: its end, a gripper action, a wait) they are relaxed by these
# factors in turn until one does.
_RELAX = (1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 1e9)
_EPS = 1e-9


class Hold:
    """The re-timed run of executor (armfw.executor.Executor)'s plan: engage() takes over
    from the plain run between two steps; step() sends one; engaged is False once
    the plain run takes back."""

    def __init__(self, executor):
        self.ex = executor
        n = len(executor.output.q)
        self.n = n
        self.holding = False        # True: decelerate to rest; False: back to the plan's pace
        self.engaged = False
        self.resting = False        # held, and at rest
        self.e = 0                  # the next event: its step is the segment's end
        self.f = 0.0                # how far along the segment to it the arm is
        self.sigma = 0.0            # the last step's advance
        self.a_q = [0.0] * n        # the segment's start: the last checked step passed
        self.a_us = [0] * n
        self.a_t = [0.0] * 3        # its tool point
        self.d = [0.0] * n          # the last step's joint displacement
        self.d_t = [0.0] * 3        # and the tool's
        self.c_q = [0.0] * n        # the arm's pose, pulses, tool point
        self.c_us = [0] * n
        self.c_t = [0.0] * 3
        self._x = [0.0] * n         # a segment's start, as a displacement from the arm
        self._dq = [0.0] * n        # a segment's joint change per unit of sigma
        self._xt = [0.0] * 3
        self._dtool = [0.0] * 3
        self._tp = [0.0] * len(executor.planner.solver.targets)
        self._s_q = [0.0] * n       # a segment's start and end poses and tool points
        self._s_t = [0.0] * 3
        self._e_q = [0.0] * n
        self._e_t = [0.0] * 3

    # -- the ring ---------------------------------------------------------

    def _tool(self, q, out):
        p = self.ex.planner.solver.tool_pose(q, self._tp)
        k = 3 if len(p) == 4 else len(p)
        for i in range(3):
            out[i] = p[i] if i < k else 0.0

    def _step_at(self, e):
        """The ring slot of event e where it is a step (walked first where it was not yet),
        else -1 (a gripper action, a wait, the plan's end, or beyond what the ring may hold)."""
        ex = self.ex
        if e >= ex._n_events or e >= ex._sent + ex.ring_size - 1:
            return -1
        while e >= ex.ring_size and ex._n_walked <= e:
            ex._refill_event()      # not reached yet: now, before it is used
        slot = e % ex.ring_size
        return slot if ex._events[slot] >= LINE_STEP_EVENT else -1

    # -- engage, hold, resume ----------------------------------------------

    def engage(self, prev_q):
        """Take over from the plain run: the arm at the last step sent; prev_q, the pose before."""
        ex = self.ex
        out = ex.output
        n = self.n
        self.e = ex._sent
        self.f = 0.0
        for i in range(n):
            self.a_q[i] = self.c_q[i] = out.q[i]
            self.a_us[i] = self.c_us[i] = out.next_us[i]
            self.d[i] = out.q[i] - prev_q[i]
        self._tool(prev_q, self.d_t)
        self._tool(out.q, self.a_t)
        for i in range(3):
            self.c_t[i] = self.a_t[i]
            self.d_t[i] = self.a_t[i] - self.d_t[i]
        self.sigma = 1.0
        self.resting = False
        self.engaged = True

    def speed_mm_s(self):
        """The tool's speed over the last step (mm/s)."""
        d = self.d_t
        return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) * 1000.0 / self.ex.planner.step_ms

    def stopping_mm(self):
        """The tool's travel (mm) until a hold from here comes to rest (a dry run)."""
        saved = (self.e, self.f, self.sigma, self.resting, self.holding,
                 list(self.a_q), list(self.a_us), list(self.a_t), list(self.d), list(self.d_t),
                 list(self.c_q), list(self.c_us), list(self.c_t))
        self.holding = True
        total = 0.0
        for _ in range(100000):
            if not self.advance(False):
                break
            total += sqrt(self.d_t[0] * self.d_t[0] + self.d_t[1] * self.d_t[1] + self.d_t[2] * self.d_t[2])
        (self.e, self.f, self.sigma, self.resting, self.holding) = saved[:5]
        for dst, src in zip((self.a_q, self.a_us, self.a_t, self.d, self.d_t, self.c_q, self.c_us, self.c_t), saved[5:]):
            for i in range(len(dst)):
                dst[i] = src[i]
        return total

    # -- one step ----------------------------------------------------------

    def _load(self, slot, q, t):
        """The pose of ring slot's step into q, its tool point into t."""
        ex = self.ex
        j = slot * self.n
        for i in range(self.n):
            q[i] = ex._ring_q[j + i]
        self._tool(q, t)

    def _choose(self, relax):
        """The next step's sigma within the limits x relax; -1.0 where none fits."""
        ex = self.ex
        n = self.n
        dt = ex.planner.step_ms / 1000.0
        dt2 = dt * dt * relax
        accel = ex.planner.joint_accel
        tool_limit = ex.planner.tool_accel * dt2
        d = self.d
        d_t = self.d_t
        if self.holding:
            for i in range(n):
                if d[i] > accel[i] * dt2 or -d[i] > accel[i] * dt2:
                    break
            else:
                if d_t[0] * d_t[0] + d_t[1] * d_t[1] + d_t[2] * d_t[2] <= tool_limit * tool_limit:
                    return 0.0          # one step's change brings it to rest
        x = self._x
        xt = self._xt
        dq = self._dq
        dtool = self._dtool
        for i in range(n):
            x[i] = 0.0
            self._s_q[i] = self.a_q[i]
        for i in range(3):
            xt[i] = 0.0
            self._s_t[i] = self.a_t[i]
        e = self.e
        start = 0.0
        length = 1.0 - self.f
        best = -1.0
        while start < 1.0 - _EPS:
            slot = self._step_at(e)
            if slot < 0:
                if start <= _EPS:
                    return 0.0          # a gripper action, a wait or the end is next: here it rests
                break
            # The segment from the last step to this one, per unit of sigma; the arm is
            # start before its end's share of it.
            self._load(slot, self._e_q, self._e_t)
            for i in range(n):
                dq[i] = self._e_q[i] - self._s_q[i]
            for i in range(3):
                dtool[i] = self._e_t[i] - self._s_t[i]
            end = start + length
            if end > 1.0:
                end = 1.0
            lo, hi = self._interval(start, end, accel, dt2, tool_limit, ex._events[slot] == LINE_STEP_EVENT)
            if end >= 1.0 - _EPS and lo > end:
                lo = end            # even the plan's pace slows faster here: keep it
            if lo <= hi + _EPS:
                if self.holding:
                    return lo if lo > 0.0 else 0.0
                best = hi if hi > lo else lo
            for i in range(n):
                x[i] += dq[i] * length
                self._s_q[i] = self._e_q[i]
            for i in range(3):
                xt[i] += dtool[i] * length
                self._s_t[i] = self._e_t[i]
            start += length
            length = 1.0
            e += 1
        if best < 0.0 and start < 1.0 - _EPS and self.holding is False:
            return start                # the plan's rest point is within reach: land on it
        return best

    def _interval(self, s0, s1, accel, dt2, tool_limit, line):
        """The sigmas in [s0, s1] within the limits on the segment filled in (lo > hi: none)."""
        lo = s0
        hi = s1
        d = self.d
        x = self._x
        dq = self._dq
        for i in range(self.n):
            limit = accel[i] * dt2
            low = d[i] - limit - x[i]
            high = d[i] + limit - x[i]
            c = dq[i]
            if c == 0.0:
                if low > 0.0 or high < 0.0:
                    return 1.0, 0.0
                continue
            a = low / c
            b = high / c
            if c < 0.0:
                a, b = b, a
            if s0 + a > lo:
                lo = s0 + a
            if s0 + b < hi:
                hi = s0 + b
        if line:
            # The tool's speed along the path, |xt + (s - s0) dtool| a step, within tool_limit
            # of the last step's |d_t|: a quadratic in s - s0 for each bound.
            xt = self._xt
            t = self._dtool
            d_t = self.d_t
            last = sqrt(d_t[0] * d_t[0] + d_t[1] * d_t[1] + d_t[2] * d_t[2])
            qa = t[0] * t[0] + t[1] * t[1] + t[2] * t[2]
            qb = 2.0 * (xt[0] * t[0] + xt[1] * t[1] + xt[2] * t[2])
            qc = xt[0] * xt[0] + xt[1] * xt[1] + xt[2] * xt[2]
            top = last + tool_limit
            if qa == 0.0:
                if qc > top * top or (last > tool_limit and qc < (last - tool_limit) ** 2):
                    return 1.0, 0.0
                return lo, hi
            disc = qb * qb - 4.0 * qa * (qc - top * top)
            if disc < 0.0:
                return 1.0, 0.0
            r = sqrt(disc)
            if s0 + (-qb - r) / (2.0 * qa) > lo:
                lo = s0 + (-qb - r) / (2.0 * qa)
            if s0 + (-qb + r) / (2.0 * qa) < hi:
                hi = s0 + (-qb + r) / (2.0 * qa)
            if last > tool_limit:
                # At least last - tool_limit: beyond the larger root (the travel grows with s
                # unless the path turns back within a step; there sigmas below are left out).
                disc = qb * qb - 4.0 * qa * (qc - (last - tool_limit) ** 2)
                if disc >= 0.0 and s0 + (-qb + sqrt(disc)) / (2.0 * qa) > lo:
                    lo = s0 + (-qb + sqrt(disc)) / (2.0 * qa)
        return lo, hi

    def advance(self, live):
        """Move the arm's place on the path by one step (live: send it, else a dry run);
        False where it stays at rest."""
        sigma = -1.0
        for relax in _RELAX:
            sigma = self._choose(relax)
            if sigma >= 0.0:
                break
        if sigma < 0.0:
            sigma = 0.0
        self.sigma = sigma
        n = self.n
        ex = self.ex
        if sigma <= 0.0:
            for i in range(n):
                self.d[i] = 0.0
            for i in range(3):
                self.d_t[i] = 0.0
            self.resting = self.holding
            return False
        self.resting = False
        # Keep the pose before the step in d, d_t (the step's displacement is the difference).
        for i in range(n):
            self.d[i] = self.c_q[i]
        for i in range(3):
            self.d_t[i] = self.c_t[i]
        left = sigma
        passed = 0
        while True:
            rest = 1.0 - self.f
            slot = self._step_at(self.e)
            if left < rest - _EPS:
                self.f += left
                break
            # The step passes (or lands on) the checked step of event e: it starts the next segment.
            left -= rest
            self._load(slot, self.a_q, self.a_t)
            j = slot * n
            for i in range(n):
                self.a_us[i] = ex._ring_us[j + i]
            self.e += 1
            self.f = 0.0
            passed += 1
            if live:
                ex._sent = self.e
            if left <= _EPS or self._step_at(self.e) < 0:
                break
        slot = self._step_at(self.e)
        f = self.f
        if f > 0.0:
            self._load(slot, self._e_q, self._e_t)
            j = slot * n
            for i in range(n):
                a = self.a_q[i]
                self.c_q[i] = a + (self._e_q[i] - a) * f
                u = self.a_us[i]
                self.c_us[i] = int(u + (ex._ring_us[j + i] - u) * f + 0.5)
            for i in range(3):
                a = self.a_t[i]
                self.c_t[i] = a + (self._e_t[i] - a) * f
        else:
            for i in range(n):
                self.c_q[i] = self.a_q[i]
                self.c_us[i] = self.a_us[i]
            for i in range(3):
                self.c_t[i] = self.a_t[i]
        for i in range(n):
            self.d[i] = self.c_q[i] - self.d[i]
        for i in range(3):
            self.d_t[i] = self.c_t[i] - self.d_t[i]
        if live:
            out = ex.output
            for i in range(n):
                out.q[i] = self.c_q[i]
                out.next_us[i] = self.c_us[i]
            ex._emit(passed)
        return True

    def step(self):
        """Send one re-timed step; the ms to wait before the next. Hands back to the plain run
        once on a checked step at the plan's pace, or before a gripper action, a wait or the end."""
        ex = self.ex
        if self.resting and self.holding:
            return ex.planner.step_ms
        self.advance(True)
        if not self.holding and self.f == 0.0 and (self.sigma >= 1.0 - _EPS or self._step_at(self.e) < 0):
            self.engaged = False
            for i in range(self.n):
                ex._prev_q[i] = self.c_q[i] - self.d[i]
        return ex.planner.step_ms


def engaged(executor):
    """executor's re-timed run, made the first time, engaged where the plain run had the arm."""
    if executor._hold is None:
        executor._hold = Hold(executor)
    hold = executor._hold
    if not hold.engaged:
        hold.engage(executor._prev_q)
    return hold


def motion_fields(executor):
    """(the tool's speed over the last step, mm/s; its travel until a hold from now rests, mm)."""
    was = executor._hold is not None and executor._hold.engaged
    hold = engaged(executor)
    speed = hold.speed_mm_s()
    stop = hold.stopping_mm()
    hold.engaged = was
    return speed, stop
