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
from armfw.console import MAX_LINE
from conftest import BOARDS
from test_fuzz_protocol import windows
from ui_served import ANSWER_S, at, served, served_realtime  # noqa: F401 (fixtures)

MESSAGES_PER_EXAMPLE = 40
EXAMPLES = 40                # 1,600 messages per run
TABS = 3
ANSWER_TYPES = ("reply", "preview", "workspace")
# What the server itself answers a message it did not send on (status words).
REFUSED_HERE = {"BAD_COMMAND", "BAD_INPUT", "QUEUE_FULL", "DROPPED"}
# A request line as the serial protocol takes it: printable ASCII, no real-time byte but the
# `?` the session puts in front of `where` (a status request, then the line).
LINE_RULE = re.compile(r"\??[\x20-\x7e]+\Z")

COMMAND_WORDS = ["ik", "fk", "move", "line", "joints", "jog", "where", "home", "grip", "pick", "place",
                 "speed", "info", "help", "relax", "unlock", "progress", "check", "pose", "path",
                 "servo", "echo", "sync", "G0", "G1", "M114", "MOVE", "nonsense"]
SPECIAL_NUMBERS = [math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -0.0, 2 ** 63, 10 ** 40]
SPECIAL_WORDS = ["nan", "NaN", "inf", "-inf", "1e308", "1e999", "-1e999", "0x10", "1_0", "", " ", "1 2",
                 "?", "!", "~", "\x18", "\n", "5;", "elbow=up", "elbow=sideways", "j1", "j9", "x" * 41,
                 "\u00b0", "9" * 40]

numbers = st.one_of(st.integers(-600, 600), st.floats(-600, 600), st.integers(-600, 600),
                    st.sampled_from(SPECIAL_NUMBERS))
anything = st.one_of(numbers, st.text(max_size=12), st.sampled_from(SPECIAL_WORDS), st.none(), st.booleans(),
                     st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                                          max_size=2))
# Words as a page sends them: mostly numbers as text, some of every other kind.
word = st.one_of(numbers.map(str), numbers.map(str), numbers.map(str), st.sampled_from(SPECIAL_WORDS),
                 st.text(max_size=8), anything)


@st.composite
def motions(draw):
    """Words of a motion that mostly runs (reachable targets, small joint moves)."""
    verb = draw(st.sampled_from(["move", "line", "joints", "jog"]))
    if verb == "joints":
        return [verb] + [str(draw(st.integers(-40, 40))) for _ in range(4)] + ["0"]
    if verb == "jog":
        return [verb] + [str(draw(st.integers(-10, 10))) for _ in range(3)]
    return [verb, str(draw(st.integers(120, 200))), str(draw(st.integers(-80, 80))), str(draw(st.integers(100, 200))),
            draw(st.sampled_from(["180", "150", ""]))]


@st.composite
def request_words(draw):
    if draw(st.integers(0, 2)) == 0:
        return [w for w in draw(motions()) if w]
    command = draw(st.sampled_from(COMMAND_WORDS))
    if command == "speed":
        # Slow speeds are tested elsewhere; here they would only spend the time on long slow motions.
        return [command, draw(st.one_of(st.integers(30, 150).map(str), st.sampled_from(SPECIAL_WORDS)))]
    count = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 5, 6, 30]))
    return [command] + [draw(word) for _ in range(count)]


@st.composite
def operations(draw):
    op = draw(st.sampled_from(["send"] * 8 + ["jog"] * 3 + ["preview"] * 2 + ["workspace", "stop", "unknown",
                                                                                 None]))
    message = {"id": draw(st.one_of(st.integers(0, 10 ** 6), st.text(max_size=5), st.none()))}
    if op is None:
        return message
    message["op"] = op if op != "unknown" else draw(st.sampled_from(["move", "", "SEND", "eval", 5, None, []]))
    if op == "send":
        message["words"] = draw(st.one_of(request_words(), request_words(), request_words(), anything))
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


def test_fuzz_websocket(served, report):
    run, sim = served
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
              counts["refused here"], ", ".join("%d %s" % (counts[w], w) for w in sorted(REFUSED_HERE) if counts[w]),
              counts["lines sent"], len(pulses)))


def test_a_flood_is_answered_queue_full_and_a_stop_still_goes_through(served, report):
    """A tab sends far more than MAX_WAITING requests without waiting: each gets one answer; what
    did not fit is QUEUE_FULL and never sent; a stop sent in the flood is never refused."""
    run, sim = served
    flood = 10 * server.MAX_WAITING

    async def body(client, session):
        c = await client()
        tab, other = await open_tabs(c, 2)
        before = len(sent_lines(session))
        for i in range(flood):
            await tab.ws.send_json({"id": i, "op": "send", "words": ["fk", "0", "0", "0", "0", "%d" % i]})
        await tab.ws.send_json({"id": "stop", "op": "stop"})
        answers = [await tab.answer() for _ in range(flood + 1)]
        assert sorted(a["id"] for a in answers if a["id"] != "stop") == list(range(flood))
        stop = [a for a in answers if a["id"] == "stop"][0]
        assert stop["ok"] and stop["final"].startswith("ok stop"), stop
        full = [a for a in answers if a["status"] == "QUEUE_FULL"]
        assert full and all(not a["ok"] and a["sent"] is False and a["final"].startswith("error QUEUE_FULL")
                            for a in full)
        # The stop dropped what still waited; everything else went to the board, one request each.
        dropped = [a for a in answers if a["status"] == "DROPPED"]
        answered = [a for a in answers if a.get("sent") and a["id"] != "stop"]
        assert all(a["final"].startswith("ok ") for a in answered), answered
        lines = sent_lines(session)[before:]
        fk_lines = [t for t in lines if t.startswith("fk ")]
        assert len(fk_lines) == len(answered) == flood - len(full) - len(dropped)
        # The session carries on, for this tab and the other.
        for t, words in ((tab, ["unlock"]), (other, ["move", "150", "100", "150", "180"])):
            await t.ws.send_json({"id": "after", "op": "send", "words": words})
            assert (await t.answer())["final"].startswith("ok"), words
        report("ui flood: %d requests at once from one tab: %d sent, %d QUEUE_FULL (at most %d wait), %d dropped "
               "by the stop sent behind them" % (flood, len(answered), len(full), server.MAX_WAITING, len(dropped)))

    run(body)


def test_a_message_past_the_caps_moves_nothing_and_the_session_carries_on(served):
    run, sim = served

    async def body(client, session):
        c = await client()
        tab, other = await open_tabs(c, 2)
        before = len(sim.pulses()), sent_lines(session)
        move = {"id": 1, "op": "send", "words": ["move", "150", "100", "150", "180"]}
        # Past MAX_MESSAGE: refused unread, the tab stays open.
        await tab.ws.send_str(json.dumps(dict(move, pad="x" * server.MAX_MESSAGE)))
        answer = await tab.answer()
        assert answer["final"].startswith("error BAD_COMMAND message of") and answer["sent"] is False
        # Past the frame cap: the websocket closes (1009, message too big) before reading it.
        await tab.ws.send_str(json.dumps(dict(move, pad="x" * server.MAX_FRAME)))
        await asyncio.wait_for(tab.reader, ANSWER_S)
        assert tab.closed == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
        assert (len(sim.pulses()), sent_lines(session)) == before
        # The other tab and a new one carry on.
        await other.ws.send_json(move)
        assert (await other.answer())["final"].startswith("ok OK")
        (again,) = await open_tabs(c, 1)
        await again.ws.send_json({"id": 2, "op": "send", "words": ["where"]})
        assert (await again.answer())["final"].startswith("ok OK 33.690")

    run(body)


def test_tabs_at_once_each_get_their_own_answers(served):
    """Four tabs send ten motions each at once: the link takes them one at a time, every tab gets
    exactly its answers, and the board ends where the last motion sent put it."""
    run, sim = served
    targets = [[120 + 10 * t, -40 + 8 * k, 120 + 5 * k, 180] for t in range(4) for k in range(10)]

    async def body(client, session):
        c = await client()
        tabs = await open_tabs(c, 4)
        for t, tab in enumerate(tabs):
            for k in range(10):
                words = ["move"] + ["%d" % v for v in targets[10 * t + k]]
                await tab.ws.send_json({"id": "%d-%d" % (t, k), "op": "send", "words": words})
        for t, tab in enumerate(tabs):
            answers = [await tab.answer() for _ in range(10)]
            assert sorted(a["id"] for a in answers) == ["%d-%d" % (t, k) for k in range(10)]
            assert all(a["final"].startswith("ok OK") for a in answers), answers
        moves = [line for line in sent_lines(session) if line.startswith("move ")]
        assert len(moves) == 40
        last = [float(v) for v in moves[-1].split()[1:4]]
        where = (await session.request("where")).fields
        assert [float(where[k]) for k in ("x", "y", "z")] == pytest.approx(last, abs=1e-3)
        for tab in tabs:
            assert tab.answers.empty() and tab.closed is None

    run(body)


def test_a_tab_closed_mid_move_drops_what_it_queued_and_the_others_carry_on(served_realtime):
    """The move in flight runs to its end (another tab may be watching it; STOP stops it); what
    the closed tab queued behind it is dropped, not sent."""
    run, sim = served_realtime

    async def body(client, session):
        c = await client()
        closing, watching = await open_tabs(c, 2)
        await ask_tab(watching, ["speed", "5"])           # a 60-degree move: 12 s
        await closing.ws.send_json({"id": 1, "op": "send", "words": ["joints", "60", "0", "90", "0", "0"]})
        queued = [["joints", "0", "%d" % (10 * k), "90", "0", "0"] for k in range(1, 4)]
        for k, words in enumerate(queued):
            await closing.ws.send_json({"id": 2 + k, "op": "send", "words": words})
        await asyncio.wait_for(_until(lambda: (session.busy or "").startswith("joints 60")), ANSWER_S)
        await closing.ws.close()
        await asyncio.wait_for(_until(lambda: len(session._listeners) == 1), ANSWER_S)   # the server saw it close
        assert session.busy.startswith("joints 60")        # mid-move
        # The move ends on its own, then what the closed tab queued is dropped, one by one.
        await asyncio.wait_for(_until_dropped(session, len(queued)), 4 * ANSWER_S)
        where = await ask_tab(watching, ["where"])
        assert where["final"].startswith("ok OK 60.000 0.000 90.000"), where
        sent = sent_lines(session)
        assert not any(" ".join(words) in sent for words in queued), sent

    run(body)


async def _until(condition):
    while not condition():
        await asyncio.sleep(0.02)


async def _until_dropped(session, count):
    """Until count requests were dropped because their page closed, and none is in flight."""
    def dropped():
        return sum(e["dir"] == "x" and "its page closed" in e["text"] for e in session.transcript)
    await _until(lambda: dropped() >= count and session.busy is None)


async def ask_tab(tab, words):
    await tab.ws.send_json({"id": "ask", "op": "send", "words": words})
    return await tab.answer()

