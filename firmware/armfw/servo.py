# SPDX-License-Identifier: MIT
"""The servo bridge: joint angles (math frame) to servo pulses and back.

A servo knows nothing of the math frame. Per joint the board file says:
channel, offset (servo angle at mathematical zero), sign (+1/-1), the pulse
at the servo's centre, microseconds per radian and the pulse window. Keeping
these explicit is what separates a solver bug from a calibration bug.

    servo_angle = offset + sign * q            (radians)
    pulse_us    = round(center_us + servo_angle * us_per_rad)

A pulse outside the window is refused, never clamped; NaN is refused too.
"""

from math import isfinite

from armfw.compat import const

REFUSED = const(-1)


class ServoMap:
    """Pulse mapping for every joint of one arm (lists indexed by joint).

    min_us and max_us are the pulse windows; a caller narrows them in place
    (pulses() keeps these very lists), never by assigning new ones. driver:
    the board's driver section (armfw.board sets it), whose pulse grid a
    line's pulses are chosen on (line_pulses).
    """

    driver = None
    line_pose = None    # the pose line_pulses' last pulses command (radians)
    _picker = None

    def __init__(self, channels, offsets, signs, center_us, us_per_rad, min_us, max_us):
        self.channels = channels
        self.offsets = offsets      # radians
        self.signs = signs
        self.center_us = center_us
        self.us_per_rad = us_per_rad
        self.min_us = min_us
        self.max_us = max_us
        self.n = len(channels)
        # The mapping as one line per joint, us = zero_us + slope * q: two
        # float operations per pulse on the step path instead of four.
        self._zero_us = [c + o * k for c, o, k in zip(center_us, offsets, us_per_rad)]
        self._slope = [s * k for s, k in zip(signs, us_per_rad)]
        # The same line doubled. Doubling is exact in binary floating point, so
        # 2 * us costs what us costs, and for us >= 1 the rounded pulse
        # int(us + 0.5) is (int(2 * us) + 1) // 2: one float result fewer per joint.
        self._zero_us2 = [2.0 * z for z in self._zero_us]
        self._slope2 = [2.0 * k for k in self._slope]
        # What pulses() reads on every call, as one attribute: the windows are the
        # lists min_us and max_us themselves, so a caller narrows one in place.
        self._lines = (self._zero_us2, self._slope2, min_us, max_us, self.n)

    def exact_us(self, joint, q):
        """The pulse (microseconds, unrounded float) for joint at angle q (radians)."""
        return self._zero_us[joint] + self._slope[joint] * q

    def pulse(self, joint, q):
        """Pulse width (int us) for joint at angle q (radians), or REFUSED."""
        if not isfinite(q):
            return REFUSED
        us2 = self._zero_us2[joint] + self._slope2[joint] * q
        if not isfinite(us2):
            return REFUSED
        if us2 >= 2.0:
            us = (int(us2) + 1) >> 1
        else:
            us = self._zero_us[joint] + self._slope[joint] * q
            us = int(us + 0.5) if us >= 0 else -int(0.5 - us)
        if us < self.min_us[joint] or us > self.max_us[joint]:
            return REFUSED
        return us

    def pulses(self, q, out):
        """Pulses for all joints into out; returns -1, or the first refused joint.

        On a refusal out holds a partial answer: treat it as scratch.
        """
        zero2, slope2, lo, hi, n = self._lines
        # A builtin's name is looked up in two dictionaries at each use (the
        # module's, then the builtins' table): once here, not per joint.
        to_int = int
        for i in range(n):
            a = q[i]
            if a == 0.0:
                us2 = zero2[i]      # what the line gives at 0 (home, the wrist roll ik keeps)
            else:
                us2 = zero2[i] + slope2[i] * a      # NaN and inf fail the range test below
            # pulse()'s common case inline; anything else (NaN, below 1 us) asks pulse()
            if 2.0 <= us2 < 1e18:
                us = (to_int(us2) + 1) >> 1
            else:
                us = self.pulse(i, a)
                if us == REFUSED:
                    return i
            if us < lo[i] or us > hi[i]:
                return i
            out[i] = us
        return -1

    def line_pulses(self, q, out, solver, p0, p1, point):
        """The pulses of a line step to pose q (point on the line p0 -> p1) into out, chosen
        jointly (armfw.pulsepick), and the pose they command into line_pose; -1, or a
        refused joint."""
        picker = self._picker
        if picker is None:
            from armfw.pulsepick import PulsePicker
            picker = self._picker = PulsePicker(self, solver, self.driver)
            self.line_pose = picker.pose
        return picker.pick(q, out, p0, p1, point)

    def angle(self, joint, us):
        """Joint angle (radians) that the pulse us (microseconds) commands."""
        return ((us - self.center_us[joint]) / self.us_per_rad[joint] - self.offsets[joint]) * self.signs[joint]
