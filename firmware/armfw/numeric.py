# SPDX-License-Identifier: MIT
"""Numeric helpers the firmware shares: finiteness, angle units, angle wrapping, gcd.

Plain floats and ints only, so the same functions run on a board, on the
MicroPython Unix port and on CPython (where the host imports them).
"""

from math import isfinite, pi

# One degree in radians: degrees * DEG is radians, radians / DEG is degrees.
DEG = pi / 180.0
TWO_PI = 2.0 * pi


def all_finite(values):
    """True when every item of values is a finite int or float (NaN, inf, strings: False)."""
    try:
        for v in values:
            if not isfinite(v):
                return False
    except TypeError:
        return False
    return True


def finite(*values):
    """True when every argument is a finite int or float."""
    return all_finite(values)


def wrap_angle(a, half_turn=pi):
    """a moved by whole turns into (-half_turn, half_turn].

    Radians by default; half_turn=180.0 wraps degrees.
    """
    # A remainder, not a loop: subtracting turns from 1e300 never gets anywhere.
    return half_turn - (half_turn - a) % (2.0 * half_turn)


def gcd(a, b):
    """Greatest common divisor of two ints >= 0 (math.gcd is missing on some ports)."""
    while b:
        a, b = b, a % b
    return a
