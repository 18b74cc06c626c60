# SPDX-License-Identifier: MIT
"""A line step's pulses, chosen jointly: of the combinations of each joint's pulse
just below and just above its exact one, the one whose tool lies nearest the step.

Rounding each joint's pulse on its own moves the tool up to half a pulse step
per joint, and the joints' errors add up: the drawn line strays. Each joint
has two pulses next to its exact one on the driver's grid (whole microseconds;
a PCA9685's 4096 counts per period, about 4.9 us at 50 Hz), so n joints have
2^n combinations; the one whose tool is nearest the step's point on the line
is sent where it lies no farther from the line than the nearest pulses' (the
path never strays more than rounding each joint would; nearest the point,
not merely the line, keeps the tool's progress along it even). Every chosen
pulse is inside its window and its angle inside its joint limits; a joint with neither, or whose exact pulse is outside its window
(where rounding it would be refused), is refused, never clamped.

Cost: one forward kinematics, at the nearest pulses, and the arm's Jacobian
there (armfw.solver.Solver.fk_moves) give the tool at the nearest pulses and
the move each joint's step to its other grid point makes from it; every
combination is judged on their sum (what a step's joint moves do to the tool,
to first order), in small integers, so the 2^n tries make no float. The
winner, where it is not the nearest pulses, is then judged by its own forward
kinematics against theirs, and sent only where really nearer: never worse
than rounding each joint on its own.

Loaded when a line is first planned (armfw.servo.ServoMap.line_pulses); the
host's lines choose their waypoints' pulses with it too (armctl.fallback_line).
"""

from array import array

from armfw.compat import const
from armfw.numeric import FLOAT_CODE, floats
from armfw.solver import LIMIT_EPS

# The largest joint move's length in _search's integer units: fine enough to rank the
# combinations, small enough that a squared offset stays a small int on 32-bit ports.
SCALE = const(2048)


def grid(driver):
    """(num, den) of the driver section driver (armfw.drivers): its pulses step by
    den / num microseconds, a PCA9685's counts (a simulated one's too, "model":
    "pca9685") or whole microseconds."""
    if driver is not None and (driver.get("kind") == "pca9685" or driver.get("model") == "pca9685"):
        from armfw.pca9685 import OSC_HZ, count_fraction
        num, den = count_fraction(driver.get("freq_hz", 50), driver.get("osc_hz", OSC_HZ))
        if den > num:       # a count longer than a microsecond: whole microseconds can name each
            return num, den
    return 1, 1


class PulsePicker:
    """Chooses line steps' pulses for the servo map servos (armfw.servo.ServoMap) of an
    arm with solver (armfw.solver.Solver), on the pulse grid of driver (a board's
    driver section). Every buffer is made here once."""

    def __init__(self, servos, solver, driver):
        self.servos = servos
        self.solver = solver
        self.num, self.den = grid(driver)
        n = servos.n
        self.n = n
        self.dim = 3 if len(solver.targets) > 3 else len(solver.targets)     # tool position only
        self._lo_q = array(FLOAT_CODE, [a - LIMIT_EPS for a in solver.lo])
        self._hi_q = array(FLOAT_CODE, [a + LIMIT_EPS for a in solver.hi])
        self._down_us = [0] * n     # the pulse sent for the grid point below / above the exact one
        self._up_us = [0] * n
        self._down_q = floats(n)    # the angle each commands
        self._up_q = floats(n)
        self._nearest = 0           # bit i: joint i's nearest grid point is the one above
        self._usable = [0] * n      # bit 0: below usable, bit 1: above usable
        self.pose = floats(n)       # the pose the chosen pulses command
        self._pose = floats(n)
        self._tip = floats(len(solver.targets))
        self._base = floats(3)      # the tool at the nearest pulses
        self._step = floats(n)      # joint i's turn from its nearest grid point to the other
        self._move = floats(3 * n)  # the tool's move when joint i takes that turn, at 3 * i
        self._d = floats(3)         # the line's p1 - p0, for the guard
        self._free = [0] * n        # the joints _search may move, both grid points usable
        # Gray code: step k of _search changes the free joint of k's lowest set bit.
        ruler = self._ruler = bytearray(1 << n)
        for k in range(1, 1 << n):
            while not k >> ruler[k] & 1:
                ruler[k] += 1
        self._offsets = [0] * (3 * n + 3)   # _search's integer moves and offset (a plane arm's z: 0)

    def pick(self, q, out, p0, p1, point):
        """The pulses of pose q (radians), a step to point on the line p0 -> p1 (tool
        coordinates), into out, and the pose they command into pose; -1, or the first
        joint with no usable pulse (out and pose are then scratch)."""
        servos = self.servos
        n = self.n
        num = self.num
        den = self.den
        half = num // 2
        down_us = self._down_us
        up_us = self._up_us
        down_q = self._down_q
        up_q = self._up_q
        usable = self._usable
        lo_us = servos.min_us
        hi_us = servos.max_us
        lo_q = self._lo_q
        hi_q = self._hi_q
        exact_us = servos.exact_us
        angle = servos.angle
        whole = num == den      # whole microseconds: pulses are grid steps
        nearest = 0
        for i in range(n):
            exact = exact_us(i, q[i])
            lo = lo_us[i]
            hi = hi_us[i]
            # Refused where rounding it would be, more than half a microsecond out (doubled,
            # exactly, against whole numbers): a pose outside the window is not pulled in.
            twice = exact + exact
            if not 2 * lo - 1 <= twice <= 2 * hi + 1:     # NaN too
                return i
            steps = exact if whole else exact * num / den       # in grid steps
            c = int(steps)
            if steps - c >= 0.5:
                nearest |= 1 << i
            u = 0
            for side in (0, 1):
                g = c + side
                if whole:
                    us = g
                    a = angle(i, g)
                else:
                    us = (g * den + half) // num
                    a = angle(i, g * den / num)
                if side:
                    up_us[i] = us
                    up_q[i] = a
                else:
                    down_us[i] = us
                    down_q[i] = a
                if lo <= us <= hi and lo_q[i] <= a <= hi_q[i]:
                    u |= 1 << side
            if u == 0:
                return i
            usable[i] = u
        self._nearest = nearest
        best = self._search(point)
        if best != nearest and self._usable_combo(nearest):
            # _search left the nearest pulses' tool, by their own FK, in _base.
            length2 = self._line(p0, p1)
            if self._distance2(self._base, p0, p1, length2) <= self._distance2(self._fk(best), p0, p1, length2):
                best = nearest
        pose = self.pose
        for i in range(n):
            if best >> i & 1:
                out[i] = up_us[i]
                pose[i] = up_q[i]
            else:
                out[i] = down_us[i]
                pose[i] = down_q[i]
        return -1

    def _usable_combo(self, combo):
        usable = self._usable
        for i in range(self.n):
            if not usable[i] >> (combo >> i & 1) & 1:
                return False
        return True

    def _fk(self, combo):
        """The tool position of the combination combo (bit i: joint i's grid point above)."""
        pose = self._pose
        for i in range(self.n):
            pose[i] = self._up_q[i] if combo >> i & 1 else self._down_q[i]
        return self.solver.fk(pose, self._tip)

    def _line(self, p0, p1):
        """The segment p0 -> p1 (its first dim coordinates) into _d; its length squared."""
        d = self._d
        length2 = 0.0
        for j in range(self.dim):
            e = p1[j] - p0[j]
            d[j] = e
            length2 += e * e
        return length2

    def _distance2(self, t, p0, p1, length2):
        """Squared distance of point t (its first dim coordinates) from the segment p0 -> p1
        (_line's, of length squared length2)."""
        d = self._d
        along = 0.0
        d2 = 0.0        # t's distance squared from p0
        for j in range(self.dim):
            e = t[j] - p0[j]
            along += e * d[j]
            d2 += e * e
        if along <= 0.0 or length2 <= 0.0:
            return d2
        if along < length2:
            # less its part along the line
            d2 -= along * along / length2
            return d2 if d2 > 0.0 else 0.0
        d2 = 0.0
        for j in range(self.dim):
            e = t[j] - p1[j]
            d2 += e * e
        return d2

    def _search(self, point):
        """The usable combination whose tool, to first order, lies nearest point (the
        nearest pulses' where none is nearer); every one tried in Gray-code order from
        the nearest pulses, one joint changing at a time. Leaves the nearest pulses'
        tool, by FK, in _base.

        The tool's offset from point is kept in small integers (the largest joint's
        move is SCALE units): the 2^n tries then make no float, so they allocate
        nothing and cost a few integer operations each.
        """
        n = self.n
        dim = self.dim
        nearest = self._nearest
        pose = self._pose
        step = self._step
        for i in range(n):
            if nearest >> i & 1:
                pose[i] = self._up_q[i]
                step[i] = self._down_q[i] - pose[i]
            else:
                pose[i] = self._down_q[i]
                step[i] = self._up_q[i] - pose[i]
        move = self._move
        tip = self.solver.fk_moves(pose, step, self._tip, move)
        base = self._base
        for j in range(dim):
            base[j] = tip[j]
        most = 0.0      # the largest and least coordinate of a joint's move
        least = 0.0
        for k in range(3 * n):
            d = move[k]
            if d > most:
                most = d
            elif d < least:
                least = d
        if -least > most:
            most = -least
        scale = SCALE / most if most > 0.0 else 0.0
        # Joint i's move, and at 3 * n the nearest pulses' tool's offset from point
        # (the point lies on the line: its distance is the one across the line and
        # along it from the point, squared and summed).
        offsets = self._offsets
        for k in range(3 * n):
            offsets[k] = int(move[k] * scale)
        for j in range(dim):
            offsets[3 * n + j] = int((base[j] - point[j]) * scale)
        # A joint with one usable grid point is held at it, one whose step does not move
        # the tool (a wrist roll without a tool offset) at its nearest; the others are free.
        usable = self._usable
        free = self._free
        x = offsets[3 * n]
        y = offsets[3 * n + 1]
        z = offsets[3 * n + 2]
        combo = nearest
        m = 0
        for i in range(n):
            u = usable[i]
            b = 3 * i
            if u == 3:
                if offsets[b] or offsets[b + 1] or offsets[b + 2]:
                    free[m] = i
                    m += 1
            elif not u >> (nearest >> i & 1) & 1:
                combo ^= 1 << i
                x += offsets[b]
                y += offsets[b + 1]
                z += offsets[b + 2]
        # The start, the nearest pulses where usable, wins a tie.
        best = combo
        best_d2 = x * x + y * y + z * z
        ruler = self._ruler
        for k in range(1, 1 << m):
            i = free[ruler[k]]
            bit = 1 << i
            combo ^= bit
            b = 3 * i
            if (combo ^ nearest) & bit:       # off its nearest grid point: its move on
                x += offsets[b]
                y += offsets[b + 1]
                z += offsets[b + 2]
            else:
                x -= offsets[b]
                y -= offsets[b + 1]
                z -= offsets[b + 2]
            d2 = x * x + y * y + z * z
            if d2 < best_d2:
                best = combo
                best_d2 = d2
        return best
