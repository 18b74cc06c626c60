# SPDX-License-Identifier: MIT
"""The zone shapes' geometry: where a link segment meets a grown box or cylinder, and
how far a point lies from a zone (armfw.zones).

Frames and the grown zones' lists are armfw.zones': a segment is the six
numbers p[i:i+6] of two joint points, a grown box g is (x0 y0 z0 x1 y1 z1), a
grown cylinder (x, y, radius^2, bottom, top, radius). Loaded only by an arm
that has zones.
"""

from math import sqrt

from armfw.zones import CYLINDER, FLOOR


def clip(a, d, lo, hi, span):
    """Narrow span, the parameter interval [t0, t1] of a segment still inside the slabs
    clipped so far, to where a + t*d lies in the open interval (lo, hi); False when empty."""
    if d == 0.0:
        return lo < a < hi
    ta = (lo - a) / d
    tb = (hi - a) / d
    if ta > tb:
        ta, tb = tb, ta
    if ta > span[0]:
        span[0] = ta
    if tb < span[1]:
        span[1] = tb
    return span[0] < span[1]


def segment_in_box(p, i, g, span):
    """Does the segment p[i:i+3] - p[i+3:i+6] meet the open box g (x0 y0 z0 x1 y1 z1)?
    For a segment Zones.clear_exact's margin test has not found apart from it. span: a
    list of two floats the caller owns, for the clipping."""
    span[0] = 0.0
    span[1] = 1.0
    for k in range(3):
        a = p[i + k]
        if not clip(a, p[i + 3 + k] - a, g[k], g[k + 3], span):
            return False
    return True


def segment_in_cylinder(p, i, g, span):
    """Does the segment meet the open vertical cylinder g (x, y, radius^2, bottom, top)?
    For a segment Zones.clear_exact's margin test has not found apart from it. span: as
    segment_in_box's."""
    span[0] = 0.0
    span[1] = 1.0
    az = p[i + 2]
    if not clip(az, p[i + 5] - az, g[3], g[4], span):
        return False
    t0 = span[0]
    t1 = span[1]
    # Horizontal distance from the axis, a quadratic in t: its least value on [t0, t1].
    hx = p[i] - g[0]
    hy = p[i + 1] - g[1]
    dx = p[i + 3] - p[i]
    dy = p[i + 4] - p[i + 1]
    dd = dx * dx + dy * dy
    t = t0
    if dd > 0.0:
        t = -(hx * dx + hy * dy) / dd
        if t < t0:
            t = t0
        elif t > t1:
            t = t1
    hx += dx * t
    hy += dy * t
    return hx * hx + hy * hy < g[2]


def across_gap(p, i, g):
    """How far (mm) the segment p[i:i+3] - p[i+3:i+6] passes outside the grown radius g[5]
    of the vertical axis at (g[0], g[1]), measured across the axis (<= 0: within it)."""
    hx = p[i] - g[0]
    hy = p[i + 1] - g[1]
    dx = p[i + 3] - p[i]
    dy = p[i + 4] - p[i + 1]
    dd = dx * dx + dy * dy
    if dd > 0.0:
        t = -(hx * dx + hy * dy) / dd
        if t > 1.0:
            t = 1.0
        if t > 0.0:
            hx += dx * t
            hy += dy * t
    return sqrt(hx * hx + hy * hy) - g[5]


def distance(kind, prm, x, y, z, planar):
    """Signed distance (mm) from a point to a keep-out zone (< 0 inside)."""
    if kind == FLOOR:
        return z - prm[0] - prm[1]
    if kind == CYLINDER:
        dx = x - prm[0]
        dy = 0.0 if planar else y - prm[1]
        radial = sqrt(dx * dx + dy * dy) - prm[2]
        vertical = max(prm[3] - z, z - prm[4])
        return _box_like(radial, vertical)
    # BOX
    ex = max(prm[0] - x, x - prm[3])
    ey = -1e30 if planar else max(prm[1] - y, y - prm[4])
    ez = max(prm[2] - z, z - prm[5])
    out = 0.0
    for e in (ex, ey, ez):
        if e > 0.0:
            out += e * e
    if out > 0.0:
        return sqrt(out)
    return max(ex, ey, ez)


def _box_like(a, b):
    if a > 0.0 and b > 0.0:
        return sqrt(a * a + b * b)
    return a if a > b else b


def inside_depth(x, y, z, prm, planar):
    """How far (mm) the point is inside the stay-in box prm (< 0: outside)."""
    d = min(x - prm[0], prm[3] - x, z - prm[2], prm[5] - z)
    if not planar:
        d = min(d, y - prm[1], prm[4] - y)
    return d
