# SPDX-License-Identifier: MIT
"""armctl ui without a browser: what it draws, its line preview, and its server's link rules.

The drawn points are checked against hand calculations and against the host's
independent chain model (armctl.chain); the line preview against the firmware
itself on the simulator; the server against the simulated board over its pty,
through real websockets.
"""

import asyncio
import json
import math
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest
from hypothesis import given, settings, strategies as st

from armctl import chain as chain_mod
from armctl.link import STOP_BYTES, Link, parse as parse_reply
from armctl.sim import Simulator
from armctl.ui import geometry, preview
from armctl.ui.server import new_token
from armctl.ui.session import UiSession, parse_status_line
from armctl.ui.words import PageRefused, check_words
from armfw import board as boardlib
from armfw.numeric import DEG
from conftest import BOARDS
from ui_served import ARM5, at, ask, open_tab, served, served_al5d, served_realtime, until  # noqa: F401 (fixtures)

PLANAR = boardlib.load(str(BOARDS / "sim_planar.json"))


def _dist(a, b):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


# -- what the page draws -------------------------------------------------------

def test_arm5_points_of_the_worked_example_by_hand():
    # docs/KINEMATICS.md: q2 = -50.024, q3 = 105.019, q4 = 35.004 puts the tip at (157.3, 0, 342.4).
    q = [0.0, -50.024 * DEG, 105.019 * DEG, 35.004 * DEG, 0.0]
    base, shoulder, elbow, wrist, tip = geometry.link_points(ARM5.solver, q)
    assert base == [0.0, 0.0, 0.0]
    assert shoulder == pytest.approx([0.0, 0.0, 189.0], abs=1e-9)
    # The upper arm leans back by 50.024 deg from vertical.
    assert elbow == pytest.approx([126.14 * math.sin(-50.024 * DEG), 0.0, 189.0 + 126.14 * math.cos(50.024 * DEG)],
                                  abs=1e-9)
    # The tool is horizontal (pitch 90): the wrist is l3 straight behind the tip.
    assert tip == pytest.approx([157.3, 0.0, 342.4], abs=0.1)
    assert wrist == pytest.approx([tip[0] - 150.6, 0.0, tip[2]], abs=0.01)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-math.pi, math.pi), min_size=5, max_size=5))
def test_arm5_points_agree_with_the_independent_chain(q):
    points = geometry.link_points(ARM5.solver, q)
    chain = chain_mod.from_board(ARM5).joint_points(q)
    # The chain lists the wrist pitch and wrist roll origins (one point) apart.
    expected = [chain[0], chain[1], chain[2], chain[3], chain[5]]
    for got, want in zip(points, expected):
        assert got == pytest.approx(list(want), abs=1e-6)
    lengths = [_dist(points[i], points[i + 1]) for i in range(4)]
    assert lengths == pytest.approx([189.0, 126.14, 126.14, 150.6], abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.floats(-math.pi, math.pi), st.floats(-math.pi, math.pi))
def test_planar_points_lie_in_the_vertical_plane(t1, t2):
    s = PLANAR.solver
    base, elbow, tip = geometry.link_points(s, [t1, t2])
    assert elbow == pytest.approx([s.l1 * math.cos(t1), 0.0, s.l1 * math.sin(t1)], abs=1e-9)
    assert tip == pytest.approx([s.l1 * math.cos(t1) + s.l2 * math.cos(t1 + t2), 0.0,
                                 s.l1 * math.sin(t1) + s.l2 * math.sin(t1 + t2)], abs=1e-9)


def test_pulses_follow_the_servo_formula_and_refuse_outside_the_window():
    # 270-degree servos: pulse_us = 1500 + rad / 0.002356, window 500..2500 us.
    q = [0.3, -0.5, 1.0, 0.0, 2.4]
    us = geometry.pulses(ARM5, q)
    assert us[:4] == [round(1500 + v / 0.002356) for v in q[:4]]
    assert us[4] is None      # 2.4 rad needs 2519 us


def test_description_carries_the_board_limits():
    d = geometry.describe(ARM5)
    assert [j["name"] for j in d["joints"]] == ["base", "shoulder", "elbow", "wrist_pitch", "wrist_roll"]
    assert all(j["min_deg"] == pytest.approx(-135) and j["max_deg"] == pytest.approx(135) for j in d["joints"])
    assert d["arm"]["reach_mm"] == pytest.approx(126.14 * 2 + 150.6)
    assert d["home_points"][-1] == pytest.approx([126.14 + 150.6, 0.0, 189.0 + 126.14])


def test_description_carries_the_zones_the_firmware_checks():
    z = ARM5.solver.zones
    drawn = {d["name"]: d for d in geometry.describe(ARM5)["zones"]}
    assert sorted(drawn) == sorted(z.zone_names)
    for name, params in zip(z.zone_names, z.params):
        d = drawn[name]
        if d["kind"] == "floor":
            assert [d["height_mm"], d["clearance_mm"]] == params[:2]
        elif d["kind"] == "cylinder":
            assert d["centre"] + [d["radius_mm"], d["bottom_mm"], d["top_mm"]] == params[:5]
        else:
            assert d["min"] + d["max"] == params[:6]


def test_workspace_map_marks_reach_for_the_pitch():
    m = geometry.workspace(PLANAR, cells=41)
    s = PLANAR.solver
    xs = [m["x"][0] + (m["x"][1] - m["x"][0]) * i / 40 for i in range(41)]
    ys = [m["y"][0] + (m["y"][1] - m["y"][0]) * j / 40 for j in range(41)]
    names = geometry.STATUS_NAMES
    for j, row in enumerate(m["rows"]):
        for i, code in enumerate(row):
            r = math.hypot(xs[i], ys[j])
            if r > s.l1 + s.l2 + 1:
                assert names[code] == "TOO_FAR"


# -- the line preview is the firmware's own answer ------------------------------

@pytest.mark.parametrize("board_file, start, target", [
    ("sim_planar.json", "move 60 0", [-60.0, 0.0]),               # PROTOCOL.md: refused at step 23
    ("sim_planar.json", "move 60 0", [120.0, 60.0]),
    ("sim_arm5.json", "move 150 100 150 180", [200.0, -50.0, 120.0, 150.0]),
    ("sim_arm5.json", "move 150 100 150 180", [0.0, 0.0, 600.0, 0.0]),
])
def test_line_preview_matches_the_board(micropython, board_file, start, target):
    board = boardlib.load(str(BOARDS / board_file))
    with Simulator(BOARDS / board_file, realtime=False) as sim:
        pose = sim.request(start)[-1].split()
        q_deg = [float(v) for v in pose[2:2 + board.solver.n]]
        final = sim.request("line " + " ".join("%g" % v for v in target))[-1]
    result = preview.line(board, [v * DEG for v in q_deg], target, board.motion["max_speed_deg_s"])
    if final.startswith("ok"):
        assert result["ok"]
        assert "steps=%d" % result["steps"] in final
        assert result["points"][-1] == pytest.approx(target, abs=1e-6)
    else:
        assert not result["ok"]
        words = final.split()
        assert words[1] == result["status"]
        assert "step %d at" % result["step"] in final
        at = [float(v) for v in final.split(" at ")[1].split(":")[0].split()]
        assert result["at"] == pytest.approx(at, abs=1e-3)


@pytest.mark.parametrize("told", [True, False], ids=["given --calibration", "board file only"])
def test_preview_of_a_calibrated_board_is_what_the_board_does(micropython, tmp_path, told):
    """The board runs a calibration.json (servo fits, tool offset). Told it (--calibration) or not (the
    session asks the board in check mode, moving nothing), the previewed pulses are the ones the board
    sends for that target, and the line check is the board's own line."""
    joints = [{"offset_deg": 0.0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500} for _ in range(5)]
    joints[1] = {"offset_deg": 5.0, "sign": 1, "us_per_rad": 400.0, "center_us": 1500}
    joints[2] = {"offset_deg": 0.0, "sign": -1, "us_per_rad": 424.448, "center_us": 1500}
    joints[3] = {"offset_deg": 2.0, "sign": 1, "us_per_rad": 415.0, "center_us": 1490}
    calibration = tmp_path / "calibration.json"
    calibration.write_text(json.dumps({"joints": joints, "tool_mm": [0.0, 8.0, 35.0]}))
    calibrated = boardlib.load(str(BOARDS / "sim_arm5.json"), calibration=str(calibration))
    words = ["200", "-50", "120", "150"]
    with Simulator(BOARDS / "sim_arm5.json", pty=True, realtime=False, flash_dir=tmp_path / "flash",
                   calibration=calibration) as sim:
        async def main():
            with Link(sim.port, timeout=10) as link:
                link.wait_ready()
                session = (UiSession(link, calibrated, sim) if told else
                           UiSession(link, ARM5, sim, board_path=str(BOARDS / "sim_arm5.json")))
                booted = len(sim.pulses())
                await session.start()
                asking = len(sim.pulses()) - booted
                try:
                    shown = await session.preview(words)
                    moved = await session.send(["line"] + words)
                finally:
                    session.close()
                return session, shown, moved, asking

        session, shown, moved, asking = asyncio.run(main())
        sent = {}
        for _, channel, us in sim.pulses():
            sent[channel] = us
    assert asking == 0
    assert shown["ok"] and moved.ok, moved.final
    assert shown["pulses"] == [sent[ch] for ch in ARM5.servos.channels]
    # The board file's own servo map would have shown other pulses for the calibrated joints.
    uncalibrated = geometry.pulses(ARM5, [v * DEG for v in shown["q_deg"]])
    assert [a != b for a, b in zip(uncalibrated, shown["pulses"])] == [False, True, True, True, False]
    assert shown["line"]["ok"] and "steps=%d" % shown["line"]["steps"] in moved.final
    assert shown["line"]["points"][-1] == pytest.approx([float(w) for w in words], abs=1e-6)
    # The host's board maps as the calibrated one over every joint's range, with its tool offset.
    for i in range(5):
        for q in (ARM5.solver.lo[i], 0.0, ARM5.solver.hi[i]):
            assert session.board.servos.exact_us(i, q) == pytest.approx(calibrated.servos.exact_us(i, q), abs=0.05)
    assert session.board.tool_mm == pytest.approx([0.0, 8.0, 35.0], abs=0.002)
    notes = [e["text"] for e in session.transcript if e["dir"] == "#"]
    assert any("another calibration" in t for t in notes) is not told, notes


def test_a_board_that_runs_its_board_file_keeps_the_hosts_description(served):
    run, sim = served

    async def body(client, session):
        assert session.board is ARM5
        assert not [e for e in session.transcript if e["dir"] == "#"]
        assert any(e["text"].startswith("servo ") for e in session.transcript)     # it was asked

    run(body)


# -- the server ------------------------------------------------------------------

def test_page_words_that_cannot_be_sent_are_refused():
    check_words(["move", "150", "0", "200", "90", "elbow=up"])
    for words in ([], ["move", "1 2"], ["move", "1?"], ["where!"], ["jog", "~"], ["ik", "1\n2"], ["ik", "\x18"],
                  ["echo", "on"], ["SYNC", "abc"], ["move", 5]):
        with pytest.raises(PageRefused) as e:
            check_words(words)
        assert str(e.value).split()[0] == "error"


def test_status_line_fields():
    f = parse_status_line("# progress state=run joints=10.000,-5.500,?,0.000,0.000 x=1.5 y=2 z=3 pitch=90 steps=3/40")
    assert f["kind"] == "progress" and f["state"] == "run" and f["steps"] == "3/40"
    assert f["joints"] == [10.0, -5.5, None, 0.0, 0.0]
    assert (f["x"], f["pitch"]) == (1.5, 90.0)
    f = parse_status_line("# status state=hold joints=1,2 x=1 y=2 steps=3/40 speed=12.500 stop=0.750")
    assert (f["speed"], f["stop"]) == (12.5, 0.75)


class _MovingLink:
    """A link whose `joints` request runs until the stop bytes arrive; records what was sent."""

    def __init__(self):
        self.sent = []
        self.raw = []
        self.stopped = threading.Event()

    def request(self, line, on_line=None, timeout=None):
        self.sent.append(line)
        if line.startswith("joints"):
            assert self.stopped.wait(10), "no stop came"
            final = "error ABORTED aborted (Ctrl-X) at step 3 of 90: 3.000 0.000 90.000 0.000 0.000"
        elif line.endswith("where"):
            final = "ok OK 3.000 0.000 90.000 0.000 0.000 x=276.360 y=14.480 z=315.140 pitch=90.000 grip=none"
        else:
            final = "ok"
        if on_line is not None:
            on_line(final)
        return parse_reply([final])

    def write_raw(self, data):
        self.raw.append(data)

    def interrupt(self):
        self.raw.append(STOP_BYTES)
        self.stopped.set()


def test_stop_is_sent_during_a_move_and_drops_what_waits_behind_it():
    link = _MovingLink()

    async def main():
        session = UiSession(link, ARM5)
        session.live_console = True
        session.q_deg = [0.0, 0.0, 90.0, 0.0, 0.0]
        session.tool = {"x": 276.74, "y": 0.0, "z": 315.14, "pitch": 90.0}
        move = asyncio.create_task(session.send(["joints", "90", "0", "90", "0", "0"]))
        while not link.sent:
            await asyncio.sleep(0.01)
        queued = [asyncio.create_task(session.send(["home"])), asyncio.create_task(session.jog("x", 5))]
        await asyncio.sleep(0.05)
        await session.stop()
        reply = await move
        dropped = await asyncio.gather(*queued, return_exceptions=True)
        session.close()
        return reply, dropped

    reply, dropped = asyncio.run(main())
    assert reply.final.startswith("error ABORTED")
    assert all(isinstance(e, PageRefused) and e.word == "DROPPED" for e in dropped), dropped
    # Nothing that waited was sent; the pose was read back after the move.
    assert link.sent == ["joints 90 0 90 0 0", "?where"]
    assert STOP_BYTES in link.raw


def test_a_where_from_the_page_is_the_pose_drawn():
    link = _MovingLink()

    async def main():
        session = UiSession(link, ARM5)
        queue = session.subscribe()
        await session.send(["where"])
        session.close()
        poses = []
        while not queue.empty():
            m = queue.get_nowait()
            if m["type"] == "pose":
                poses.append(m)
        return poses[-1]

    pose = asyncio.run(main())
    assert pose["q_deg"] == [3.0, 0.0, 90.0, 0.0, 0.0]
    assert pose["points"][-1] == pytest.approx([276.36, 14.48, 315.14], abs=0.01)


def test_two_tabs_share_one_board_and_see_each_others_requests(served):
    run, sim = served

    async def body(client, session):
        c = await client()
        a = await c.ws_connect(at("ws"))
        b = await c.ws_connect(at("ws"))
        hello_a = json.loads((await a.receive()).data)
        json.loads((await b.receive()).data)
        assert hello_a["board"]["name"] == "sim_arm5"
        assert hello_a["pose"]["q_deg"] == pytest.approx([0, 0, 90, 0, 0])
        # Both tabs ask at once: the link answers one request at a time, each its own reply.
        await a.send_json({"id": 1, "op": "send", "words": ["move", "150", "100", "150", "180"]})
        await b.send_json({"id": 2, "op": "send", "words": ["fk", "0", "0", "0", "0", "0"]})
        reply_a, seen_a = await until(a, lambda m: m.get("id") == 1)
        reply_b, seen_b = await until(b, lambda m: m.get("id") == 2)
        assert reply_a["final"].startswith("ok OK 33.690 25.427 65.628")
        assert reply_b["final"] == "ok 0.000 0.000 591.880 0.000"
        # Tab b saw tab a's request and reply in its transcript, and the new pose.
        lines_b = [m["text"] for m in seen_b if m["type"] == "line"]
        assert "move 150 100 150 180" in lines_b
        _, more = await until(b, lambda m: m["type"] == "pose" and m["busy"] is None and
                               m["q_deg"] == pytest.approx([33.69, 25.427, 65.628, 88.945, 0], abs=1e-3))
        pose = [m for m in seen_b + more if m["type"] == "pose"][-1]
        assert pose["points"][-1] == pytest.approx([150, 100, 150], abs=0.01)

    run(body)


def test_bad_input_from_the_page_moves_nothing(served):
    run, sim = served

    async def body(client, session):
        ws, _ = await open_tab(client)
        pulses_before = len(sim.pulses())
        answers = {}
        cases = {1: {"op": "send", "words": ["move", "abc", "0", "200", "90"]},   # the board judges
                 2: {"op": "send", "words": ["move", "150", "0"]},
                 3: {"op": "send", "words": ["move", "150;", "0", "200", "90"]},  # not one word: not sent
                 4: {"op": "send", "words": ["line", "150", "0", "200", "90!"]},
                 5: {"op": "send", "words": ["echo", "on"]},
                 6: {"op": "jog", "axis": "x", "step": "nan"},                      # not a number: not sent
                 7: {"op": "preview", "words": ["600", "0", "0", "90"]},
                 8: {"op": "jog", "axis": 2, "step": "5 5"},                          # not sent
                 9: {"op": "jog", "axis": 6, "step": 5},                              # no joint 6
                 10: {"op": "jog", "axis": "z", "step": 1e300}}                       # no float32 holds it
        for i, message in cases.items():
            answers[i] = await ask(ws, i, message)
        for i in (1, 2):
            assert answers[i]["final"].startswith("error BAD_INPUT") and answers[i]["sent"], answers[i]
        for i in (3, 4, 5, 6, 8, 9, 10):
            assert answers[i]["ok"] is False and answers[i]["sent"] is False, answers[i]
            assert answers[i]["final"].split()[0] == "error"
        assert answers[7]["status"] == "TOO_FAR" and "q_deg" not in answers[7]
        assert answers[7]["line"]["ok"] is False and answers[7]["line"]["status"] == "TOO_FAR"
        sent = [e["text"] for e in session.transcript if e["dir"] == ">"]
        assert not any(s.startswith(("move 150;", "line", "echo", "jog j2")) for s in sent)
        assert len(sim.pulses()) == pulses_before

    run(body)


def test_jog_moves_the_tool_by_the_step(served):
    run, sim = served

    async def body(client, session):
        ws, hello = await open_tab(client)
        x0 = hello["pose"]["tool"]["x"]
        for i, (axis, step) in enumerate([("x", -5), ("z", 10), (1, 15)], 1):
            reply = await ask(ws, i, {"op": "jog", "axis": axis, "step": step})
            assert reply["ok"], reply
        where = (await session.request("where")).fields
        assert where["x"] == pytest.approx((x0 - 5) * math.cos(15 * DEG), abs=2e-3)
        assert where["z"] == pytest.approx(hello["pose"]["tool"]["z"] + 10, abs=2e-3)
        assert session.q_deg[0] == pytest.approx(15.0)

    run(body)


# A chain arm (the board answers NO_CLOSED_FORM) and a 5-joint arm with its pitch left free:
# targets the host's fallback solves, as `armctl move` does.
HOST_SOLVED = [("served_al5d", [25.0, 30.0, -40.0, 20.0]),
               ("served", [-20.0, 15.0, 60.0, 40.0, 0.0])]


def _sent(session):
    return [e["text"] for e in session.transcript if e["dir"] == ">"]


@pytest.mark.parametrize("fixture, pose_deg", HOST_SOLVED)
def test_a_target_the_board_cannot_solve_is_previewed_and_moved_by_the_host(request, fixture, pose_deg):
    run, sim = request.getfixturevalue(fixture)

    async def body(client, session):
        assert session.solver.within_limits([v * DEG for v in pose_deg])
        ws, _ = await open_tab(client)
        # The target: the board's own FK of an in-limit pose (x y z; the pitch is left free).
        fk = await ask(ws, 1, {"op": "send", "words": ["fk"] + ["%g" % v for v in pose_deg]})
        target = [float(v) for v in fk["final"].split()[1:4]]
        words = ["%.3f" % v for v in target]
        pulses_before = len(sim.pulses())
        shown = await ask(ws, 2, {"op": "preview", "words": words, "elbow": None})
        assert shown["status"] == "OK" and shown["ok"] and shown["solver"] == "host-dls", shown
        assert shown["err_mm"] <= 0.05
        # The answer shown reaches the target by the firmware's FK, within the limits.
        q = [v * DEG for v in shown["q_deg"]]
        assert session.solver.within_limits(q)
        tip = [0.0] * len(session.solver.targets)
        session.solver.fk(q, tip)
        assert _dist(tip[:3], target) <= 0.05
        assert shown["points"][-1] == pytest.approx(target, abs=0.05)
        assert None not in shown["pulses"]
        assert len(sim.pulses()) == pulses_before          # a preview moves nothing
        moved = await ask(ws, 3, {"op": "send", "words": ["move"] + words})
        assert moved["ok"] and "solver=host-dls" in moved["final"], moved
        # Moved by `joints`, which the board validated; the board reports the target reached.
        assert any(s.startswith("joints ") for s in _sent(session))
        where = (await session.request("where")).fields
        assert _dist([float(where[k]) for k in ("x", "y", "z")], target) <= 0.1
        assert len(sim.pulses()) > pulses_before

    run(body)


@pytest.mark.parametrize("fixture", ["served_al5d", "served"])
def test_an_unreachable_target_the_host_solves_shows_its_status_and_moves_nothing(request, fixture):
    run, sim = request.getfixturevalue(fixture)

    async def body(client, session):
        ws, hello = await open_tab(client)
        reach = hello["board"]["arm"]["reach_mm"]
        words = ["%.1f" % (2 * reach), "0", "100"]
        pulses_before = len(sim.pulses())
        shown = await ask(ws, 1, {"op": "preview", "words": words, "elbow": None})
        assert shown["solver"] == "host-dls" and not shown["ok"] and "q_deg" not in shown, shown
        assert shown["status"] != "OK" and shown["final"].startswith("error " + shown["status"])
        moved = await ask(ws, 2, {"op": "send", "words": ["move"] + words})
        assert not moved["ok"] and moved["status"] == shown["status"], moved
        assert not any(s.startswith(("joints", "path")) for s in _sent(session))
        assert len(sim.pulses()) == pulses_before
        assert session.q_deg == pytest.approx(hello["pose"]["q_deg"])

    run(body)


def test_websocket_from_another_site_is_refused(served):
    run, sim = served

    async def body(client, session):
        c = await client()
        refused = await c.get(at("ws"), headers={"Origin": "http://elsewhere.example", "Connection": "Upgrade",
                                              "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                                              "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
        page = await c.get(at())
        script = await c.get(at("static/view.js"))
        return refused.status, page.status, "<canvas" in await page.text(), script.status

    assert run(body) == (403, 200, True, 200)


# -- the command ---------------------------------------------------------------

@pytest.mark.parametrize("args, code, says", [
    (["--board", "sim_arm6"], 2, "sim_arm5"),                  # names the shipped boards
    (["--http-port", "70000"], 2, "--http-port"),
    (["--calibration", "/no-such-dir/calibration.json"], 2, "cannot read"),
    (["--port", "/dev/no-such-port"], 3, "does not exist"),
    (["--port", "/dev/no-such-port", "--fast"], 2, "--fast"),
])
def test_command_refuses_bad_usage_with_its_exit_code(args, code, says):
    done = subprocess.run([sys.executable, "-m", "armctl.cli", "ui", "--no-browser", *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == code and says in done.stderr, done.stderr


def test_command_listens_beyond_this_computer_only_on_request(micropython):
    done = subprocess.run([sys.executable, "-m", "armctl.cli", "ui", "--no-browser", "--http-port", "0", "--fast",
                           "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--allow-remote" in done.stderr, done.stderr
    assert done.stdout == ""
    proc = subprocess.Popen([sys.executable, "-m", "armctl.cli", "ui", "--no-browser", "--http-port", "0",
                             "--fast", "--host", "0.0.0.0", "--allow-remote"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://0\.0\.0\.0:(\d+)/([\w-]+)/", proc.stdout.readline())
        assert url, "no address with a token"
        port, token = url.groups()
        assert len(token) * 6 >= 128                   # URL-safe base64: 6 bits a character
        with urllib.request.urlopen("http://127.0.0.1:%s/%s/" % (port, token), timeout=30) as page:
            assert page.status == 200
        # Still the token, off this computer too.
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen("http://127.0.0.1:%s/" % port, timeout=30)
        assert refused.value.code == 403
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "warning" in err and "anyone with the page's address (its token) can move the arm" in err


def _ui_on_port(port, *args):
    return subprocess.Popen([sys.executable, "-m", "armctl.cli", "ui", "--no-browser", "--http-port", "0",
                             "--port", port, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_board_on_a_port_is_known_by_the_name_its_info_gives(micropython, tmp_path):
    with Simulator(BOARDS / "sim_planar.json", pty=True, realtime=False, flash_dir=tmp_path / "flash") as sim:
        proc = _ui_on_port(sim.port)
        try:
            line = proc.stdout.readline()
            assert "(board sim_planar on %s;" % sim.port in line, line + proc.stderr.read()
            url = line.split()[2]
            with urllib.request.urlopen(url, timeout=10) as page:
                assert page.status == 200
        finally:
            proc.terminate()
            proc.communicate(timeout=15)
        assert proc.returncode == 0


def test_ui_on_a_port_loads_the_calibration_it_is_given(micropython, tmp_path):
    calibration = tmp_path / "cal.json"
    joints = [{"offset_deg": -92.0}, {"sign": -1}]
    calibration.write_text(json.dumps({"joints": joints}))
    with Simulator(BOARDS / "sim_planar.json", pty=True, realtime=False, flash_dir=tmp_path / "flash",
                   calibration=calibration) as sim:
        proc = _ui_on_port(sim.port, "--calibration", str(calibration))
        try:
            line = proc.stdout.readline()
            assert "(board sim_planar with calibration %s on %s;" % (calibration, sim.port) in line, \
                line + proc.stderr.read()
        finally:
            proc.terminate()
            proc.communicate(timeout=15)
        assert proc.returncode == 0


def test_a_board_that_is_not_shipped_needs_its_board_file(micropython, tmp_path):
    own = json.loads((BOARDS / "sim_planar.json").read_text())
    own["name"] = "my_arm"
    board_file = tmp_path / "my_arm.json"
    board_file.write_text(json.dumps(own))
    with Simulator(board_file, pty=True, realtime=False, flash_dir=tmp_path / "flash") as sim:
        proc = _ui_on_port(sim.port)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 2 and "my_arm, not a shipped board: give --board FILE" in err, err
        proc = _ui_on_port(sim.port, "--board", str(board_file))
        try:
            assert "(board my_arm on" in proc.stdout.readline()
        finally:
            proc.terminate()
            proc.communicate(timeout=15)


def test_info_typed_again_refreshes_every_tabs_info_panel(served):
    """The info panel shows the board's `info`; typed again (after a move, whose pose changes
    clear_mm), every tab gets the new line."""
    run, sim = served

    async def body(client, session):
        a, hello = await open_tab(client)
        b, _ = await open_tab(client)
        before = dict(w.split("=", 1) for w in hello["info"].split() if "=" in w)
        assert (await ask(a, 1, {"op": "send", "words": ["move", "150", "100", "150", "180"]}))["final"].startswith("ok")
        await a.send_json({"id": 2, "op": "send", "words": ["info"]})
        info, _ = await until(b, lambda m: m["type"] == "info")
        after = dict(w.split("=", 1) for w in info["info"].split() if "=" in w)
        assert after["name"] == before["name"] == "sim_arm5"
        assert after["clear_mm"] != before["clear_mm"]
        where = await ask(a, 3, {"op": "send", "words": ["where"]})
        assert where["final"].split("clear_mm=")[1].split()[0] == after["clear_mm"]

    run(body)


def test_the_info_panel_follows_every_move(served):
    """The info line's clearance (clear_mm zone link: the commanded pose's) is the board's after
    every move, in every tab, without `info` typed again."""
    run, sim = served

    async def body(client, session):
        a, hello = await open_tab(client)
        b, _ = await open_tab(client)
        before = dict(w.split("=", 1) for w in hello["info"].split() if "=" in w)
        for i, words in enumerate((["move", "150", "100", "150", "180"], ["jog", "0", "0", "20", "0"]), 1):
            moved = await ask(a, i, {"op": "send", "words": words})
            assert moved["final"].startswith("ok OK"), moved
            where = (await session.request("where")).final
            board_says = dict(w.split("=", 1) for w in where.split() if w.split("=")[0] in ("clear_mm", "zone", "link"))
            for tab in (a, b):
                info, _ = await until(tab, lambda m: m["type"] == "info" and
                                      all("%s=%s" % kv in m["info"].split() for kv in board_says.items()))
            shown = dict(w.split("=", 1) for w in info["info"].split() if "=" in w)
            assert shown["name"] == before["name"] == "sim_arm5"
            assert shown["clear_mm"] != before["clear_mm"]
            before = shown

    run(body)


def test_a_relaxed_board_is_asked_its_calibration_once_homed(micropython, tmp_path):
    joints = [{"offset_deg": 0.0} for _ in range(5)]
    joints[0] = {"offset_deg": 4.0, "us_per_rad": 410.0}
    calibration = tmp_path / "calibration.json"
    calibration.write_text(json.dumps({"joints": joints}))
    calibrated = boardlib.load(str(BOARDS / "sim_arm5.json"), calibration=str(calibration))
    with Simulator(BOARDS / "sim_arm5.json", pty=True, realtime=False, flash_dir=tmp_path / "flash",
                   calibration=calibration) as sim:
        async def main():
            with Link(sim.port, timeout=10) as link:
                link.wait_ready()
                assert link.request("relax").final == "ok RELAXED"
                session = UiSession(link, ARM5, sim, board_path=str(BOARDS / "sim_arm5.json"))
                await session.start()
                try:
                    relaxed = session.board
                    await session.send(["home"])
                    return relaxed, session.board
                finally:
                    session.close()

        relaxed, homed = asyncio.run(main())
    assert relaxed is ARM5
    q = 0.5
    assert homed.servos.exact_us(0, q) == pytest.approx(calibrated.servos.exact_us(0, q), abs=0.05)
    assert ARM5.servos.exact_us(0, q) != pytest.approx(calibrated.servos.exact_us(0, q), abs=1)


def test_the_browser_is_opened_without_the_token_on_its_command_line(monkeypatch):
    from armctl.commands import ui as ui_command

    opened = []
    monkeypatch.setattr(ui_command.webbrowser, "open", opened.append)
    url = "http://127.0.0.1:8765/%s/" % new_token()
    path = ui_command._open_browser(url)
    try:
        assert opened == ["file://" + path] and url.split("/")[3] not in opened[0]
        assert os.stat(path).st_mode & 0o077 == 0           # this user's only
        with open(path) as f:
            assert 'content="0;url=%s"' % url in f.read()
    finally:
        os.remove(path)


def test_every_request_that_may_move_the_arm_redraws_it():
    """The UI reads the pose again after any request the firmware's command table says may
    move the arm, and after G-code motion lines: `pose go`, `path run` and G0 included."""
    from armctl.ui.session import moves_the_arm
    for text in ("move 1 2 3 4", "pose go a", "path run", "wait 10", "relax", "unlock", "G0 X1",
                 "g1x10 y2", "N3 G28*12", "G01 X1", "M3", "$H", "M84", "M18"):
        assert moves_the_arm(text), text
    for text in ("where", "ik 1 2 3 4", "info", "speed", "M114", "G90", "G17", "M2", "N3 M114*1", "", "Gx"):
        assert not moves_the_arm(text), text


def test_the_page_is_shown_the_tool_speed_live_during_a_move(served_realtime):
    run, sim = served_realtime

    async def body(client, session):
        ws, hello = await open_tab(client)
        assert (await ask(ws, 1, {"op": "send", "words": ["move", "150", "-100", "150", "180"]}))["final"].startswith("ok OK")
        # A 200 mm line at up to 100 mm/s (2.2 s); the page polls `?` during it.
        await ws.send_json({"id": 2, "op": "send", "words": ["line", "150", "100", "150", "180"]})
        moving, _ = await until(ws, lambda m: m["type"] == "pose" and m.get("motion") is not None
                                and m["motion"]["speed_mm_s"] > 0)
        speed, stop = moving["motion"]["speed_mm_s"], moving["motion"]["stop_mm"]
        assert speed <= 100.0 + 1e-3
        # From speed, 500 mm/s^2 x 0.02 s slower a step: at most speed^2 / (2 x 500) + one step's travel.
        assert 0 <= stop <= speed ** 2 / 1000 + speed * 0.02
        reply, seen = await until(ws, lambda m: m.get("id") == 2)
        assert reply["final"].startswith("ok OK")
        _, more = await until(ws, lambda m: m["type"] == "pose" and m["busy"] is None)
        assert [m for m in seen + more if m["type"] == "pose"][-1]["motion"] is None

    run(body)


class _SolvingLink:
    """A link that answers every `ik` with one solved pose (the line check is the host's)."""

    def request(self, line, on_line=None, timeout=None):
        final = "ok OK 0.000 0.000 90.000 0.000 0.000 elbow=up err_mm=0.000" if line.startswith("ik") else "ok"
        return parse_reply([final])


def test_line_previews_beside_workspace_maps_answer_as_each_alone():
    # A page asks a target's preview and the workspace map of its pitch at once: the
    # firmware's code runs in two threads. Each line check must answer as it does alone,
    # with threads switching as often as Python lets them.
    starts = ([0.0, 0.0, 90.0, 0.0, 0.0], [33.69, -16.269, 122.279, 13.991, 0.0])
    targets = ([220.0, -60.0, 120.0, 150.0], [150.0, 100.0, 60.0, 180.0], [60.0, 0.0, 150.0, 180.0])
    alone = {(i, j): preview.line(boardlib.load(str(BOARDS / "sim_arm5.json")), [v * DEG for v in q], t, 90.0)
             for i, q in enumerate(starts) for j, t in enumerate(targets)}

    async def main():
        session = UiSession(_SolvingLink(), boardlib.load(str(BOARDS / "sim_arm5.json")))
        session.speed_deg_s = 90.0
        answers = {}

        async def previews():
            for _ in range(3):
                for (i, j) in alone:
                    session.q_deg = starts[i]
                    answers.setdefault((i, j), []).append(
                        (await session.preview(["%g" % v for v in targets[j]]))["line"])

        await asyncio.gather(previews(), *(session.workspace(p) for p in range(-90, 95, 15)))
        session.close()
        return answers

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        answers = asyncio.run(main())
    finally:
        sys.setswitchinterval(interval)
    for key, lines in answers.items():
        assert lines == [alone[key]] * 3, key
