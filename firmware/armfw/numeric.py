# SPDX-License-Identifier: MIT
"""Numeric helpers the firmware shares: finiteness, angle units, angle wrapping, gcd,
float buffers.

Plain floats and ints only, so the same functions run on a board, on the
MicroPython Unix port and on CPython (where the host imports them).
"""

from array import array
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


# The interpreter's own float as an array item: "f" where floats are single (the
# boards' builds), "d" elsewhere; an item holds a float bit for bit.
FLOAT_CODE = "f" if array("f", (1 / 3,))[0] == 1 / 3 else "d"
FLOAT_SIZE = 4 if FLOAT_CODE == "f" else 8


def floats(n, code=FLOAT_CODE):
    """A buffer of n floats (zeros) of array type code, e.g. one the walk's steps write
    again and again. A list keeps each float written to it as a heap object of its
    own, and the heap on a board ends in small pieces where those are made and let
    go step after step; an array keeps the numbers in one block made here. (Made
    from a range, not from bytes(...), which would need a second block as large for
    a moment: late in a session the heap may not have two.)"""
    a = array(code, range(n))
    for i in range(n):
        a[i] = 0.0
    return a


def gcd(a, b):
    """Greatest common divisor of two ints >= 0 (math.gcd is missing on some ports)."""
    while b:
        a, b = b, a % b
    return a
