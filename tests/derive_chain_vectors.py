# SPDX-License-Identifier: MIT
"""Derive the chain-arm FK vectors from Robotics Toolbox for Python, never from the firmware.

    .venv/bin/python tests/derive_chain_vectors.py   # rewrites tests/vectors/fk/chain_al5d.json

The arm is the Lynxmotion AL5D as described by the URDF in rtb-data, loaded
by Robotics Toolbox itself (rtb.models.URDF.AL5D): its fkine_all gives the
world frame of every link; link k's origin is joint k's origin (a joint turns
about an axis through its own origin), the last link's origin is the tool tip
(the URDF has no tool beyond it). Lengths in mm, angles in degrees.
Poses: the zero pose, every corner of the joint limits, and seeded random
poses inside the limits. tests/test_chain_arm.py checks that this script
still reproduces the file, and runs the firmware's chain FK (board file
boards/sim_al5d.json, imported from the same URDF) against it under CPython
and MicroPython.
"""

import itertools
import json
import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
# FK vectors live apart from the IK vectors (tests/vectors/*.json, solved by run_vectors.py).
VECTORS = HERE / "vectors" / "fk"
NAME = "chain_al5d.json"
RANDOM_POSES = 200


def build():
    import roboticstoolbox as rtb
    robot = rtb.models.URDF.AL5D()
    lo, hi = robot.qlim
    poses = [np.zeros(robot.n)]
    poses += [np.array(corner) for corner in itertools.product(*zip(lo, hi))]
    rng = np.random.default_rng(20261203)
    poses += list(lo + (hi - lo) * rng.random((RANDOM_POSES, robot.n)))
    cases = []
    for q in poses:
        frames = robot.fkine_all(q)
        # fkine_all starts with the world and base frames; the last n are links 1..n.
        origins = [[round(float(v) * 1000.0, 9) for v in frames[k].t]
                   for k in range(len(frames) - robot.n, len(frames))]
        q_deg = [round(math.degrees(a), 9) for a in q]
        cases.append({"q_deg": q_deg, "origins_mm": origins, "tip_mm": origins[-1]})
    return {"board": "sim_al5d.json",
            "units": {"q_deg": "deg", "origins_mm": "mm (joint 1..n origins, world)", "tip_mm": "mm"},
            "derived_by": "tests/derive_chain_vectors.py (Robotics Toolbox for Python, "
                          "rtb.models.URDF.AL5D fkine_all; never the firmware)",
            "cases": cases}


def render(doc):
    return json.dumps(doc, indent=1) + "\n"


if __name__ == "__main__":
    VECTORS.mkdir(exist_ok=True)
    doc = build()
    (VECTORS / NAME).write_text(render(doc))
    print("%s: %d poses" % (NAME, len(doc["cases"])))
