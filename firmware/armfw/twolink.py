# SPDX-License-Identifier: MIT
"""The two-link planar problem, solved safely.

Links l1, l2 (mm); joint angles t1 (from the frame's x axis) and t2 (of the
second link relative to the first), radians, counter-clockwise positive.
The tool reaches only the annulus |l1 - l2| <= r <= l1 + l2.

The textbook law-of-cosines solver makes NaN (acos of 1.0000001) or, clamped
blindly, reports unreachable targets as solved. This one checks reachability
before any trigonometry, clamps only as belt and braces after that check, uses
atan2 throughout and flags near-singular poses.
"""

from math import atan2, sqrt, isfinite

from armfw.compat import const
from armfw.status import OK, SINGULAR, TOO_FAR, TOO_CLOSE, BAD_INPUT

# A target this close to the annulus boundary (as a fraction of full reach) is
# still reachable: float32 rounds an exactly-on-boundary target to a radius up
# to a few ulps (6e-8 each) outside it. 1e-6 of a 250 mm reach is 0.25 um.
REACH_EPS = 1e-6

# |sin t2| below this (t2 within ~1.1 degrees of straight or folded) is SINGULAR:
# the Jacobian determinant l1*l2*sin(t2) has collapsed to 2% of its best.
SINGULAR_SIN = 0.02


# Which branch `solve` returns: the sign of sin(t2), nothing else. These are
# deliberately not the arm's elbow words (armfw.solver.UP / DOWN, which
# mean a different sign on each arm kind): solve refuses those.
T2_POSITIVE = const(1)
T2_NEGATIVE = const(-1)



class TwoLink:
    """One pair of links l1, l2 (mm) with the constants its solve needs, computed once."""

    def __init__(self, l1, l2):
        self.l1 = l1
        self.l2 = l2
        margin = REACH_EPS * (l1 + l2)
        self._far = l1 + l2 + margin            # beyond: TOO_FAR
        self._near = abs(l1 - l2) - margin      # inside: TOO_CLOSE
        # l1^2 + l2^2 as one constant: cos t2 = (r^2 - it) / (2 l1 l2) rounds once
        # before the division, where subtracting the squares one by one rounds twice.
        self._sum_sq = l1 * l1 + l2 * l2
        self._twice_l1_l2 = 2.0 * l1 * l2
        # tan(beta) = l2 sin t2 / (l1 + l2 cos t2) = sin t2 / (l1 / l2 + cos t2): two float results fewer.
        # (A zero l2 - calibration builds such arms for their FK - gives beta 0 either way.)
        self._l1_over_l2 = l1 / l2 if l2 != 0.0 else float("inf")
        # Squared radii inside which both reach checks certainly pass without
        # the square root (a relative 1e-9 clear of the rounding at the edges).
        self._surely_near_enough = self._far * self._far * (1.0 - 1e-9)
        self._surely_far_enough = self._near * self._near * (1.0 + 1e-9) if self._near > 0.0 else -1.0

    def solve_pair(self, x, y, out):
        """Solve for the tool at (x, y) on both branches at once; returns the status.

        On OK or SINGULAR writes the branch with sin(t2) >= 0 as out[0], out[1]
        (t1, t2 radians) and its mirror, sin(t2) <= 0, as out[2], out[3]; the two
        share every square root and atan2 (t1 = atan2(y, x) -+ beta, t2 = +-gamma).
        On any other status out is left alone. The status is the same for both.
        """
        try:
            if not (isfinite(x) and isfinite(y)):
                return BAD_INPUT
        except TypeError:
            return BAD_INPUT
        r2 = x * x + y * y
        if not self._surely_far_enough < r2 < self._surely_near_enough:
            r = sqrt(r2)
            if r > self._far:
                return TOO_FAR
            if r < self._near:
                return TOO_CLOSE
        # The law of cosines. Near the annulus edges sin t2 goes with the square root
        # of cos t2's rounding: the numpy twin (armctl.batch) computes it the same way.
        c2 = (r2 - self._sum_sq) / self._twice_l1_l2
        # Inside the margin only: keeps the square root below from seeing a negative.
        if c2 > 1.0:
            c2 = 1.0
        elif c2 < -1.0:
            c2 = -1.0
        s2 = sqrt(1.0 - c2 * c2)
        phi = atan2(y, x)
        beta = atan2(s2, self._l1_over_l2 + c2)
        gamma = atan2(s2, c2)
        out[0] = phi - beta
        out[1] = gamma
        out[2] = phi + beta
        out[3] = -gamma
        if s2 < SINGULAR_SIN:
            return SINGULAR
        return OK


# The links of the last module-level call: a caller with one arm pays for the
# constants once.
_links = TwoLink(1.0, 1.0)
_pair = [0.0, 0.0, 0.0, 0.0]


def _links_of(l1, l2):
    global _links
    if _links.l1 != l1 or _links.l2 != l2:
        _links = TwoLink(l1, l2)
    return _links


def solve_pair(l1, l2, x, y, out):
    """TwoLink(l1, l2).solve_pair(x, y, out), for one-off callers."""
    return _links_of(l1, l2).solve_pair(x, y, out)


def solve(l1, l2, x, y, t2_sign, out):
    """Solve for the tool at (x, y) on the branch whose sin(t2) has the sign t2_sign.

    t2_sign is T2_POSITIVE (+1) or T2_NEGATIVE (-1); anything else is a
    ValueError (an arm's elbow word is not a sign of sin(t2)). On OK or
    SINGULAR writes t1, t2 (radians, t2 in [-pi, pi]) to out[0], out[1];
    otherwise leaves out alone. Returns the status.
    """
    if t2_sign == T2_POSITIVE:
        k = 0
    elif t2_sign == T2_NEGATIVE:
        k = 2
    else:
        raise ValueError("t2_sign must be +1 or -1")
    st = _links_of(l1, l2).solve_pair(x, y, _pair)
    if st <= SINGULAR:
        out[0] = _pair[k]
        out[1] = _pair[k + 1]
    return st
