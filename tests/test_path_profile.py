# SPDX-License-Identifier: MIT
"""`path run` as one motion, measured, not asserted: the simulator's recorded pulses (the real
MicroPython running the firmware) decoded to joint angles and differentiated, with the
tolerances of tests/test_motion_profile.py for the 1 us pulse quantum; and the exact poses
the firmware's executor sends under CPython (tests/test_hold.py's recorder)."""
from array import array
from math import radians

import pytest

from armctl.sim import Simulator
from armfw.jointprofile import JointProfile
from test_hold import arm5, plain_run
from test_motion_profile import (ACCEL, ARM5, JOINTS, QUANTUM, SPEED, STEP_S, WINDOW, arm5_mapping,
                                 derivatives, joint_samples)

HOME = [0.0, 0.0, 90.0, 0.0, 0.0]       # sim_arm5's home pose (deg)
# A corner passed inside a step is cut by at most a quarter of accel * dt^2 per joint
# (armfw.pathprofile), and each sample's pulse by half a microsecond.
CORNER_CUT = ACCEL * STEP_S ** 2 / 4 + QUANTUM


def run_path(waypoints):
    """(samples of every step, the path run's reply steps) for waypoints (deg) from home."""
    signs, offsets = arm5_mapping()
    with Simulator(ARM5) as sim:
        assert sim.request("path clear")[-1] == "ok 0"
        for k, w in enumerate(waypoints):
            assert sim.request("path add " + " ".join(str(v) for v in w))[-1] == "ok %d" % (k + 1)
        before = sim.pulses()
        reply = sim.request("path run")[-1]
        assert reply.startswith("ok OK"), reply
        moves = sim.pulses()[len(before):]
    # The first step's pulses share the simulator's first instant with the pose set at
    # start: later by a second, they come after it.
    later = round(1.0 / STEP_S) * round(STEP_S * 1000)
    samples = joint_samples(before + [(t + later, ch, us) for t, ch, us in moves], moves[0][0] + later,
                            signs, offsets)
    return samples, int(reply.rsplit("steps=", 1)[1])


def stopping_steps(waypoints):
    """The steps of the same legs run as separate moves, each from rest to rest."""
    profile = JointProfile()
    steps = 0
    a = [radians(v) for v in HOME]
    for w in waypoints:
        b = [radians(v) for v in w]
        steps += profile.plan(a, b, [SPEED] * 5, [ACCEL] * 5, STEP_S)
        a = b
    return steps


def assert_within_limits(samples):
    for j in JOINTS:
        v, _ = derivatives(samples, j)
        _, acc = derivatives(samples, j, WINDOW)
        assert max(abs(x) for x in v) <= SPEED + QUANTUM / STEP_S, j
        assert max(abs(x) for x in acc) <= ACCEL + 2 * QUANTUM / (WINDOW * STEP_S) ** 2, j
        # No velocity step: one step's change at most accel * dt (and a microsecond's rounding).
        assert max(abs(b - a) for a, b in zip(v, v[1:])) <= ACCEL * STEP_S + 2 * QUANTUM / STEP_S, j


def distance_to_steps(samples, waypoint):
    """The least distance (radians, the largest joint's) from waypoint to the straight moves
    between consecutive samples."""
    best = float("inf")
    for a, b in zip(samples, samples[1:]):
        for k in range(101):
            t = k / 100.0
            best = min(best, max(abs(x + (y - x) * t - w) for x, y, w in zip(a, b, waypoint)))
    return best


@pytest.mark.parametrize("name, waypoints", [
    ("collinear", [[20, 10, 90, 0, 0], [40, 20, 90, 0, 0], [60, 30, 90, 0, 0]]),
    ("gently turning", [[20, 0, 90, 0, 0], [40, 1, 90, 0, 0], [60, 3, 90, 0, 0], [80, 6, 90, 0, 0]]),
    ("turning by 5 deg and more", [[20, 0, 90, 0, 0], [40, 3, 90, 0, 0], [60, 8, 90, 0, 0], [80, 15, 90, 0, 0]]),
])
def test_a_sparse_path_is_one_motion_within_the_limits_through_every_waypoint(micropython, report, name,
                                                                             waypoints):
    samples, steps = run_path(waypoints)
    stopping = stopping_steps(waypoints)
    assert steps < stopping
    assert_within_limits(samples)
    for w in waypoints:
        assert distance_to_steps(samples, [radians(v) for v in w]) <= CORNER_CUT, w
    assert samples[-1] == pytest.approx([radians(v) for v in waypoints[-1]], abs=QUANTUM)
    # It passes the interior waypoints moving: no two samples in a row stand still there.
    for w in waypoints[:-1]:
        near = [k for k, s in enumerate(samples) if max(abs(x - radians(v)) for x, v in zip(s, w)) <= radians(2)]
        assert all(samples[k] != samples[k + 1] for k in near), w
    report("path run, %s (%d waypoints): %d steps as one motion, %d as separate stopping moves"
           % (name, len(waypoints), steps, stopping))


def exact_run(waypoints):
    """The poses the executor sends (radians) running waypoints (deg) from home, refilling its
    ring as it goes, and the waypoints as the board stores them (float32)."""
    arm = arm5()

    def plan():
        arm.planner.path_clear()
        for w in waypoints:
            assert arm.planner.path_add([radians(v) for v in w])
        arm.plan_path()
    stored = [list(array("f", [radians(v) for v in w])) for w in waypoints]
    return [pose for pose, _ in plain_run(arm, plan)], stored


# The profile keeps its legs' lengths and speeds in float32, as the waypoints are.
FLOAT32 = 1e-6


def assert_exactly_within_limits(poses):
    for j in JOINTS:
        v = [(b[j] - a[j]) / STEP_S for a, b in zip(poses, poses[1:])] + [0.0]
        assert max(abs(x) for x in v) <= SPEED * (1 + FLOAT32), j
        assert max(abs(b - a) for a, b in zip([0.0] + v, v)) <= ACCEL * STEP_S * (1 + FLOAT32), j


def test_a_reversal_brings_the_arm_to_rest_on_its_waypoint():
    waypoints = [[30, 0, 90, 0, 0], [10, 5, 90, 0, 0], [10, 5, 90, 0, 0], [25, 5, 90, 0, 0]]
    poses, stored = exact_run(waypoints)
    assert_exactly_within_limits(poses)
    for turn in (stored[0], stored[2]):
        # Two poses in a row on the waypoint: the arm stands there for a step.
        assert sum(1 for a, b in zip(poses, poses[1:]) if a == b == turn) == 1, turn
    assert poses[-1] == stored[-1]


def test_a_long_path_refilled_as_it_runs_keeps_the_limits_exactly():
    # 128 waypoints, corners and gentle turns: the executor's ring is refilled from the walk
    # again, which must give the checked steps.
    waypoints = [[40 * ((k // 8) % 2) + 5 * (k % 8), 3 * (k % 5), 90 - k % 7, 0, 0] for k in range(128)]
    poses, stored = exact_run(waypoints)
    assert_exactly_within_limits(poses)
    assert poses[-1] == stored[-1]


def test_a_path_of_a_waypoint_a_step_runs_at_its_own_pace_and_one_that_starts_at_speed_is_ramped(
        micropython, report):
    # The host's kind of path: the waypoints of a trapezoid sampled a step apart (written
    # out here: 1 deg/step^2 ramps... within 360 deg/s^2: 0.144 deg per step per step).
    step_change = 0.1                   # deg per step, per step
    cruise = 1.2                        # deg per step (60 deg/s)
    positions = []
    x = 0.0
    speed = 0.0
    while speed < cruise:
        speed = min(cruise, speed + step_change)
        x += speed
        positions.append(x)
    ramp = len(positions)
    for _ in range(30):
        x += cruise
        positions.append(x)
    for k in range(ramp - 1, 0, -1):    # the ramp again, mirrored
        x += positions[k] - positions[k - 1]
        positions.append(x)
    x += positions[0]
    positions.append(x)
    ramped = [[p, 0, 90, 0, 0] for p in positions]
    samples, steps = run_path(ramped)
    assert steps == len(ramped)
    assert_within_limits(samples)
    poses, stored = exact_run(ramped)
    assert poses[1:] == stored          # a step on each waypoint in turn
    # The same cruise without its ramps (today's host line started at full speed) would step
    # the velocity: the board ramps it, a few steps longer, within the limits.
    flat = [[cruise * (k + 1), 0, 90, 0, 0] for k in range(40)]
    samples, flat_steps = run_path(flat)
    assert len(flat) < flat_steps
    assert_within_limits(samples)
    report("path run, 40 waypoints a step apart at 60 deg/s: %d steps (the board ramps them); "
           "a host-ramped %d-waypoint path: one step a waypoint" % (flat_steps, len(ramped)))


@pytest.mark.parametrize("port", ["micropython", "boardlike_upy"])
def test_random_paths_keep_every_joints_speed_and_acceleration(port, request, report):
    # The profile alone on the MicroPython ports, double and a board's single precision: paths
    # of every kind (tests/mp/path_limits.py), each step's velocity within speed and its change
    # within accel * dt, up to the port's float rounding; every path ends on its last waypoint.
    import json
    import subprocess
    from armctl import upy
    from conftest import MP_SCRIPTS
    paths = 300
    run = subprocess.run([request.getfixturevalue(port), str(MP_SCRIPTS / "path_limits.py"), str(ARM5.parent),
                          "27", str(paths)], capture_output=True, text=True, timeout=600, env=upy.env())
    assert run.returncode == 0, run.stderr
    worst = json.loads(run.stdout.splitlines()[-1])
    assert worst["ends"] == paths and 10 < worst["each"] < paths - 100
    rounding = 1e-6 if port == "micropython" else 1e-4
    assert worst["speed"] <= 1 + rounding
    assert worst["accel"] <= 1 + rounding
    report("path profile, %d random paths on %s: worst speed x%.6f, acceleration x%.4f of the limits"
           % (paths, port, worst["speed"], worst["accel"]))
