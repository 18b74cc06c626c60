# SPDX-License-Identifier: MIT
"""Vectorised arithmetic for armctl.batch_arm5: sin and cos, arctan2 and exact reach
bounds in numpy arithmetic, within an ulp or two of libm's (tests/test_batch.py
measures them), where numpy would call libm per element.
"""

import functools
import math

import numpy as np

# sin_cos takes sin and cos from tan(angle / 2) up to this size (rad).
SIN_COS_BY_TAN = 4.0 * np.pi


# atan2's rational approximation of atan(a) = a + a z P(z) / Q(z), z = a^2, for
# |a| <= 0.66 (Cephes atan.c, S. L. Moshier; Q monic).
ATAN_P = (-8.750608600031904122785e-01, -1.615753718733365076637e+01, -7.500855792314704667340e+01,
          -1.228866684490136173410e+02, -6.485021904942025371773e+01)
ATAN_Q = (2.485846490142306297962e+01, 1.650270098316988542046e+02, 4.328810604912902668951e+02,
          4.853903996359136964868e+02, 1.945506571482613964425e+02)

# pi / 4 - float(pi / 4)
QUARTER_PI_LOW = 3.061616997868382943065e-17


def _numpy_arctan2_is_libm():
    """Whether numpy's float64 arctan2 calls libm per element (no SIMD loop for this
    CPU: numpy has one only with AVX-512), judged by its answers: libm's own, bit
    for bit, on a fixed sample, where a vectorised one differs in the last bit
    on a few percent of them. A property of the CPU and the numpy build: the
    same on every call, so every answer of this module is too."""
    sample = np.linspace(-3.0, 3.0, 4099)
    x = np.cos(sample * 7.0) * np.linspace(0.5, 40.0, 4099)
    y = sample[::-1] * 5.0
    want = [math.atan2(a, b) for a, b in zip(y.tolist(), x.tolist())]
    return np.arctan2(y, x).tolist() == want


# Without a vectorised arctan2 in numpy, armctl.batch_arm5 takes atan2's.
OWN_ATAN2 = _numpy_arctan2_is_libm()


@functools.lru_cache(maxsize=64)
def reach_bounds_squared(far, near):
    """(the largest v with sqrt(v) <= far, the largest v with sqrt(v) < near; -1
    if none): sqrt(r2) > far exactly where r2 > the first, sqrt(r2) < near
    exactly where r2 <= the second. sqrt is correctly rounded (IEEE 754, in
    libm and in numpy's SIMD loops alike), so it is monotonic: a square root
    pass fewer, the same verdicts."""
    def largest(below_or_equal, limit):
        ok = (lambda v: math.sqrt(v) <= limit) if below_or_equal else (lambda v: math.sqrt(v) < limit)
        v = limit * limit
        while not ok(v):
            v = math.nextafter(v, -math.inf)
        while ok(math.nextafter(v, math.inf)):
            v = math.nextafter(v, math.inf)
        return v
    return largest(True, far), (largest(False, near) if near > 0.0 else -1.0)


def sum_of_squares(a, b, out, scratch):
    """a * a + b * b into out, in that order (as armfw's x * x + y * y)."""
    np.square(a, out=out)
    np.square(b, out=scratch)
    out += scratch


def sin_cos(angle, sin_out, cos_out, scratch, bounds=None):
    """sin and cos of angle (rad) into sin_out, cos_out; bounds: angle's (min, max) if known.

    numpy's float64 sin and cos call libm per element (~10 ns each); its tan
    is vectorised. With t = tan(angle / 2): sin = 2t / (1 + t^2), cos =
    (1 - t^2) / (1 + t^2), within an ulp of libm's (measured on 2 M angles in
    +-3 pi, with and without AVX-512), the sign of sin included (it is t's).
    Angles beyond a few turns take libm's, whose reduction keeps their digits.
    """
    low, high = (angle.min(), angle.max()) if bounds is None else bounds
    if not (-SIN_COS_BY_TAN <= low and high <= SIN_COS_BY_TAN):
        np.sin(angle, out=sin_out)
        np.cos(angle, out=cos_out)
        return
    t = scratch
    np.multiply(angle, 0.5, out=t)
    np.tan(t, out=t)
    np.square(t, out=cos_out)
    np.add(cos_out, 1.0, out=sin_out)
    np.subtract(1.0, cos_out, out=cos_out)
    cos_out /= sin_out
    t += t
    np.divide(t, sin_out, out=sin_out)


def atan2(y, x, out, floats, flags, small):
    """np.arctan2(y, x, out=out) in numpy arithmetic: vectorised, within 2 ulp of libm's (tested).

    For numpy without a SIMD arctan2 (OWN_ATAN2), whose libm call per element
    costs ~17 ns; this one ~12 ns an element (a (4, 10240) stack, no AVX-512).
    a = min(|x|, |y|) / max(|x|, |y|) in [0, 1]; past tan(pi / 8) the
    reduction atan(a) = pi / 4 - atan((1 - a) / (1 + a)) (the smaller
    argument of the two); atan of at most 0.4142 from a rational function.
    The octant puts it back: angle = k pi / 4 +- atan(...), k an integer,
    then y's sign. Where max(|x|, |y|) is 0, inf or NaN (zeros, infinities,
    NaN: the special cases of atan2), numpy's own answer.
    floats: three float arrays, flags: three bool arrays, small: two int8
    arrays, all of out's shape; none of them nor out may be x or y.
    """
    a, b, c = floats
    swap, big, neg = flags
    octant, step = small
    np.signbit(x, out=neg)
    np.abs(x, out=a)
    np.abs(y, out=b)
    np.less(a, b, out=swap)
    np.minimum(a, b, out=c)
    np.maximum(a, b, out=a)
    special = not (a.min() > 0.0 and a.max() < math.inf)     # a NaN fails both
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        # (1 - ratio) / (1 + ratio) from the operands: no rounding of the ratio in it.
        np.subtract(a, c, out=b)
        np.add(a, c, out=out)
        b /= out
        c /= a                                 # ratio in [0, 1]
        np.less(b, c, out=big)
        np.minimum(c, b, out=c)                # the argument, in [0, tan(pi / 8)]
        z = a
        np.square(c, out=z)
        np.multiply(z, ATAN_P[0], out=b)
        for p in ATAN_P[1:]:
            b += p
            b *= z
        np.add(z, ATAN_Q[0], out=out)
        for q in ATAN_Q[1:]:
            out *= z
            out += q
        b /= out
        b *= c
        b += c                                 # atan(argument), in [0, pi / 8]
    # First quadrant (swap, big): r, pi/4 - r, pi/2 - r, pi/4 + r: k = (swap ^ big) + swap
    # and the sign of r minus where swap ^ big; x < 0: pi minus that.
    np.logical_xor(swap, big, out=big)
    np.add(big.view(np.int8), swap.view(np.int8), out=octant)
    np.logical_xor(big, neg, out=big)
    np.multiply(octant, np.int8(-2), out=step)
    step += np.int8(4)
    step *= neg.view(np.int8)
    octant += step
    np.multiply(big, -2.0, out=c)
    c += 1.0
    b *= c
    # k pi/4 in two parts: pi/4's rounding alone is half an ulp of an angle below pi/4.
    np.multiply(octant, QUARTER_PI_LOW, out=a)
    b += a
    np.multiply(octant, np.pi / 4, out=a)
    b += a
    np.copysign(b, y, out=out)
    if special:
        with np.errstate(invalid="ignore"):
            edge = ~((np.maximum(np.abs(x), np.abs(y)) > 0.0) & (np.maximum(np.abs(x), np.abs(y)) < math.inf))
        out[edge] = np.arctan2(y[edge], x[edge])
