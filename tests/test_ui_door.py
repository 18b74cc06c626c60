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
from ui_served import TOKEN, at, ask, served  # noqa: F401 (served: a fixture)


# A request that would move the arm, sent by any websocket the server wrongly accepts.
JOG = {"op": "jog", "axis": "x", "step": -5}


def _wrong_token():
    """The token with its last character changed: as long, one character off."""
    return TOKEN[:-1] + ("A" if TOKEN[-1] != "A" else "B")


def _what_reached_the_board(session, sim):
    return len(sim.pulses()), [e["text"] for e in session.transcript if e["dir"] == ">"]


async def _websocket(c, path, host=None, origin=None):
    """The status a websocket at path gets; once open (101) it jogs the arm."""
    headers = {} if host is None else {"Host": host}
    try:
        ws = await c.ws_connect(path, headers=headers, origin=origin)
    except aiohttp.WSServerHandshakeError as e:
        return e.status
    await ws.receive()          # hello
    await ask(ws, 1, JOG)
    return 101


def _knock(served, attempts):
    """attempts(c): {what: HTTP status} for requests to a served board. Asserts that nothing they did
    reached the board (the simulator's pulse record, the lines sent) and returns the statuses."""
    run, sim = served

    async def body(client, session):
        c = await client()
        before = _what_reached_the_board(session, sim)
        statuses = await attempts(c)
        assert _what_reached_the_board(session, sim) == before
        return statuses

    return run(body)


def test_a_page_of_this_server_opens_the_websocket_and_moves_the_arm(served):
    """The table's first row: Host and Origin this server's; the pulse record shows the jog."""
    run, sim = served

    async def body(client, session):
        c = await client()
        before = _what_reached_the_board(session, sim)
        here = "127.0.0.1:%d" % c.port
        assert await _websocket(c, at("ws"), here, "http://" + here) == 101
        after = _what_reached_the_board(session, sim)
        assert after[0] > before[0] and "jog -5 0 0 0" in after[1]

    run(body)


@pytest.mark.parametrize("host, origin", [
    ("evil.example:{port}", "http://evil.example:{port}"),    # DNS rebinding: Host and Origin its own name
    ("127.0.0.1:{port}", "http://evil.example"),
])
def test_the_rebinding_table_refusals(served, host, origin):
    async def attempts(c):
        return {"ws": await _websocket(c, at("ws"), host.format(port=c.port), origin.format(port=c.port))}

    assert _knock(served, attempts) == {"ws": 403}


def test_no_token_or_a_wrong_one_is_refused_everywhere(served):
    async def attempts(c):
        statuses = {}
        for prefix in ("", _wrong_token() + "/", TOKEN[:-1] + "/", TOKEN + "x/", "static/"):
            for path in ("", "static/app.js", "static/view.js", "static/style.css", "ws", "index.html"):
                statuses["/" + prefix + path] = (await c.get("/" + prefix + path)).status
            statuses["ws /" + prefix + "ws"] = await _websocket(c, "/" + prefix + "ws")
        return statuses

    statuses = _knock(served, attempts)
    assert set(statuses.values()) == {403}, statuses


def test_with_the_token_the_page_and_its_files_are_served(served):
    async def attempts(c):
        statuses = {}
        for path in ("", "static/app.js", "static/view.js", "static/style.css", "index.html",
                     "static/../../server.py"):
            response = await c.get(at(path))
            statuses[path] = response.status
            if response.status == 200:
                assert response.headers["Referrer-Policy"] == "no-referrer"
        redirect = await c.get("/" + TOKEN, allow_redirects=False)
        assert redirect.headers.get("Location") == at()
        statuses["/<token>"] = redirect.status
        return statuses

    statuses = _knock(served, attempts)
    assert statuses.pop("static/../../server.py") in (403, 404)
    assert statuses == {"": 200, "static/app.js": 200, "static/view.js": 200, "static/style.css": 200,
                        "index.html": 404, "/<token>": 302}


def test_a_wrong_host_is_refused_with_the_token(served):
    async def attempts(c):
        statuses = {}
        for host in ("evil.example:%d" % c.port, "evil.example", "127.0.0.1.evil.example:%d" % c.port,
                     "localhost.evil.example", "10.0.0.5:%d" % c.port, "", "[::1"):
            for path in ("", "static/app.js"):
                statuses[host, path] = (await c.get(at(path), headers={"Host": host})).status
            statuses[host, "ws"] = await _websocket(c, at("ws"), host, "http://" + host)
        for host in ("localhost:%d" % c.port, "LOCALHOST", "127.0.0.2:%d" % c.port, "[::1]:%d" % c.port):
            statuses[host, "page"] = (await c.get(at(), headers={"Host": host})).status
        return statuses

    statuses = _knock(served, attempts)
    assert {k: v for k, v in statuses.items() if v != 403} == {
        (host, "page"): 200 for host, kind in statuses if kind == "page"}


def test_a_websocket_from_a_page_on_another_port_is_refused(served):
    async def attempts(c):
        statuses = {}
        for origin in ("http://127.0.0.1:%d" % (c.port + 1), "http://127.0.0.1", "http://localhost:%d" % c.port,
                       "null"):
            statuses[origin] = await _websocket(c, at("ws"), origin=origin)
        return statuses

    statuses = _knock(served, attempts)
    assert set(statuses.values()) == {403}, statuses


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
