# SPDX-License-Identifier: MIT
"""The `armctl ui` server against the simulated board over its pty, for the UI's tests.

serving(board, tmp_path, realtime=False) gives (run, sim): run(body) runs the coroutine
body(client, session) in a new event loop, where `await client()` is an
aiohttp test client of a server of that session on 127.0.0.1 and
session is the ui UiSession on the board's link; sim is the Simulator, whose
pulse record (sim.pulses()) shows what reached the servos. The fixtures
served (sim_arm5), served_al5d and served_realtime (sim_arm5 in real time)
give that pair; a test module imports the ones it uses.
"""

import asyncio
import contextlib
import json

import pytest

from armctl.link import Link
from armctl.sim import Simulator
from armctl.ui.server import make_app, new_token
from armctl.ui.session import UiSession
from armfw import board as boardlib
from conftest import BOARDS

ARM5 = boardlib.load(str(BOARDS / "sim_arm5.json"))
AL5D = boardlib.load(str(BOARDS / "sim_al5d.json"))
# The launch's token the served pages' addresses carry.
TOKEN = new_token()
# Seconds a test waits for an answer: generous, for a busy machine.
ANSWER_S = 30.0


def at(path=""):
    """The address of path on a served page, token first."""
    return "/%s/%s" % (TOKEN, path)


@contextlib.contextmanager
def serving(board, tmp_path, realtime=False):
    from aiohttp.test_utils import TestClient, TestServer

    with Simulator(BOARDS / (board.name + ".json"), pty=True, realtime=realtime, flash_dir=tmp_path / "flash") as sim:
        def run(body):
            async def main():
                with Link(sim.port, timeout=10) as link:
                    link.wait_ready()
                    session = UiSession(link, board, sim, board_path=str(BOARDS / (board.name + ".json")))
                    await session.start()
                    clients = []

                    async def client():
                        c = TestClient(TestServer(make_app(session, TOKEN)))
                        await c.start_server()
                        clients.append(c)
                        return c
                    try:
                        return await body(client, session)
                    finally:
                        for c in clients:
                            await c.close()
                        session.close()
            return asyncio.run(main())
        yield run, sim


@pytest.fixture
def served(micropython, tmp_path):
    with serving(ARM5, tmp_path) as both:
        yield both


@pytest.fixture
def served_al5d(micropython, tmp_path):
    with serving(AL5D, tmp_path) as both:
        yield both


@pytest.fixture
def served_realtime(micropython, tmp_path):
    with serving(ARM5, tmp_path, realtime=True) as both:
        yield both


async def until(ws, predicate, timeout=ANSWER_S):
    """Messages from ws until predicate(message) holds; returns (that message, all seen)."""
    seen = []
    while True:
        msg = json.loads((await asyncio.wait_for(ws.receive(), timeout)).data)
        seen.append(msg)
        if predicate(msg):
            return msg, seen


async def open_tab(client):
    """A websocket to the served page, and its hello message."""
    ws = await (await client()).ws_connect(at("ws"))
    return ws, json.loads((await ws.receive()).data)


async def ask(ws, ident, message):
    """Send message with this id; its answer (other messages on the way are skipped)."""
    await ws.send_json(dict(message, id=ident))
    answer, _ = await until(ws, lambda m: m.get("id") == ident)
    return answer
