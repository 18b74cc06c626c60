# SPDX-License-Identifier: MIT
"""The SO-101 board (boards/so101.json): STS3215 servos on a Feetech bus, a chain arm whose
wrist roll the host's numerical solver holds, and the host's words for a target in a zone
(its closed form on the board: tests/test_so101_closed.py)."""

import json
import math

import numpy as np
import pytest

from armctl import numik
from armctl.fallback import Mover
from armfw import board as board_file, drivers
from conftest import BOARDS

SO101 = BOARDS / "so101.json"


def test_the_board_drives_sts3215s_with_ids_1_to_6_and_the_gripper_on_6():
    b = board_file.load(str(SO101))
    assert b.driver["kind"] == "sts" and b.driver["ticks_per_rev"] == 4096
    assert drivers.channels(b) == [1, 2, 3, 4, 5, 6] and b.gripper["channel"] == 6
    assert b.solver.names == ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]
    # Ticks: 4096 a turn, the middle at 2048; every limit has its tick inside the window.
    for i in range(5):
        assert b.servos.pulse(i, 0.0) == 2048
        assert b.servos.pulse(i, math.pi / 2) - 2048 == pytest.approx(1024, abs=1)
    assert b.solver.held == (4,)


def walk(b, start, offsets):
    """Solve each neighbouring target seeded with the pose before (as armctl move does)."""
    q = np.array(start)
    tip = np.array(b.solver.fk(list(q), [0.0] * 3))
    rolls = []
    for d in offsets:
        result = numik.solve(b, tip + d, mode=numik.POSITION, seed=q)
        assert result.ok and result.error_mm <= numik.TOL_MM, result
        q = np.asarray(result.q)
        rolls.append(math.degrees(q[4]))
    return rolls


OFFSETS = [np.array(v, dtype=float) for v in
           ((0, 0, -30), (25, 10, -30), (-20, 30, -10), (15, -25, 20), (40, 0, -40), (-30, -20, 0))]


def test_position_only_targets_keep_the_wrist_roll_where_it_is():
    b = board_file.load(str(SO101))
    start = [0.2, -0.6, 0.9, 0.6, math.radians(37.0)]
    rolls = walk(b, start, OFFSETS)
    assert rolls == [pytest.approx(37.0, abs=1e-9)] * len(OFFSETS)
    # Without the hold the solver spends the roll on the targets: the test can tell.
    free = json.loads(SO101.read_text())
    del free["arm"]["hold"]
    b_free = board_file.from_dict(free)
    assert max(abs(r - 37.0) for r in walk(b_free, start, OFFSETS)) > 0.1


def test_a_hold_naming_no_joint_is_refused():
    d = json.loads(SO101.read_text())
    d["arm"]["hold"] = ["wrist_spin"]
    with pytest.raises(board_file.BoardError, match=r"b.json.arm.hold: 'wrist_spin' is not a joint"):
        board_file.from_dict(d, "b.json")


class _NoLink:
    def request(self, line, motion_s=0.0):
        raise AssertionError("nothing is sent for a refused target: %s" % line)


def test_a_target_under_the_table_says_it_is_reached_but_in_the_floor_zone():
    b = board_file.load(str(SO101))
    mover = Mover(_NoLink(), b)
    q0 = np.array([0.0, -0.3, 0.6, 0.4, 0.0])
    mover.pose = lambda: (q0, None)
    tip = np.array(b.solver.fk(list(q0), [0.0] * 3))
    target = np.array([tip[0], tip[1], -15.0])     # 15 mm below the table top, well within reach
    outcome = mover.host_preview(target)
    assert outcome.status == "COLLISION"
    assert "no pose within" not in outcome.message
    assert outcome.message.startswith("COLLISION: reaches it (within ")
    assert outcome.message.endswith("would enter zone floor")
    # The nearest pose is on the target, and it is the floor it breaks.
    assert np.linalg.norm(outcome.nearest - target) <= numik.TOL_MM


@pytest.mark.parametrize("bus, boot", [
    ("1,2,3,4,6", "error BAD_BOARD BusError: no STS servo answers at ID 5 on UART 1 (tx GPIO 4, rx GPIO 5, "
                  "1000000 baud): check the servo power, the wiring and each servo's ID"),
    ("1,2,3,4,5,6", "# armfw "),
])
def test_the_so101_boots_on_its_bus_under_micropython(micropython, bus, boot):
    """main.py on the Unix port, the board's UART holding fake STS3215s (tests/mp/fake_machine):
    a missing servo is named at boot and in every answer; with all six the arm homes and relaxes."""
    from armctl import FIRMWARE_DIR, memory
    lines = ["info", "home", "where", "relax", "where"]
    _, out = memory.answer(micropython, FIRMWARE_DIR, SO101, lines, 512,
                           extra_path=memory.FAKE_MACHINE_PATH, extra_env={"ARMCTL_FAKE_BUS": bus})
    banner, replies = memory.replies(out)
    assert banner.startswith(boot), out
    if boot.startswith("error"):
        assert replies == [[boot]] * len(lines)
    else:
        finals = [r[-1] for r in replies]
        assert finals[0].startswith("ok name=so101 arm=chain ") and " gripper=6 " in finals[0], finals
        assert finals[1].startswith("ok OK 0.000 0.000 0.000 0.000 0.000 "), finals
        assert finals[2].startswith("ok OK 0.000 0.000 0.000 0.000 0.000 "), finals
        assert finals[3] == "ok RELAXED" and finals[4].startswith("ok RELAXED"), finals
