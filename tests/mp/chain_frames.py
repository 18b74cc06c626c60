# SPDX-License-Identifier: MIT
# The firmware's chain FK (armfw.chain.ChainSolver) of any chain, under MicroPython.
#
#     micropython tests/mp/chain_frames.py CHAINS.json
#
# CHAINS.json: a list of chains, each what a ChainSolver keeps of its
# description (xyz, fixed, axes, tool_xyz, tool_rot, tool_axis: flat lists;
# names, lo, hi, home) plus "poses" (lists of joint angles, radians). Prints one
# line per pose: "<chain> <pose> | tip | direction | origins | joint_axes"
# (floats in repr, origins and axes 3 per joint), then "done <lines>".
# tests/test_chain.py compares them with the host's numpy chain.

import json
import sys

from armfw.chain import ChainSolver


def solver(d):
    joints = []
    for i in range(len(d["names"])):
        joints.append((d["xyz"][3 * i:3 * i + 3], d["fixed"][9 * i:9 * i + 9], d["axes"][3 * i:3 * i + 3]))
    return ChainSolver(joints, d["tool_xyz"], d["tool_rot"], d["tool_axis"], d["names"], d["lo"], d["hi"], d["home"])


def fields(values):
    return " ".join([repr(v) for v in values])


def main(path):
    with open(path) as f:
        chains = json.load(f)
    tip = [0.0, 0.0, 0.0]
    count = 0
    for c, d in enumerate(chains):
        arm = solver(d)
        n = arm.n
        for k, q in enumerate(d["poses"]):
            arm.fk(q, tip)
            print("%d %d | %s | %s | %s | %s" % (c, k, fields(tip), fields(arm.direction),
                                              fields(arm.origins[:3 * n]), fields(arm.joint_axes)))
            count += 1
    print("done %d" % count)


main(sys.argv[1])
