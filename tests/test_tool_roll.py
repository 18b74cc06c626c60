# SPDX-License-Identifier: MIT
"""The whole tool pose over the protocol, on the MicroPython Unix port: an optional ROLL in
ik/move/line (omitted: unchanged), roll= in where, and a board with a tool offset (its
tip where an independent chain of frames says, NEAR_AXIS near the base axis)."""

import math

import numpy as np
import pytest

import derive_vectors as derive
from armctl.sim import Simulator
from conftest import BOARDS
from test_protocol import fields, numbers


@pytest.fixture(scope="module")
def arm(micropython):
    with Simulator(BOARDS / "sim_arm5.json") as sim:
        assert sim.readline().startswith("# armfw ")        # the boot banner
        yield sim


@pytest.fixture(scope="module")
def tool_arm(micropython):
    with Simulator(BOARDS / "sim_arm5_tool.json") as sim:
        assert sim.readline().startswith("# armfw ")
        yield sim


def test_roll_is_optional_and_kept_when_omitted(arm):
    assert arm.request("move 150 0 300 90")[-1].startswith("ok OK")
    reply = arm.request("ik 150 0 300 90 40")[-1]
    assert numbers(reply)[4] == pytest.approx(40.0)
    assert fields(arm.request("where")[-1])["roll"] == "0.000"      # ik moves nothing
    reply = arm.request("move 160 0 300 90 -60")[-1]
    assert numbers(reply)[4] == pytest.approx(-60.0)
    assert fields(arm.request("where")[-1])["roll"] == "-60.000"
    reply = arm.request("line 170 0 300 90")[-1]                     # omitted: unchanged
    assert numbers(reply)[4] == pytest.approx(-60.0)
    reply = arm.request("line 170 0 300 90 30")[-1]                  # a pure roll as a line
    assert reply.startswith("ok OK") and numbers(reply)[4] == pytest.approx(30.0)
    # The roll joint never jumps: 90 deg at the 90 deg/s limit and 20 ms steps is 50 steps or more.
    assert int(fields(reply)["steps"]) >= 50
    assert arm.request("move 170 0 300 90 200")[-1].startswith("error JOINT_LIMIT")   # wrapped: -160


def test_tool_offset_board_puts_its_tip_on_the_target(tool_arm):
    g = derive.Geometry("sim_arm5_tool.json")
    for target, roll in (((200.0, 40.0, 280.0, 90.0), 0.0), ((150.0, -80.0, 200.0, 135.0), 45.0),
                         ((180.0, 10.0, 300.0, 90.0), -90.0)):
        line = "move %g %g %g %g %g" % (target + (roll,))
        reply = tool_arm.request(line)[-1]
        assert reply.startswith("ok OK"), (line, reply)
        q = np.radians(numbers(reply)[:5])
        tip, tool = derive.fk_chain(g, q)
        assert list(tip) == pytest.approx(list(target[:3]), abs=0.01)     # angles printed to 0.001 deg
        assert math.degrees(math.atan2(math.hypot(tool[0], tool[1]), tool[2])) == pytest.approx(target[3], abs=0.01)
        f = fields(reply)
        assert [float(f[k]) for k in ("x", "y", "z")] == pytest.approx(list(target[:3]), abs=1e-3)
    reply = tool_arm.request("ik 5 5 500 0 0")[-1]
    assert reply.startswith("error NEAR_AXIS no solution for 5 5 500 0")


def test_zones_check_the_tool_link_to_the_offset_tip():
    """The tool link of an arm with a tool offset ends at the real tip (the FK's), not at the l3 tip."""
    from armfw import board as boardlib
    b = boardlib.load(str(BOARDS / "sim_arm5_tool.json"))
    q = [0.0, 1.2, 1.2, 0.5, 0.0]          # reaching forward and down
    pts = list(b.solver.joint_points(q))
    tip, _ = derive.fk_chain(derive.Geometry("sim_arm5_tool.json"), np.array(q))
    assert pts[9:12] == pytest.approx(list(tip), abs=1e-9)
