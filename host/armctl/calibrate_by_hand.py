# SPDX-License-Identifier: MIT
"""`armctl calibrate --by-hand`, for bus servos (LeRobot's way).

A bus servo reports where it is, so nothing is jogged: with every torque off
the person puts the arm in a known pose (each joint at known_deg, the board's
home by default) and then moves each joint through its whole range. From the
ticks read:

    offset_deg  the servo angle at mathematical zero: the known pose's tick is
                center + (offset + sign * q_known) * ticks_per_rad
    limits      the extremes each joint reached, a margin inside, as joint limits
                (min_deg, max_deg) and as the tick window (min_us, max_us)

sign and center_us stay the board's; us_per_rad is the servo's ticks per
radian (ticks_per_rev / 2 pi), exact for a bus servo. A calibration file
carries the servo map (offset_deg, ...); the limits go into the board file
(limits_into), which the loader checks again against the window.
"""

import json
import math

from armfw.numeric import DEG


BY_HAND_MARGIN_DEG = 1.0


class ByHandError(ValueError):
    """A by-hand reading that cannot give a calibration (names the joint and why)."""


def extremes(samples, ticks_per_rev):
    """(lowest, highest) tick among samples of one joint, in the order read; ByHandError where
    two readings in a row are more than half a turn apart: the joint crossed the servo's
    wrap (tick ticks_per_rev - 1 to 0), where its lowest and highest reads mean nothing."""
    for a, b in zip(samples, samples[1:]):
        if abs(b - a) > ticks_per_rev // 2:
            raise ByHandError("the range crosses the servo's tick 0 (read %d then %d): turn the horn "
                              "half a turn on the servo, or the servo's own offset, and start again" % (a, b))
    return min(samples), max(samples)


def by_hand_fit(board, known_ticks, ranges, known_deg=None, margin_deg=BY_HAND_MARGIN_DEG):
    """The calibration of a bus servo board from what a person did by hand.

    known_ticks[j]: joint j's tick at the known pose (known_deg[j] degrees, default
    the board's home); ranges[j]: (lowest, highest) tick it reached (extremes()).
    Returns (fits, limits): per joint fit_servo's form (sign, us_per_rad, offset_deg,
    center_us) and {"min_deg", "max_deg", "min_us", "max_us"}.
    """
    s = board.servos
    arm = board.solver
    per_rad = board.driver["ticks_per_rev"] / (2 * math.pi)
    known = [q / DEG for q in arm.home] if known_deg is None else list(known_deg)
    fits = {}
    limits = []
    for j in range(s.n):
        sign = s.signs[j]
        center = s.center_us[j]
        offset_rad = (known_ticks[j] - center) / per_rad - sign * known[j] * DEG
        low, high = ranges[j]
        if high - low < 2 * margin_deg * DEG * per_rad:
            raise ByHandError("%s: it moved only %d ticks (%d..%d): move it through its whole range"
                              % (arm.names[j], high - low, low, high))
        if not low <= known_ticks[j] <= high:
            raise ByHandError("%s: the known pose (tick %d) is outside the range it was moved "
                              "through (%d..%d)" % (arm.names[j], known_ticks[j], low, high))
        ends = sorted(sign * ((t - center) / per_rad - offset_rad) / DEG for t in (low, high))
        fits[j] = {"sign": sign, "us_per_rad": round(per_rad, 4), "offset_deg": round(offset_rad / DEG, 3),
                   "center_us": center}
        limits.append({"min_deg": round(ends[0] + margin_deg, 1), "max_deg": round(ends[1] - margin_deg, 1),
                       "min_us": int(low), "max_us": int(high)})
    return fits, limits


def limits_into(board_dict, limits):
    """board_dict (a parsed board file) with each joint's limits and tick window replaced;
    a home outside the new limits moves to the nearest one."""
    out = json.loads(json.dumps(board_dict))
    for joint, new in zip(out["joints"], limits):
        joint.update(new)
        home = joint.get("home_deg", 0.0)
        joint["home_deg"] = min(max(home, new["min_deg"]), new["max_deg"])
    return out


class ByHand:
    """The by-hand procedure: relax, the known pose, each joint through its range.

    read_ticks(): every joint's present tick (a list, joint order); relax(): every
    torque off; ask(text): says text and waits for the person (Enter);
    moving(joint): called between samples while joint is being moved, True once the
    person says it has been through its range; say(text): a line to the person.
    """

    def __init__(self, read_ticks, relax, ask, moving, say=print):
        self.read_ticks = read_ticks
        self.relax = relax
        self.ask = ask
        self.moving = moving
        self.say = say

    def run(self, board, known_deg=None, margin_deg=BY_HAND_MARGIN_DEG):
        """(fits, limits), as by_hand_fit."""
        arm = board.solver
        ticks = board.driver["ticks_per_rev"]
        self.relax()
        known = [q / DEG for q in arm.home] if known_deg is None else list(known_deg)
        self.ask("Torque is off. Put the arm in its known pose (%s), then press Enter"
                 % ", ".join("%s %g deg" % (n, d) for n, d in zip(arm.names, known)))
        known_ticks = list(self.read_ticks())[:arm.n]
        ranges = []
        for j, name in enumerate(arm.names):
            self.say("Move %s slowly through its whole range, end to end, then press Enter" % name)
            samples = [known_ticks[j]]
            while True:
                samples.append(self.read_ticks()[j])
                if self.moving(j):
                    samples.append(self.read_ticks()[j])
                    break
            try:
                ranges.append(extremes(samples, ticks))
            except ByHandError as e:
                raise ByHandError("%s: %s" % (name, e))
            self.say("%s: ticks %d..%d" % (name, ranges[-1][0], ranges[-1][1]))
        return by_hand_fit(board, known_ticks, ranges, known, margin_deg)
