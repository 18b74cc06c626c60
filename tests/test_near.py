# SPDX-License-Identifier: MIT
"""The continuation solve, solver.ik_near, is the full ik's answer bit for bit.

A differential, run by the firmware itself under MicroPython and CPython
(tests/mp/near_check.py): two copies of each board walk the same straight
lines, one with the solver's ik_near, one with the full ik in its place, and
every solve's status, angles (their bits), elbow and zone hit must agree, as
must the check passes' verdicts. Lines from random poses in random directions
at the motion code's own step sizes, near singular poses, near the joint
limits, across the base axis, with and without the boards' zones; and single
targets at 1e-9 mm to hundreds of mm from the one whose answer is the current
pose. Then the cost: on ordinary lines the continuation must answer almost
every step itself (a fallback is the full ik).
"""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from armfw import board, status
from conftest import BOARDS, MP_SCRIPTS

SCRIPT = MP_SCRIPTS / "near_check.py"
# Boards of both closed-form kinds; sim_arm5_tool has a tool offset (always the full ik).
NEAR_BOARDS = ("sim_arm5.json", "pico_pca9685.json", "sim_planar.json", "sim_arm5_tool.json")
COUNT = 100         # lines of each kind per board (single targets: as many)


def fmt(values):
    return " ".join(repr(float(v)) for v in values)


def inside(rng, lo, hi, shrink):
    """A pose uniformly inside the limits shrunk by shrink of their span at each end."""
    span = hi - lo
    return rng.uniform(lo + shrink * span, hi - shrink * span)


def direction(rng, dims):
    d = rng.normal(size=dims)
    return d / np.linalg.norm(d)


def line_cases(name, rng, count):
    """(category, case line) pairs for board name."""
    solver = board.load(str(BOARDS / name)).solver
    lo = np.array(solver.lo)
    hi = np.array(solver.hi)
    arm5 = solver.kind == "arm5"
    cases = []

    def move(length, pitch):
        dp = list(direction(rng, 3 if arm5 else 2) * length)
        return dp + [pitch] if arm5 else dp

    def roll():
        return repr(float(rng.uniform(lo[4], hi[4]))) if arm5 and rng.random() < 0.3 else "-"

    reach = solver.reach
    for _ in range(count):
        q = inside(rng, lo, hi, 0.1)
        cases.append(("ordinary", "line %s | %s | %s" % (
            fmt(q), fmt(move(rng.uniform(0.02, 1.0) * reach, rng.uniform(-0.5, 0.5) if arm5 else 0)), roll())))
    for _ in range(count // 2):
        # The elbow all but straight (SINGULAR below ~1.1 degrees), the line along or across the arm.
        q = inside(rng, lo, hi, 0.15)
        e = 2 if arm5 else 1
        q[e] = rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-4.0, -1.3)
        cases.append(("singular", "line %s | %s | -" % (fmt(q), fmt(move(rng.uniform(0.005, 0.3) * reach, 0.0)))))
    for _ in range(count // 2):
        # Every joint within 3 degrees of one of its limits.
        edge = np.where(rng.random(len(lo)) < 0.5, lo, hi)
        q = edge + np.sign(lo + hi - 2 * edge) * rng.uniform(0.0, 0.05, len(lo))
        cases.append(("limits", "line %s | %s | %s" % (
            fmt(q), fmt(move(rng.uniform(0.01, 0.6) * reach, rng.uniform(-0.3, 0.3) if arm5 else 0)), roll())))
    if arm5:
        for _ in range(count // 2):
            # Across (or right by) the base axis: the tool goes through x = y = 0.
            a = rng.uniform(-30.0, 30.0, 2)
            z = rng.uniform(120.0, 380.0)
            pitch = rng.choice([math.pi, rng.uniform(2.0, 3.0), rng.uniform(-0.5, 0.5)])
            cases.append(("axis", "linet %s | %s | -" % (fmt([a[0], a[1], z, pitch]),
                                                         fmt([-a[0], -a[1], z + rng.uniform(-20, 20), pitch]))))
        cases.append(("ordinary", "linet %s | %s | -" % (fmt([250.0, -200.0, 150.0, math.pi / 2]),
                                                         fmt([250.0, 200.0, 150.0, math.pi / 2]))))
    for _ in range(count):
        q = inside(rng, lo, hi, 0.02)
        dt = list(direction(rng, 3 if arm5 else 2) * 10.0 ** rng.uniform(-9.0, 2.5))
        if arm5:
            dt.append(rng.choice([0.0, 10.0 ** rng.uniform(-9.0, 0.0)]))
        cases.append(("pair", "pair %s | %s" % (fmt(q), fmt(dt))))
    for _ in range(count):
        # A current pose off the answer by up to a radian per joint, the elbow often all
        # but straight: where the two elbows (and the half turns) cost about the same.
        q = inside(rng, lo, hi, 0.02)
        if rng.random() < 0.5:
            q[2 if arm5 else 1] = rng.uniform(-0.1, 0.1)
        dt = list(direction(rng, 3 if arm5 else 2) * 10.0 ** rng.uniform(-9.0, 1.0))
        if arm5:
            dt.append(0.0)
        dq = rng.normal(size=len(lo)) * 10.0 ** rng.uniform(-6.0, 0.0)
        if arm5:
            dq[4] = 0.0 if rng.random() < 0.8 else dq[4]
        cases.append(("pair off", "pair %s | %s | %s" % (fmt(q), fmt(dt), fmt(dq))))
    return cases


def run(interpreter, name, zones, cases):
    text = "board %s %d\n" % (BOARDS / name, zones) + "".join(c + "\n" for _, c in cases)
    env = dict(os.environ, MICROPYPATH=str(BOARDS.parent / "firmware"))
    argv = [interpreter] + (["-X", "heapsize=8m"] if interpreter != sys.executable else []) + [str(SCRIPT)]
    proc = subprocess.run(argv, input=text, capture_output=True, text=True, env=env,
                          cwd=str(BOARDS.parent), timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[-1] == "done %d" % len(cases), proc.stdout[-500:]
    return [line.split() for line in lines[:-1]]


@pytest.mark.parametrize("name", NEAR_BOARDS)
@pytest.mark.parametrize("zones", [1, 0])
def test_ik_near_is_the_full_ik_bit_for_bit(micropython, report, name, zones):
    rng = np.random.default_rng(1300 + 2 * NEAR_BOARDS.index(name) + zones)
    cases = line_cases(name, rng, COUNT)
    for interpreter in (micropython, sys.executable):
        results = run(interpreter, name, zones, cases)
        diffs = [c for (cat, c), r in zip(cases, results) if r[1] == "DIFF"]
        assert not diffs, (interpreter, diffs[:5])
        calls = {}
        for (cat, _), r in zip(cases, results):
            if r[1] == "same":
                # Lines the check pass accepted apart: a refused one ends in a failing
                # solve, and a jump in halved steps each solved in full (the answer is
                # not the continuation there).
                key = cat + (" accepted" if r[4] == "1" else "")
                n, f = calls.get(key, (0, 0))
                calls[key] = (n + int(r[2]), f + int(r[3]))
        # Not a vacuous comparison: lines many steps long, every category solved.
        assert calls["ordinary accepted"][0] > 10 * COUNT and calls["pair"][0] > 20, calls
        offset = name == "sim_arm5_tool.json"
        for cat, (n, f) in calls.items():
            if offset:
                assert f == n, (cat, n, f)          # a tool offset: always the full ik
        n, f = calls["ordinary accepted"]
        if not offset:
            # The lines a check pass accepts: the continuation answers (almost) every
            # step itself; what it leaves are steps by a singular pose (the elbow all
            # but straight at the workspace's edge).
            assert f <= 0.02 * n, calls
        if interpreter == micropython:
            report("ik_near %s zones=%d: %s" % (name, zones, ", ".join(
                "%s %d/%d fell back" % (cat, f, n) for cat, (n, f) in sorted(calls.items()))))


NAN = float("nan")
INF = float("inf")
BAD = (NAN, INF, -INF, "1", None)


@pytest.mark.parametrize("name, target", [("sim_arm5.json", [250.0, 10.0, 150.0, math.pi / 2]),
                                          ("sim_arm5.json", [0.0, 0.0, 350.0, math.pi / 2]),    # on the base axis
                                          ("sim_planar.json", [100.0, 80.0])])
def test_ik_near_answers_what_ik_answers_to_input_it_refuses(name, target):
    """Input the full ik refuses or treats specially gets the full ik's answer: NaN,
    inf, a string or None for a coordinate of the target or a joint of the current
    pose (on the base axis the current yaw is the target's), no current pose, a
    target or a current pose of the wrong length."""
    solver = board.load(str(BOARDS / name)).solver
    answer = [0.0] * solver.n
    assert solver.ik(target, answer, None) == 0

    def both(t, c):
        near = [7.0] * solver.n
        full = [7.0] * solver.n
        st = solver.ik_near(t, near, c)
        elbow = solver.elbow
        assert (st, repr(near), elbow) == (solver.ik(t, full, c, 0), repr(full), solver.elbow), (t, c)
        return st

    cases = [(target[:i] + [bad] + target[i + 1:], c) for i in range(len(target)) for bad in BAD
             for c in (answer, None)]
    cases += [(target, answer[:j] + [bad] + answer[j + 1:]) for j in range(solver.n) for bad in BAD]
    cases += [(target + [1.0], answer), (target[:-1], answer), (target, answer + [0.0]), (target, answer[:-1]),
              (target, None), (None, answer)]
    statuses = {both(t, c) for t, c in cases}
    assert statuses >= {status.BAD_INPUT}
    assert both(target, answer) == status.OK     # and the good pair is the continuation's own
