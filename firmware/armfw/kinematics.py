# SPDX-License-Identifier: MIT
"""Arm kinematics for the host: every solver of the firmware under one name.

The firmware itself imports only the modules its arm needs (armfw.solver, the
shared part; armfw.planar, armfw.arm5, armfw.chain: one per arm kind), so a
board's heap holds one solver; the host and the tests, which use them all,
import them from here.
"""

from armfw.solver import (  # noqa: F401
    MIN_MOTION, PREFER_UP, PREFER_DOWN, RULES, UP, DOWN, ELBOW_NAMES, LIMIT_EPS, TURN_MARGIN, NEAR_RATIO,
    NEAR_FLOOR, rule_code, fit_angle, Solver)
from armfw.status import SINGULAR  # noqa: F401
from armfw.planar import PlanarSolver   # noqa: F401
from armfw.arm5 import Arm5Solver    # noqa: F401
from armfw.arm5fk import AXIS_EPS    # noqa: F401
from armfw.arm5near import NEAR_YAW    # noqa: F401
