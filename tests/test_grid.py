# SPDX-License-Identifier: MIT
"""Dense grids of targets, in and far beyond the workspace, against a vectorized numpy oracle.

The oracle (this file) finds every geometric solution independently of the
firmware: the elbow as the intersection of two circles, angles by atan2, the
arm5 base facing the target or turned half a turn. Per target it checks the
firmware's answer:

- no NaN, ever; failing statuses carry no angles;
- TOO_FAR exactly when d > (L1+L2)(1+REACH_EPS), TOO_CLOSE exactly when
  d < |L1-L2| - REACH_EPS(L1+L2) (d: distance of the tool point, arm5: of the
  wrist point, from the shoulder), never OK outside the annulus;
- JOINT_LIMIT exactly when no solution fits the limits;
- every OK/SINGULAR answer fits the limits and its numpy forward kinematics
  reproduces the target within 1e-3 mm and 1e-6 rad of tool direction;
- SINGULAR exactly when |sin(elbow)| < 0.02 (full stretch or full fold);
- the chosen solution is the one the rule asks for.

Targets within BAND of a threshold may round either way and are not judged
on that threshold (their count is reported; it is a handful).
"""

import math

import numpy as np

from conftest import BOARDS, MP_SCRIPTS, solver_only

import derive_vectors as derive
from armctl import upy
from armfw import kinematics, status

EPS = derive.REACH_EPS
LIMIT_EPS = derive.LIMIT_EPS
BAND = 1e-7           # rad, or relative length: too close to a threshold to judge
FK_TOL_MM = 1e-3
FK_TOL_RAD = 1e-6
RULES = ("min", "up", "down")
CODES = {name: status.code(name) for name in status.NAMES}


def wrap(a):
    return np.arctan2(np.sin(a), np.cos(a))


def elbows(l1, l2, px, py):
    """Distance and both elbow points (up: counter-clockwise of the line) for chains to (px, py)."""
    d = np.hypot(px, py)
    safe = np.where(d > 0, d, 1.0)
    ux = np.where(d > 0, px / safe, 1.0)
    uy = np.where(d > 0, py / safe, 0.0)
    a = np.where(d > 0, (l1 * l1 - l2 * l2 + d * d) / (2 * safe), 0.0)
    h = np.sqrt(np.clip(l1 * l1 - a * a, 0.0, None))
    return d, (a * ux - h * uy, a * uy + h * ux), (a * ux + h * uy, a * uy - h * ux)


def fit(a, lo, hi):
    """(angle moved by whole turns as deep into [lo, hi] as it goes, its slack; slack < 0: outside)."""
    best = np.full(np.shape(a), -np.inf)
    fitted = np.array(a, dtype=float)
    for k in range(-3, 4):
        b = a + 2 * np.pi * k
        slack = np.minimum(b - lo, hi - b)
        better = slack > best
        fitted = np.where(better, b, fitted)
        best = np.where(better, slack, best)
    return fitted, best


class Oracle:
    """Every candidate of every target: q (N, n), slack (N), label, elbow sine (N)."""

    def __init__(self, geom, targets, current):
        self.geom = geom
        self.targets = targets
        self.current = current        # (N, n), NaN rows: no current pose
        self.has_current = ~np.isnan(current[:, 0])
        self.reach = geom.l1 + geom.l2
        self.hole = abs(geom.l1 - geom.l2)
        if geom.kind == "planar":
            self._planar()
        else:
            self._arm5()

    def _add(self, label, q):
        fitted = []
        slack = np.full(len(q[0]), np.inf)
        for i, a in enumerate(q):
            f, s = fit(a, self.geom.lo[i], self.geom.hi[i])
            fitted.append(f)
            slack = np.minimum(slack, s)
        self.cands.append((label, np.stack(fitted, axis=1), slack))

    def _planar(self):
        g = self.geom
        x, y = self.targets.T
        self.d, up, down = elbows(g.l1, g.l2, x, y)
        self.cands = []
        for label, (ex, ey) in (("up", up), ("down", down)):
            t1 = np.arctan2(ey, ex)
            self._add(label, [t1, wrap(np.arctan2(y - ey, x - ex) - t1)])

    def _arm5(self):
        g = self.geom
        x, y, z, pitch = self.targets.T
        r = np.hypot(x, y)
        cur = np.where(np.isnan(self.current), 0.0, self.current)
        yaw = np.where(r < derive.AXIS_EPS, cur[:, 0], np.arctan2(y, x))
        roll = cur[:, 4]
        wh = r - g.l3 * np.sin(pitch)
        wz = z - g.base - g.l3 * np.cos(pitch)
        self.d, up, down = elbows(g.l1, g.l2, wh, wz)
        self.cands = []
        facing = []
        for label, (eh, ez) in (("up", up), ("down", down)):
            q2 = np.arctan2(eh, ez)
            a3 = np.arctan2(wh - eh, wz - ez)
            q3 = wrap(a3 - q2)
            facing.append((label, q2, q3, pitch - a3))
            self._add(label, [yaw, q2, q3, pitch - a3, roll])
        turned = np.where(yaw > 0, yaw - np.pi, yaw + np.pi)
        for label, q2, q3, q4 in facing:
            self._add(label, [turned, -q2, -q3, -q4, roll])

    def fk_error(self, i, q):
        """(mm, rad) by which numpy FK of q misses target i."""
        g = self.geom
        t = self.targets[i]
        if g.kind == "planar":
            return float(np.hypot(*(derive.fk_planar(g, q) - t))), 0.0
        tip, tool = derive.fk_arm5(g, q)
        yaw = math.atan2(t[1], t[0]) if math.hypot(t[0], t[1]) >= derive.AXIS_EPS else \
            (self.current[i, 0] if self.has_current[i] else 0.0)
        want = derive.tool_direction(t[0], t[1], t[3], yaw)
        chord = float(np.linalg.norm(tool - want))
        return float(np.linalg.norm(tip - t[:3])), 2 * math.asin(min(1.0, chord / 2))


def elbow_index(geom):
    return 1 if geom.kind == "planar" else 2


def judge(oracle, rules, statuses, answers):
    """Violations (list of text) of the firmware's statuses/answers against the oracle."""
    g = oracle.geom
    reach, hole, d = oracle.reach, oracle.hole, oracle.d
    far_at = reach + EPS * reach
    close_at = hole - EPS * reach
    problems = []
    skipped = 0

    def bad(i, text):
        if len(problems) < 20:
            problems.append("target %s rule %s -> %s: %s" % (list(oracle.targets[i]), rules[i],
                                                             status.name(statuses[i]), text))
        else:
            problems.append("...")

    n_cand = len(oracle.cands)
    slack = np.stack([c[2] for c in oracle.cands], axis=1)          # (N, C)
    for i in range(len(statuses)):
        s = statuses[i]
        q = answers[i]
        if abs(d[i] - far_at) < BAND * reach or abs(d[i] - close_at) < BAND * reach:
            skipped += 1
            continue
        far = d[i] > far_at
        close = d[i] < close_at
        if (s == status.TOO_FAR) != far:
            bad(i, "d = %.9f, TOO_FAR threshold %.9f" % (d[i], far_at))
            continue
        if (s == status.TOO_CLOSE) != close:
            bad(i, "d = %.9f, TOO_CLOSE threshold %.9f" % (d[i], close_at))
            continue
        if far or close:
            continue
        if s == status.OK and (d[i] > reach or d[i] < hole):
            bad(i, "OK outside the annulus (d = %.9f)" % d[i])
        sl = slack[i]
        if np.all(np.abs(sl + LIMIT_EPS) >= BAND):
            some_valid = bool(np.any(sl >= -LIMIT_EPS))
            if (s == status.JOINT_LIMIT) == some_valid:
                bad(i, "limit slack of the candidates %s" % sl)
                continue
        else:
            skipped += 1
        if not status.solved(s):
            if q is not None:
                bad(i, "angles with a failing status")
            continue
        if q is None or not all(math.isfinite(a) for a in q):
            bad(i, "no finite angles: %r" % (q,))
            continue
        qa = np.array(q)
        _, own_slack = zip(*(fit(qa[j], g.lo[j], g.hi[j]) for j in range(g.n)))
        if min(own_slack) < -LIMIT_EPS - 1e-12:
            bad(i, "answer outside the limits: %s" % np.degrees(qa))
        mm, rad = oracle.fk_error(i, qa)
        if mm > FK_TOL_MM or rad > FK_TOL_RAD:
            bad(i, "FK misses by %.3g mm, %.3g rad" % (mm, rad))
        sine = abs(math.sin(qa[elbow_index(g)]))
        if abs(sine - derive.SINGULAR_SIN) > BAND and (s == status.SINGULAR) != (sine < derive.SINGULAR_SIN):
            bad(i, "|sin elbow| = %.6f" % sine)
        # The choice: the candidate the rule asks for.
        valid = sl >= -LIMIT_EPS
        if np.any(np.abs(sl + LIMIT_EPS) < BAND):
            continue
        cost = np.zeros(n_cand)
        if oracle.has_current[i]:
            cost = np.array([np.sum((c[1][i] - oracle.current[i]) ** 2) for c in oracle.cands])
        if rules[i] != "min":
            cost = cost + np.array([0.0 if c[0] == rules[i] else 1e9 for c in oracle.cands])
        cost = np.where(valid, cost, np.inf)
        order = np.argsort(cost, kind="stable")
        if oracle.has_current[i] and n_cand > 1 and cost[order[1]] - cost[order[0]] < 1e-6:
            same = np.max(np.abs(oracle.cands[order[0]][1][i] - oracle.cands[order[1]][1][i]))
            if same > 1e-6:
                skipped += 1        # a tie between different poses: either is right
                continue
        want = oracle.cands[order[0]][1][i]
        if np.max(np.abs(qa - want)) > 1e-6:
            bad(i, "chose %s, the rule asks for %s" % (np.degrees(qa), np.degrees(want)))
    return problems, skipped


def solve_all(arm, targets, rules, current):
    statuses = []
    answers = []
    for i in range(len(targets)):
        out = [0.0] * arm.n
        cur = None if np.isnan(current[i, 0]) else [float(v) for v in current[i]]
        s = arm.ik([float(v) for v in targets[i]], out, cur, kinematics.rule_code(rules[i]))
        statuses.append(s)
        answers.append(list(out) if status.solved(s) else None)
    return statuses, answers


def poses(geom, count, rng, with_current=0.5):
    """Random in-limit current poses (rad), NaN rows where there is none."""
    current = rng.uniform(geom.lo, geom.hi, (count, geom.n))
    current[rng.random(count) >= with_current] = np.nan
    return current


def planar_targets():
    g = derive.Geometry("sim_planar.json")
    reach, hole = g.l1 + g.l2, abs(g.l1 - g.l2)
    axis = np.linspace(-220.0, 220.0, 111)
    gx, gy = np.meshgrid(axis, axis)
    pts = [np.stack([gx.ravel(), gy.ravel()], axis=1)]
    ang = np.radians(np.arange(0.0, 360.0, 1.0) + 0.5)
    for base in (reach, hole):
        for k in (0.0, 0.5 * EPS, -0.5 * EPS, 2 * EPS, -2 * EPS, 1e-5, -1e-5, -1e-3, 1e-3):
            r = base * (1 + k)
            pts.append(np.stack([r * np.cos(ang), r * np.sin(ang)], axis=1))
    # Joint-limit edges (on, and 3e-5 or 1e-3 rad either side) and the SINGULAR edge.
    sweep1 = np.radians(np.linspace(-10.0, 190.0, 41))
    sweep2 = np.radians(np.linspace(-160.0, 160.0, 41))
    for delta in (0.0, 3e-5, -3e-5, 1e-3, -1e-3):
        for t1 in g.lo[0] + delta, g.hi[0] - delta:
            pts.append(np.stack(derive.fk_planar(g, [np.full_like(sweep2, t1), sweep2]), axis=1))
        for t2 in g.lo[1] + delta, g.hi[1] - delta:
            pts.append(np.stack(derive.fk_planar(g, [sweep1, np.full_like(sweep1, t2)]), axis=1))
    for edge in singular_edges():
        pts.append(np.stack(derive.fk_planar(g, [sweep1, np.full_like(sweep1, edge)]), axis=1))
    return g, np.concatenate(pts)


def singular_edges():
    """Elbow angles (rad) with |sin| 0.1% either side of SINGULAR_SIN, stretched and folded."""
    edges = []
    for f in (1 - 1e-3, 1 + 1e-3):
        a = math.asin(derive.SINGULAR_SIN * f)
        edges += [a, -a, math.pi - a, a - math.pi]
    return edges


def arm5_pose_targets(g, q):
    """Targets (x, y, z, pitch in the plane facing the target) of joint rows q (rad)."""
    rows = []
    for row in q:
        tip, tool = derive.fk_arm5(g, row)
        yaw = math.atan2(tip[1], tip[0])
        rows.append([tip[0], tip[1], tip[2], math.atan2(tool[0] * math.cos(yaw) + tool[1] * math.sin(yaw), tool[2])])
    return np.array(rows)


def arm5_targets():
    g = derive.Geometry("sim_arm5.json")
    reach = g.l1 + g.l2
    yaw = np.radians(np.linspace(-180.0, 180.0, 13))
    r = np.linspace(0.0, 420.0, 15)
    z = np.linspace(-150.0, 650.0, 15)
    pitch = np.radians([-100.0, 0.0, 45.0, 90.0, 135.0, 180.0, 270.0])
    Y, R, Z, P = (v.ravel() for v in np.meshgrid(yaw, r, z, pitch, indexing="ij"))
    pts = [np.stack([R * np.cos(Y), R * np.sin(Y), Z, P], axis=1)]
    # Tool poses of joints in and somewhat past the limits, on the limits, at the SINGULAR edge.
    rng = np.random.default_rng(7)
    pts.append(arm5_pose_targets(g, np.radians(rng.uniform(-160.0, 160.0, (4000, 5)))))
    edges = []
    for joint in (1, 2, 3):
        for delta in (0.0, 3e-5, -3e-5, 1e-3, -1e-3):
            for limit in g.lo[joint] + delta, g.hi[joint] - delta:
                q = np.radians(rng.uniform(-130.0, 130.0, (40, 5)))
                q[:, joint] = limit
                edges.append(q)
    for edge in singular_edges():
        q = np.radians(rng.uniform(-130.0, 130.0, (40, 5)))
        q[:, 2] = edge
        edges.append(q)
    pts.append(arm5_pose_targets(g, np.concatenate(edges)))
    # Wrist points on, just inside and just outside the reach sphere.
    phi = np.radians(np.arange(0.0, 360.0, 7.5))
    for k in (0.0, 0.5 * EPS, 2 * EPS, -2 * EPS, 1e-5, -1e-5):
        for yw in np.radians([10.0, 100.0, -160.0]):
            for p in np.radians([0.0, 90.0, 150.0]):
                h = reach * (1 + k) * np.sin(phi) + g.l3 * np.sin(p)
                zz = g.base + reach * (1 + k) * np.cos(phi) + g.l3 * np.cos(p)
                # A negative horizontal reach is the opposite facing plane, pitch mirrored.
                pts.append(np.stack([h * np.cos(yw), h * np.sin(yw), zz, np.where(h >= 0, p, -p)], axis=1))
    return g, np.concatenate(pts)


def run_grid(geom, targets, seed):
    rng = np.random.default_rng(seed)
    rules = [RULES[i % 3] for i in range(len(targets))]
    current = poses(geom, len(targets), rng)
    arm = solver_only(geom.board_file)
    statuses, answers = solve_all(arm, targets, rules, current)
    oracle = Oracle(geom, targets, current)
    return oracle, rules, statuses, answers


def summary(statuses):
    counts = {}
    for s in statuses:
        counts[status.name(s)] = counts.get(status.name(s), 0) + 1
    return " ".join("%s %d" % kv for kv in sorted(counts.items()))


def test_planar_grid(report):
    geom, targets = planar_targets()
    assert len(targets) >= 10000
    oracle, rules, statuses, answers = run_grid(geom, targets, 1)
    problems, skipped = judge(oracle, rules, statuses, answers)
    report("grid planar: %d targets, %d violations, %d too close to a threshold to judge (%s)"
           % (len(targets), len(problems), skipped, summary(statuses)))
    assert not problems, "\n".join(problems)
    assert skipped < len(targets) // 1000
    assert {status.name(s) for s in statuses} >= {"OK", "SINGULAR", "TOO_FAR", "TOO_CLOSE", "JOINT_LIMIT"}


def test_arm5_grid(report):
    geom, targets = arm5_targets()
    assert len(targets) >= 10000
    oracle, rules, statuses, answers = run_grid(geom, targets, 2)
    problems, skipped = judge(oracle, rules, statuses, answers)
    report("grid arm5: %d targets, %d violations, %d too close to a threshold to judge (%s)"
           % (len(targets), len(problems), skipped, summary(statuses)))
    assert not problems, "\n".join(problems)
    assert skipped < len(targets) // 1000
    assert {status.name(s) for s in statuses} >= {"OK", "SINGULAR", "TOO_FAR", "JOINT_LIMIT"}


def mp_grid(geom, targets, seed):
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(targets), 2000, replace=False)
    targets = targets[pick]
    rules = [RULES[i % 3] for i in range(len(targets))]
    current = poses(geom, len(targets), rng)
    lines = []
    for i, t in enumerate(targets):
        line = rules[i] + " " + " ".join(repr(float(v)) for v in t)
        if not np.isnan(current[i, 0]):
            line += " | " + " ".join(repr(float(v)) for v in current[i])
        lines.append(line)
    run = upy.run(MP_SCRIPTS / "grid_check.py", BOARDS / geom.board_file, stdin="\n".join(lines) + "\n")
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    assert out[-1] == "done %d" % len(targets)
    assert "nan" not in run.stdout.lower()
    statuses = []
    answers = []
    for line in out[:-1]:
        words = line.split()
        statuses.append(CODES[words[0]])
        answers.append([float(v) for v in words[1:]] or None)
    oracle = Oracle(geom, targets, current)
    problems, skipped = judge(oracle, rules, statuses, answers)
    return len(targets), problems, skipped, statuses


def test_grids_under_micropython(micropython, report):
    for (geom, targets), seed in ((planar_targets(), 3), (arm5_targets(), 4)):
        n, problems, skipped, statuses = mp_grid(geom, targets, seed)
        report("grid %s under MicroPython: %d targets, %d violations, %d not judged (%s)"
               % (geom.kind, n, len(problems), skipped, summary(statuses)))
        assert not problems, "\n".join(problems)
