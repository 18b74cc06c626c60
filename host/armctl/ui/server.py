# SPDX-License-Identifier: MIT
"""The web server of `armctl ui`: the page, its static files, and one websocket per open tab.

aiohttp serves both the files and the websockets from one asyncio loop, and
the one UiSession (the board link) lives in that loop, so every tab talks to
the same board through the same queue of requests.

The door (docs/UI.md): every address starts with a secret token made at
launch, `/<token>/`, `/<token>/static/app.js`, `/<token>/ws`, which only the
address `armctl ui` prints and opens carries; a request whose Host is not an
address the server listens on or a loopback name is refused (403) before
its token is even read, so a page another site rebinds to 127.0.0.1 gets
nothing; and a websocket is accepted only from a page this server served
(its Origin is this server). Nothing a refused request carries reaches the
board.

Messages from a page (JSON text, at most MAX_MESSAGE bytes, each with an
"id" the answer repeats):

    {"op": "send", "words": ["home"]}                  any protocol request
    {"op": "jog", "axis": "x" | 1..n, "step": 5}       the board's jog: a tool line or one joint
    {"op": "preview", "words": ["150", "0", "200", "90"], "elbow": "up"|null}
    {"op": "workspace", "pitch": 90}                   the side view's map
    {"op": "stop"}                                     hold and abort, at once

Answers: {"type": "reply", "id", "ok", "status", "final"} (the board's final
line, or the error of a request refused before it was sent), {"type":
"preview", ...}, {"type": "workspace", ...}; and to every page: "line"
(transcript) and "pose" messages (armctl.ui.session).

A tab has at most MAX_WAITING requests waiting for the link; more are
answered QUEUE_FULL at once, as the board answers a line its queue has no
room for. A stop is never queued behind them.
"""

import asyncio
import hmac
import ipaddress
import json
import logging
import secrets
import socket
from importlib import resources
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from armctl.link import LinkError
from armctl.ui import session as session_mod
from armctl.ui.words import PageRefused

log = logging.getLogger(__name__)
STATIC = resources.files("armctl.ui") / "static"
SESSION = web.AppKey("session", object)
TOKEN = web.AppKey("token", str)
LISTEN = web.AppKey("listen", str)

# Random bytes in the token (256 bits; printed as 43 URL-safe characters).
TOKEN_BYTES = 32
# Names that always mean this computer (RFC 6761; Debian's /etc/hosts names for ::1).
LOOPBACK_NAMES = frozenset(("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"))
# Largest message a page sends is a few hundred bytes; longer ones are refused unread.
MAX_MESSAGE = 4096
# Past this the websocket itself closes (1009, message too big) before the message is read.
MAX_FRAME = 64 * 1024
# Requests one tab may have waiting for the link.
MAX_WAITING = 16
# Every answer carries these: the token is in the path, so no Referer may carry it away, and no
# other site may frame the page.
HEADERS = {"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
           "Content-Security-Policy": "frame-ancestors 'none'", "Cache-Control": "no-cache"}


def new_token():
    """A token for one launch: TOKEN_BYTES random bytes from the OS's generator, URL-safe text."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def is_wildcard(listen):
    return listen in ("", "0.0.0.0", "::")


def host_allowed(host, listen):
    """True when a request's Host header names this server: a loopback name or address, the
    address it listens on, or (listening on every interface) an address or this computer's name.

    A DNS name that is none of these is what a rebinding page sends; an IP
    literal cannot be rebound, so on every interface any address passes.
    """
    try:
        parts = urlsplit("//" + host)
        name = parts.hostname
        parts.port                # a port that is not a number raises here
    except ValueError:
        return False
    if not name:
        return False
    if name in LOOPBACK_NAMES or name == listen.lower().strip("[]"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return is_wildcard(listen) and name == socket.gethostname().lower()
    return address.is_loopback or is_wildcard(listen)


def _token_matches(request):
    """The first segment of the path is the token (compared in constant time)."""
    first = request.path[1:].split("/", 1)[0]
    return hmac.compare_digest(first.encode("utf-8", "surrogateescape"), request.app[TOKEN].encode())


@web.middleware
async def _door(request, handler):
    """Host, then token, before any handler runs; refusals are 403 with the reason."""
    if not host_allowed(request.host, request.app[LISTEN]):
        raise web.HTTPForbidden(text="armctl ui: Host %r is not this server's address\n" % request.host[:80],
                                headers=HEADERS)
    if not _token_matches(request):
        raise web.HTTPForbidden(text="armctl ui: no or wrong token: open the address armctl ui printed\n",
                                headers=HEADERS)
    response = await handler(request)
    if not isinstance(response, web.WebSocketResponse):
        response.headers.update(HEADERS)
    return response


def make_app(session, token, listen="127.0.0.1"):
    """The application for session; every address needs token; listen: the address served on."""
    app = web.Application(middlewares=[_door])
    app[SESSION] = session
    app[TOKEN] = token
    app[LISTEN] = listen
    app.router.add_get("/{token}", _to_index)
    app.router.add_get("/{token}/", _index)
    app.router.add_get("/{token}/ws", _websocket)
    app.router.add_get("/{token}/static/{name}", _static)
    return app


async def _to_index(request):
    raise web.HTTPFound(request.path + "/")


async def _index(request):
    return web.FileResponse(str(STATIC / "index.html"))


async def _static(request):
    name = request.match_info["name"]
    if name == "index.html" or not (STATIC / name).is_file():
        raise web.HTTPNotFound()
    return web.FileResponse(str(STATIC / name))


def _same_origin(request):
    origin = request.headers.get("Origin")
    if origin is None:
        return True      # not a browser page (a script, a test client)
    return urlsplit(origin).netloc == request.host


class _Tab:
    """One open websocket: its requests waiting for the link, and whether a stop is on its way."""

    def __init__(self, ws):
        self.ws = ws
        self.waiting = 0
        self.stopping = False

    def is_open(self):
        return not self.ws.closed


async def _websocket(request):
    if not _same_origin(request):
        raise web.HTTPForbidden(text="armctl ui: websocket from another origin refused\n")
    session = request.app[SESSION]
    ws = web.WebSocketResponse(heartbeat=20, max_msg_size=MAX_FRAME)
    await ws.prepare(request)
    listener = session.subscribe()
    await ws.send_json(session.snapshot())
    sender = asyncio.create_task(_forward(listener, ws))
    tab = _Tab(ws)
    tasks = set()
    try:
        async for msg in ws:
            message, refusal = _read(msg)
            if refusal is not None:
                await _send(ws, refusal)
                continue
            if message.get("op") != "stop" and tab.waiting >= MAX_WAITING:
                await _send(ws, _refusal("QUEUE_FULL", "%d requests from this tab already wait for the board"
                                         % MAX_WAITING, message.get("id")))
                continue
            # Each message runs on its own: a stop must not wait behind the move it stops.
            tab.waiting += 1
            task = asyncio.create_task(_answer(session, tab, message))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    finally:
        session.unsubscribe(listener)
        sender.cancel()
    return ws


def _refusal(word, text, ident=None):
    return {"type": "reply", "id": ident, "ok": False, "status": word, "final": "error %s %s" % (word, text),
            "sent": False}


def _read(msg):
    """(the message a page sent, None), or (None, the refusal that answers it)."""
    if msg.type != WSMsgType.TEXT:
        return None, _refusal("BAD_COMMAND", "not a text message: the page sends JSON text")
    if len(msg.data) > MAX_MESSAGE:
        return None, _refusal("BAD_COMMAND", "message of %d characters: at most %d" % (len(msg.data), MAX_MESSAGE))
    try:
        message = json.loads(msg.data, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        return None, _refusal("BAD_COMMAND", "not JSON: %s" % str(e)[:80])
    if not isinstance(message, dict):
        return None, _refusal("BAD_COMMAND", "not a JSON object: the page sends {\"id\": .., \"op\": ..}")
    return message, None


async def _forward(listener, ws):
    while True:
        message = await listener.get()
        if message is None:
            await ws.close(code=1008, message=b"the page fell behind the board's messages: reload it")
            return
        if ws.closed:
            return
        await _send(ws, message)


async def _send(ws, message):
    if ws.closed:
        return
    try:
        await ws.send_json(message)
    except ConnectionError:
        pass          # the tab went away; the session carries on


def _no_constant(name):
    raise ValueError("%s is not a number JSON has" % name)


async def _answer(session, tab, message):
    session_mod.REQUESTER.set(tab.is_open)
    try:
        answer = await _handle(session, tab, message)
    except PageRefused as e:
        answer = {"type": "reply", "ok": False, "status": e.word, "final": str(e), "sent": False}
    except LinkError as e:
        answer = {"type": "reply", "ok": False, "status": "LINK", "final": "link: %s" % e}
    except Exception as e:     # a bug here: the page is told, as the firmware reports its own
        log.exception("armctl ui: answering %r", message)
        answer = _refusal("INTERNAL", "%s: %s" % (type(e).__name__, str(e)[:80]))
    finally:
        tab.waiting -= 1
    answer["id"] = message.get("id")
    await _send(tab.ws, answer)


def _reply(reply):
    return {"type": "reply", "ok": reply.ok, "status": reply.status, "final": reply.final, "sent": True}


def _words(message):
    words = message.get("words")
    if not isinstance(words, list):
        raise PageRefused("BAD_COMMAND", "no request words")
    return words


async def _handle(session, tab, message):
    op = message.get("op")
    if op == "send":
        return _reply(await session.send(_words(message)))
    if op == "jog":
        return _reply(await session.jog(message.get("axis"), message.get("step")))
    if op == "preview":
        elbow = message.get("elbow")
        result = await session.preview(_words(message), elbow if elbow in ("up", "down") else None)
        return dict(result, type="preview")
    if op == "workspace":
        return dict(await session.workspace(message.get("pitch", 90)) or {}, type="workspace")
    if op == "stop":
        if tab.stopping:
            return {"type": "reply", "ok": True, "status": "OK", "final": "ok stop already on its way", "sent": False}
        tab.stopping = True
        try:
            await session.stop()
        finally:
            tab.stopping = False
        return {"type": "reply", "ok": True, "status": "OK", "final": "ok stop sent", "sent": True}
    raise PageRefused("BAD_COMMAND", "unknown page operation %r" % str(op)[:20])
