# SPDX-License-Identifier: MIT
"""Benchmark targets: forward kinematics of random joint poses inside the limits.

Built with the firmware's own FK (armfw), so every target is reachable by
construction (the arm stood there), and seeded, so every run and every
solver sees the same ones.
"""

import math

import numpy as np

from armfw import board as fw_board

from armctl import BOARDS_DIR

ARM5 = "sim_arm5.json"
PLANAR = "sim_planar.json"


def load(name):
    """A shipped board with its solver's keep-out zones off: the host benchmarks time and
    compare the solvers alone (the zone check has its own figures, tests/mp/bench_solver.py)."""
    board = fw_board.load(str(BOARDS_DIR / name))
    board.solver.zones = None
    return board


def reachable(arm, count, seed):
    """(targets (count, k), poses (count, n)): FK of uniform poses within the limits.

    arm5 poses keep wrist roll 0. Targets are the tool pose as the protocol
    speaks it (the solver's tool_pose: the pitch in the direction the tool
    reaches, in (-pi, pi]).
    """
    rng = np.random.default_rng(seed)
    poses = arm.lo + (np.array(arm.hi) - arm.lo) * rng.random((count, arm.n))
    if arm.kind == "arm5":
        poses[:, 4] = 0.0
    out = [0.0] * len(arm.targets)
    targets = np.empty((count, len(arm.targets)))
    for i in range(count):
        targets[i] = arm.tool_pose(poses[i].tolist(), out)
    return targets, poses


def mixed(arm, count, seed):
    """Targets of every kind: 70 % reachable, 30 % uniform in a box 1.2 x the reach."""
    n_box = count * 3 // 10
    targets, _ = reachable(arm, count - n_box, seed)
    rng = np.random.default_rng(seed + 1)
    span = 1.2 * arm.reach + (getattr(arm, "l3", 0.0))
    box = rng.uniform(-span, span, (n_box, len(arm.targets)))
    if arm.kind == "arm5":
        box[:, 2] += arm.base
        box[:, 3] = rng.uniform(-math.pi, math.pi, n_box)
    mixed_targets = np.concatenate([targets, box])
    return mixed_targets[rng.permutation(count)]
