# SPDX-License-Identifier: MIT
"""Random joint paths through armfw.pathprofile on a MicroPython port, run by tests/test_path_profile.py.

    micropython path_limits.py BOARDS SEED PATHS

Plans and steps PATHS random paths (legs long and short, waypoints repeated,
turns of every angle, limits differing per joint) for sim_arm5's servo map,
and prints on its last line, as JSON, the worst ratio over every joint and
step of a step's velocity (its displacement / dt, at rest before and after)
to the joint's speed, and of its change to accel * dt; a path of a waypoint a
step (profile.each) is allowed a pulse step more, and 2 of them in the change.
"""

import json
import random
import sys
from array import array
from math import radians

from armfw import board
from armfw.pathprofile import PathProfile

BOARDS = sys.argv[1]
random.seed(int(sys.argv[2]))
PATHS = int(sys.argv[3])
DT = 0.02


def uniform(a, b):
    return a + (b - a) * random.random()


def main():
    servos = board.load(BOARDS + "/sim_arm5.json").servos
    n = servos.n
    quantum = [1.0 / k for k in servos.us_per_rad]
    profile = PathProfile(128, servos)
    worst_speed = worst_accel = 0.0
    ends = each = 0
    for _ in range(PATHS):
        speed = [radians(uniform(30, 300)) for _ in range(n)]
        accel = [radians(uniform(100, 2000)) for _ in range(n)]
        scale = (0.001, 0.01, 0.05, 0.3, 1.0)[int(random.random() * 5)]
        start = [uniform(-1, 1) for _ in range(n)]
        waypoints = []
        for _ in range(1 + int(random.random() * 40)):
            last = waypoints[-1] if waypoints else start
            repeat = random.random() < 0.1
            waypoints.append([x if repeat or random.random() < 0.3 else x + uniform(-scale, scale) for x in last])
        path = array("f", [v for w in waypoints for v in w])
        profile.plan(start, path, len(waypoints), speed, accel, DT)
        each += profile.each
        slack = [q / DT if profile.each else 0.0 for q in quantum]
        previous = list(start)
        velocity = [0.0] * n
        q = [0.0] * n
        more = True
        while more:
            more = profile.step()
            if more:
                profile.pose(start, path, q)
            for i in range(n):
                v = (q[i] - previous[i]) / DT if more else 0.0
                worst_speed = max(worst_speed, abs(v) / (speed[i] + slack[i]))
                worst_accel = max(worst_accel, abs(v - velocity[i]) / (accel[i] * DT + 2 * slack[i]))
                velocity[i] = v
                if more:
                    previous[i] = q[i]
        ends += previous == list(path[-n:])
    print(json.dumps({"paths": PATHS, "each": each, "ends": ends, "speed": worst_speed, "accel": worst_accel}))


main()
