# SPDX-License-Identifier: MIT
"""firmware/PROTOCOL.md's examples are real transcripts: each is replayed against the simulator.

A block marked `<!-- transcript: boards/X.json -->` is a fresh board's
session: lines starting "> " are requests, the lines after each are its
reply, exactly. ARMCTL_WRITE_TRANSCRIPTS=1 rewrites the blocks from what the
firmware answers now (then read the diff), so the examples cannot drift.
"""

import os
import re

import pytest

from armctl.sim import Simulator
from conftest import ROOT

PROTOCOL = ROOT / "firmware" / "PROTOCOL.md"
MARKER = re.compile(r"<!-- transcript: (\S+) -->\n\n((?:    .*\n)+)")


def transcripts(text):
    """(board path, [(request, [reply lines])], match) for each marked block."""
    out = []
    for match in MARKER.finditer(text):
        exchanges = []
        for line in match.group(2).splitlines():
            line = line[4:]
            if line.startswith("> "):
                exchanges.append((line[2:], []))
            else:
                exchanges[-1][1].append(line)
        out.append((match.group(1), exchanges, match))
    return out


def replay(board, exchanges):
    with Simulator(ROOT / board) as sim:
        assert sim.readline().startswith("# armfw ")       # the boot banner, before any request
        return [(request, sim.request(request)) for request, _ in exchanges]


def render(session):
    lines = []
    for request, reply in session:
        lines.append("    > " + request)
        lines.extend("    " + line for line in reply)
    return "\n".join(lines) + "\n"


def test_protocol_examples_are_what_the_firmware_answers(micropython):
    text = PROTOCOL.read_text()
    blocks = transcripts(text)
    assert len(blocks) >= 2 and sum(len(b[1]) for b in blocks) >= 10
    if os.environ.get("ARMCTL_WRITE_TRANSCRIPTS"):
        for board, exchanges, match in reversed(blocks):
            text = text[:match.start(2)] + render(replay(board, exchanges)) + text[match.end(2):]
        PROTOCOL.write_text(text)
        blocks = transcripts(text)
    for board, exchanges, _ in blocks:
        for (request, documented), (_, answered) in zip(exchanges, replay(board, exchanges)):
            assert answered == documented, "PROTOCOL.md, %s, > %s" % (board, request)


def test_transcript_blocks_parse_by_hand():
    text = "x\n<!-- transcript: boards/b.json -->\n\n    > where\n    # info\n    ok 1\n    > fk 0\n    ok 2\n\nafter\n"
    ((board, exchanges, _),) = transcripts(text)
    assert board == "boards/b.json"
    assert exchanges == [("where", ["# info", "ok 1"]), ("fk 0", ["ok 2"])]


@pytest.mark.parametrize("board", ["boards/sim_arm5.json", "boards/sim_planar.json"])
def test_every_board_in_the_examples_exists(board):
    assert board in PROTOCOL.read_text() and (ROOT / board).exists()


def test_the_command_table_help_and_this_document_list_the_same_commands():
    """armfw.commands is the one list: `help` (armfw.helptext) names its commands in its
    order, and PROTOCOL.md's command table names the same set; the host's lists of
    requests that move the arm are the table's."""
    from armfw import commands, helptext
    from armctl import pacing
    table = [name for name, _, _ in commands.COMMANDS]
    assert len(set(table)) == len(table)
    helped = []
    for line in helptext.HELP:
        word = line.split()[0]
        if word in table and word not in helped:
            helped.append(word)
        else:
            assert word in table or word in ("G0", "?"), line
    assert helped == table
    documented = set(re.findall(r"^\| `([a-z]+)[ `]", PROTOCOL.read_text(), re.M))
    assert documented == set(table)
    assert set(pacing.MOTION_COMMANDS) == {name for name, _, moves in commands.COMMANDS if moves}
    for name, family, _ in commands.COMMANDS:
        module = __import__("armfw.cmd_" + family, fromlist=[name])
        assert callable(getattr(module, name)), name
