# SPDX-License-Identifier: MIT
"""armctl.plot and `armctl plot`: valid PNGs with the expected axes, honest statuses, exit codes.

No pixel snapshots: the pictures are checked for format, size and axes; the
numbers behind them against geometry derived by hand.
"""

import math
import struct

import numpy as np
import pytest

from armfw import board as fw_board
from armfw.status import OK, SINGULAR, TOO_FAR, TOO_CLOSE
from armctl import cli, plot

from conftest import BOARDS

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ARM5 = str(BOARDS / "sim_arm5.json")
PLANAR = str(BOARDS / "sim_planar.json")


@pytest.fixture(scope="module")
def arm5():
    return fw_board.load(ARM5)


@pytest.fixture(scope="module")
def planar():
    return fw_board.load(PLANAR)


@pytest.fixture
def axes_drawn(monkeypatch):
    """Number of axes of every figure the plot module saves, in order."""
    counts = []
    save = plot._save

    def counting(fig, out_png):
        counts.append(len(fig.axes))
        return save(fig, out_png)

    monkeypatch.setattr(plot, "_save", counting)
    return counts


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height, len(data)


def assert_sane_png(path, min_w=500, min_h=400):
    width, height, size = png_size(path)
    assert min_w <= width <= 3000 and min_h <= height <= 2000
    assert size > 20000             # a picture, not an empty canvas


def test_workspace_planar(planar, tmp_path, axes_drawn):
    out = tmp_path / "ws.png"
    status = plot.workspace_figure(planar, out, grid=201)
    assert_sane_png(out)
    assert axes_drawn == [1]
    # Annulus by hand: outside L1+L2 = 180 mm too far, inside |L1-L2| = 20 mm too close.
    (x0, x1), (y0, y1), _ = plot.workspace_grid(planar, grid=201)
    xs, ys = np.meshgrid(np.linspace(x0, x1, 201), np.linspace(y0, y1, 201))
    r = np.hypot(xs, ys)
    assert np.all(status[r > 180.01] == TOO_FAR)
    assert np.all(status[r < 19.99] == TOO_CLOSE)
    assert np.any(status == OK)


def test_workspace_arm5_side_view(arm5, tmp_path, axes_drawn):
    out = tmp_path / "ws5.png"
    status = plot.workspace_figure(arm5, out, pitch_rad=math.pi / 2, grid=151)
    assert_sane_png(out)
    assert axes_drawn == [1]
    # Tool horizontal: the wrist is 150.6 mm nearer the base axis than the tip,
    # and must lie within L1+L2 of J2 (0, 189): beyond that, TOO_FAR.
    (x0, x1), (z0, z1), _ = plot.workspace_grid(arm5, grid=151)
    rs, zs = np.meshgrid(np.linspace(x0, x1, 151), np.linspace(z0, z1, 151))
    wrist = np.hypot(np.abs(rs) - 150.6, zs - 189.0)
    assert np.all(status[wrist > 252.29] == TOO_FAR)
    assert np.all(status[wrist < 252.0] != TOO_FAR)


def test_line_planar_radial_speeds_by_hand(planar):
    # Straight out along +x at v mm/s: r = x, cos t2 = (r^2 - l1^2 - l2^2) / (2 l1 l2),
    # so |dt2/dt| = r v / (l1 l2 |sin t2|): the elbow speeds up toward the edge.
    v = 50.0
    res = plot.solve_line(planar, [60.0, 0.0], [176.0, 0.0], speed_mm_s=v, step_mm=0.5)
    assert res.ok
    r_mid = (res.points[1:, 0] + res.points[:-1, 0]) / 2
    c2 = (r_mid ** 2 - 100 ** 2 - 80 ** 2) / (2 * 100 * 80)
    want = np.degrees(r_mid * v / (100 * 80 * np.sqrt(1 - c2 ** 2)))
    got = res.joint_speed_deg_s[1:, 1]
    assert np.allclose(got, want, rtol=0.01)
    assert got[-1] > 3 * got[0]
    # Every step's FK lands on its target (armfw's FK of armfw's IK).
    out = [0.0, 0.0]
    for p, q in zip(res.points, res.q):
        assert math.dist(planar.solver.fk(list(q), out), p) < 1e-9


def test_line_leaving_the_workspace_marks_the_failing_steps(planar, tmp_path, axes_drawn):
    out = tmp_path / "line.png"
    res = plot.line_figure(planar, [150.0, -60.0], [150.0, 120.0], out)
    assert_sane_png(out, min_w=1000)
    assert axes_drawn == [3]
    # Failing exactly where the line is beyond 180 mm: y > sqrt(180^2 - 150^2) = 99.5.
    beyond = np.hypot(res.points[:, 0], res.points[:, 1]) > 180.0
    assert beyond.any() and not res.ok
    assert np.array_equal(res.failed, np.flatnonzero(beyond))
    assert np.all(res.status[beyond] == TOO_FAR)
    assert np.all(np.isnan(res.q[beyond]))
    assert np.all(np.isin(res.status[~beyond], (OK, SINGULAR)))


def test_line_arm5(arm5, tmp_path, axes_drawn):
    out = tmp_path / "line5.png"
    res = plot.line_figure(arm5, [250.0, -50.0, 150.0, math.pi / 2], [250.0, 100.0, 250.0, math.pi / 2], out)
    assert res.ok
    assert_sane_png(out, min_w=1000)
    assert axes_drawn == [3]
    steps = math.ceil(math.dist((250, -50, 150), (250, 100, 250)) / arm5.motion["line_step_mm"])
    assert len(res.points) == steps + 1
    for p, q in zip(res.points, res.q):
        mm, rad = arm5.solver.fk_error(list(p), list(q))
        assert mm < 1e-6 and rad < 1e-9


def test_path_figure_for_the_demo(arm5, planar, tmp_path, axes_drawn):
    points = [[200, -80, 80], [200, -80, 40], [160, 50, 80], [120, 180, 80], [120, 180, 40]]
    plot.path_figure(arm5, points, tmp_path / "p5.png", waypoints=points[:2])
    plot.path_figure(planar, [[140, -30], [100, 40], [40, 120]], tmp_path / "pp.png",
                     waypoints=[[140, -30], [40, 120]])
    plot.path_figure(planar, [], tmp_path / "empty.png")
    assert axes_drawn == [2, 1, 1]
    for name in ("p5.png", "pp.png"):
        assert_sane_png(tmp_path / name)


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_workspace(tmp_path, capsys):
    out = tmp_path / "sub" / "ws.png"
    code, text, _ = run_cli(capsys, "plot", "workspace", "--board", PLANAR, "--grid", "101", "-o", str(out))
    assert code == cli.EXIT_OK
    assert_sane_png(out)
    assert "TOO_FAR" in text and str(out) in text


def test_cli_path_exit_codes(tmp_path, capsys):
    ok = tmp_path / "ok.png"
    code, text, _ = run_cli(capsys, "plot", "path", "--board", ARM5, "--from", "250", "-50", "150", "90",
                            "--to", "250", "100", "250", "90", "-o", str(ok))
    assert code == cli.EXIT_OK and ok.exists()
    bad = tmp_path / "bad.png"
    code, text, _ = run_cli(capsys, "plot", "path", "--board", PLANAR, "--from", "150", "-60",
                            "--to", "150", "120", "-o", str(bad))
    assert code == cli.EXIT_REFUSED
    assert "TOO_FAR" in text
    assert_sane_png(bad, min_w=1000)     # the picture still shows where it fails


@pytest.mark.parametrize("argv", [
    ["plot", "path", "--board", ARM5, "--from", "1", "2", "3", "--to", "1", "2", "3", "90"],
    ["plot", "path", "--board", PLANAR, "--from", "nan", "0", "--to", "1", "2"],
    ["plot", "path", "--board", PLANAR, "--from", "1", "0", "--to", "1", "2", "--speed", "-5"],
    ["plot", "workspace", "--board", "no/such/board.json"],
])
def test_cli_bad_arguments(argv, tmp_path, capsys):
    code, _, err = run_cli(capsys, *argv, "-o", str(tmp_path / "x.png"))
    assert code == cli.EXIT_USAGE
    assert err.startswith("armctl plot:")
    assert not (tmp_path / "x.png").exists()


# -- a motion from its pulses -------------------------------------------------

REST_MS = 200


def _joint_move_pulses(tmp_path, speed_deg_s, goal_deg):
    """The CPython firmware's pulse log of one joint move from home on sim_arm5."""
    import json
    from armctl.sim_flash import parse_pulses
    from armfw.motion import ArmController
    from armfw.planner import JOINTS, WAIT
    from armfw.simservo import SimServo
    log = tmp_path / "pulses.log"
    data = json.loads(open(ARM5).read())
    data["driver"] = dict(data["driver"], log=str(log))
    b = fw_board.from_dict(data, ARM5)
    sim = SimServo(b.driver)
    arm = ArmController(b, sim, None, sleep_ms=sim.sleep_ms)
    arm.park()
    assert arm.set_speed_deg_s(speed_deg_s)
    arm.plan()
    arm.add(WAIT, [REST_MS])            # at rest before it, as after it
    arm.add(JOINTS, [math.radians(v) for v in goal_deg])
    assert arm.run()
    sim.sleep_ms(REST_MS)
    sim.set_us(b.servos.channels[0], arm.output.us[0])     # the last pose still held, a sample later
    sim.deinit()
    return parse_pulses(log.read_text())


def test_motion_figure_draws_a_joint_move_as_the_trapezoid_derived_by_hand(arm5, tmp_path, axes_drawn):
    """The base turns 90 degrees at 30 deg/s and 360 deg/s^2 (sim_arm5's standard class):
    by hand, 1/12 s speeding up (1.25 degrees), 2.917 s at 30 deg/s, 1/12 s slowing down,
    3.083 s in all. The firmware takes whole 20 ms steps (3.1 s)."""
    pulses = _joint_move_pulses(tmp_path, 30, (90, 0, 90, 0, 0))
    out = tmp_path / "motion.png"
    m = plot.motion_figure(arm5, pulses, out, window=5)
    assert axes_drawn == [3]
    assert_sane_png(out)
    v, a, accel = 30.0, 360.0, 1.0 / 12
    total = 90.0 / v + accel

    def by_hand(t):
        if t <= 0.0:
            return 0.0
        if t <= accel:
            return a * t * t / 2
        if t <= total - accel:
            return a * accel * accel / 2 + v * (t - accel)
        if t <= total:
            return 90.0 - a * (total - t) ** 2 / 2
        return 90.0

    base = m.q_deg[:, 0]
    # Home from 0 s; the move's first step at REST_MS, the pose of the profile's time
    # 20 ms; 155 steps in all, 3.1 s.
    t = m.t_s - REST_MS / 1000.0 + 0.02
    assert np.all(base[t < 0.02] == 0.0)
    assert np.all(base[t >= 3.1 - 1e-9] == base[-1]) and t[-1] > 3.1 + 0.1
    # Whole steps stretch the move by under a step: 30 deg/s * 20 ms = 0.6 degree; the
    # pulses add half a microsecond, 0.07 degree.
    assert np.all(np.abs(base - [by_hand(x) for x in t]) <= 0.6 + 0.07)
    assert base[-1] == pytest.approx(90.0, abs=0.07)
    cruise = (t > 0.5) & (t < 2.5)
    assert np.mean(m.v_deg_s[cruise, 0]) == pytest.approx(v, rel=0.01)
    # Over 5 steps either side (0.1 s): the pulses' rounding is at most 4 half-microseconds of
    # second difference, 0.27 degree / (0.1 s)^2 = 27 deg/s^2. The 1/12 s ramp is averaged
    # down: the difference weighs the acceleration with a triangle 0.1 s either side, of
    # which the ramp, centred, covers 1 - ((0.1 - 1/24) / 0.1)^2 = 0.66.
    assert np.nanmax(np.abs(m.a_deg_s2[:, 0])) <= a + 27
    assert np.nanmax(m.a_deg_s2[:, 0]) > a / 2 and np.nanmin(m.a_deg_s2[:, 0]) < -a / 2
    # Joints that never move: no velocity, no acceleration.
    assert np.nanmax(np.abs(m.v_deg_s[:, 1])) == 0.0 and np.nanmax(np.abs(m.a_deg_s2[:, 3])) == 0.0


def test_cli_motion_from_a_pulse_log(tmp_path, capsys):
    log = tmp_path / "pulses.log"
    log.write_text("0 0 1500\n0 1 1500\n0 2 1500\n0 3 1500\n0 4 1500\n20 0 1510\n40 0 1520\n")
    out = tmp_path / "m.png"
    code = cli.main(["plot", "motion", "--board", ARM5, "--pulses", str(log), "--window", "1", "-o", str(out)])
    assert code == cli.EXIT_OK
    assert "motion on sim_arm5: 0.04 s" in capsys.readouterr().out
    png_size(out)
    assert cli.main(["plot", "motion", "--board", ARM5, "--pulses", str(tmp_path / "none.log")]) == cli.EXIT_USAGE
