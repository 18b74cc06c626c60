# SPDX-License-Identifier: MIT
"""The tool's move per joint step from one FK and the arm's Jacobian (Solver.fk_moves),
and the line pulses armfw.pulsepick chooses with it.

The Jacobian columns are checked against central differences of each arm kind's own
forward kinematics; the choice against the search it replaced (n + 1 forward
kinematics from the combination of every joint's pulse below its exact one, the
move of each joint's step up by finite difference), written out here in floats.
"""

import itertools
import json
import random
from math import pi, sqrt

import pytest

from armctl.bench import accuracy
from armfw import board
from armfw.pulsepick import SCALE, PulsePicker
from armfw.solver import Solver
from conftest import BOARDS

# One of each solver kind: the 5-joint arm with and without a tool offset (the roll moves
# the tool only through it), the planar arm, URDF chains (the AL5D; the SO-101's closed-form
# chain).
KINDS = ("sim_arm5", "sim_arm5_tool", "sim_planar", "sim_al5d", "so101")

# Central differences of step H (radians). Every joint here is a rigid turn of what lies
# beyond it: the tip moves on a circle of radius r (its distance from the joint's axis),
# so every derivative of the tip along one joint is at most r long, and the central
# difference misses the first by at most r H^2 / 6. No arm here has a lever of 1000 mm:
# 1.7e-6 mm per radian; the rounding of two FKs of a few hundred mm (1e-13 mm) over 2 H
# adds 1e-9.
H = 1e-4
LEVER_MM = 1000.0
COLUMN_TOL = LEVER_MM * H * H / 6 + 1e-8


def _load(name, driver=None):
    path = BOARDS / (name + ".json")
    data = json.loads(path.read_text())
    if driver:
        data["driver"] = driver
    return board.from_dict(data, str(path))


def _grid(solver, per_joint):
    """Poses on a grid of per_joint angles a joint, inside its limits (a little in from them)."""
    axes = []
    for lo, hi in zip(solver.lo, solver.hi):
        span = hi - lo
        axes.append([lo + span * (k + 0.5) / per_joint for k in range(per_joint)])
    return [list(q) for q in itertools.product(*axes)]


def _dim(solver):
    return min(3, len(solver.targets))


@pytest.mark.parametrize("name", KINDS)
def test_each_joint_column_is_the_central_difference_of_fk(name):
    solver = _load(name).solver
    n = solver.n
    dim = _dim(solver)
    assert type(solver).fk_moves is not Solver.fk_moves     # the kind's own Jacobian, not the fallback
    per_joint = {2: 24, 4: 7}.get(n, 5)
    poses = _grid(solver, per_joint)
    assert len(poses) >= 500
    steps = [(-1.0) ** i * (0.5 + 0.25 * i) for i in range(n)]     # each column scaled by its own step
    tip = [0.0] * len(solver.targets)
    moves = [0.0] * (3 * n)
    worst = 0.0
    for q in poses:
        before = list(q)
        solver.fk_moves(q, steps, tip, moves)
        assert q == before
        assert tip == solver.fk(q, [0.0] * len(solver.targets))    # the same FK, to the bit
        for i in range(n):
            plus = list(q)
            plus[i] += H
            minus = list(q)
            minus[i] -= H
            a = solver.fk(plus, [0.0] * len(solver.targets))
            b = solver.fk(minus, [0.0] * len(solver.targets))
            for j in range(dim):
                column = (a[j] - b[j]) / (2 * H)
                err = abs(moves[3 * i + j] - column * steps[i])
                worst = max(worst, err / abs(steps[i]))
    assert worst <= COLUMN_TOL


@pytest.mark.parametrize("name", KINDS)
def test_the_finite_difference_fallback_agrees_to_second_order(name):
    """Solver.fk_moves (a kind without a Jacobian): one FK per joint, q given back as it was;
    a step of s radians turns the tip on a circle of radius r <= LEVER_MM, whose chord
    leaves its tangent by at most r s^2 / 2."""
    solver = _load(name).solver
    n = solver.n
    rng = random.Random(27)
    tip = [0.0] * len(solver.targets)
    tip_fd = [0.0] * len(solver.targets)
    moves = [0.0] * (3 * n)
    moves_fd = [0.0] * (3 * n)
    for _ in range(200):
        q = [rng.uniform(lo, hi) for lo, hi in zip(solver.lo, solver.hi)]
        steps = [rng.uniform(-0.01, 0.01) for _ in range(n)]
        before = list(q)
        Solver.fk_moves(solver, q, steps, tip_fd, moves_fd)
        assert q == before
        solver.fk_moves(q, steps, tip, moves)
        assert tip_fd == tip
        for i in range(n):
            for j in range(_dim(solver)):
                assert abs(moves_fd[3 * i + j] - moves[3 * i + j]) <= LEVER_MM * steps[i] ** 2 / 2 + 1e-9


def _distance(t, a, b, dim):
    ab = [b[j] - a[j] for j in range(dim)]
    at = [t[j] - a[j] for j in range(dim)]
    length2 = sum(v * v for v in ab)
    s = min(max(sum(u * v for u, v in zip(at, ab)) / length2, 0.0), 1.0) if length2 else 0.0
    return sqrt(sum((a[j] + s * ab[j] - t[j]) ** 2 for j in range(dim)))


def _old_choice(picker, solver, p0, p1, point):
    """The search pulsepick made before the Jacobian, in floats: the tool at the all-below
    combination and each joint's step up by FK (n + 1 of them), every usable combination
    judged by their sum's distance from point (the nearest pulses win a tie); then the
    winner judged by its own FK against the nearest pulses, by distance from the line.
    Returns (the search's winner, the choice)."""
    n = picker.n
    dim = _dim(solver)
    down = list(picker._down_q)
    up = list(picker._up_q)
    usable = list(picker._usable)
    nearest = picker._nearest

    def pose(combo):
        return [up[i] if combo >> i & 1 else down[i] for i in range(n)]

    def fk(combo):
        return solver.fk(pose(combo), [0.0] * len(solver.targets))[:dim]

    base = fk(0)
    moves = [[a - b for a, b in zip(fk(1 << i), base)] for i in range(n)]
    best = None
    best_d = 0.0
    for combo in range(1 << n):
        if not all(usable[i] >> (combo >> i & 1) & 1 for i in range(n)):
            continue
        t = [base[j] + sum(moves[i][j] for i in range(n) if combo >> i & 1) for j in range(dim)]
        d = sqrt(sum((t[j] - point[j]) ** 2 for j in range(dim)))
        if best is None or d < best_d or d == best_d and combo == nearest:
            best = combo
            best_d = d
    chosen = best
    if best != nearest and all(usable[i] >> (nearest >> i & 1) & 1 for i in range(n)):
        if _distance(fk(nearest), p0, p1, dim) <= _distance(fk(best), p0, p1, dim):
            chosen = nearest
    return best, chosen


CASES = (("sim_arm5", "pwm"), ("sim_arm5", "pca9685"), ("sim_arm5_tool", "pwm"), ("sim_planar", "pwm"),
         ("sim_planar", "pca9685"), ("sim_al5d", "pwm"), ("pico_pca9685", None))


@pytest.mark.parametrize("name,driver", CASES)
def test_the_choice_matches_the_finite_difference_search_within_its_first_order_error(name, driver, report):
    """Lines through the tool of poses spread over the joints' ranges, one step each.

    Both searches model a combination's tool to first order about a pose at most one grid
    step per joint from it: each joint's turn moves the tool on a circle of radius <= r (the
    largest distance of the tip from a joint's axis), so every second derivative of the tool
    is at most r long and the model misses the tool by at most r (sum of the grid steps in
    radians)^2 / 2, e. The new one also rounds each of its n + 1
    terms to a unit of its integer grid (its largest move / SCALE) per coordinate. So the tool
    it picks is never farther from the step's point than the old one's by more than twice
    their errors, tol. Two combinations near a tie in distance from the point may lie at
    different distances from the line, so the choice is held to the line by the guard (never
    farther than the nearest pulses, to the rounding of FK) and by the old winner's distance
    from the point plus tol; over all the steps, to the old choice's mean.
    """
    b = _load(name, accuracy.DRIVERS[driver] if driver else None)
    solver = b.solver
    servos = b.servos
    picker = PulsePicker(servos, solver, b.driver)
    n = solver.n
    dim = _dim(solver)
    searched = []
    search = picker._search
    picker._search = lambda point: searched.append(search(point)) or searched[-1]
    grid_rad = [picker.den / picker.num / abs(servos.exact_us(i, 1.0) - servos.exact_us(i, 0.0)) for i in range(n)]
    rng = random.Random(name + str(driver))
    out = [0] * n
    same = compared = 0
    worst_gap = 0.0
    sums = [0.0, 0.0]       # distances from the line, new and old
    one_sided = 0       # steps with a joint whose other grid point is past its limit
    for k in range(400):
        q = [rng.uniform(lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo)) for lo, hi in zip(solver.lo, solver.hi)]
        if k % 3 == 0:
            # A joint on its limit: only one of its grid points may be usable, not always the nearest.
            i = rng.randrange(n)
            q[i] = solver.lo[i] if k % 2 else solver.hi[i]
        if servos.pulses(q, out) != -1:
            continue
        point = solver.fk(q, [0.0] * len(solver.targets))
        direction = [rng.gauss(0.0, 1.0) for _ in range(dim)]
        norm = sqrt(sum(v * v for v in direction))
        before = rng.uniform(0.0, 10.0)
        p0 = [point[j] - before * direction[j] / norm for j in range(dim)]
        p1 = [point[j] + (10.0 - before) * direction[j] / norm for j in range(dim)]
        assert picker.pick(q, out, p0, p1, point) == -1
        compared += 1
        new_best = searched[-1]
        one_sided += any(u != 3 for u in picker._usable)
        old_best, old = _old_choice(picker, solver, p0, p1, point)
        new = sum(1 << i for i in range(n) if out[i] == picker._up_us[i])

        def tool(combo):
            return solver.fk([picker._up_q[i] if combo >> i & 1 else picker._down_q[i] for i in range(n)],
                             [0.0] * len(solver.targets))

        # A joint that does not move the tool (the wrist roll with no tool offset) ties exactly:
        # the new search keeps it at its nearest pulse, the old one took whichever came first.
        same += tool(new)[:dim] == tool(old)[:dim]
        if name == "sim_arm5" and picker._usable[4] == 3:
            assert new >> 4 & 1 == picker._nearest >> 4 & 1

        lever = max(sqrt(sum((tool(picker._nearest)[j] - o[j]) ** 2 for j in range(dim)))
                    for o in _axis_points(solver, q))
        # (the lever at the nearest pulses; a grid step per joint away it is longer by at
        # most lever times the steps' sum)
        e = lever * (1 + sum(grid_rad)) * sum(grid_rad) ** 2 / 2
        quantum = sqrt(dim) * (n + 1) * lever * max(grid_rad) / SCALE
        tol = 2 * (e + quantum)
        assert picker.pose == pytest.approx([picker._up_q[i] if new >> i & 1 else picker._down_q[i]
                                             for i in range(n)], abs=0)
        nearest = picker._nearest
        if all(picker._usable[i] >> (nearest >> i & 1) & 1 for i in range(n)):
            assert _distance(tool(new), p0, p1, dim) <= _distance(tool(nearest), p0, p1, dim) + 1e-12
        new_d = sqrt(sum((tool(new_best)[j] - point[j]) ** 2 for j in range(dim)))
        old_d = sqrt(sum((tool(old_best)[j] - point[j]) ** 2 for j in range(dim)))
        assert new_d <= old_d + tol
        # The choice lies no farther from the line than the search's winner (the guard
        # takes the nearest pulses only where nearer) nor that than from the point.
        new_line = _distance(tool(new), p0, p1, dim)
        assert new_line <= old_d + tol
        worst_gap = max(worst_gap, new_d - old_d)
        sums[0] += new_line
        sums[1] += _distance(tool(old), p0, p1, dim)
    assert compared >= 200 and one_sided >= 20
    assert same >= 0.9 * compared
    # Where the two differ, near ties decide: over many steps neither draws nearer the line.
    assert sums[0] <= 1.01 * sums[1]
    report("pulse choice from the Jacobian (%s, %s): %d of %d steps put the tool where the finite-difference "
           "search did; its winner at most %.2g mm farther from the point; mean distance from the line "
           "%.4f mm (finite differences: %.4f)" % (name, driver or b.driver.get("kind"), same, compared,
                                                   worst_gap, sums[0] / compared, sums[1] / compared))


def _axis_points(solver, q):
    """A point on each joint's axis, for the lever bound: the arm's joint points (the planar
    arm's in its plane: x and the third coordinate), the base's axis at the origin."""
    p = solver.joint_points(q)
    if len(solver.targets) == 2:
        return [(p[0], p[2]), (p[3], p[5])]
    points = [(p[k], p[k + 1], p[k + 2]) for k in range(0, len(p) - 3, 3)]
    return [(0.0, 0.0, 0.0)] + points
