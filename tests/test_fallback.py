# SPDX-License-Identifier: MIT
"""The host's numerical fallback driving the simulated board (real MicroPython).

`armctl move` and armctl.fallback.Mover against the unmodified firmware on the
Unix port: position-only moves on the 5-joint arm, host-solved straight lines
sent as joint paths (judged by the servo pulses the firmware recorded, decoded
back to angles with the servo formula and to tool positions by FK), a chain
arm reaching FK-made targets, and refusals that move nothing.
"""

import json
import math
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from armctl import chain as chain_mod
from armctl import cli
from armctl.fallback import Mover
from armctl.fallback_line import PULSE_GRID_TOLERANCE_MM
from armctl.link import Link
from armctl.sim import Simulator
from armfw import board, status
from conftest import BOARDS, EXIT_S, ROOT, stop

ARM5 = BOARDS / "sim_arm5.json"
AL5D = BOARDS / "sim_al5d.json"


def _tip(b, q):
    out = [0.0] * len(b.solver.targets)
    b.solver.fk(list(q), out)
    return np.array(out[:3])


def _decoded_poses(b, pulses, since):
    """Joint angles (radians) after every recorded time stamp from `since` on (pulses decoded by hand)."""
    channels = b.servos.channels
    us = {ch: None for ch in channels}
    tips = []
    last_t = None
    for i, (t, ch, value) in enumerate(pulses):
        if ch in us:
            us[ch] = value
        if i + 1 < len(pulses) and pulses[i + 1][0] == t:
            continue
        if i < since or any(v is None for v in us.values()) or t == last_t:
            continue
        last_t = t
        # servo formula: us = centre + (offset + sign * q) * us_per_rad, offsets 0, signs +1
        tips.append([(us[ch] - 1500) / 424.448 for ch in channels])
    return tips


def _decoded_tips(b, pulses, since):
    return [_tip(b, q) for q in _decoded_poses(b, pulses, since)]


def _rounding_mm(c, q):
    """How far half a microsecond of pulse rounding on every joint can move the tip at q (mm)."""
    jac, _, _ = c.jacobian(np.asarray(q))
    return float(np.sum(np.linalg.norm(jac[:3], axis=0))) * 0.5 / 424.448


def _segment_distance(p, a, b):
    ab = b - a
    t = min(max(float((p - a) @ ab) / float(ab @ ab), 0.0), 1.0)
    return float(np.linalg.norm(p - (a + t * ab)))


@pytest.fixture
def arm5_sim(micropython):
    with Simulator(ARM5, pty=True) as sim:
        yield sim


@pytest.fixture
def al5d_sim(micropython):
    with Simulator(AL5D, pty=True) as sim:
        yield sim


def test_position_only_move_ends_within_0_1_mm(arm5_sim, capsys):
    assert cli.main(["move", "--port", arm5_sim.port, "200", "50", "120"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("solver=host-dls status=OK")
    with Link(arm5_sim.port) as link:
        where = link.request("where")
    reached = np.array([where.fields[k] for k in ("x", "y", "z")])
    assert np.linalg.norm(reached - (200, 50, 120)) < 0.1
    # And the pulses the servos got put the tool there too (whole microseconds: ~1 mm).
    b = board.load(str(ARM5))
    assert np.linalg.norm(_decoded_tips(b, arm5_sim.pulses(), 0)[-1] - (200, 50, 120)) < 1.0


def test_pitch_given_is_the_boards_own_solver(arm5_sim, capsys):
    assert cli.main(["move", "--port", arm5_sim.port, "157.3", "0", "342.4", "90", "30"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("solver=board status=OK")
    with Link(arm5_sim.port) as link:
        where = link.request("where")
    # docs/KINEMATICS.md's worked example, minimum motion from home: elbow up; roll as given.
    assert where.values[:5] == pytest.approx([0.0, -50.024, 105.019, 35.004, 30.0], abs=0.03)


def test_free_pitch_line_pulses_stay_on_the_line(arm5_sim, report):
    b = board.load(str(ARM5))
    with Link(arm5_sim.port) as link:
        mover = Mover(link, b)
        assert mover.move((200, 60, 120)).moved
        start = len(arm5_sim.pulses())
        a = _tip(b, np.radians(link.request("where").values[:5]))
        outcome = mover.line((170, -60, 160))
        assert outcome.moved and outcome.solver == "host-dls", outcome.describe()
        where = link.request("where")
    end = np.array([where.fields[k] for k in ("x", "y", "z")])
    assert np.linalg.norm(end - (170, -60, 160)) < 0.1
    poses = _decoded_poses(b, arm5_sim.pulses(), start)
    c = chain_mod.from_board(b)
    worst = 0.0
    worst_rounding = 0.0
    for q in poses:
        off = _segment_distance(_tip(b, q), a, np.array([170.0, -60.0, 160.0]))
        rounding = _rounding_mm(c, q)
        # Each commanded pose is within the planned tolerance of the line; whole
        # microseconds move the tip by at most the rounding bound from there.
        assert off <= outcome.fk_error_mm + rounding + 1e-6
        worst = max(worst, off)
        worst_rounding = max(worst_rounding, rounding)
    report("fallback line (arm5, free pitch, %d waypoints, %d recorded poses): planned within %.3f mm, "
           "recorded pulses within %.3f mm of the line (whole-microsecond rounding alone: up to %.3f mm)"
           % (outcome.waypoints, len(poses), outcome.fk_error_mm, worst, worst_rounding))
    assert outcome.fk_error_mm <= PULSE_GRID_TOLERANCE_MM
    assert worst < 0.5
    # One motion: no joint pulse changes faster than the speed limit (90 deg/s, 20 ms steps).
    per_step = math.radians(90) * 0.020 * 424.448 + 1
    last = {}
    for t, ch, us in arm5_sim.pulses()[start:]:
        if ch in last:
            assert abs(us - last[ch][1]) <= per_step * max(1, (t - last[ch][0]) / 20)
        last[ch] = (t, us)


def test_chain_arm_reaches_fk_made_targets(al5d_sim, report):
    b = board.load(str(AL5D))
    c = chain_mod.from_board(b)
    poses = c.random_poses(400, np.random.default_rng(17))
    # The board keeps its links 5 mm above the table (z = 0) with their 10 mm radius:
    # targets from poses clear of it, and the tips below 15 mm, which no pose reaches.
    clear = np.array([b.solver.zones.clear([float(a) for a in q]) for q in poses])
    targets = c.fk(poses[clear][:200])
    below = [t for t in c.fk(poses[~clear]) if t[2] < 15.0][:10]
    assert len(targets) == 200 and below
    reached = 0
    path_refused = 0
    worst = 0.0
    t0 = time.perf_counter()
    with Link(al5d_sim.port) as link:
        mover = Mover(link, b)
        for target in targets:
            outcome = mover.move(target)
            if outcome.moved:
                got = np.array([outcome.reached.fields[k] for k in ("x", "y", "z")])
                miss = float(np.linalg.norm(got - target))
                worst = max(worst, miss)
                reached += miss < 0.1
            else:
                # Every target has a pose clear of the table, and the host found one; what the
                # board refused is the joint path to it from where the arm stood (its check
                # of every step), not the pose: the arm stays put.
                assert outcome.status == "COLLISION" and " joints step " in outcome.message, outcome.describe()
                q = [math.radians(a) for a in outcome.q_deg]
                assert b.solver.zones.clear(q)
                assert np.linalg.norm(c.fk(np.array([q]))[0] - target) < 0.1
                path_refused += 1
    elapsed = time.perf_counter() - t0
    report("fallback on a chain arm (sim_al5d): %d/%d FK-made targets reached within 0.1 mm "
           "(%.1f%%, worst %.4f mm), %d refused by the board for a joint path through the table, "
           "%.0f ms per target end to end"
           % (reached, len(targets), 100.0 * reached / len(targets), worst, path_refused,
              1000 * elapsed / len(targets)))
    assert reached + path_refused == len(targets)
    with Link(al5d_sim.port) as link:
        mover = Mover(link, b)
        for target in below:
            outcome = mover.move(target)
            assert not outcome.moved and outcome.status == "COLLISION", outcome.describe()


def test_unreachable_targets_record_no_pulse(arm5_sim, al5d_sim, capsys):
    for sim, target in ((arm5_sim, ["900", "0", "0"]), (arm5_sim, ["0", "0", "900"]),
                        (al5d_sim, ["900", "0", "0"]), (al5d_sim, ["0", "0", "-200"])):
        with Link(sim.port) as link:
            assert link.request("where").ok
        before = len(sim.pulses())
        assert cli.main(["move", "--port", sim.port] + target) == cli.EXIT_REFUSED
        out = capsys.readouterr()
        assert "not moved" in out.out and "nearest pose found (not sent)" in out.out
        assert len(sim.pulses()) == before, target
    # A line whose far end is out of reach is refused before its first step.
    before = len(al5d_sim.pulses())
    assert cli.main(["move", "--port", al5d_sim.port, "--line", "600", "0", "100"]) == cli.EXIT_REFUSED
    assert len(al5d_sim.pulses()) == before


def test_chain_board_answers_no_closed_form(al5d_sim):
    with Link(al5d_sim.port) as link:
        for request in ("ik 150 0 150", "move 150 0 150", "line 150 0 150"):
            reply = link.request(request)
            assert not reply.ok and reply.status == status.NO_CLOSED_FORM, reply.final
        where = link.request("where")
    b = board.load(str(AL5D))
    q = np.radians(where.values[:4])
    assert [where.fields[k] for k in ("x", "y", "z")] == pytest.approx(_tip(b, q), abs=0.001)


def test_al5d_end_to_end_with_armctl_sim(micropython, tmp_path):
    """`armctl sim` on the imported AL5D board, driven by `armctl move` and `armctl move --line`."""
    armctl = [sys.executable, "-m", "armctl.cli"]
    link = tmp_path / "al5d"
    sim = subprocess.Popen(armctl + ["sim", "--board", "sim_al5d", "--pty", "--fast", "--link", str(link)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert sim.stdout.readline().startswith("/dev/pts/")
        b = board.load(str(AL5D))
        c = chain_mod.from_board(b)
        q = np.radians([20.0, 30.0, -40.0, 10.0])
        target = c.fk(q)
        move = subprocess.run(armctl + ["move", "--port", str(link)] + ["%.4f" % v for v in target],
                              capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert move.returncode == 0, move.stdout + move.stderr
        assert move.stdout.startswith("solver=host-dls status=OK")
        end = target + (0.0, -40.0, 20.0)
        line = subprocess.run(armctl + ["move", "--port", str(link), "--line"] + ["%.4f" % v for v in end],
                              capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert line.returncode == 0, line.stdout + line.stderr
        assert "waypoints=" in line.stdout
        with Link(str(link)) as conn:
            where = conn.request("where")
        assert np.linalg.norm(np.array([where.fields[k] for k in ("x", "y", "z")]) - end) < 0.1
        sim.send_signal(signal.SIGINT)
        assert sim.wait(EXIT_S) == 0
    finally:
        stop(sim)


class _LinkCut:
    """A link that is lost (LinkError) at the request numbered cut, as a pulled USB cable."""

    def __init__(self, link, cut):
        self.link = link
        self.cut = cut
        self.sent = []

    def request(self, line, motion_s=0.0):
        from armctl.link import LinkError
        self.sent.append(line)
        if len(self.sent) >= self.cut:
            raise LinkError("lost the port (test)")
        return self.link.request(line, motion_s=motion_s)


def test_link_lost_while_a_path_is_sent_moves_nothing(al5d_sim):
    from armctl.link import LinkError
    b = board.load(str(AL5D))
    c = chain_mod.from_board(b)
    with Link(al5d_sim.port) as link:
        before_where = link.request("where").final
        before = len(al5d_sim.pulses())
        start = np.array([link.request("where").fields[k] for k in ("x", "y", "z")])
        cut = _LinkCut(link, cut=6)          # where, speed, path clear, two path adds, then lost
        with pytest.raises(LinkError):
            Mover(cut, b).line(start + (0.0, -60.0, -30.0))
        assert any(s.startswith("path add") for s in cut.sent) and "path run" not in cut.sent
        assert len(al5d_sim.pulses()) == before
        assert link.request("where").final == before_where
        # The half-sent path never runs: the next line starts from a cleared buffer.
        outcome = Mover(link, b).line(start + (0.0, -60.0, -30.0))
        assert outcome.moved
        where = link.request("where")
    assert np.linalg.norm(np.array([where.fields[k] for k in ("x", "y", "z")]) - (start + (0, -60, -30))) < 0.1
    assert c.n == 4


def test_link_lost_during_path_run_ends_at_the_last_waypoint(al5d_sim):
    b = board.load(str(AL5D))
    with Link(al5d_sim.port) as link:
        for line in ("path clear", "path add 10 10 -10 0", "path add 20 25 -30 5"):
            assert link.request(line).ok
        link.write_raw(b"path run\n")       # and the host is gone before the reply
    with Link(al5d_sim.port) as link:
        where = link.request("where")             # after a resync: the reply nobody read is dropped
    assert where.values[:4] == pytest.approx([20.0, 25.0, -30.0, 5.0], abs=1e-3), where.raw
    # The last pulses the servos got are that waypoint's (the hand formula: 1500 + q * 424.448 us/rad).
    last = {}
    for _, ch, us in al5d_sim.pulses():
        last[ch] = us
    assert [last[ch] for ch in range(4)] == [round(1500 + math.radians(a) * 424.448) for a in (20, 25, -30, 5)]
    assert b.solver.n == 4


def test_shell_routes_what_the_board_cannot_solve_through_the_fallback(al5d_sim):
    b = board.load(str(AL5D))
    target = _tip(b, np.radians([-15.0, 10.0, 20.0, 0.0]))
    typed = "where\nmove %.4f %.4f %.4f\nmove 900 0 0\nik 1 2 3\n" % tuple(target)
    proc = subprocess.run([sys.executable, "-m", "armctl.cli", "shell", "--port", al5d_sim.port],
                          input=typed, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    moved = out.index("arm> move %.4f %.4f %.4f" % tuple(target))
    assert out[moved + 1].startswith("solver=host-dls status=OK fk_err_mm=")
    reached = out[moved + 2]
    assert reached.startswith("# reached: ok OK")
    xyz = [float(w.split("=")[1]) for w in reached.split() if w[:2] in ("x=", "y=", "z=")]
    assert np.linalg.norm(np.array(xyz) - target) < 0.1
    far = out.index("arm> move 900 0 0")
    assert out[far + 1].startswith("solver=host-dls status=TOO_FAR") and "not moved" in out[far + 2]
    # What is not a tool target the host solves goes to the board as typed.
    assert out[out.index("arm> ik 1 2 3") + 1].startswith("error NO_CLOSED_FORM")


def test_a_relaxed_board_is_not_moved_from_a_pose_nobody_knows(micropython, tmp_path, capsys):
    """Servos off (boot relaxed, the importer's default): the host has no pose to seed from or
    to interpolate from, so the fallback asks for home first and sends nothing."""
    data = json.loads(AL5D.read_text())
    data.pop("boot")
    relaxed = tmp_path / "al5d_relaxed.json"
    relaxed.write_text(json.dumps(data))
    with Simulator(relaxed, pty=True) as sim:
        for argv in (["150", "40", "180"], ["--line", "150", "40", "180"]):
            assert cli.main(["move", "--port", sim.port, "--board", str(relaxed)] + argv) == cli.EXIT_REFUSED
            assert "status=HOME_FIRST" in capsys.readouterr().out
        assert sim.pulses() == []


def test_realtime_characters_act_on_a_path_as_on_any_motion(micropython, tmp_path):
    """`?` reports a running path, `!` holds it, `~` resumes the same path, Ctrl-X aborts it at the
    step reached (and the path is not run again from there)."""
    from test_console import Port, fields, held
    waypoints = ["path add 10 10 -10 0", "path add 30 25 -30 5", "path add -20 40 -50 10"]
    with Simulator(AL5D, pty=True, flash_dir=tmp_path / "flash") as sim:
        port = Port(sim.port)
        try:
            assert port.line().startswith("# armfw ")
            for request in waypoints:
                assert port.request(request)[-1].startswith("ok ")
            before = len(sim.pulses())
            port.write("path run\n!")
            done, total = map(int, held(port)["steps"].split("/"))
            assert done in (0, 1) and total > 30
            sent = len(sim.pulses())
            port.write("?")
            assert fields(port.line())["steps"] == "%d/%d" % (done, total)
            assert len(sim.pulses()) == sent           # nothing moves while held
            port.write("~")
            final = port.reply()[-1]
            assert final.startswith("ok OK -20.000 40.000 -50.000 10.000") and final.endswith("steps=%d" % total)
            assert len(sim.pulses()) > before
            # Abort mid-path: the reply names the step reached; the pulses are that pose.
            for request in waypoints:
                assert port.request(request)[-1].startswith("ok ")
            start = [float(w) for w in port.request("where")[-1].split()[2:6]]
            port.write("path run\n\x18")
            stopped = port.line()
            # Ctrl-X reaches the path while it is checked (nothing sent) or at its first step.
            assert stopped.startswith("error ABORTED "), stopped
            if "while checking: nothing moved" in stopped:
                q = start
            else:
                assert "at step 1 of " in stopped, stopped
                q = [float(w) for w in stopped.split(": ", 1)[1].split() if "=" not in w]
            last = {}
            for _, ch, us in sim.pulses():
                last[ch] = us
            # (the reply's angles are printed to 0.001 deg: a pulse on a half microsecond may round either way)
            sent = [last[ch] for ch in range(4)]
            assert all(abs(u - (1500 + math.radians(a) * 424.448)) <= 0.51 for u, a in zip(sent, q)), (sent, q)
            assert port.request("path")[-1] == "ok 0"     # an aborted path is gone
            assert port.request("unlock")[-1] == "ok"
        finally:
            port.close()


def test_move_with_the_calibration_the_board_runs(micropython, tmp_path, capsys):
    """A board running a calibration with a tool offset: `armctl move --calibration` solves for
    the tool the board has and reaches the target; without it the host solves for the board
    file's tool, and the tip the board reports is the offset's length away (nothing hides it)."""
    calibration = tmp_path / "calibration.json"
    joints = [{"offset_deg": 0.0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500} for _ in range(5)]
    calibration.write_text(json.dumps({"joints": joints, "tool_mm": [0.0, 0.0, 30.0]}))
    target = np.array([200.0, 50.0, 120.0])
    with Simulator(ARM5, pty=True, calibration=calibration) as sim:
        args = ["move", "--port", sim.port, "--calibration", str(calibration)] + ["%g" % v for v in target]
        assert cli.main(args) == 0
        assert capsys.readouterr().out.startswith("solver=host-dls status=OK")
        with Link(sim.port) as link:
            where = link.request("where")
            assert np.linalg.norm([where.fields[k] for k in ("x", "y", "z")] - target) < 0.1
            assert link.request("home").ok
        cli.main(["move", "--port", sim.port] + ["%g" % v for v in target])
        out = capsys.readouterr().out
        with Link(sim.port) as link:
            where = link.request("where")
        miss = np.linalg.norm([where.fields[k] for k in ("x", "y", "z")] - target)
        assert 29.0 < miss < 31.0, (miss, out)
        # A calibration file that cannot be read is bad usage (exit 2), and nothing moves.
        assert cli.main(["move", "--port", sim.port, "--calibration", str(tmp_path / "none.json"),
                         "150", "0", "150"]) == 2
        with Link(sim.port) as link:
            assert link.request("where").fields == where.fields


def test_the_error_figure_is_formatted_once_for_replies_and_the_page():
    """Outcome.figure (armctl move's replies, the page's log) and Outcome.error_mm (the page's
    preview) are one figure: mm to four places, the line's named off_line_mm."""
    from armctl.fallback import Outcome
    from armctl.link import parse
    move = Outcome(True, "OK", "host-dls", fk_error_mm=0.0123456)
    line = Outcome(True, "OK", "host-dls", fk_error_mm=0.00005001, waypoints=3)
    assert move.figure() == " fk_err_mm=0.0123" and move.error_mm() == 0.0123
    assert line.figure() == " off_line_mm=0.0001" and line.error_mm() == 0.0001
    for o, key in ((move, "fk_err_mm"), (line, "off_line_mm")):
        assert parse(["ok OK" + o.figure()]).fields[key] == o.error_mm()
    assert Outcome(False, "TOO_FAR", "host-dls").figure() == "" and Outcome(False, "TOO_FAR", "host-dls").error_mm() is None
