"""armctl.calibrate: servo and link-length fits, and the guided session end to end on the simulator."""

import json
import math

import pytest

from armctl import calibrate as cal
from armfw import board as boardlib

from conftest import BOARDS

RAD = math.pi / 180


def test_servo_fit_two_poses_by_hand():
    # Servo reversed, 400 us/rad, sits 30 us above centre at math zero:
    # offset = 30 us / 400 us/rad = 0.075 rad = 4.2972 deg; at +90 deg the
    # pulse is 1530 - 400 * pi/2 = 901.68 us.
    fit = cal.fit_servo([0.0, math.pi / 2], [1530, 1530 - 400 * math.pi / 2], 1500)
    assert fit["sign"] == -1
    assert fit["us_per_rad"] == pytest.approx(400.0, abs=1e-3)
    assert fit["offset_deg"] == pytest.approx(4.2972, abs=1e-3)
    assert fit["residual_us"] == pytest.approx([0, 0], abs=1e-6)


def test_servo_fit_residuals_show_a_bent_servo():
    # Three poses, the middle pulse 6 us off a straight line: least squares
    # spreads it as +4, -2 ... the residuals sum to zero and the middle one is 2/3 of 6.
    fit = cal.fit_servo([0.0, math.pi / 4, math.pi / 2], [1500, 1500 + 424.448 * math.pi / 4 + 6,
                                                          1500 + 424.448 * math.pi / 2], 1500)
    assert sum(fit["residual_us"]) == pytest.approx(0, abs=1e-3)
    assert fit["residual_us"][1] == pytest.approx(4.0, abs=1e-3)
    assert fit["residual_us"][0] == pytest.approx(-2.0, abs=1e-3)


def test_servo_fit_refuses_degenerate_input():
    with pytest.raises(ValueError):
        cal.fit_servo([0.5, 0.5], [1500, 1600], 1500)
    with pytest.raises(ValueError, match="connected"):
        cal.fit_servo([0.0, 1.0], [1500, 1500], 1500)


def test_length_fit_planar_by_hand():
    # True arm 110/90 mm against the board's 100/80: stretched along x the tip
    # is at 200 mm, stretched along y at (0, 200), elbow at +90 deg at (110, 90).
    arm = boardlib.load(str(BOARDS / "sim_planar.json")).arm
    report = cal.fit_lengths(arm, [[0, 0], [math.pi / 2, 0], [0, math.pi / 2]],
                             [[200, 0], [0, 200], [110, 90]])
    assert report["lengths"] == {"l1_mm": pytest.approx(110, abs=1e-6), "l2_mm": pytest.approx(90, abs=1e-6)}
    # Nominal model misses: 20 mm, 20 mm, hypot(10, 10) mm.
    assert report["before_mm"] == pytest.approx([20, 20, math.hypot(10, 10)], abs=1e-3)
    assert report["rms_after_mm"] == pytest.approx(0, abs=1e-6)


def test_length_fit_arm5_recovers_lengths_and_reports_noise():
    # Measurements from the arm5 closed form (SPEC.md frame) with other
    # lengths, plus +-0.5 mm of alternating "ruler" noise.
    l1, l2, l3, base = 135.0, 118.0, 160.0, 180.0
    arm = boardlib.load(str(BOARDS / "sim_arm5.json")).arm
    poses = [[d * RAD for d in pose] for pose in cal.MEASURE_POSES["arm5"]]
    measured = []
    for k, q in enumerate(poses):
        a2, a3, a4 = q[1], q[1] + q[2], q[1] + q[2] + q[3]
        s = l1 * math.sin(a2) + l2 * math.sin(a3) + l3 * math.sin(a4)
        z = base + l1 * math.cos(a2) + l2 * math.cos(a3) + l3 * math.cos(a4)
        noise = 0.5 if k % 2 else -0.5
        measured.append([s * math.cos(q[0]) + noise, s * math.sin(q[0]), z - noise])
    report = cal.fit_lengths(arm, poses, measured)
    for name, true in (("l1_mm", l1), ("l2_mm", l2), ("l3_mm", l3), ("base_mm", base)):
        assert report["lengths"][name] == pytest.approx(true, abs=1.0)
    assert report["rms_before_mm"] > 5.0      # the model error is visible...
    assert report["rms_after_mm"] < 1.0       # ...and gone after the fit: only the noise is left


def test_length_fit_refuses_poses_that_cannot_separate_lengths():
    arm = boardlib.load(str(BOARDS / "sim_planar.json")).arm
    # Elbow straight in every pose: only l1 + l2 is observable.
    with pytest.raises(ValueError, match="varied"):
        cal.fit_lengths(arm, [[0, 0], [0.5, 0], [1.0, 0]], [[180, 0], [158, 86], [97, 151]])


def test_calibration_file_keeps_skipped_joints_and_loads(tmp_path):
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    # 400 us/rad leaves room for a 20 us offset inside 500..2500 us at +-135 deg.
    fits = {1: cal.fit_servo([0.0, math.pi / 2], [1520, 1520 + 400 * math.pi / 2], 1500)}
    data = cal.calibration_file(board, fits)
    assert len(data["joints"]) == 5
    assert data["joints"][0] == {"offset_deg": 0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500}
    path = tmp_path / "calibration.json"
    cal.write_json_atomically(path, data)
    assert not (tmp_path / "calibration.json.tmp").exists()
    loaded = boardlib.load(str(BOARDS / "sim_arm5.json"), calibration=str(path))
    assert loaded.servos.pulse(1, 0.0) == 1520
    assert loaded.servos.pulse(1, math.pi / 2) == round(1520 + 400 * math.pi / 2)


def test_calibration_that_breaks_a_limit_window_is_refused():
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    # 30 deg of offset: +135 deg would need 1500 + 165 deg * 424.448 us/rad = 2722 us > 2500.
    fits = {1: cal.fit_servo([0.0, math.pi / 2], [1500 + 30 * RAD * 424.448,
                                                  1500 + 120 * RAD * 424.448], 1500)}
    with pytest.raises(boardlib.BoardError, match="pulse window"):
        cal.check_calibration(BOARDS / "sim_arm5.json", cal.calibration_file(board, fits))
