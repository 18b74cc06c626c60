# SPDX-License-Identifier: MIT
"""The one link to the board that every open page shares.

The link's rules hold whatever the pages do: one request at a time (an
asyncio lock, taken in arrival order; the blocking link runs in one worker
thread), every line sent and received goes into one transcript that every
page sees, and after every request that may move the arm the board is asked
`where`, so the pose drawn is the pose the board reports.

While a motion runs the board's live console (firmware/PROTOCOL.md) is read:
`?` is sent a few times a second and the `# status` / `# progress` lines
that come back move the drawn arm. The stop button is the link's interrupt
(`!` hold, then Ctrl-X abort), sent at once, outside the queue of requests:
the move in flight ends with its error reply, the board refuses motion
until `unlock` or `home`, and the link resynchronises before its next request.

A `move X Y Z` or `line X Y Z` the board cannot solve itself (a chain arm,
which answers NO_CLOSED_FORM; a 5-joint arm with the pitch left free) goes
through the host's fallback, as `armctl move` and `armctl shell` do
(armctl.fallback.Mover): the host solves it and sends `joints` or a joint
`path`, which the board checks again; every request it makes is in the
transcript, and the preview of such a target is the host's answer.

The firmware's objects keep scratch buffers made once (a board runs one
thread), so no two threads here share one: the event loop draws from the
session's board, the link's worker moves with a model of its own, and the
previews' line checks and workspace maps run one at a time in a third thread
on a third.

Requests from a page are protocol words. The board judges them and answers
as it answers a person at a terminal; only what cannot go over the line at
all is refused here, with an error in the same form (`error WORD message`)
and nothing sent: a word with spaces, control or real-time characters
(`?`, `!`, `~` act at once on the board, inside any line), commands that
would break the link (`echo`, `sync`).
"""

import asyncio
import collections
import contextlib
import contextvars
import copy
import functools
import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from armfw import commands
from armctl.fallback import SOLVER_BOARD, Mover, host_solves, tool_request
from armctl.link import LinkError, is_final, parse as parse_reply
from armctl.ui import geometry, preview, probe
from armctl.ui.words import PageRefused, check_words, json_text, number
from armfw import status as fw_status
from armfw.numeric import DEG

# GRBL's real-time status request (the live console's `?`).
STATUS_BYTE = b"?"
# How often the pose is asked for while the arm moves (seconds).
POLL_S = 0.1
# Silence allowed while a motion runs on a board that says nothing until it ends (seconds).
MOTION_SILENCE_S = 120.0
TRANSCRIPT_LINES = 3000
# Messages a page may have unread; a tab further behind is closed (it reloads and starts afresh).
LISTENER_MESSAGES = 2000
# Tool pitches the workspace map is asked for (degrees; every 5 degrees is one map).
PITCH_RANGE_DEG = 360.0
# Whether the page that asked for the current request is still open (the server sets it per
# request); a request whose page closed before it reached the link is not sent.
REQUESTER = contextvars.ContextVar("requester", default=lambda: True)

# Commands after which the pose may differ: the board's `where` is read again
# (the firmware's command table says which).
MOVING = frozenset(commands.moving())


def moves_the_arm(text):
    """True for a request after which the pose may differ: a moving command or G-code motion line."""
    words = text.split()
    if not words:
        return False
    if commands.is_gcode(text.lstrip()):
        head = words[0]
        if head[:1] in ("N", "n") and len(words) > 1:
            head = words[1]             # a numbered line: its command word follows
        try:
            return commands.gcode_word(head.split("*")[0]) in commands.GCODE_POSE or head.upper() == "$H"
        except ValueError:
            return False
    return words[0].lower() in MOVING
# The fields of `info` and `where` that change with the pose: its nearest keep-out zone.
CLEARANCE_FIELDS = ("clear_mm", "zone", "link")


def parse_status_line(text):
    """Fields of a `# status` / `# progress` line: {"kind", "state", "joints" (deg or None each), ...}."""
    words = text[2:].split()
    out = {"kind": words[0] if words else ""}
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq:
            continue
        if key == "joints":
            out[key] = [None if v == "?" else float(v) for v in value.split(",")]
        elif key in ("x", "y", "z", "pitch", "speed", "stop"):
            out[key] = float(value)
        else:
            out[key] = value
    return out


class _TranscribedLink:
    """The session's link as the host's fallback (fallback.Mover) uses it, from the link's worker
    thread: every line sent and received goes into the transcript."""

    def __init__(self, session, loop):
        self.session = session
        self.loop = loop

    def request(self, line, motion_s=0.0):
        self.loop.call_soon_threadsafe(self.session._log, ">", line)
        return self.session.link.request(
            line, motion_s=motion_s, on_line=lambda text: self.loop.call_soon_threadsafe(self.session._received, text))


def private_model(board):
    """A copy of board (armfw.board.Board) that shares no object with it but the modules:
    for a thread of its own to run the firmware's code on."""
    return copy.deepcopy(board, {id(m): m for m in list(sys.modules.values())})


def _outcome_reply(outcome):
    """A fallback Outcome as the final line of a reply (a Reply, as the page's other requests get)."""
    figure = outcome.figure()
    if outcome.moved:
        return parse_reply(["ok %s solver=%s%s" % (outcome.status, outcome.solver, figure)])
    return parse_reply(["error %s %s (solver=%s%s)" % (outcome.status, outcome.message or "not moved",
                                                       outcome.solver, figure)])


class UiSession:
    """The board (a Link and its Board description) shared by every page.

    Pages subscribe() to a queue of messages (dicts, sent as JSON): "line"
    (a transcript entry), "pose" (what to draw and the board's state).
    """

    def __init__(self, link, board, simulator=None, board_path=None):
        self.link = link
        self.board_path = board_path  # the board file, to build the board as it runs (armctl.ui.probe)
        self.simulator = simulator
        self._take_board(board)
        self.transcript = collections.deque(maxlen=TRANSCRIPT_LINES)
        self.info = ""
        self.live_console = False     # the firmware answers `?` and stops on `!` Ctrl-X
        self.speed_deg_s = float(board.motion["max_speed_deg_s"])
        self.q_deg = None             # the pose the board reported (None: unknown, relaxed)
        self.tool = {}
        self.clearance = {}           # where's clear_mm, zone, link: the nearest keep-out zone
        self.grip = None
        self.state = "unknown"
        # The running motion's tool speed (mm/s) and its stopping distance (mm), from `?`; None idle.
        self.motion = None
        self.busy = None              # the request in flight
        self._lock = asyncio.Lock()
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="armctl-ui-link")
        self._checker = ThreadPoolExecutor(1, thread_name_prefix="armctl-ui-checks")
        self._listeners = set()
        self._polling = False
        self._stops = 0               # how many stops were sent (requests queued before one are dropped)
        self._ask_board = False       # the board's calibration is still to be asked (armctl.ui.probe)

    def _take_board(self, board):
        """Describe board, and give each thread that runs the firmware's code its own model of it."""
        self.board = board
        self.solver = board.solver
        self._worker_board = private_model(board)      # the fallback's moves, in the link's worker
        self._checker_board = private_model(board)     # the line previews and workspace maps
        self._workspace_cache = {}                      # pitch: this board's map

    # -- pages ------------------------------------------------------------

    def subscribe(self):
        """A queue of the messages for one page; None in it: the page fell too far behind, close it."""
        queue = asyncio.Queue(LISTENER_MESSAGES + 1)
        self._listeners.add(queue)
        return queue

    def unsubscribe(self, queue):
        self._listeners.discard(queue)

    def _emit(self, message):
        for queue in list(self._listeners):
            if queue.qsize() < LISTENER_MESSAGES:
                queue.put_nowait(message)
            else:
                self._listeners.discard(queue)
                queue.put_nowait(None)

    def _log(self, direction, text, kind="request"):
        """One transcript entry: direction ">" sent, "<" received, "x" refused here, "!" link event."""
        entry = {"t": round(time.time(), 3), "dir": direction, "text": text, "kind": kind}
        self.transcript.append(entry)
        self._emit(dict(entry, type="line"))

    def snapshot(self):
        """Everything a page that just opened needs."""
        return {"type": "hello", "board": geometry.describe(self.board), "info": self.info,
                "simulator": self.simulator is not None, "live_console": self.live_console,
                "speed_deg_s": self.speed_deg_s, "transcript": list(self.transcript), "pose": self.pose()}

    def pose(self):
        q = self.q_deg
        points = None
        if q is not None:
            points = geometry.link_points(self.solver, [v * DEG for v in q])
        return {"type": "pose", "q_deg": q, "points": points, "tool": self.tool, "clearance": self.clearance,
                "grip": self.grip, "state": self.state, "busy": self.busy, "speed_deg_s": self.speed_deg_s,
                "motion": self.motion if self.busy else None}

    # -- the link ---------------------------------------------------------

    async def start(self):
        """Read what the board is (info, help, speed) and where it stands."""
        reply = await self.request("info")
        self.info = reply.final
        reply = await self.request("help")
        commands = {line.split()[0] for line in reply.info_lines if line.split()}
        self.live_console = "unlock" in commands and "relax" in commands
        # The board's calibration is asked once its pose is known (check mode starts from it).
        self._ask_board = self.board_path is not None and "check" in commands
        reply = await self.request("speed")
        if reply.ok and reply.values:
            self.speed_deg_s = reply.values[0]
        async with self._lock:
            await self._refresh()

    async def _board_as_it_runs(self):
        """The board's own servo maps and tool offset, asked in check mode (nothing moves); lock held."""
        self._ask_board = False
        loop = asyncio.get_running_loop()
        board, note = await loop.run_in_executor(self._worker, probe.board_as_it_runs,
                                                 _TranscribedLink(self, loop), self._worker_board, self.board_path)
        if board is not self._worker_board:
            self._take_board(board)
        if note:
            self._log("#", "host: " + note, "host")

    def close(self):
        self._worker.shutdown(wait=True)
        self._checker.shutdown(wait=True)

    async def request(self, line, moves=False):
        """Send one request line (one at a time, in arrival order); returns its Reply."""
        async with self._turn(line):
            return await self._request(line, moves)

    @contextlib.asynccontextmanager
    async def _turn(self, what):
        """Hold the link for one request; a request still waiting when a stop came is not sent.

        PageRefused (DROPPED, as the board answers the lines an abort drops): a
        stop stops what the pages queued behind the move too.
        """
        stops = self._stops
        async with self._lock:
            if self._stops != stops:
                e = PageRefused("DROPPED", "a stop came before it was sent: %s" % what)
                self._log("x", str(e), "refused")
                raise e
            if not REQUESTER.get()():
                e = PageRefused("DROPPED", "its page closed before it was sent: %s" % what)
                self._log("x", str(e), "refused")
                raise e
            yield

    async def _link_request(self, line, timeout=None):
        """link.request(line) in the link's worker thread, every reply line read as it arrives."""
        loop = asyncio.get_running_loop()

        def on_line(text):
            loop.call_soon_threadsafe(self._received, text)

        return await loop.run_in_executor(self._worker, functools.partial(
            self.link.request, line, on_line=on_line, timeout=timeout))

    async def _request(self, line, moves):
        self.busy = line
        self._log(">", line)
        self._emit(self.pose())
        poll = None
        if moves and self.live_console:
            self._polling = True
            poll = asyncio.get_running_loop().create_task(self._poll_status())
        try:
            reply = await self._link_request(line, MOTION_SILENCE_S if moves else None)
        except LinkError as e:
            self._log("!", "link: %s" % e, "link")
            raise
        finally:
            self._polling = False
            if poll is not None:
                poll.cancel()
            self.busy = None
        if moves:
            await self._refresh()
        self._emit(self.pose())
        return reply

    async def _poll_status(self):
        while self._polling:
            await asyncio.sleep(POLL_S)
            if not self._polling:
                return
            try:
                self.link.write_raw(STATUS_BYTE)
            except LinkError:
                return
            self._log(">", "?", "status")

    def _received(self, text):
        status_line = text.startswith("# status") or text.startswith("# progress")
        self._log("<", text, "status" if text.startswith("# status") else "reply")
        if is_final(text):
            self._polling = False
        if status_line:
            self._take_status(parse_status_line(text))

    def _take_status(self, fields):
        self.state = fields.get("state", self.state)
        if self.state not in ("run", "hold"):
            self.motion = None
        elif "speed" in fields:         # a `# progress` line leaves them out: the last stand
            self.motion = {"speed_mm_s": fields["speed"], "stop_mm": fields["stop"]}
        joints = fields.get("joints")
        if joints is not None:
            self.q_deg = None if None in joints else joints
        self.tool = {k: fields[k] for k in ("x", "y", "z", "pitch") if k in fields}
        self._emit(self.pose())

    async def _refresh(self):
        """Ask the board where it stands (and, with the live console, its state); lock held.

        The `?` goes in front of `where` in one request line: the board writes
        its status line at once and takes the rest as the line `where`, so both
        answers come as one reply, after any resynchronisation of the link.
        """
        line = "?where" if self.live_console else "where"
        self._log(">", line)
        self._take_where(await self._link_request(line))
        if self._ask_board and self.q_deg is not None:
            await self._board_as_it_runs()

    def _take_where(self, reply):
        n = self.solver.n
        if not reply.ok:
            return
        self.grip = reply.fields.get("grip", self.grip)
        if "RELAXED" in [reply.status] + reply.words:
            self.q_deg = None
            self.tool = {}
            self.state = "relaxed"
            return
        values = reply.values
        if len(values) >= n:
            self.q_deg = values[:n]
            self.tool = {k: float(reply.fields[k]) for k in ("x", "y", "z", "pitch") if k in reply.fields}
            self.clearance = {k: reply.fields[k] for k in CLEARANCE_FIELDS if k in reply.fields}
            if not self.live_console:
                self.state = "idle"
            self._follow_clearance(reply.final)

    def _follow_clearance(self, final):
        """The info line's clearance (the commanded pose's nearest zone) as `where` last gave it,
        in every tab's info panel."""
        given = {}
        for word in final.split():
            key, eq, value = word.partition("=")
            if eq and key in CLEARANCE_FIELDS:
                given[key] = value
        words = []
        for word in self.info.split():
            key = word.partition("=")[0]
            words.append("%s=%s" % (key, given[key]) if key in given else word)
        info = " ".join(words)
        if info != self.info:
            self.info = info
            self._emit({"type": "info", "info": info})

    # -- what a page asks for ------------------------------------------------

    async def send(self, words):
        """A request from a page (buttons, the console entry): its Reply, or PageRefused."""
        try:
            check_words(words)
        except PageRefused as e:
            self._log("x", "%s  (%s)" % (e, " ".join(str(w) for w in words)[:80]), "refused")
            raise
        command = words[0].lower()
        target = self._host_target(words)
        if target is not None:
            return await self._host_motion(" ".join(words), target)
        reply = await self.request(" ".join(words), moves=moves_the_arm(" ".join(words)))
        if reply.ok and command == "speed" and reply.values:
            self.speed_deg_s = reply.values[0]
            self._emit(self.pose())
        if reply.ok and command == "info":
            self.info = reply.final
            self._emit({"type": "info", "info": self.info})     # every tab's info panel
        if command == "where":
            self._take_where(reply)
            self._emit(self.pose())
        return reply

    async def jog(self, axis, step):
        """The board's own jog by step (mm, or degrees for pitch and joints).

        axis: "x", "y", "z", "pitch" (`jog DX DY DZ DPITCH`, a straight tool
        line from the pose the board commands) or a joint number 1..n
        (`jog jN DEG`, a joint move). step: a number (or its text) the
        board's float holds; the board judges whether the arm can take it.
        Anything else is refused here, not sent.
        """
        value = None if isinstance(step, bool) or not isinstance(step, (int, float, str)) else number(step)
        if value is None:
            raise PageRefused("BAD_INPUT", "not sent: a jog step is a finite number, not %s" % json_text(step))
        step = "%d" % value if isinstance(step, int) else repr(value)
        n = self.solver.n
        if not isinstance(axis, bool) and isinstance(axis, int):
            if not 1 <= axis <= n:
                raise PageRefused("BAD_INPUT", "not sent: joint %d of 1..%d" % (axis, n))
            words = ["jog", "j%d" % axis, step]
        else:
            names = self.solver.targets
            if axis not in names:
                raise PageRefused("BAD_INPUT", "not sent: no axis %s (%s, or a joint 1..%d)"
                              % (json_text(axis), ", ".join(names), n))
            words = ["jog"] + [step if name == axis else "0" for name in names]
        return await self.send(words)

    # -- targets the host solves (armctl.fallback) ---------------------------

    def _host_target(self, words):
        """(verb, [x, y, z]) when words are a `move`/`line` the host may have to solve, else None."""
        if not host_solves(self.solver.kind) or not all(isinstance(w, str) for w in words):
            return None
        return tool_request(" ".join(words))

    async def _with_mover(self, what, work, moves):
        """work(Mover) in the link's worker thread, holding the link; its Outcome."""
        async with self._turn(what):
            self.busy = what
            self._emit(self.pose())
            loop = asyncio.get_running_loop()
            mover = Mover(_TranscribedLink(self, loop), self._worker_board)
            try:
                outcome = await loop.run_in_executor(self._worker, work, mover)
            except LinkError as e:
                self._log("!", "link: %s" % e, "link")
                raise
            finally:
                self.busy = None
            if moves:
                await self._refresh()
            self._emit(self.pose())
            return outcome

    async def _host_motion(self, line, target):
        """A typed or clicked `move`/`line` through the host's fallback, as `armctl move`."""
        verb, position = target
        outcome = await self._with_mover(line, lambda m: (m.line if verb == "line" else m.move)(position), True)
        for text in outcome.describe():
            self._log("#", "host: " + text, "host")
        return _outcome_reply(outcome)

    async def _host_preview(self, position):
        """The host's answer for a target (fallback.Mover.host_preview), as a preview answer."""
        outcome = await self._with_mover("preview " + " ".join("%g" % v for v in position),
                                         lambda m: m.host_preview(position), False)
        ok = outcome.status == fw_status.name(fw_status.OK)
        final = ("ok OK solver=%s%s" % (outcome.solver, outcome.figure()) if ok
                 else _outcome_reply(outcome).final)
        self._log("#", "host preview: " + final, "host")
        out = {"final": final, "ok": ok, "status": outcome.status, "solver": outcome.solver, "elbow": None,
               "err_mm": outcome.error_mm()}
        if ok:
            q = [math.radians(v) for v in outcome.q_deg]
            out.update(q_deg=[float(v) for v in outcome.q_deg], pulses=geometry.pulses(self.board, q),
                       points=geometry.link_points(self.solver, q))
        return out

    async def preview(self, words, elbow=None):
        """The IK answer for a target (nothing moves), with pulses, link points and a line check:
        the board's, or the host's where the board cannot solve it (as Move then moves)."""
        words = list(words)
        host = self._host_target(["move"] + words)
        reply = None
        if host is None or self.solver.kind == "chain":
            # A chain board is asked first: its NO_CLOSED_FORM is the honest reason the host solves.
            reply = await self.send(["ik"] + words + (["elbow=" + elbow] if elbow and host is None else []))
        if host is not None and (reply is None or reply.status == fw_status.NO_CLOSED_FORM):
            return await self._host_preview(host[1])   # no firmware line check: the board has no solver here
        out = self._board_preview(reply)
        target = [number(w) for w in words[:len(self.solver.targets)]]
        if self.q_deg is not None and len(target) == len(self.solver.targets) and None not in target:
            out["line"] = await asyncio.get_running_loop().run_in_executor(
                self._checker, preview.line, self._checker_board, [v * DEG for v in self.q_deg], target,
                self.speed_deg_s)
        return out

    def _board_preview(self, reply):
        n = self.solver.n
        out = {"final": reply.final, "ok": reply.ok, "status": reply.status, "solver": SOLVER_BOARD,
               "elbow": reply.fields.get("elbow"), "err_mm": reply.fields.get("err_mm")}
        if reply.ok and len(reply.values) >= n:
            q = [v * DEG for v in reply.values[:n]]
            out.update(q_deg=reply.values[:n], pulses=geometry.pulses(self.board, q),
                       points=geometry.link_points(self.solver, q))
        return out

    async def workspace(self, pitch_deg):
        """The side view's workspace map for a tool pitch (degrees, rounded to 5), cached; None if none."""
        if isinstance(pitch_deg, bool) or not isinstance(pitch_deg, (int, float)) or \
                not abs(pitch_deg) <= PITCH_RANGE_DEG:
            raise PageRefused("BAD_INPUT", "pitch must be a number of degrees within +-%g" % PITCH_RANGE_DEG)
        pitch = 5.0 * round(float(pitch_deg) / 5.0)
        if pitch not in self._workspace_cache:
            self._workspace_cache[pitch] = await asyncio.get_running_loop().run_in_executor(
                self._checker, geometry.workspace, self._checker_board, pitch)
        return self._workspace_cache[pitch]

    async def stop(self):
        """Hold and abort at once (real-time bytes, not queued behind the request in flight)."""
        if not self.live_console:
            self._log("x", "stop: this firmware has no live console (`?`, `!`, Ctrl-X); update it "
                           "with armctl deploy", "refused")
            raise PageRefused("BAD_COMMAND", "this firmware cannot stop a move in the middle")
        self._stops += 1
        # A request in flight reads the pose itself when it ends; its end may come before the interrupt returns.
        idle = self.busy is None
        self._log(">", "! Ctrl-X  (stop: hold, abort)", "stop")
        # Not through the link's worker thread: that one is busy with the move.
        await asyncio.to_thread(self.link.interrupt)
        if idle:
            async with self._lock:
                await self._refresh()
            self._emit(self.pose())
