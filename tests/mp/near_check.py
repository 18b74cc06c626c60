# SPDX-License-Identifier: MIT
# The continuation solve (solver.ik_near) against the full ik, bit for bit, under
# MicroPython and CPython alike (tests/test_near.py writes the cases, asserts on
# the answers).
#
#     micropython tests/mp/near_check.py < cases
#
# Two copies of a board are loaded: on A the solver's own ik_near, on B ik_near
# replaced by the full ik(target, out, current, MIN_MOTION). Every call either
# gets is recorded (status, the angles' bits as struct packs them, the elbow,
# the zone hit), so the two sequences must be the same byte for byte.
# Input lines (numbers separated by spaces, groups by " | "):
#   board PATH ZONES         load PATH twice; ZONES 0: without its keep-out zones
#   line Q | DP | ROLL       from joints Q (radians), a straight line to the tool at
#                            the start's tool coordinates + DP, the wrist roll
#                            ending at ROLL ("-": unchanged); both controllers'
#                            check passes (begin, check only)
#   linet P0 | P1 | ROLL     the same from the full ik's answer for P0 (from home)
#   pair Q | DT [| DQ]       T: the tool coordinates of joints Q, C: the full ik's
#                            answer for T from Q (+ DQ, radians, if given: a current
#                            pose off the answer); both ik_near(T + DT, C) answers
# Output per case: "<kind> same|DIFF|skip <ik_near calls> <fallbacks> <accepted>"
# (fallbacks: the full ik calls A's ik_near made; accepted: 1 for a line the check
# pass accepted), then "done <cases>".

import struct
import sys

from armfw import board, kinematics, motion, status

from null_driver import NullDriver


def floats(text):
    return [float(v) for v in text.split()]


class Side:
    """One copy of the board, its controller, and the record of its solver's ik_near calls."""

    def __init__(self, path, zones, near):
        self.board = board.load(path)
        self.solver = self.board.solver
        if not zones:
            self.solver.zones = None
        self.controller = motion.ArmController(self.board, NullDriver(), None, lambda ms: None)
        self.controller.executor.check_only = True
        self.controller.park()
        self.record = []
        self.calls = 0
        self.fallbacks = 0
        solver = self.solver
        full_ik = solver.ik
        inner = solver.ik_near if near else (lambda t, o, c: full_ik(t, o, c, kinematics.MIN_MOTION))

        def counted_ik(target, out, current=None, rule=kinematics.MIN_MOTION):
            self.fallbacks += 1
            return full_ik(target, out, current, rule)

        def recorded(target, out, current):
            self.calls += 1
            st = inner(target, out, current)
            self.keep(st, out)
            return st

        if near:
            solver.ik = counted_ik      # what A's ik_near calls when it falls back
        solver.ik_near = recorded
        self.full_ik = full_ik

    def keep(self, st, out):
        zones = self.solver.zones
        hit = (zones.hit_zone, zones.hit_link) if zones is not None else None
        angles = b"".join(struct.pack("<d", a) for a in out) if status.solved(st) else b""
        self.record.append((st, angles, self.solver.elbow, hit))

    def start(self, q):
        """Send pose q; False if a pulse is outside its window."""
        return self.controller.output.send_pose(q)

    def line(self, dp, roll):
        c = self.controller
        p1 = c.tool()
        for i in range(len(p1)):
            p1[i] += dp[i]
        return self.line_to(p1, roll)

    def line_to(self, p1, roll):
        c = self.controller
        c.plan()
        c.add(motion.LINE, p1, kinematics.MIN_MOTION, roll)
        ok = c.begin()
        point = b"".join(struct.pack("<d", a) for a in c.refusal.point)
        pose = b"".join(struct.pack("<d", a) for a in c.q)
        return (ok, c.executor.total, c.refusal.status, c.refusal.reason, c.refusal.step, c.refusal.joint, point, pose)

    def reset(self):
        self.record = []
        self.calls = 0
        self.fallbacks = 0


def home_answer(side, target):
    """The full ik's answer for target from the home pose, or None."""
    q = [0.0] * side.solver.n
    st = side.full_ik(target, q, list(side.solver.home), kinematics.MIN_MOTION)
    return q if status.solved(st) else None


def main():
    a = b = None
    cases = 0
    while True:
        text = sys.stdin.readline()
        if not text:
            break
        text = text.strip()
        if not text:
            continue
        kind, _, rest = text.partition(" ")
        if kind == "board":
            path, zones = rest.split()
            a = b = None
            a = Side(path, zones == "1", True)
            b = Side(path, zones == "1", False)
            continue
        cases += 1
        parts = [p.strip() for p in rest.split("|")]
        a.reset()
        b.reset()
        verdict = "same"
        if kind == "pair":
            q0 = floats(parts[0])
            dt = floats(parts[1])
            # Both sides take every step whatever the other did (a zone hit is state).
            for side in (a, b):
                t = side.controller.tool_of(q0, [0.0] * len(dt))
                q = [0.0] * side.solver.n
                if not status.solved(side.full_ik(t, q, q0, kinematics.MIN_MOTION)):
                    verdict = "skip"
                    continue
                for i in range(len(dt)):
                    t[i] += dt[i]
                if len(parts) > 2:
                    dq = floats(parts[2])
                    for i in range(len(q)):
                        q[i] += dq[i]
                side.solver.ik_near(t, [0.0] * side.solver.n, q)
        else:
            roll = None if parts[2] == "-" else float(parts[2])
            ends = []
            for side in (a, b):
                if kind == "line":
                    q0 = floats(parts[0])
                else:
                    q0 = home_answer(side, floats(parts[0]))
                if q0 is None or not side.start(q0):
                    verdict = "skip"
                    continue
                if kind == "line":
                    ends.append(side.line(floats(parts[1]), roll))
                else:
                    ends.append(side.line_to(floats(parts[1]), roll))
            if verdict != "skip" and ends[0] != ends[1]:
                verdict = "DIFF"
        if a.record != b.record or a.calls != b.calls:
            verdict = "DIFF"
        accepted = "1" if kind != "pair" and verdict != "skip" and ends[0][0] else "0"
        print("%s %s %d %d %s" % (kind, verdict, a.calls, a.fallbacks, accepted))

    print("done %d" % cases)


main()
