# SPDX-License-Identifier: MIT
# Solve targets read from stdin with the firmware, under MicroPython.
#
#     micropython tests/mp/grid_check.py boards/sim_arm5.json < targets
#
# Each input line: a rule ("min", "up", "down") then the target numbers (mm,
# arm5 pitch in radians), then optionally the current pose (radians), separated
# by " | ". Each output line: the status name, then the joint angles (radians,
# repr) when the status carries them. Ends with "done <count>".

import sys

from armfw import board, kinematics, status


def main():
    arm = board.load(sys.argv[1]).solver
    arm.zones = None    # the solver's geometry; zones are judged by tests/test_zones.py
    out = [0.0] * arm.n
    count = 0
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        parts = line.split("|")
        words = parts[0].split()
        target = [float(v) for v in words[1:]]
        current = [float(v) for v in parts[1].split()] if len(parts) > 1 else None
        st = arm.ik(target, out, current, kinematics.rule_code(words[0]))
        text = status.name(st)
        if status.solved(st):
            for a in out:
                text += " " + repr(a)
        print(text)
        count += 1
    print("done %d" % count)


if __name__ == "__main__":
    main()
