# SPDX-License-Identifier: MIT
"""Fuzz the websocket of `armctl ui` as tests/test_fuzz_protocol.py fuzzes the serial line.

Hypothesis writes the messages: the page's operations with random fields
(words of every kind, NaN, inf, 1e308, strings where numbers belong, lists
where words belong), unknown operations, malformed and truncated JSON, JSON
that is not an object, binary frames, messages past the size cap; they go to
the server of a simulated sim_arm5, through three tabs in turn. For every
message: exactly one answer, an `ok`, the board's own `error`, or an error
refused before anything was sent with a status word; never INTERNAL; an
error moves nothing (the simulator's pulse record does not grow); every line
that reached the board keeps the serial protocol's line rules (printable
ASCII, no real-time byte inside, at most armfw.console.MAX_LINE bytes). At
the end every pulse lies inside its window and the session still moves the
arm. Floods, messages past the websocket's frame cap, several tabs at once
and a tab closed in the middle of a move have their own tests below.
"""

import asyncio
import collections
import json
import math
import re

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from armctl.ui import server
from armfw import board as boardlib
from armfw.console import MAX_LINE
from conftest import BOARDS
from test_fuzz_protocol import windows
from ui_served import ANSWER_S, at, served

ARM5 = boardlib.load(str(BOARDS / "sim_arm5.json"))
MESSAGES_PER_EXAMPLE = 40
EXAMPLES = 30                # 1,200 messages per run
TABS = 3
ANSWER_TYPES = ("reply", "preview", "workspace")
# What the server itself answers a message it did not send on (status words).
REFUSED_HERE = {"BAD_COMMAND", "BAD_INPUT", "QUEUE_FULL", "DROPPED"}
# A request line as the serial protocol takes it: printable ASCII, no real-time byte but the
# `?` the session puts in front of `where` (a status request, then the line).
LINE_RULE = re.compile(r"\??[\x20-\x7e]+\Z")

COMMAND_WORDS = ["ik", "fk", "move", "line", "joints", "jog", "where", "home", "grip", "pick", "place",
                 "speed", "info", "help", "relax", "unlock", "progress", "check", "wait", "pose", "path",
                 "servo", "echo", "sync", "G0", "G1", "M114", "MOVE", "nonsense"]
SPECIAL_NUMBERS = [math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -0.0, 2 ** 63, 10 ** 40]
SPECIAL_WORDS = ["nan", "NaN", "inf", "-inf", "1e308", "1e999", "-1e999", "0x10", "1_0", "", " ", "1 2",
                 "?", "!", "~", "\x18", "\n", "5;", "elbow=up", "elbow=sideways", "j1", "j9", "x" * 41,
                 "\u00b0", "9" * 40]

numbers = st.one_of(st.integers(-600, 600), st.floats(-600, 600), st.sampled_from(SPECIAL_NUMBERS))
anything = st.one_of(numbers, st.text(max_size=12), st.sampled_from(SPECIAL_WORDS), st.none(), st.booleans(),
                     st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                                          max_size=2))
# Words as a page sends them: mostly numbers as text, some of every other kind.
word = st.one_of(numbers.map(str), numbers.map(str), st.sampled_from(SPECIAL_WORDS), st.text(max_size=8),
                 anything)


@st.composite
def request_words(draw):
    command = draw(st.sampled_from(COMMAND_WORDS))
    count = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 5, 6, 30]))
    return [command] + [draw(word) for _ in range(count)]


@st.composite
def operations(draw):
    op = draw(st.sampled_from(["send", "send", "send", "jog", "jog", "preview", "workspace", "stop",
                               "unknown", None]))
    message = {"id": draw(st.one_of(st.integers(0, 10 ** 6), st.text(max_size=5), st.none()))}
    if op is None:
        return message
    message["op"] = op if op != "unknown" else draw(st.sampled_from(["move", "", "SEND", "eval", 5, None, []]))
    if op == "send":
        message["words"] = draw(st.one_of(request_words(), request_words(), anything))
    elif op == "jog":
        message["axis"] = draw(st.one_of(st.sampled_from(["x", "y", "z", "pitch", "roll", "X", ""]),
                                         st.integers(-2, 7), anything))
        message["step"] = draw(st.one_of(st.integers(-20, 20), numbers, anything))
    elif op == "preview":
        message["words"] = draw(st.one_of(st.lists(word, max_size=6), anything))
        message["elbow"] = draw(st.one_of(st.sampled_from(["up", "down", None]), anything))
    elif op == "workspace":
        message["pitch"] = draw(st.one_of(st.integers(-360, 360), numbers, anything))
    return message


@st.composite
def frames(draw):
    """(kind, payload): "text" or "binary"; what a page, or something pretending to be one, sends."""
    message = draw(operations())
    # NaN and Infinity written as JSON has no such numbers; the server refuses them as not JSON.
    text = json.dumps(message, allow_nan=True)
    kind = draw(st.integers(0, 19))
    if kind <= 11:
        return "text", text
    if kind == 12:
        return "text", text[:draw(st.integers(0, len(text) - 1))]              # truncated
    if kind == 13:
        return "text", draw(st.text(max_size=60))                              # not JSON, mostly
    if kind == 14:
        return "text", json.dumps(draw(st.one_of(st.lists(st.integers(), max_size=3), st.integers(), st.text())))
    if kind == 15:
        return "binary", draw(st.binary(max_size=40))
    if kind == 16:
        size = draw(st.sampled_from([server.MAX_MESSAGE + 1, 2 * server.MAX_MESSAGE, server.MAX_FRAME // 2]))
        return "text", json.dumps(dict(message, pad="x" * size))
    if kind == 17:
        return "text", "[" * draw(st.sampled_from([10, 1000, 4000]))         # deep nesting
    if kind == 18:
        return "text", json.dumps({"id": 1, "op": "send", "words": ["home"]})   # keeps motions possible
    return "text", json.dumps({"id": 2, "op": "send", "words": ["unlock"]})


class Tab:
    """A page: its websocket, and a reader that sorts what arrives into answers and the rest."""

    def __init__(self, ws):
        self.ws = ws
        self.answers = asyncio.Queue()
        self.broadcasts = collections.Counter()
        self.closed = None
        self.reader = asyncio.create_task(self._read())

    async def _read(self):
        async for msg in self.ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                break
            m = json.loads(msg.data)
            if m.get("type") in ANSWER_TYPES:
                await self.answers.put(m)
            else:
                self.broadcasts[m.get("type")] += 1
        self.closed = self.ws.close_code

    async def answer(self):
        return await asyncio.wait_for(self.answers.get(), ANSWER_S)


async def open_tabs(c, n):
    tabs = []
    for _ in range(n):
        tabs.append(Tab(await c.ws_connect(at("ws"), max_msg_size=0)))
    return tabs


def sent_lines(session):
    return [e["text"] for e in session.transcript if e["dir"] == ">" and e["kind"] != "status"]


def check_pulses(pulses):
    win, _ = windows(BOARDS / "sim_arm5.json")
    for t, ch, us in pulses:
        if us:
            lo, hi, _ = win[ch]
            assert lo <= us <= hi, (t, ch, us)


def test_fuzz_websocket(board, report):
    run, sim = board
    counts = collections.Counter()

    async def body(client, session):
        c = await client()
        tabs = await open_tabs(c, TABS)
        loop = asyncio.get_running_loop()
        checked = [len(session.transcript)]

        async def one(tab, kind, payload):
            before = len(sim.pulses())
            await (tab.ws.send_str(payload) if kind == "text" else tab.ws.send_bytes(payload))
            answer = await tab.answer()
            assert tab.answers.empty(), "two answers to one message"
            return answer, before

        def judge(payload, answer, before):
            final = answer.get("final", "")
            counts["messages"] += 1
            assert "INTERNAL" not in final and "Traceback" not in final, (payload, answer)
            if answer["type"] == "workspace":
                assert answer.get("rows"), (payload, answer)
                counts["workspace"] += 1
                return
            assert final.split(" ", 1)[0] in ("ok", "error"), (payload, answer)
            if answer["ok"]:
                counts["ok"] += 1
                low = final.lower()
                assert "nan" not in low and "inf" not in low.replace("info", ""), (payload, answer)
                return
            if answer.get("sent") is False:
                assert answer["status"] in REFUSED_HERE, (payload, answer)
                counts["refused here"] += 1
                counts[answer["status"]] += 1
            else:
                counts["board error"] += 1
            # An error moves nothing: the pulse record did not grow.
            assert len(sim.pulses()) == before, (payload, answer)

        def check_lines():
            new = [e for e in list(session.transcript)[checked[0]:] if e["dir"] == ">" and e["kind"] != "status"]
            checked[0] = len(session.transcript)
            for e in new:
                counts["lines sent"] += 1
                text = e["text"]
                if e["kind"] == "stop":
                    continue
                assert LINE_RULE.match(text) and len(text.lstrip("?")) <= MAX_LINE, text

        @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(st.lists(st.tuples(st.integers(0, TABS - 1), frames()), min_size=MESSAGES_PER_EXAMPLE,
                        max_size=MESSAGES_PER_EXAMPLE))
        def fuzz(batch):
            for i, (kind, payload) in batch:
                tab = tabs[i]
                answer, before = asyncio.run_coroutine_threadsafe(one(tab, kind, payload), loop).result(
                    4 * ANSWER_S)
                judge(payload, answer, before)
                check_lines()

        await asyncio.to_thread(fuzz)
        # The session and the board carry on: every tab still open, and the arm still moves.
        assert [t.closed for t in tabs] == [None] * TABS
        for words in (["unlock"], ["home"]):
            await tabs[0].ws.send_json({"id": "end", "op": "send", "words": words})
            await tabs[0].answer()
        await tabs[1].ws.send_json({"id": "end", "op": "send", "words": ["move", "150", "100", "150", "180"]})
        moved = await tabs[1].answer()
        assert moved["final"].startswith("ok OK"), moved
        check_lines()
        for t in tabs:
            await t.ws.close()

    run(body)
    pulses = sim.pulses()
    check_pulses(pulses)
    report("fuzz ui websocket sim_arm5: %d messages on %d tabs (%d ok, %d workspace maps, %d board errors, "
           "%d refused before sending: %s), %d lines reached the board, all within the line rules; "
           "%d pulses, all inside their windows"
           % (counts["messages"], TABS, counts["ok"], counts["workspace"], counts["board error"],
              counts["refused here"], ", ".join("%d %s" % (counts[w], w) for w in sorted(REFUSED_HERE)),
              counts["lines sent"], len(pulses)))


@pytest.fixture
def board(micropython, tmp_path):
    with served(ARM5, tmp_path) as both:
        yield both
