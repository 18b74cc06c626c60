"""armctl demo: tool-path decoding by hand, and the whole demo on the MicroPython simulator."""

import math

import pytest

from armctl import demo
from armfw import board as boardlib

from conftest import BOARDS

US_PER_RAD = 424.448      # boards/sim_arm5.json: 270-degree servos, 1500 us centre


def us(deg):
    return int(round(1500 + deg * math.pi / 180 * US_PER_RAD))


def test_tool_path_from_pulses_by_hand():
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    records = [(0, ch, us(0)) for ch in range(5)] + [(0, 5, 1000)]       # standing straight up
    records += [(20, 1, us(90))]                                           # shoulder level: arm horizontal
    records += [(40, 0, us(90))]                                           # base turned to +y
    records += [(60, 0, 0), (60, 2, us(90))]                               # off pulse ignored; elbow bent 90
    path = demo.tool_path(board, records)
    top = 189 + 126.14 + 126.14 + 150.6
    reach = 126.14 + 126.14 + 150.6
    # Pulses are whole microseconds: 1 us is 1/424 rad, so positions agree to ~1 mm.
    assert path[0] == pytest.approx([0, 0, top], abs=1e-6)
    assert path[1] == pytest.approx([reach, 0, 189], abs=1.0)
    assert path[2] == pytest.approx([0, reach, 189], abs=1.0)
    # Forearm and tool (angles 90 + 90 from vertical) hang straight down from the upper arm.
    assert path[3] == pytest.approx([0, 126.14, 189 - 126.14 - 150.6], abs=1.0)
    assert len(path) == 4


def test_tool_path_waits_for_every_joint():
    board = boardlib.load(str(BOARDS / "sim_planar.json"))
    assert demo.tool_path(board, [(0, 0, 1500)]) == []
