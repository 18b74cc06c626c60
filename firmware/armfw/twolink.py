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

from math import atan2, cos, sin, sqrt, isfinite

from armfw.status import OK, SINGULAR, TOO_FAR, TOO_CLOSE, BAD_INPUT

# A target this close to the annulus boundary (as a fraction of full reach) is
# still reachable: float32 rounds an exactly-on-boundary target to a radius up
# to a few ulps (6e-8 each) outside it. 1e-6 of a 250 mm reach is 0.25 um.
REACH_EPS = 1e-6

# |sin t2| below this (t2 within ~1.1 degrees of straight or folded) is SINGULAR:
# the Jacobian determinant l1*l2*sin(t2) has collapsed to 2% of its best.
SINGULAR_SIN = 0.02


def solve_pair(l1, l2, x, y, out):
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
    r = sqrt(r2)
    margin = REACH_EPS * (l1 + l2)
    if r > l1 + l2 + margin:
        return TOO_FAR
    if r < abs(l1 - l2) - margin:
        return TOO_CLOSE
    c2 = (r2 - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
    # Inside the margin only: keeps the square root below from seeing a negative.
    if c2 > 1.0:
        c2 = 1.0
    elif c2 < -1.0:
        c2 = -1.0
    s2 = sqrt(1.0 - c2 * c2)
    phi = atan2(y, x)
    beta = atan2(l2 * s2, l1 + l2 * c2)
    gamma = atan2(s2, c2)
    out[0] = phi - beta
    out[1] = gamma
    out[2] = phi + beta
    out[3] = -gamma
    if s2 < SINGULAR_SIN:
        return SINGULAR
    return OK


_pair = [0.0, 0.0, 0.0, 0.0]


def solve(l1, l2, x, y, elbow, out):
    """Solve for the tool at (x, y) on the branch whose sin(t2) has the sign of elbow.

    elbow is +1 or -1. On OK or SINGULAR writes t1, t2 (radians, t2 in [-pi, pi])
    to out[0], out[1]; otherwise leaves out alone. Returns the status.
    """
    st = solve_pair(l1, l2, x, y, _pair)
    if st <= SINGULAR:
        k = 0 if elbow > 0 else 2
        out[0] = _pair[k]
        out[1] = _pair[k + 1]
    return st


def forward(l1, l2, t1, t2, out):
    """Tool position for joint angles t1, t2 (radians) into out[0], out[1] (mm)."""
    t12 = t1 + t2
    out[0] = l1 * cos(t1) + l2 * cos(t12)
    out[1] = l1 * sin(t1) + l2 * sin(t12)
    return out
