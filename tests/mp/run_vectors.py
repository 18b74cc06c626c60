# SPDX-License-Identifier: MIT
# Solve every case of a tests/vectors/*.json file with the firmware, under MicroPython.
#
#     micropython tests/mp/run_vectors.py tests/vectors/arm5.json boards/
#
# Prints one line per case: "<id> <STATUS> <q deg>..." (joint angles only when
# the status carries a solution), then "done <count>". The CPython test parses
# the lines and judges them with the same comparator as the in-process run.

import json
import sys
from math import degrees, radians

from armfw import board, kinematics, status


def decode(v):
    """A JSON target entry: "nan"/"inf"/"-inf" become floats, anything else stays."""
    if v == "nan" or v == "inf" or v == "-inf":
        return float(v)
    return v


def solve(arm, case, out):
    """Status of arm.ik for one case (angles in out); degrees in the file, radians here."""
    target = [decode(v) for v in case["target"]]
    if arm.kind == "arm5" and len(target) == 4 and isinstance(target[3], (int, float)):
        target[3] = radians(target[3])
    current = case["current_deg"]
    if current is not None:
        current = [radians(v) if isinstance(v, (int, float)) else decode(v) for v in current]
    return arm.ik(target, out, current, kinematics.rule_code(case["rule"]))


def main():
    path = sys.argv[1]
    boards_dir = sys.argv[2]
    with open(path) as f:
        doc = json.load(f)
    arm = board.load(boards_dir + "/" + doc["board"]).solver
    # The vectors are the analytic solver's answers for the arm's geometry;
    # keep-out zones are the board's configuration, checked by tests/test_zones.py.
    arm.zones = None
    out = [0.0] * arm.n
    count = 0
    for case in doc["cases"]:
        st = solve(arm, case, out)
        line = case["id"] + " " + status.name(st)
        if status.solved(st):
            for a in out:
                line += " %.12f" % degrees(a)
        print(line)
        count += 1
    print("done %d" % count)


if __name__ == "__main__":
    main()
