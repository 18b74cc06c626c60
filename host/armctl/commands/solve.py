# SPDX-License-Identifier: MIT
"""armctl solve: inverse kinematics for one target, analytic (armfw) or numerical (DLS, CCD)."""

import argparse
import json
import math

import numpy as np

from armctl import cli, shipped
from armfw import board as boardlib
from armfw import kinematics
from armfw import status as fw_status

NAME = "solve"
HELP = "Solve one target: print the status and the joint angles (degrees)."

EPILOG = """\
examples:
  armctl solve --board boards/sim_arm5.json 157.3 0 342.4 90
  armctl solve --board boards/sim_arm5.json 157.3 0 342.4 90 --elbow down
  armctl solve --board boards/sim_arm5.json 200 50 120            (pitch free: DLS)
  armctl solve --board boards/sim_arm5.json 200 50 120 --method ccd
  armctl solve --board boards/sim_planar.json 100 80
  armctl solve --chain my_arm.json 120 40 60                      (any chain: DLS)

Target: planar X Y (mm); arm5 X Y Z (mm) [PITCH] (degrees from vertical,
90 = tool horizontal); --chain X Y Z (mm) [DX DY DZ] (tool direction).
Without PITCH the pitch is free, which only the
numerical solvers answer (--method auto picks DLS then). analytic is the
firmware's own solver (armfw); dls and ccd are the host's numerical fallback
(armctl.numik), seeded with --current (default: the home pose); with --elbow
they start from a pose on that elbow branch. --chain takes a chain described
in JSON (see armctl.chain: joints with axis, xyz_mm, rpy_deg, limits; tool),
for arms without a closed form: numerical methods only.
Exit status: 0 solved, 1 not solved (the status says why; numerical
answers also give the nearest pose found and how far it misses), 2 bad
arguments or board file.
"""

METHODS = ("auto", "analytic", "dls", "ccd")

# Seed elbow angle (degrees) for a numerical solve asked for one branch.
ELBOW_SEED_DEG = 60.0


def add_arguments(parser):
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--board", "-b", default=shipped.DEFAULT_BOARD,
                        help="board name or file (default %(default)s)")
    parser.add_argument("target", nargs="+", type=float, metavar="V", help="X Y [Z [PITCH]]")
    parser.add_argument("--method", "-m", choices=METHODS, default="auto",
                        help="solver (default auto: analytic when the target fixes every coordinate, else dls)")
    parser.add_argument("--elbow", choices=("up", "down"), default=None,
                        help="branch to prefer (default: minimum motion from --current)")
    parser.add_argument("--current", nargs="+", type=float, default=None, metavar="DEG",
                        help="the arm's current joint angles, degrees (default: home)")
    parser.add_argument("--chain", default=None, metavar="JSON",
                        help="solve for a chain described in this JSON file instead of the board's arm")


def _elbow_seed(arm, current, elbow):
    """A seed on the asked elbow branch: the current pose with its elbow bent that way."""
    seed = list(current)
    sign = 1 if elbow == "up" else -1
    if arm.kind == "planar":
        seed[1] = -sign * math.radians(ELBOW_SEED_DEG)      # elbow up is t2 <= 0
    else:
        seed[2] = sign * math.radians(ELBOW_SEED_DEG)       # elbow up is q3 >= 0
    return [min(max(v, lo), hi) for v, lo, hi in zip(seed, arm.lo, arm.hi)]


def _print_pose(arm, q):
    print("joints_deg: %s" % "  ".join("%s=%.3f" % (n, math.degrees(v)) for n, v in zip(arm.names, q)))


def _run_chain(args):
    from armctl import chain as chainlib, numik
    try:
        with open(args.chain) as f:
            c = chainlib.from_description(json.load(f))
    except (OSError, ValueError) as e:
        raise cli.UsageError("%s: %s" % (args.chain, e))
    values = list(args.target)
    if len(values) not in (3, 6) or not all(math.isfinite(v) for v in values):
        raise cli.UsageError("a chain target is X Y Z [DX DY DZ], finite numbers")
    if args.method == "analytic" or args.elbow:
        raise cli.UsageError("a described chain has no analytic solver and no elbow: use --method dls|ccd")
    seed = c.home
    if args.current is not None:
        seed = np.radians(args.current)
        if len(seed) != c.n or not np.all(np.isfinite(seed)) or not c.within_limits(seed):
            raise cli.UsageError("--current needs %d finite joint angles (degrees) inside the limits" % c.n)
    method = "dls" if args.method == "auto" else args.method
    r = numik.solve(c, values, seed=seed, method=method)
    print("status: %s" % r.name)
    print("method: %s (numerical, %s mode), %d iterations" % (method, r.mode, r.iterations))
    print("joints_deg: %s" % "  ".join("%s=%.3f" % (n, math.degrees(v)) for n, v in zip(c.names, r.q)))
    print("%s: %.6f mm" % ("fk_error" if r.ok else "nearest pose misses by", r.error_mm))
    return cli.EXIT_OK if r.ok else cli.EXIT_REFUSED


def run(args):
    if args.chain is not None:
        return _run_chain(args)
    board = boardlib.load(args.board)
    arm = board.solver
    values = list(args.target)
    if not all(math.isfinite(v) for v in values):
        raise cli.UsageError("the target must be finite numbers")
    full = len(arm.targets)
    position_only = arm.kind == "arm5" and len(values) == 3
    if len(values) != full and not position_only:
        raise cli.UsageError("a target of the %s arm is %s%s, got %d numbers"
                     % (arm.kind, " ".join(t.upper() for t in arm.targets[:3]),
                        " [PITCH]" if arm.kind == "arm5" else "", len(values)))
    target = values[:]
    if arm.kind == "arm5" and not position_only:
        target[3] = math.radians(target[3])
    if args.current is not None:
        if len(args.current) != arm.n or not all(math.isfinite(v) for v in args.current):
            raise cli.UsageError("--current needs %d finite joint angles (degrees)" % arm.n)
        current = [math.radians(v) for v in args.current]
        if not arm.within_limits(current):
            raise cli.UsageError("--current is outside the joint limits")
    else:
        current = list(arm.home)
    method = args.method
    if method == "auto":
        method = "dls" if position_only or not arm.closed_form else "analytic"
    if method == "analytic":
        if not arm.closed_form:
            raise cli.UsageError("a %s arm has no analytic solver: use --method dls|ccd" % arm.kind)
        if position_only:
            raise cli.UsageError("the analytic solver needs the pitch; give PITCH or use --method dls|ccd")
        rule = kinematics.rule_code(args.elbow) if args.elbow else kinematics.MIN_MOTION
        out = [0.0] * arm.n
        st = arm.ik(target, out, current if args.current is not None else None, rule)
        print("status: %s" % fw_status.name(st))
        print("method: analytic (armfw)")
        if not fw_status.solved(st):
            return cli.EXIT_REFUSED
        _print_pose(arm, out)
        mm, rad = arm.fk_error(target, out)
        print("elbow: %s" % kinematics.ELBOW_NAMES[arm.elbow])
        print("fk_error: %.6f mm, %.6f deg" % (mm, math.degrees(rad)))
        return cli.EXIT_OK
    from armctl import numik
    seed = _elbow_seed(arm, current, args.elbow) if args.elbow else current
    mode = numik.POSITION if (position_only or arm.kind != "arm5") else numik.PITCH
    r = numik.solve(board, target, mode=mode, seed=np.array(seed), method=method)
    print("status: %s" % r.name)
    print("method: %s (numerical, %s mode%s), %d iterations"
          % (method, mode, ", pitch free" if position_only else "", r.iterations))
    _print_pose(arm, r.q)
    if arm.kind == "arm5":
        tool = arm.fk(list(r.q), [0.0] * 4)
        print("tool: x=%.3f y=%.3f z=%.3f mm, pitch %.3f deg (in the plane the base faces)"
              % (tool[0], tool[1], tool[2], math.degrees(tool[3])))
    angle = "" if mode == numik.POSITION else ", %.6f deg" % math.degrees(r.angle_error_rad)
    print("%s: %.6f mm%s" % ("fk_error" if r.ok else "nearest pose misses by", r.error_mm, angle))
    return cli.EXIT_OK if r.ok else cli.EXIT_REFUSED
