# SPDX-License-Identifier: MIT
"""The door of `armctl ui`: a token per launch, a Host allowlist, the websocket's Origin.

Every refusal is shown to move nothing with the simulator's pulse record and
the session's transcript: what reached the board, not what the server says.
The three rows of the DNS-rebinding table: a page of this server (accepted),
a rebinding page whose Host and Origin are both its own name (refused even
with the token), and a page of another site (refused).
"""

import aiohttp
import pytest

from armctl.ui.server import host_allowed
from armfw import board as boardlib
from conftest import BOARDS
from ui_served import TOKEN, at, ask, served

ARM5 = boardlib.load(str(BOARDS / "sim_arm5.json"))

UPGRADE = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
           "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
# A request that would move the arm, sent by any websocket the server wrongly accepts.
JOG = {"op": "jog", "axis": "x", "step": -5}


@pytest.fixture
def board(micropython, tmp_path):
    with served(ARM5, tmp_path) as both:
        yield both


def _wrong_token():
    """The token with its last character changed: as long, one character off."""
    return TOKEN[:-1] + ("A" if TOKEN[-1] != "A" else "B")


def _what_reached_the_board(session, sim):
    return len(sim.pulses()), [e["text"] for e in session.transcript if e["dir"] == ">"]


async def _websocket_refused(c, path, host=None, origin=None):
    """The status a websocket at path gets (403 expected); had it opened, it jogs the arm."""
    headers = {} if host is None else {"Host": host}
    try:
        ws = await c.ws_connect(path, headers=headers, origin=origin)
    except aiohttp.WSServerHandshakeError as e:
        return e.status
    await ws.receive()          # hello
    await ask(ws, 1, JOG)
    return 101


@pytest.mark.parametrize("host, origin, opens", [
    ("127.0.0.1:{port}", "http://127.0.0.1:{port}", True),
    ("evil.example:{port}", "http://evil.example:{port}", False),   # DNS rebinding: both its own name
    ("127.0.0.1:{port}", "http://evil.example", False),
])
def test_the_rebinding_table(board, host, origin, opens):
    run, sim = board

    async def body(client, session):
        c = await client()
        host_header, origin_header = host.format(port=c.port), origin.format(port=c.port)
        before = _what_reached_the_board(session, sim)
        status = await _websocket_refused(c, at("ws"), host_header, origin_header)
        after = _what_reached_the_board(session, sim)
        if opens:
            assert status == 101
            assert after[0] > before[0] and "jog -5 0 0 0" in after[1]     # the record shows a move
        else:
            assert status == 403
            assert after == before

    run(body)


def test_no_token_or_a_wrong_one_is_refused_everywhere(board):
    run, sim = board

    async def body(client, session):
        c = await client()
        before = _what_reached_the_board(session, sim)
        statuses = {}
        for prefix in ("", _wrong_token() + "/", TOKEN[:-1] + "/", TOKEN + "x/", "static/"):
            for path in ("", "static/app.js", "static/view.js", "static/style.css", "ws", "index.html"):
                response = await c.get("/" + prefix + path)
                statuses["/" + prefix + path] = response.status
            statuses["ws /" + prefix + "ws"] = await _websocket_refused(c, "/" + prefix + "ws")
        assert set(statuses.values()) == {403}, statuses
        assert _what_reached_the_board(session, sim) == before
        # With the token the same addresses are served.
        for path in ("", "static/app.js", "static/view.js", "static/style.css"):
            response = await c.get(at(path))
            assert response.status == 200, path
            assert response.headers["Referrer-Policy"] == "no-referrer"
        assert (await c.get(at("index.html"))).status == 404
        assert (await c.get(at("static/../../server.py"))).status in (403, 404)
        redirect = await c.get("/" + TOKEN, allow_redirects=False)
        assert redirect.status == 302 and redirect.headers["Location"] == at()

    run(body)


def test_a_wrong_host_is_refused_with_the_token(board):
    run, sim = board

    async def body(client, session):
        c = await client()
        before = _what_reached_the_board(session, sim)
        for host in ("evil.example:%d" % c.port, "evil.example", "127.0.0.1.evil.example:%d" % c.port,
                     "localhost.evil.example", "10.0.0.5:%d" % c.port, "", "[::1"):
            for path in ("", "static/app.js"):
                response = await c.get(at(path), headers={"Host": host})
                assert response.status == 403, (host, path)
            assert await _websocket_refused(c, at("ws"), host, "http://" + host) == 403, host
        assert _what_reached_the_board(session, sim) == before
        for host in ("localhost:%d" % c.port, "LOCALHOST", "127.0.0.2:%d" % c.port, "[::1]:%d" % c.port):
            assert (await c.get(at(), headers={"Host": host})).status == 200, host

    run(body)


def test_a_websocket_from_a_page_on_another_port_is_refused(board):
    run, sim = board

    async def body(client, session):
        c = await client()
        before = _what_reached_the_board(session, sim)
        for origin in ("http://127.0.0.1:%d" % (c.port + 1), "http://127.0.0.1", "http://localhost:%d" % c.port,
                       "null"):
            assert await _websocket_refused(c, at("ws"), origin=origin) == 403, origin
        assert _what_reached_the_board(session, sim) == before
        # The page's own origin passes.
        ws = await c.ws_connect(at("ws"), origin="http://127.0.0.1:%d" % c.port)
        assert (await ws.receive_json())["type"] == "hello"
        await ws.close()

    run(body)


@pytest.mark.parametrize("host, listen, passes", [
    ("127.0.0.1:8765", "127.0.0.1", True),
    ("localhost:8765", "127.0.0.1", True),
    ("[::1]:8765", "127.0.0.1", True),
    ("192.168.1.20:8765", "127.0.0.1", False),
    ("192.168.1.20:8765", "192.168.1.20", True),
    ("192.168.1.21:8765", "192.168.1.20", False),
    ("192.168.1.21:8765", "0.0.0.0", True),       # every interface: an address cannot be rebound
    ("evil.example:8765", "0.0.0.0", False),
    ("armhost.lan:8765", "armhost.lan", True),
    ("ARMHOST.lan", "armhost.lan", True),
    ("evil.example:8765", "armhost.lan", False),
    ("127.0.0.1:notaport", "127.0.0.1", False),
    ("", "127.0.0.1", False),
])
def test_host_allowlist(host, listen, passes):
    assert host_allowed(host, listen) is passes
