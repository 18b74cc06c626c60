# SPDX-License-Identifier: MIT
"""Derive the shared inverse-kinematics test vectors, independently of the firmware.

    .venv/bin/python tests/derive_vectors.py      # rewrites tests/vectors/*.json

This file never imports armfw. It reads the board descriptions as plain JSON
and derives every expected answer from geometry with numpy:

- the elbow is an intersection of two circles (radius L1 around the shoulder,
  radius L2 around the tool point or, for arm5, the wrist point); "up" is the
  intersection on the counter-clockwise side of the shoulder->target line
  (planar: the elbow left of the line, t2 <= 0; arm5, in the vertical plane
  facing the target: the elbow above the line, q3 >= 0);
- joint angles are read off the link directions with atan2;
- arm5: the base faces the target (yaw = atan2(y, x)), or turns half a turn
  away, which mirrors the vertical plane, so the same physical pose has q2, q3,
  q4 negated (checked below by forward kinematics, not assumed);
- every candidate is checked by this file's own forward kinematics and kept
  only if each angle fits its limits (by whole turns);
- the rule picks among the valid ones: "min" the least sum of squared joint
  changes from the current pose; "up"/"down" that branch if any of its
  candidates is valid (nearest to the current pose), else the other. Without a
  current pose the earlier candidate wins: up before down, facing before turned.

Statuses follow the issue: BAD_INPUT for NaN/inf/non-numbers; TOO_FAR when the
(wrist) distance d > (L1+L2)(1+REACH_EPS); TOO_CLOSE when d < |L1-L2| -
REACH_EPS(L1+L2); JOINT_LIMIT when no candidate fits the limits; SINGULAR when
the chosen answer has |sin(elbow angle)| < SINGULAR_SIN; else OK.
The test suite never regenerates the files; tests/test_vectors.py checks that
this script still reproduces them.
"""

import json
import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BOARDS = ROOT / "boards"
VECTORS = HERE / "vectors"

REACH_EPS = 1e-6        # reach margin, fraction of L1+L2 (the definition)
SINGULAR_SIN = 0.02     # |sin(elbow)| below this is SINGULAR
LIMIT_EPS = 1e-5        # rad a pose may sit past a limit and still count as inside
AXIS_EPS = 1e-6         # mm: a target this close to the arm5 base axis has no yaw
TOL_DEG = 1e-6          # agreement asked of a solver in double precision
TOL_SINGULAR_DEG = 1e-4  # near full stretch the angle goes with sqrt(rounding)

VECTOR_FILES = {"sim_planar.json": "planar.json", "sim_arm5.json": "arm5.json"}


class Geometry:
    """Lengths (mm) and limits (rad) read straight from a board file."""

    def __init__(self, board_file):
        data = json.loads((BOARDS / board_file).read_text())
        arm = data["arm"]
        self.board_file = board_file
        self.kind = arm["kind"]
        self.l1 = float(arm["l1_mm"])
        self.l2 = float(arm["l2_mm"])
        self.l3 = float(arm.get("l3_mm", 0.0))
        self.base = float(arm.get("base_mm", 0.0))
        self.lo = np.radians([j["min_deg"] for j in data["joints"]])
        self.hi = np.radians([j["max_deg"] for j in data["joints"]])
        self.n = len(data["joints"])


def elbow_points(l1, l2, px, py):
    """Both elbows for a two-link chain from the origin to (px, py), or a status name.

    Returns ((up_x, up_y), (down_x, down_y)): the intersections of the circle
    of radius l1 around the origin and l2 around (px, py); up is on the
    counter-clockwise side of the origin->point line. Inside the reach margin
    the circles may miss by a hair: the chord half-length is then taken as 0.
    """
    d = float(np.hypot(px, py))
    margin = REACH_EPS * (l1 + l2)
    if d > l1 + l2 + margin:
        return "TOO_FAR"
    if d < abs(l1 - l2) - margin:
        return "TOO_CLOSE"
    if d == 0.0:
        u = np.array([1.0, 0.0])   # l1 == l2 folded flat: every direction fits
    else:
        u = np.array([px, py]) / d
    n = np.array([-u[1], u[0]])
    a = (l1 * l1 - l2 * l2 + d * d) / (2.0 * d) if d > 0.0 else 0.0
    h = float(np.sqrt(max(l1 * l1 - a * a, 0.0)))
    return (a * u + h * n, a * u - h * n)


def wrap(a):
    """Angle a (rad) into (-pi, pi]."""
    return float(np.arctan2(np.sin(a), np.cos(a)))


def fit(a, lo, hi):
    """a moved by whole turns into [lo, hi] (LIMIT_EPS of slack), or None."""
    for k in range(-4, 5):
        b = a + 2.0 * np.pi * k
        if lo - LIMIT_EPS <= b <= hi + LIMIT_EPS:
            return float(b)
    return None


def fk_planar(g, q):
    """Tool (x, y) mm of the planar arm at joints q (rad)."""
    t1, t12 = q[0], q[0] + q[1]
    return np.array([g.l1 * np.cos(t1) + g.l2 * np.cos(t12), g.l1 * np.sin(t1) + g.l2 * np.sin(t12)])


def fk_arm5(g, q):
    """(tip xyz mm, tool unit direction) of the 5-joint arm at joints q (rad)."""
    a2 = q[1]
    a3 = a2 + q[2]
    a4 = a3 + q[3]
    reach = g.l1 * np.sin(a2) + g.l2 * np.sin(a3) + g.l3 * np.sin(a4)
    height = g.base + g.l1 * np.cos(a2) + g.l2 * np.cos(a3) + g.l3 * np.cos(a4)
    c, s = np.cos(q[0]), np.sin(q[0])
    tip = np.array([reach * c, reach * s, height])
    tool = np.array([np.sin(a4) * c, np.sin(a4) * s, np.cos(a4)])
    return tip, tool


def tool_direction(x, y, pitch, yaw):
    """Unit tool direction of a target: pitch (rad) from vertical, toward (x, y)."""
    return np.array([np.sin(pitch) * np.cos(yaw), np.sin(pitch) * np.sin(yaw), np.cos(pitch)])


def candidates(g, target, current):
    """Every geometric solution as dicts {label, q (rad, unfitted), elbow (rad)} or a status."""
    if g.kind == "planar":
        x, y = target
        found = elbow_points(g.l1, g.l2, x, y)
        if isinstance(found, str):
            return found
        out = []
        for label, e in zip(("up", "down"), found):
            t1 = float(np.arctan2(e[1], e[0]))
            t2 = wrap(np.arctan2(y - e[1], x - e[0]) - t1)
            out.append({"label": label, "q": [t1, t2], "elbow": t2})
        return out
    x, y, z, pitch = target
    r = float(np.hypot(x, y))
    yaw = facing_yaw(target, current)
    roll = current[4] if current is not None else 0.0
    wh = r - g.l3 * np.sin(pitch)               # wrist, horizontal toward the target
    wz = z - g.base - g.l3 * np.cos(pitch)      # wrist height above the J2 axis
    found = elbow_points(g.l1, g.l2, wh, wz)
    if isinstance(found, str):
        return found
    facing = []
    for label, e in zip(("up", "down"), found):
        q2 = float(np.arctan2(e[0], e[1]))      # angles from vertical, toward the target
        a3 = float(np.arctan2(wh - e[0], wz - e[1]))
        q3 = wrap(a3 - q2)
        facing.append({"label": label, "q": [yaw, q2, q3, pitch - a3, roll], "elbow": q3})
    turned_yaw = yaw - np.pi if yaw > 0 else yaw + np.pi
    turned = [{"label": c["label"], "q": [float(turned_yaw), -c["q"][1], -c["q"][2], -c["q"][3], roll],
               "elbow": -c["elbow"]} for c in facing]
    return facing + turned


def facing_yaw(target, current):
    """Yaw (rad) of the vertical plane an arm5 target's pitch is measured in."""
    if float(np.hypot(target[0], target[1])) < AXIS_EPS:
        return current[0] if current is not None else 0.0
    return float(np.arctan2(target[1], target[0]))


def check_fk(g, target, q, current):
    """Assert this file's FK of q reproduces target (derivation self-check)."""
    slack = REACH_EPS * (g.l1 + g.l2) + 1e-9
    if g.kind == "planar":
        err = float(np.hypot(*(fk_planar(g, q) - np.array(target))))
        assert err <= slack, (target, q, err)
        return
    x, y, z, pitch = target
    tip, tool = fk_arm5(g, q)
    yaw = facing_yaw(target, current)
    assert np.linalg.norm(tip - np.array([x, y, z])) <= slack, (target, q, tip)
    assert np.linalg.norm(tool - tool_direction(x, y, pitch, yaw)) <= 1e-9, (target, q, tool)


def expected(g, target, rule, current):
    """(status name, chosen q in rad or None) for a finite target; see the module doc."""
    found = candidates(g, target, current)
    if isinstance(found, str):
        return found, None
    valid = []
    for c in found:
        check_fk(g, target, c["q"], current)
        fitted = [fit(a, g.lo[i], g.hi[i]) for i, a in enumerate(c["q"])]
        if None not in fitted:
            valid.append(dict(c, q=fitted))
    if not valid:
        return "JOINT_LIMIT", None
    pool = valid
    if rule in ("up", "down"):
        pool = [c for c in valid if c["label"] == rule] or valid

    def cost(c):
        if current is None:
            return 0.0
        return float(np.sum((np.array(c["q"]) - np.array(current)) ** 2))

    best = min(pool, key=cost)      # min() keeps the first of equals
    status = "SINGULAR" if abs(np.sin(best["elbow"])) < SINGULAR_SIN else "OK"
    return status, best["q"]


def decode(v):
    """A JSON target entry as the runner sees it: "nan"/"inf"/"-inf" become floats."""
    if v in ("nan", "inf", "-inf"):
        return float(v)
    return v


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def make_case(g, cid, target, rule, current_deg, note):
    """One vector: target in mm (+ pitch deg), expectation derived here."""
    if rule not in ("min", "up", "down"):
        raise ValueError(rule)
    values = [decode(v) for v in target]
    case = {"id": cid, "target": target, "rule": rule, "current_deg": current_deg}
    arity = 2 if g.kind == "planar" else 4
    cur_ok = current_deg is None or (len(current_deg) == g.n and all(is_number(v) for v in current_deg))
    if len(values) != arity or not all(is_number(v) for v in values) or not cur_ok:
        case.update(status="BAD_INPUT", q_deg=None, tol_deg=TOL_DEG, note=note)
        return case
    if g.kind == "arm5":
        values[3] = math.radians(values[3])
    current = None if current_deg is None else [math.radians(v) for v in current_deg]
    status, q = expected(g, values, rule, current)
    tol = TOL_SINGULAR_DEG if status == "SINGULAR" else TOL_DEG
    case.update(status=status, q_deg=None if q is None else [round(math.degrees(a), 9) for a in q],
                tol_deg=tol, note=note)
    return case


def planar_target(g, t1_deg, t2_deg):
    return [float(v) for v in fk_planar(g, np.radians([t1_deg, t2_deg]))]


def arm5_target(g, q_deg):
    """Target (x, y, z mm, pitch deg in the plane facing the target) of joints q_deg."""
    tip, tool = fk_arm5(g, np.radians(q_deg))
    yaw = np.arctan2(tip[1], tip[0])
    horizontal = tool[0] * np.cos(yaw) + tool[1] * np.sin(yaw)
    return [float(tip[0]), float(tip[1]), float(tip[2]), float(np.degrees(np.arctan2(horizontal, tool[2])))]


def polar(r, deg):
    return [r * math.cos(math.radians(deg)), r * math.sin(math.radians(deg))]


def planar_cases():
    g = Geometry("sim_planar.json")
    reach = g.l1 + g.l2
    hole = abs(g.l1 - g.l2)
    cases = []

    def add(cid, target, rule="up", current=None, note=""):
        cases.append(make_case(g, "planar-" + cid, target, rule, current, note))

    # Hand-checked cases.
    add("hand-100-80-down", [100.0, 80.0], "down", None,
        "hand: t1=0, t2=+90 gives (100+80*cos90, 80*sin90) = (100, 80); t2>0 is the down branch")
    add("hand-100-80-up", [100.0, 80.0], "up", None,
        "hand: mirror of (0, 90) about the line to (100, 80): t1 = 2*atan2(80, 100) = 2*38.6598 = 77.3196, t2 = -90")
    add("hand-stretched-x", [180.0, 0.0], "up", None,
        "hand: r = L1+L2 = 180 exactly on +x: t1 = 0, t2 = 0, |sin t2| = 0 < 0.02 -> SINGULAR")
    add("hand-stretched-345", [108.0, 144.0], "up", None,
        "hand: 108^2+144^2 = 11664+20736 = 32400 = 180^2, on the outer boundary; t1 = atan2(144, 108) = 53.1301, t2 = 0")
    add("hand-stretched-y", [0.0, 180.0], "down", None, "hand: straight up, t1 = 90, t2 = 0: SINGULAR")
    add("hand-stretched-negx", [-180.0, 0.0], "up", None, "hand: t1 = 180 (inside -10..190), t2 = 0: SINGULAR")
    add("hand-stretched-down-forbidden", [0.0, -180.0], "up", None,
        "hand: only t1 = -90 (= 270) stretches there, outside -10..190 -> JOINT_LIMIT (near-singular and forbidden)")
    add("hand-stretched-q4-forbidden", [108.0, -144.0], "down", None,
        "hand: t1 = atan2(-144, 108) = -53.13 < -10 -> JOINT_LIMIT")
    add("hand-80-100-up", [80.0, 100.0], "up", None,
        "hand: t1 = 90, t2 = -90: (100*cos90 + 80*cos0, 100*sin90 + 80*sin0) = (80, 100); t2 < 0 is up")

    # Outer boundary: exactly on, inside/outside by more than the margin, inside the margin.
    margin = REACH_EPS * reach
    for deg in (0.0, 30.0, 90.0, 150.0, 180.0):
        add("outer-on-%g" % deg, polar(reach, deg), "up", None,
            "r = L1+L2 = 180 at %g deg: stretched, t1 = %g, t2 = 0 -> SINGULAR" % (deg, deg))
        add("outer-out-1e-5-%g" % deg, polar(reach * (1 + 1e-5), deg), "up", None,
            "r = 180*(1+1e-5), 10 margins outside -> TOO_FAR")
        add("outer-in-margin-%g" % deg, polar(reach + 0.5 * margin, deg), "down", None,
            "r = 180 + 0.9e-4 mm, inside the 1.8e-4 mm margin -> stretched (t2 = 0), SINGULAR")
        add("outer-in-1e-5-%g" % deg, polar(reach * (1 - 1e-5), deg), "up", None,
            "r = 180*(1-1e-5): c2 = 0.99996, |sin t2| = 0.009 -> SINGULAR")
        add("outer-in-1e-3-%g" % deg, polar(reach * (1 - 1e-3), deg), "down", None,
            "r = 179.82: c2 = (32335.2-16400)/16000 = 0.99595, |sin t2| = 0.090 -> OK")
    add("outer-out-2-margins", polar(reach + 2 * margin, 45.0), "up", None, "r = 180 + 3.6e-4 mm -> TOO_FAR")
    add("far-away", [1000.0, -2000.0], "up", None, "far outside -> TOO_FAR")
    add("far-overflowing", [1e200, -1e200], "up", None, "x*x overflows to inf, still finite input -> TOO_FAR")

    # Inner boundary (the hole, r < 20): the fold t2 = 180 needs the forbidden +-180 elbow.
    for deg in (0.0, 100.0, 200.0):
        add("inner-on-%g" % deg, polar(hole, deg), "up", None,
            "r = |L1-L2| = 20: folded, |t2| = 180 > 160 -> JOINT_LIMIT")
        add("inner-in-margin-%g" % deg, polar(hole - 0.5 * margin, deg), "up", None,
            "r = 20 - 0.9e-4 mm, inside the margin: folded -> JOINT_LIMIT")
        add("inner-out-1e-3-%g" % deg, polar(hole - 1e-3, deg), "up", None, "r = 19.999 -> TOO_CLOSE")
        add("hole-%g" % deg, polar(10.0, deg), "down", None, "r = 10 in the hole -> TOO_CLOSE")
    add("origin", [0.0, 0.0], "up", None, "r = 0 -> TOO_CLOSE")
    add("fold-forbidden-36", polar(36.0, 60.0), "up", None,
        "r = 36: c2 = (1296-16400)/16000 = -0.944, |t2| = 160.7 > 160 -> JOINT_LIMIT")
    add("fold-allowed-38", polar(38.0, 60.0), "up", None,
        "r = 38: c2 = (1444-16400)/16000 = -0.9348, |t2| = 159.2 < 160")

    # All four quadrants, both branches and every rule.
    k = 0
    for r in (60.0, 120.0, 165.0):
        for deg in (20.0, 70.0, 110.0, 160.0, 200.0, 250.0, 290.0, 340.0):
            target = polar(r, deg)
            for rule in ("up", "down"):
                add("quad-r%g-%g-%s" % (r, deg, rule), target, rule, None, "quadrant sweep, circle intersection")
            k += 1
            # A current pose near each branch: minimum motion keeps that branch.
            cur_up = [deg + 15.0, -40.0] if k % 2 else [deg + 60.0, -120.0]
            cur_down = [deg - 15.0, 40.0] if k % 2 else [deg - 60.0, 120.0]
            add("quad-r%g-%g-min-from-up" % (r, deg), target, "min", cur_up, "current pose on the up side")
            add("quad-r%g-%g-min-from-down" % (r, deg), target, "min", cur_down, "current pose on the down side")

    # Joint limits: exactly on a limit (inside), and just past it.
    add("limit-shoulder-on-190", planar_target(g, 190.0, -60.0), "up", None,
        "FK of (190, -60): the shoulder exactly on its 190 limit is allowed")
    add("limit-shoulder-past-190", planar_target(g, 190.05, -60.0), "up", None,
        "FK of (190.05, -60): up needs the forbidden shoulder, the down branch decides")
    add("limit-shoulder-on-m10", planar_target(g, -10.0, 70.0), "down", None,
        "FK of (-10, 70): shoulder exactly on -10 allowed")
    add("limit-shoulder-past-m10", planar_target(g, -10.05, 70.0), "down", None,
        "FK of (-10.05, 70): down forbidden; fall back to up if it fits")
    add("limit-elbow-on-160", planar_target(g, 100.0, 160.0), "down", None, "FK of (100, 160): elbow on its limit")
    add("limit-elbow-past-160", planar_target(g, 100.0, 160.05), "down", None,
        "FK of (100, 160.05): |t2| > 160 on both branches -> JOINT_LIMIT")
    add("limit-down-fallback-up", polar(120.0, 250.0), "down", None,
        "below the shoulder: rule down falls back to up if only up fits")
    add("limit-neither", polar(120.0, 270.0), "up", None,
        "straight below: t1 = -90 -/+ 48.2, both shoulders below -10 -> JOINT_LIMIT")
    add("limit-min-avoids-forbidden", polar(150.0, 185.0), "min", [150.0, 30.0],
        "current on the down side, but the down shoulder would pass 190: min must take the valid branch")

    # Bad input.
    add("bad-nan-x", ["nan", 10.0], "up", None, "NaN -> BAD_INPUT")
    add("bad-inf-y", [10.0, "inf"], "up", None, "inf -> BAD_INPUT")
    add("bad-minus-inf", ["-inf", 0.0], "down", None, "-inf -> BAD_INPUT")
    add("bad-text", ["abc", 50.0], "up", None, "a string is not a number -> BAD_INPUT")
    add("bad-null", [None, 50.0], "up", None, "null is not a number -> BAD_INPUT")
    add("bad-short", [50.0], "up", None, "one coordinate for a planar arm -> BAD_INPUT")
    add("bad-long", [50.0, 60.0, 70.0], "up", None, "three coordinates for a planar arm -> BAD_INPUT")
    add("bad-current-nan", [100.0, 80.0], "min", ["nan", 0.0], "NaN in the current pose -> BAD_INPUT")

    # Reachable targets from random in-limit joints; random targets anywhere.
    rng = np.random.default_rng(20261202)
    for i in range(20):
        q = [float(rng.uniform(-10, 190)), float(rng.uniform(-160, 160))]
        cur = [round(q[0] + float(rng.uniform(-5, 5)), 3), round(q[1] + float(rng.uniform(-5, 5)), 3)]
        add("from-joints-%02d" % i, planar_target(g, *q), "min", cur,
            "FK of random in-limit joints (%.3f, %.3f); current pose within 5 deg of them" % tuple(q))
    for i in range(20):
        target = [round(float(v), 3) for v in rng.uniform(-200, 200, 2)]
        rule = ("min", "up", "down")[i % 3]
        cur = [round(float(rng.uniform(-10, 190)), 3), round(float(rng.uniform(-160, 160)), 3)] if rule == "min" else None
        add("random-%02d" % i, target, rule, cur, "random target in the 400 mm square")
    return g, cases


def arm5_cases():
    g = Geometry("sim_arm5.json")
    reach = g.l1 + g.l2
    cases = []

    def add(cid, target, rule="up", current=None, note=""):
        cases.append(make_case(g, "arm5-" + cid, target, rule, current, note))

    spec = [157.3, 0.0, 342.4, 90.0]
    spec_note = ("SPEC worked example. Hand: wrist = tip - 150.6 along horizontal = (6.7, 342.4); relative to "
                 "J2 (6.7, 153.4); d^2 = 44.89 + 23531.56 = 23576.45; c3 = (23576.45 - 2*15911.2996)/"
                 "(2*15911.2996) = -0.259131, q3 = +-105.019; up: q4 = 90 - (q2+q3) = 35.0, "
                 "down: q4 = 90 + 50.02 = 140.02 > 135")
    add("spec-example-up", spec, "up", None, spec_note)
    add("spec-example-down-falls-back", spec, "down", None,
        spec_note + "; the down branch breaks the wrist limit, so rule down falls back to up")
    add("spec-example-min", spec, "min", [0.0, -40.0, 90.0, 40.0, 0.0], spec_note + "; current pose near up")
    add("spec-example-min-from-down", spec, "min", [0.0, 55.0, -105.0, 135.0, 0.0],
        spec_note + "; current pose at the forbidden down branch: still up (the only valid one)")
    # A target that only a branch like the worked example's forbidden one would reach.
    add("only-forbidden-wrist-would-do", [39.0, 0.0, 300.0, 60.0], "down", None,
        "found by a grid search in this file: up needs q2 = -135.78 < -135, down needs q4 = 195.78 "
        "(= -164.22 by whole turns), beyond +-135; the turned base needs yaw 180 -> JOINT_LIMIT")
    add("spec-pitch-120-both-wrists-forbidden", [24.0, 0.0, 339.0, 120.0], "up", None,
        "up q4 = 136.28, down q4 = 154.29: both past the 135 wrist limit -> JOINT_LIMIT")

    # Stretched and folded.
    add("stretched-up", [0.0, 0.0, g.base + reach + g.l3, 0.0], "up", None,
        "straight up on the base axis: yaw 0 (no current pose), q = 0 -> SINGULAR")
    add("stretched-up-keeps-yaw", [0.0, 0.0, g.base + reach + g.l3, 0.0], "min", [30.0, 5.0, 5.0, -5.0, 10.0],
        "on the base axis the yaw and roll of the current pose stay")
    add("stretched-horizontal", [reach + g.l3, 0.0, g.base, 90.0], "up", None,
        "wrist 252.28 mm out at J2 height: q2 = 90, q3 = 0, q4 = 0 -> SINGULAR")
    add("stretched-horizontal-out", [reach * (1 + 1e-5) + g.l3, 0.0, g.base, 90.0], "up", None,
        "wrist 1e-5 relative beyond reach -> TOO_FAR")
    add("stretched-horizontal-margin", [reach * (1 + 0.5e-6) + g.l3, 0.0, g.base, 90.0], "up", None,
        "wrist 0.126 um beyond reach, inside the margin -> SINGULAR")
    add("stretched-in-1e-3", [reach * (1 - 1e-3) + g.l3, 0.0, g.base, 90.0], "down", None,
        "wrist 0.25 mm inside the reach: |sin q3| = 0.089 -> OK (down: q4 = 90 - q2 - q3 fits)")
    deep = math.radians(150.0)
    add("stretched-too-low", [reach * math.sin(deep) + g.l3, 0.0, g.base + reach * math.cos(deep), 90.0], "up", None,
        "stretched 150 deg from vertical: q2 = 150 > 135 on every branch -> JOINT_LIMIT (near-singular and forbidden)")
    add("near-stretched-too-low", [0.9999 * reach * math.sin(deep) + g.l3, 0.0, g.base + 0.9999 * reach * math.cos(deep),
                                   90.0], "down", None,
        "almost stretched (0.9999: |sin q3| = 0.028) 150 deg from vertical: q2 > 135 -> JOINT_LIMIT")
    add("folded-on-j2", [g.l3, 0.0, g.base, 90.0], "up", None,
        "wrist exactly on the J2 axis: folded, |q3| = 180 > 135 -> JOINT_LIMIT")
    add("near-folded", [g.l3 + 3.0, 0.0, g.base + 2.0, 90.0], "up", None,
        "wrist 3.6 mm from J2: |q3| = 178.4 > 135 -> JOINT_LIMIT (near-singular and forbidden)")
    add("far-away", [500.0, 500.0, 500.0, 90.0], "up", None, "far outside -> TOO_FAR")
    add("far-overflowing", [1e200, 1e200, 0.0, 90.0], "up", None,
        "x*x + y*y overflows to inf, still finite input -> TOO_FAR (the firmware said BAD_INPUT)")
    add("below-floor-far", [0.0, 0.0, -400.0, 180.0], "up", None, "wrist 740 mm below J2 -> TOO_FAR")

    # Behind the base: yaw outside +-135, the base turns half a turn and leans back.
    for deg in (150.0, -150.0, 180.0, 170.0):
        x, y = polar(200.0, deg)
        add("behind-%g-up" % deg, [x, y, 300.0, 90.0], "up", None,
            "yaw %g outside +-135: base at %g and leaning back" % (deg, deg - 180 if deg > 0 else deg + 180))
        add("behind-%g-down" % deg, [x, y, 300.0, 90.0], "down", None, "behind the base, down branch")
    add("behind-min", polar(260.0, 160.0) + [300.0, 60.0], "min", [-10.0, -30.0, -60.0, -10.0, 0.0],
        "behind the base with a current pose")

    # Quadrants, both branches, every rule; the two yaw choices for 45 < |yaw| < 135.
    for deg in (30.0, 60.0, 120.0, -30.0, -80.0, -120.0, 135.0, -135.0):
        for (r, z, p) in ((180.0, 250.0, 90.0), (120.0, 150.0, 135.0), (250.0, 300.0, 60.0)):
            x, y = polar(r, deg)
            target = [x, y, z, p]
            tag = "q%g-r%g-z%g-p%g" % (deg, r, z, p)
            add(tag + "-up", target, "up", None, "quadrant sweep")
            add(tag + "-down", target, "down", None, "quadrant sweep")
        x, y = polar(250.0, deg)
        add("q%g-min-turned" % deg, [x, y, 300.0, 90.0], "min", [deg - 180.0 if deg > 0 else deg + 180.0, 20.0, -100.0, 0.0, 0.0],
            "current base turned away: min keeps it turned when that fits")
        add("q%g-up-turned-current" % deg, [x, y, 300.0, 90.0], "up", [deg - 170.0 if deg > 0 else deg + 170.0, 0.0, 0.0, 0.0, 0.0],
            "rule up with a current pose: the up candidate nearest the current pose")

    # Limits: the elbow exactly on +135, then just past it.
    add("limit-elbow-on-135", arm5_target(g, [20.0, -30.0, 135.0, 0.0, 0.0]), "up", None,
        "FK of (20, -30, 135, 0): elbow exactly on its limit, allowed")
    add("limit-elbow-past-135", arm5_target(g, [20.0, -30.0, 135.05, 0.0, 0.0]), "up", None,
        "FK of (20, -30, 135.05, 0): |q3| > 135 on every branch -> JOINT_LIMIT")
    add("limit-wrist-on-135", arm5_target(g, [-40.0, 30.0, 40.0, 135.0, 0.0]), "min", [-40.0, 30.0, 40.0, 130.0, 0.0],
        "FK of (-40, 30, 40, 135): wrist on its limit")
    add("limit-wrist-past-135", arm5_target(g, [-40.0, 30.0, 40.0, 135.05, 0.0]), "min", [-40.0, 30.0, 40.0, 130.0, 0.0],
        "FK of (-40, 30, 40, 135.05): that branch forbidden; the other if it fits")
    add("roll-forbidden-current", [157.3, 0.0, 342.4, 90.0], "min", [0.0, -50.0, 105.0, 35.0, 170.0],
        "IK keeps the current roll; a roll of 170 (outside +-135) cannot be kept -> JOINT_LIMIT")
    add("roll-kept", [157.3, 0.0, 342.4, 90.0], "min", [0.0, -50.0, 105.0, 35.0, -60.0], "IK keeps the roll -60")

    # Bad input.
    add("bad-nan-pitch", [150.0, 0.0, 300.0, "nan"], "up", None, "NaN pitch -> BAD_INPUT")
    add("bad-inf-z", [150.0, 0.0, "inf", 90.0], "up", None, "inf -> BAD_INPUT")
    add("bad-minus-inf-x", ["-inf", 0.0, 300.0, 90.0], "up", None, "-inf -> BAD_INPUT")
    add("bad-text-y", [150.0, "abc", 300.0, 90.0], "up", None, "a string -> BAD_INPUT")
    add("bad-null", [150.0, 0.0, None, 90.0], "up", None, "null -> BAD_INPUT")
    add("bad-short", [150.0, 0.0, 300.0], "up", None, "three numbers for a 4-number target -> BAD_INPUT")
    add("bad-current-inf", [150.0, 0.0, 300.0, 90.0], "min", [0.0, 0.0, "inf", 0.0, 0.0], "inf in the current pose")
    add("bad-current-short", [150.0, 0.0, 300.0, 90.0], "min", [0.0, 0.0, 0.0], "a 3-joint current pose")

    rng = np.random.default_rng(5)
    for i in range(20):
        q = [float(v) for v in rng.uniform(-130, 130, 4)] + [0.0]
        cur = [round(v + float(rng.uniform(-4, 4)), 3) for v in q[:4]] + [0.0]
        add("from-joints-%02d" % i, arm5_target(g, q), "min", cur,
            "FK of random in-limit joints (%.3f, %.3f, %.3f, %.3f); current within 4 deg" % tuple(q[:4]))
    for i in range(20):
        yaw = float(rng.uniform(-180, 180))
        r = float(rng.uniform(0, 350))
        x, y = polar(r, yaw)
        target = [round(x, 3), round(y, 3), round(float(rng.uniform(0, 500)), 3), round(float(rng.uniform(-180, 180)), 3)]
        rule = ("min", "up", "down")[i % 3]
        cur = [round(float(v), 3) for v in rng.uniform(-130, 130, 5)] if rule == "min" else None
        add("random-%02d" % i, target, rule, cur, "random target")
    return g, cases


def build(board_file):
    """The vector document for one board (dict ready for JSON)."""
    g, cases = planar_cases() if board_file == "sim_planar.json" else arm5_cases()
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    units = {"target": "mm" if g.kind == "planar" else "mm, mm, mm, pitch deg from vertical",
             "current_deg": "deg", "q_deg": "deg", "tol_deg": "deg"}
    return {"board": board_file, "units": units,
            "derived_by": "tests/derive_vectors.py (circle intersection + own FK, numpy; never the firmware)",
            "cases": cases}


def render(doc):
    return json.dumps(doc, indent=1) + "\n"


def main():
    VECTORS.mkdir(exist_ok=True)
    for board_file, name in VECTOR_FILES.items():
        doc = build(board_file)
        (VECTORS / name).write_text(render(doc))
        counts = {}
        for c in doc["cases"]:
            counts[c["status"]] = counts.get(c["status"], 0) + 1
        print("%s: %d cases %s" % (name, len(doc["cases"]), counts))


if __name__ == "__main__":
    main()
