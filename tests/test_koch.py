# SPDX-License-Identifier: MIT
"""The Koch v1.1 board (boards/koch.json): ROBOTIS Dynamixel servos on Protocol 2.0, a chain
arm whose FK must be the published follower URDF's, run in the simulator on simulated XL330s.

The URDF's numbers below are typed from jess-moss/koch-v1-1's follower arm as ManiSkill
ships it (follower_arm_v1.1.urdf): every joint origin has rpy 0, so the FK is a product
of translations and rotations about x or z, written here with numpy, apart from the
firmware's chain code.
"""

import math
import random
import subprocess

import numpy as np

from armctl.sim import Simulator
from armfw import board as board_file, drivers
from conftest import BOARDS, ROOT

KOCH = BOARDS / "koch.json"
TICKS_PER_DEG = 4096 / 360

# (origin in metres, rotation axis or None for a fixed joint), base to tip.
URDF = [
    ((0.005766, -0.028665, 0.018513), None),      # fixed_joint: base_link -> link_1
    ((0, -0.011858, 0.020066), "z"),               # joint_1: shoulder_pan
    ((0.020713, 0, 0.015368), "x"),                # joint_2: shoulder_lift
    ((-0.038026, -0.014951, 0.108424), "x"),       # joint_3: elbow_flex
    ((-0.000251, -0.100502, 0.002641), "x"),       # joint_4: wrist_flex
    ((0.019234, 0.00037, -0.044779), "z"),         # joint_5: wrist_roll
    ((-0.008, 0, -0.065), None),                   # gripper_tcp_joint
]


def rotation(axis, a):
    c, s = math.cos(a), math.sin(a)
    if axis == "x":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def urdf_tip_mm(q):
    r = np.eye(3)
    p = np.zeros(3)
    angles = iter(q)
    for origin, axis in URDF:
        p = p + r @ np.array(origin)
        if axis is not None:
            r = r @ rotation(axis, next(angles))
    return p * 1000.0


def test_the_board_drives_dynamixels_with_ids_1_to_6_and_holds_the_roll():
    b = board_file.load(str(KOCH))
    assert b.driver["kind"] == "dynamixel" and b.driver["ticks_per_rev"] == 4096
    assert drivers.channels(b) == [1, 2, 3, 4, 5, 6] and b.gripper["channel"] == 6
    assert b.solver.names == ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]
    assert b.solver.held == (4,)
    for i in range(5):
        assert b.servos.pulse(i, 0.0) == 2048
        assert b.servos.pulse(i, math.pi / 2) - 2048 == 1024


def test_fk_is_the_urdfs():
    b = board_file.load(str(KOCH))
    rng = random.Random(1)
    lo, hi = b.solver.lo, b.solver.hi
    for _ in range(200):
        q = [rng.uniform(lo[i], hi[i]) for i in range(5)]
        assert np.allclose(b.solver.fk(q, [0.0, 0.0, 0.0]), urdf_tip_mm(q), atol=1e-6)


def test_only_the_dynamixel_driver_loads(micropython):
    script = ("import sys\nfrom armfw import board\nb = board.load(%r)\n"
              "print(sorted(k for k in sys.modules if k.startswith('armfw')))\n") % str(KOCH)
    proc = subprocess.run([micropython, "-c", script], cwd=str(ROOT / "firmware"),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    loaded = set(eval(proc.stdout))
    assert "armfw.dynamixel" in loaded and not {"armfw.sts", "armfw.simservo", "armfw.pca9685"} & loaded


def test_koch_runs_in_the_simulator_on_simulated_xl330s(micropython):
    """A simulated servo closes half the distance to its goal at each read (armctl.sim_bus.SIM_FOLLOW)."""
    q = [20, 20, -30, 10, 0]
    goals = [round(2048 + v * TICKS_PER_DEG) for v in q]
    with Simulator(KOCH) as sim:
        assert sim.readline().startswith("# armfw ")
        assert sim.request("servo read") == ["ok 2048 2048 2048 2048 2048 2048"]
        assert sim.request("home")[-1].startswith("ok OK 0.000 0.000 0.000 0.000 0.000 ")
        reply = sim.request("joints %s" % " ".join(str(v) for v in q))
        x, y, z = urdf_tip_mm([math.radians(v) for v in q])
        assert reply[-1].startswith("ok OK 20.000 20.000 -30.000 10.000 0.000 x=%.3f y=%.3f z=%.3f "
                                    % (x + 0.0, y + 0.0, z + 0.0)), reply
        # Each read brings the servos half the rest of the way; the gripper was never moved.
        before = [int(t) for t in sim.request("servo read")[0].split()[1:6]]
        after = [int(t) for t in sim.request("servo read")[0].split()[1:6]]
        assert after == [t + int((g - t) * 0.5) for t, g in zip(before, goals)]
        assert all(abs(g - t) <= abs(g - s) for s, t, g in zip(before, after, goals))
