# SPDX-License-Identifier: MIT
"""The web server of `armctl ui`: the page, its static files, and one websocket per open tab.

aiohttp serves both the files and the websockets from one asyncio loop, and
the one Session (the board link) lives in that loop, so every tab talks to
the same board through the same queue of requests.

Messages from a page (JSON, each with an "id" the answer repeats):

    {"op": "send", "words": ["home"]}                  any protocol request
    {"op": "jog", "axis": "x" | 1..n, "step": 5}       the board's jog: a tool line or one joint
    {"op": "preview", "words": ["150", "0", "200", "90"], "elbow": "up"|null}
    {"op": "workspace", "pitch": 90}                   the side view's map
    {"op": "stop"}                                     hold and abort, at once

Answers: {"type": "reply", "id", "ok", "status", "final"} (the board's final
line, or the error of a request refused before it was sent), {"type":
"preview", ...}, {"type": "workspace", ...}; and to every page: "line"
(transcript) and "pose" messages (armctl.ui.session).

A websocket is accepted only from a page this server served (its Origin is
this server): another web site open in the same browser must not drive the arm.
"""

import asyncio
import json
from importlib import resources
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from armctl.link import LinkError
from armctl.ui.session import Refused

STATIC = resources.files("armctl.ui") / "static"
SESSION = web.AppKey("session", object)


def make_app(session):
    app = web.Application()
    app[SESSION] = session
    app.router.add_get("/", _index)
    app.router.add_get("/ws", _websocket)
    app.router.add_static("/static/", str(STATIC))
    return app


async def _index(request):
    return web.FileResponse(str(STATIC / "index.html"), headers={"Cache-Control": "no-cache"})


def _same_origin(request):
    origin = request.headers.get("Origin")
    if origin is None:
        return True      # not a browser page (a script, a test client)
    return urlsplit(origin).netloc == request.host


async def _websocket(request):
    if not _same_origin(request):
        raise web.HTTPForbidden(text="websocket from another origin refused")
    session = request.app[SESSION]
    ws = web.WebSocketResponse(heartbeat=20)
    await ws.prepare(request)
    queue = session.subscribe()
    await ws.send_json(session.snapshot())
    sender = asyncio.create_task(_forward(queue, ws))
    tasks = set()
    try:
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            # Each message runs on its own: a stop must not wait behind the move it stops.
            task = asyncio.create_task(_answer(session, ws, msg.data))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    finally:
        session.unsubscribe(queue)
        sender.cancel()
    return ws


async def _forward(queue, ws):
    while True:
        message = await queue.get()
        if ws.closed:
            return
        await ws.send_json(message)


async def _answer(session, ws, data):
    try:
        message = json.loads(data)
        ident = message.get("id")
        answer = await _handle(session, message)
    except (ValueError, AttributeError):
        answer = {"type": "reply", "ok": False, "status": "BAD_COMMAND",
                  "final": "error BAD_COMMAND not a message the page sends"}
        ident = None
    except Refused as e:
        answer = {"type": "reply", "ok": False, "status": e.word, "final": str(e), "sent": False}
    except LinkError as e:
        answer = {"type": "reply", "ok": False, "status": "LINK", "final": "link: %s" % e}
    answer["id"] = ident
    if not ws.closed:
        await ws.send_json(answer)


def _reply(reply):
    return {"type": "reply", "ok": reply.ok, "status": reply.status, "final": reply.final, "sent": True}


def _words(message):
    words = message.get("words")
    if not isinstance(words, list):
        raise Refused("BAD_COMMAND", "no request words")
    return words


async def _handle(session, message):
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
        pitch = message.get("pitch", 90)
        if not isinstance(pitch, (int, float)):
            raise Refused("BAD_INPUT", "pitch must be a number")
        return dict(await session.workspace(pitch) or {}, type="workspace")
    if op == "stop":
        await session.stop()
        return {"type": "reply", "ok": True, "status": "OK", "final": "stop sent", "sent": True}
    raise Refused("BAD_COMMAND", "unknown page operation %r" % str(op)[:20])
