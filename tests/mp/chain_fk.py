# SPDX-License-Identifier: MIT
# Forward kinematics of a chain arm (armfw.chain) for every pose of a vectors file, under MicroPython.
#
#     micropython tests/mp/chain_fk.py tests/vectors/fk/chain_al5d.json boards/
#
# Prints one line per pose: "<index> x y z | ox oy oz ..." (the tip, then every
# joint origin, mm to 9 places), then "done <count>". The CPython test runs the
# same code in-process and compares both with the file.

import json
import sys
from math import radians

from armfw import board


def lines(path, boards_dir):
    with open(path) as f:
        doc = json.load(f)
    arm = board.load(boards_dir + "/" + doc["board"]).solver
    tip = [0.0, 0.0, 0.0]
    q = [0.0] * arm.n
    out = []
    for k, case in enumerate(doc["cases"]):
        for i in range(arm.n):
            q[i] = radians(case["q_deg"][i])
        arm.fk(q, tip)
        text = "%d %.9f %.9f %.9f |" % (k, tip[0], tip[1], tip[2])
        for v in arm.origins[:3 * arm.n]:
            text += " %.9f" % v
        out.append(text)
    return out


if __name__ == "__main__":
    count = 0
    for line in lines(sys.argv[1], sys.argv[2]):
        print(line)
        count += 1
    print("done %d" % count)
