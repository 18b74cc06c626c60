# SPDX-License-Identifier: MIT
"""armctl demo: tool-path decoding by hand, and the whole demo on the MicroPython simulator."""

import io
import math
import subprocess
import sys

import pytest

from armctl import cli, demo
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


# -- the demo on the simulator --------------------------------------------------

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _nearest(path, point):
    return min(math.dist(p, point) for p in path)


def _segment_distance(p, a, b):
    ax, ay = b[0] - a[0], b[1] - a[1]
    t = max(0.0, min(1.0, ((p[0] - a[0]) * ax + (p[1] - a[1]) * ay) / (ax * ax + ay * ay)))
    return math.dist(p, (a[0] + t * ax, a[1] + t * ay))


def test_demo_pick_and_place_on_the_simulator(micropython, tmp_path, report):
    png = tmp_path / "demo_path.png"
    out = io.StringIO()
    code, path, records = demo.run(BOARDS / "sim_arm5.json", png, out=out)
    transcript = out.getvalue()
    assert code == cli.EXIT_OK, transcript
    assert png.read_bytes()[:8] == PNG_MAGIC
    (pick, place) = demo.PICK_PLACE["arm5"]
    for request in ("> pick %g %g %g" % pick, "> place %g %g %g" % place, "> home"):
        assert request in transcript
    assert transcript.count("        ok") == 7             # every request answered ok, none refused
    # The pulses the servos got take the tool through every waypoint: the
    # object, the destination and the approach points 40 mm above them.
    # A whole-microsecond pulse is 1/424 rad: about 1 mm at the tool.
    approach = 40.0
    for x, y, z in (pick, place):
        assert _nearest(path, (x, y, z)) < 1.5
        assert _nearest(path, (x, y, z + approach)) < 1.5
    # The tool never dips below the grip height.
    assert min(p[2] for p in path) > pick[2] - 1.5
    # The gripper closes with the tool at the object and opens at the destination.
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    grip = board.gripper
    closed = next(k for k, (t, ch, us) in enumerate(records) if ch == grip["channel"] and us == grip["close_us"])
    opened = next(k for k, (t, ch, us) in enumerate(records)
                  if k > closed and ch == grip["channel"] and us == grip["open_us"])
    assert math.dist(demo.tool_path(board, records[:closed])[-1], pick) < 1.5
    assert math.dist(demo.tool_path(board, records[:opened])[-1], place) < 1.5
    report("demo: %d tool positions decoded from the servo pulses; waypoints hit within %.2f mm" % (
        len(path), max(_nearest(path, w) for w in demo.waypoints(boardlib.load(str(BOARDS / "sim_arm5.json"))))))


def test_demo_planar_lines_are_straight(micropython, tmp_path):
    code, path, _ = demo.run(BOARDS / "sim_planar.json", tmp_path / "planar.png", out=io.StringIO())
    assert code == cli.EXIT_OK
    a, b = demo.PICK_PLACE["planar"]
    start = next(i for i, p in enumerate(path) if math.dist(p, a) < 1.5)
    end = next(i for i, p in enumerate(path) if i > start and math.dist(p, b) < 1.5)
    assert end - start > 20                              # the line was stepped, not jumped
    # 1 us on a 318.31 us/rad servo is 0.18 deg: under 1 mm at 180 mm reach.
    assert max(_segment_distance(p, a, b) for p in path[start:end + 1]) < 1.5


def test_demo_command_exit_codes(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    done = subprocess.run([sys.executable, "-m", "armctl.cli", "demo", "--board", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == cli.EXIT_USAGE
    assert "not valid JSON" in done.stderr
    helped = subprocess.run([sys.executable, "-m", "armctl.cli", "demo", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "Exit status" in helped.stdout
