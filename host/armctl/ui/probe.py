# SPDX-License-Identifier: MIT
"""The servo maps and tool offset the board runs, asked of the board itself; nothing moves.

The board lays its calibration.json over its board file. The host cannot
read that file over the line protocol without stopping the board, but it
can ask what the board does with it. In check mode (`check on`: every motion
is checked in full and nothing moves, no pulse) `servo CH US` answers the
joint angle a pulse commands: two pulses give a joint's line, us = zero +
slope * q. `fk` of the home pose gives the tool tip, which is linear in the
tool offset. The host's board is then built again by armfw.board's own
loader from the board file with those fields, so its pulses, limits and
line checks are the board's.
"""

import copy
import json
import math

import numpy as np

from armfw import board as boardlib
from armfw.numeric import DEG

# Pulses tried per joint, from the board file's centre (us); the first two the board takes are used.
PROBE_US = (-200, 200, -100, 100, 0, 300, -300)
# Below these the probed map is the host's own (the board's angles have 3 decimals).
SAME_US = 0.05
SAME_MM = 0.005


def board_as_it_runs(link, board, board_path):
    """(board, note): the board as its firmware runs it, and what the page's transcript should say.

    link: anything with request(line) -> Reply (the session's transcribed
    link); board: the host's description; board_path: its board file. The
    board is the given one when the firmware cannot be asked or answers the
    same.
    """
    reply = link.request("check on")
    if not reply.ok:
        return board, "the board's servo maps were not asked (check on: %s)" % reply.final
    try:
        joints = []
        for i, channel in enumerate(board.servos.channels):
            line = _servo_line(link, channel, i, board.servos.center_us[i])
            if line is None:
                return board, "the board's servo maps were not asked (joint %d answered no pulse)" % (i + 1)
            joints.append(line)
    finally:
        link.request("check off")
    with open(board_path) as f:
        data = json.load(f)
    for entry, (zero_us, slope) in zip(data["joints"], joints):
        center = entry["center_us"]
        entry.update(sign=1 if slope > 0 else -1, us_per_rad=abs(slope),
                     offset_deg=(zero_us - center) / abs(slope) / DEG)
    probed = boardlib.from_dict(data, board.source)
    if board.solver.kind == "arm5":
        tool = _tool_offset(link, data, board)
        if tool is None:
            return board, "the board's tool offset was not asked (fk refused)"
        data["arm"]["tool_mm"] = tool
        probed = boardlib.from_dict(data, board.source)
    if _same(board, probed):
        return board, None
    probed.source = "%s, as the board runs it" % board.source
    return probed, ("the board runs another calibration than the host was given: the page's pulses and "
                    "line checks use the board's (servo maps and tool offset asked in check mode)")


def _servo_line(link, channel, joint, center_us):
    """(zero_us, slope us/rad) of one joint from two pulses the board takes in check mode, or None."""
    points = []
    for delta in PROBE_US:
        us = center_us + delta
        reply = link.request("servo %d %d" % (channel, us))
        link.request("check off")       # back to the real pose for the next pulse
        link.request("check on")
        if reply.ok and len(reply.values) > joint:
            points.append((us, reply.values[joint] * DEG))
        if len(points) == 2:
            (u1, q1), (u2, q2) = points
            slope = (u2 - u1) / (q2 - q1)
            return u1 - slope * q1, slope
    return None


def _tool_offset(link, data, board):
    """The arm5 tool offset [across, lateral, along] mm the board's `fk` of home shows, or None."""
    home = [v / DEG for v in board.solver.home]
    reply = link.request("fk " + " ".join("%.3f" % v for v in home))
    if not reply.ok or len(reply.values) < 3:
        return None
    q = [v * DEG for v in home]

    def tip(tool):
        trial = copy.deepcopy(data)
        trial["arm"]["tool_mm"] = tool
        out = [0.0] * 4
        boardlib.from_dict(trial, board.source).solver.fk(q, out)
        return np.array(out[:3])

    origin = tip([0.0, 0.0, 0.0])
    columns = np.column_stack([tip(list(axis)) - origin for axis in np.eye(3)])
    tool = np.linalg.solve(columns, np.array(reply.values[:3]) - origin)
    return [round(float(v), 3) for v in tool]


def _same(a, b):
    """Whether two descriptions map every joint to the same pulses and put the tool at the same place."""
    sa, sb = a.servos, b.servos
    for i in range(sa.n):
        for q in (a.solver.lo[i], a.solver.hi[i]):
            if abs(sa.exact_us(i, q) - sb.exact_us(i, q)) > SAME_US:
                return False
    return all(math.isclose(u, v, abs_tol=SAME_MM) for u, v in zip(a.tool_mm, b.tool_mm))
