# SPDX-License-Identifier: MIT
"""Fuzz the line protocol of the MicroPython simulator with hypothesis.

Thousands of lines (valid commands with random numbers, mutated commands,
garbage bytes, control characters, overlong lines) go to one simulator
process per board over a pipe, with real-time bytes (? ! ~ Ctrl-X) sprinkled
into them and sent right after them, while the motion they started runs. For
every line: exactly one final ok/error line, only "# " lines before it, never
a traceback or an INTERNAL error, never NaN or inf in an ok reply, and an
error moves nothing (the pulse log does not grow) unless it is the ABORTED
reply of a motion Ctrl-X stopped. At the end every recorded pulse lies inside
its window, no channel moved faster than the speed limit, and no pose the
pulses commanded put a link into a keep-out zone (judged by
tests/zone_oracle.py). Zone-crossing moves (targets under the table and
inside the base, joint moves that sweep through them, raw servo pulses that
fold the arm down) are part of the mix.
"""

import json
import math
import os

import numpy as np

from hypothesis import HealthCheck, given, settings, strategies as st

from armctl.sim import Simulator
from conftest import BOARDS
from zone_oracle import World, capsule_depth_many

LINES_PER_EXAMPLE = 50
EXAMPLES = {"sim_arm5": 104, "sim_planar": 52}      # 5,200 + 2,600 lines per run
STEP_MS = 20
# Pulses are whole microseconds: half a microsecond of rounding per joint moves
# the tool up to ~2 mm; a pose judged from its pulses gets that much slack.
PULSE_MM = 2.0

# The arm kinds' default workspaces (firmware/PROTOCOL.md), written out so the
# judge reads them from the board file it fuzzes.
WORKSPACES = {
    "sim_arm5": {"floor": {"height_mm": 0.0, "clearance_mm": 5.0},
                 "link_radius_mm": {"upper_arm": 20.0, "forearm": 15.0, "tool": 8.0},
                 "zones": [{"name": "base", "kind": "cylinder", "x_mm": 0.0, "y_mm": 0.0, "radius_mm": 45.0,
                            "bottom_mm": 0.0, "top_mm": 214.0, "links": ["forearm", "tool"]}]},
    "sim_planar": {"floor": None, "link_radius_mm": {"upper_arm": 15.0, "forearm": 10.0},
                   "zones": [{"name": "post", "kind": "cylinder", "x_mm": 0.0, "radius_mm": 20.0,
                              "bottom_mm": -360.0, "top_mm": -30.0, "links": ["forearm"]}]},
}

COMMANDS = {
    # name: number of numbers it takes (arm5, planar); None: words, not numbers
    "ik": (4, 2), "move": (4, 2), "line": (4, 2), "fk": (5, 2), "joints": (5, 2),
    "servo": (2, 2), "pick": (3, 2), "place": (3, 2), "speed": (1, 1),
    "where": (0, 0), "home": (0, 0), "help": (0, 0), "info": (0, 0), "grip": None,
    "jog": (3, 2), "relax": (0, 0), "unlock": (0, 0), "progress": None,
    "path": (5, 2),     # after a subcommand word: add (joint angles), run, clear, or junk
}
WORDS = {"grip": ["open", "close", "OPEN", "half", ""], "progress": ["on", "off", "of", ""]}
# Real-time bytes: inside a line they act at once (idle: only ? shows); sent
# after a line they reach the motion it started. A hold is always resumed.
REALTIME_IN_LINE = [b"?", b"!", b"~", b"\x18", b"!~", b"\x08", b"\x7f", b"\x15"]
REALTIME_AFTER = [b"", b"", b"", b"?", b"!~", b"!?~", b"?!?~?", b"\x18"]
SPECIAL_NUMBERS = ["nan", "NaN", "inf", "-inf", "1e999", "-1e999", "1e308", "0x10", "1_0",
                   "--1", "+-2", "", ".", "e5", "1e", "0.0.1", "\u00b0", "1,5", "5.", ".5", "-0"]

numbers = st.one_of(
    st.integers(-600, 600).map(str),
    st.floats(-600, 600, allow_nan=False).map(lambda v: "%.3f" % v),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: "%g" % v),
    st.integers(400, 2600).map(str),                     # servo pulses
    st.integers(0, 8).map(str),                          # channels
    st.sampled_from(SPECIAL_NUMBERS),
)


@st.composite
def commands(draw, planar):
    name = draw(st.sampled_from(sorted(COMMANDS)))
    counts = COMMANDS[name]
    if counts is None:
        args = [draw(st.sampled_from(WORDS[name]))]
    elif name == "jog" and draw(st.booleans()):
        args = [draw(st.sampled_from(["j1", "j2", "J3", "j5", "j0", "j9", "jx", "2"])), draw(numbers)]
    else:
        n = counts[1] if planar else counts[0]
        n = draw(st.sampled_from([n, n, n, n, max(0, n - 1), n + 1]))
        # Slow speeds are tested elsewhere; here they would only spend the time
        # budget on long slow motions.
        value = st.one_of(st.integers(30, 150).map(str), st.sampled_from(SPECIAL_NUMBERS)) \
            if name == "speed" else numbers
        args = [draw(value) for _ in range(n)]
        if name == "path":
            sub = draw(st.sampled_from(["add", "add", "add", "add", "run", "clear", "", "ADD", "go"]))
            args = [sub] + (args if sub.lower() == "add" else [])
    if name in ("ik", "move") and draw(st.integers(0, 4)) == 0:
        args.append(draw(st.sampled_from(["elbow=up", "elbow=down", "elbow=", "elbow=up=down", "=", "x=1"])))
    if draw(st.booleans()):
        name = draw(st.sampled_from([name, name.upper(), name.capitalize()]))
    sep = draw(st.sampled_from([" ", " ", "  ", "\t", " \t "]))
    return sep.join([name] + args).encode("utf-8")


@st.composite
def mutated(draw, planar):
    line = draw(commands(planar))
    kind = draw(st.integers(0, 5))
    i = draw(st.integers(0, len(line) - 1))
    if kind == 0:
        line = line[:i] + line[i + 1:]
    elif kind == 1:
        line = line[:i] + bytes([draw(st.integers(0, 255))]) + line[i:]
    elif kind == 2:
        line = line[:i]
    elif kind == 3:
        line = line + b" " + line
    elif kind == 4:
        line = line.replace(b" ", b"", 1)
    else:
        line = line[:i] + draw(st.sampled_from([b"nan", b"\x00", b"\x1b[A", b"\x03", b"\x04", b"\xff"])) + line[i:]
    return no_line_end(line)


def no_line_end(b):
    return b.replace(b"\n", b"").replace(b"\r", b"")


CONTROL = st.sampled_from([bytes([c]) for c in range(32) if c not in (10, 13)] + [b"\x7f"])


@st.composite
def motions(draw, planar):
    """A motion that mostly runs (reachable targets), so real-time bytes meet it running."""
    word = draw(st.sampled_from(["move", "line", "jog"]))
    if word == "jog":
        return b"jog j%d %d" % (draw(st.integers(1, 2 if planar else 5)), draw(st.integers(-30, 30)))
    if planar:
        return b"%s %d %d" % (word.encode(), draw(st.integers(60, 120)), draw(st.integers(-40, 40)))
    return b"%s %d %d %d 180" % (word.encode(), draw(st.integers(120, 200)), draw(st.integers(-80, 80)),
                                 draw(st.integers(100, 200)))


@st.composite
def zone_crossing(draw, planar):
    """Motions aimed at the floor, the base or through them."""
    if planar:
        name = draw(st.sampled_from(["move", "line", "joints", "servo"]))
        if name == "joints":
            args = [draw(st.integers(-10, 190)), draw(st.integers(-160, 160))]
        elif name == "servo":
            args = [draw(st.integers(0, 1)), draw(st.integers(500, 2500))]
        else:
            args = [draw(st.integers(-40, 40)), draw(st.integers(-180, -20))]
    else:
        name = draw(st.sampled_from(["move", "line", "joints", "servo", "ik", "pick"]))
        if name == "joints":
            args = [draw(st.integers(-135, 135)) for _ in range(5)]
        elif name == "servo":
            args = [draw(st.integers(1, 3)), draw(st.integers(500, 2500))]
        elif name == "pick":
            args = [draw(st.integers(-250, 250)), draw(st.integers(-250, 250)), draw(st.integers(-40, 60))]
        else:
            args = [draw(st.integers(-60, 300)), draw(st.integers(-60, 60)), draw(st.integers(-60, 260)),
                    draw(st.sampled_from([90, 120, 150, 180]))]
    return " ".join([name] + [str(a) for a in args]).encode()


@st.composite
def lines(draw, planar):
    kind = draw(st.integers(0, 11))
    if kind >= 10:
        return draw(motions(planar) if kind == 10 else zone_crossing(planar))
    if kind <= 3:
        return draw(commands(planar))
    if kind <= 5:
        return draw(mutated(planar))
    if kind == 6:
        return no_line_end(draw(st.binary(max_size=200)))
    if kind == 7:
        parts = st.one_of(CONTROL, st.sampled_from([b"ik", b" ", b"1", b"move"]))
        return b"".join(draw(st.lists(parts, max_size=20)))
    if kind == 8:
        size = draw(st.sampled_from([127, 128, 129, 200, 1000, 10240, 12000]))
        return (draw(commands(planar)) + b" " * size)[:size]
    return no_line_end(draw(st.text(max_size=60)).encode("utf-8"))


@st.composite
def requests(draw, planar):
    """(line bytes, real-time bytes sent right after its line end)."""
    raw = draw(lines(planar))
    if draw(st.integers(0, 3)) == 0:
        i = draw(st.integers(0, len(raw)))
        raw = raw[:i] + draw(st.sampled_from(REALTIME_IN_LINE)) + raw[i:]
    return raw, draw(st.sampled_from(REALTIME_AFTER))


def reply_to(sim, raw, after):
    """Send a line and the bytes after it; its reply lines, the final one last."""
    sim.write(raw + b"\n" + after)
    lines = []
    while True:
        text = sim.readline(30)
        lines.append(text)
        if text.split(" ", 1)[0] in ("ok", "error"):
            return lines


def windows(board_path):
    data = json.loads(board_path.read_text())
    out = {j["channel"]: (j["min_us"], j["max_us"], j["us_per_rad"]) for j in data["joints"]}
    g = data.get("gripper")
    if g:
        out[g["channel"]] = (g["min_us"], g["max_us"], None)
    return out, data["motion"]["max_speed_deg_s"]


def poses_from_pulses(data, pulses):
    """The joint angles (rad) every step's pulses command: (N, n), one row per distinct time."""
    joints = data["joints"]
    by_channel = {j["channel"]: i for i, j in enumerate(joints)}
    us = [None] * len(joints)
    rows = []
    for k, (t, ch, value) in enumerate(pulses):
        if ch in by_channel:
            us[by_channel[ch]] = value
        last_of_step = k + 1 == len(pulses) or pulses[k + 1][0] != t
        if last_of_step and None not in us:
            rows.append([(((u - j["center_us"]) / j["us_per_rad"]
                                               - math.radians(j["offset_deg"])) / j["sign"])
                         for u, j in zip(us, joints)])
    return np.array(rows)


def fuzz(board_path, planar, report, tmp_path):
    examples = EXAMPLES[board_path.stem]
    count = [0]
    finals = {"ok": 0, "error": 0, "COLLISION": 0}
    aborted = [0]
    data = json.loads(board_path.read_text())
    data["workspace"] = WORKSPACES[board_path.stem]
    fuzzed = tmp_path / board_path.name
    fuzzed.write_text(json.dumps(data))
    with Simulator(fuzzed) as sim:
        assert sim.request("where")[-1].startswith("ok")       # booted

        @settings(max_examples=examples, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.lists(requests(planar), min_size=LINES_PER_EXAMPLE, max_size=LINES_PER_EXAMPLE))
        def run(batch):
            for raw, after in batch:
                before = os.path.getsize(sim.pulse_log)
                reply = reply_to(sim, raw, after)
                count[0] += 1
                *info, last = reply
                assert all(line.startswith("# ") for line in info), (raw, reply)
                head = last.split(" ", 1)[0]
                assert head in ("ok", "error"), (raw, reply)
                finals[head] += 1
                if last.startswith("error COLLISION "):
                    finals["COLLISION"] += 1
                assert "Traceback" not in last and "INTERNAL" not in last, (raw, reply)
                if head == "ok":
                    low = last.lower()
                    assert "nan" not in low and "inf" not in low.replace("info", ""), (raw, reply)
                elif last.startswith("error ABORTED"):
                    assert after == b"\x18", (raw, after, reply)
                    aborted[0] += 1
                    assert sim.request("unlock")[-1] == "ok"
                else:
                    assert os.path.getsize(sim.pulse_log) == before, (raw, reply)
                if last == "ok RELAXED":
                    assert sim.request("home")[-1].startswith("ok OK")    # servos on again

        run()
        pulses = sim.pulses()
    win, max_speed = windows(board_path)
    last = {}
    for t, ch, us in pulses:
        if us == 0:
            # `relax` switched outputs off: the next pulse is the one a person asked for at once.
            last.clear() if ch == -1 else last.pop(ch, None)
            continue
        lo, hi, us_per_rad = win[ch]
        assert lo <= us <= hi, (t, ch, us)
        if us_per_rad is not None and ch in last:
            t0, us0 = last[ch]
            per_step = max_speed * 3.141592653589793 / 180 * STEP_MS / 1000 * us_per_rad
            assert abs(us - us0) <= per_step * max(1, (t - t0) / STEP_MS) + 1, (t, ch, us0, us)
        last[ch] = (t, us)
    assert count[0] >= examples * LINES_PER_EXAMPLE
    poses = poses_from_pulses(data, pulses)
    world = World(data)
    depth = np.concatenate([capsule_depth_many(world, poses[i:i + 2000]) for i in range(0, len(poses), 2000)])
    inside = int(np.sum(depth > PULSE_MM))
    assert inside == 0, (inside, poses[np.argmax(depth)], float(depth.max()))
    assert finals["COLLISION"] > 0      # the zone-crossing moves did reach the check
    report("fuzz %s: %d lines (%d ok, %d error, %d of them COLLISION, %d aborted mid-motion), %d pulses, "
           "all inside their windows; %d poses, 0 inside a zone (deepest %.2f mm, pulse rounding allows %.1f)"
           % (board_path.stem, count[0], finals["ok"], finals["error"], finals["COLLISION"], aborted[0],
              len(pulses), len(poses), float(depth.max()), PULSE_MM))


def test_fuzz_arm5(micropython, report, tmp_path):
    fuzz(BOARDS / "sim_arm5.json", False, report, tmp_path)


def test_fuzz_planar(micropython, report, tmp_path):
    fuzz(BOARDS / "sim_planar.json", True, report, tmp_path)
