# SPDX-License-Identifier: MIT
"""The host end of the line protocol: one request line, one reply (firmware/PROTOCOL.md).

A reply is any number of informational lines starting "# " and exactly one
final line starting "ok" or "error" (GRBL-like), for example:

    > ik 157.3 0 342.4 90 elbow=down
    # elbow down has no valid solution here; elbow up
    ok OK 0.000 -50.008 105.018 34.990 0.000 elbow=up err_mm=0.000

    link = Link("/dev/ttyACM0")
    reply = link.request("ik 157.3 0 342.4 90")
    reply.ok, reply.status, reply.values, reply.fields["err_mm"], reply.info_lines

A reply is never taken for another request's: before the first request, and
after any timeout or interrupt, the link resynchronises (`sync TOKEN`, a fresh
token each time, answered `ok TOKEN`; everything before that answer is stale
and dropped). The timeout is silence, not total time: every line received
restarts it, and a motion request may add the time its motion needs (the
board says nothing while it moves).

Any failure to talk to the board (port missing, busy, silent, gone) raises
LinkError, which `armctl` turns into exit code 3; a board that answers as the
MicroPython REPL raises BoardAtRepl (exit code 4). An "error" reply is not a
link failure, it is the board's answer.
"""

import os
import secrets
import time
from collections import deque

import serial

from armfw.status import WORDS as STATUS_WORDS

DEFAULT_BAUD = 115200
DEFAULT_TIMEOUT_S = 10.0
INFO_PREFIX = "# "
# Lines that answer no request: queued G1 lines that failed after their `ok`
# (firmware/PROTOCOL.md, "Final lines"), and Marlin's error lines before a numbered line's `ok`.
ALARM_PREFIXES = ("alarm ", "Error:")
# GRBL's real-time feed hold, then Ctrl-X (abort): what a person's Ctrl-C sends.
STOP_BYTES = b"!\x18"
# Lines only the MicroPython REPL prints, never the protocol.
REPL_LINES = (">>> ", "Traceback (most recent call last)", "raw REPL; CTRL-B to exit")
# Silence after which a resync sends its sync line again.
RESYNC_REPEAT_S = 1.0
# Pipelined requests: at most this many, and this many bytes, sent ahead of
# their replies (GRBL's senders keep under its 128-byte receive buffer; the
# firmware answers one line at a time, the rest waits in the port's buffer or
# in the firmware's read buffer, armfw.console.READ_BYTES).
PIPELINE_WINDOW = 8
PIPELINE_BYTES = 128


class LinkError(Exception):
    """No usable link to the board: the port is missing or busy, or the board stopped answering."""


class BoardAtRepl(LinkError):
    """The board answers as the MicroPython REPL, not with the arm protocol."""

    def __init__(self, port, seen):
        super().__init__(
            "the board on %s is at the MicroPython REPL (it answered %r), not running the arm protocol.\n"
            "  If the firmware is on it: soft-reset it so main.py runs again (Ctrl-D at the >>> prompt, "
            "e.g. in `mpremote connect %s repl`, or press its reset button).\n"
            "  If it runs plain MicroPython (no firmware yet): "
            "`armctl deploy --port %s --board boards/<your board>.json`." % (port, seen, port, port))
        self.seen = seen


def is_repl_output(text):
    """True for a line (or a bare prompt) that only the MicroPython REPL prints."""
    return text.startswith(REPL_LINES) or text.strip() == ">>>"


class Reply:
    """One parsed reply.

    ok:         True for a final "ok" line, False for "error".
    status:     the status word of the final line, one of armfw.status.WORDS
                ("OK", "SINGULAR", "TOO_FAR", "BAD_COMMAND", ...); "OK" or
                "ERROR" when the line has none.
    fields:     key=value words of the final line; values are int, float, a
                list of numbers for comma-separated numbers, or text.
    words:      the final line's other words, in order (numbers stay text).
    values:     the words that are numbers, as floats (joint angles in degrees,
                a position in mm: firmware/PROTOCOL.md says which).
    info_lines: the "# " lines before the final line, prefix removed.
    alarms:     the alarm lines before the final line (`alarm WORD ...`: queued
                G1 lines answered earlier failed; Marlin's `Error:...`).
    raw:        every line received for this request, as received.
    """

    def __init__(self, final, info_lines, raw):
        self.ok = final.partition(" ")[0] == "ok"
        self.final = final
        self.info_lines = info_lines
        self.raw = raw
        self._parts = None

    @property
    def alarms(self):
        return [line for line in self.raw[:-1] if line.startswith(ALARM_PREFIXES)]

    def _parsed(self):
        """(fields, words, status) of the final line, parsed on first use: a
        pipelined batch that only prints its replies never pays for it."""
        if self._parts is None:
            fields = {}
            words = []
            status = None
            for word in self.final.partition(" ")[2].split():
                key, eq, value = word.partition("=")
                if eq and key:
                    fields[key] = _value(value)
                elif status is None and not words and word in STATUS_WORDS:
                    status = word
                else:
                    words.append(word)
            if status is None:
                status = "OK" if self.ok else "ERROR"
            self._parts = (fields, words, status)
        return self._parts

    @property
    def fields(self):
        return self._parsed()[0]

    @property
    def words(self):
        return self._parsed()[1]

    @property
    def status(self):
        return self._parsed()[2]

    @property
    def values(self):
        out = []
        for word in self.words:
            try:
                out.append(float(word))
            except ValueError:
                pass
        return out

    @property
    def message(self):
        """The final line's words that are neither the status nor key=value fields."""
        return " ".join(self.words)

    def __repr__(self):
        return "Reply(%r)" % self.final


def _number(text):
    try:
        return int(text)
    except ValueError:
        return float(text)


def _value(text):
    try:
        if "," in text:
            return [_number(part) for part in text.split(",")]
        return _number(text)
    except ValueError:
        return text


def parse(lines):
    """Reply from the lines of one answer; the last must be the final ok/error line."""
    final = lines[-1]
    info = [line[len(INFO_PREFIX):] if line.startswith(INFO_PREFIX) else line for line in lines[:-1]]
    return Reply(final, info, list(lines))


def is_final(line):
    """True for the line that ends a reply: "ok ..." or "error ..."."""
    head = line.split(" ", 1)[0]
    return head == "ok" or head == "error"


def open_serial(port, baud=DEFAULT_BAUD, timeout=0.1, exclusive=True):
    """Open port with pyserial, raising LinkError that says whether it is missing or busy."""
    missing = "port %s does not exist (is the board plugged in? `armctl sim --pty` prints a port)" % port
    if port.startswith("/") and not os.path.exists(port):
        raise LinkError(missing)
    try:
        return serial.serial_for_url(port, baudrate=baud, timeout=timeout, exclusive=exclusive)
    except ValueError as e:
        raise LinkError("port %s: %s" % (port, e))
    except serial.SerialException as e:
        text = str(e)
        # POSIX: flock refused or EBUSY; Windows: "Access is denied" for an open COM port.
        if "exclusively lock" in text or "busy" in text.lower() or "Access is denied" in text:
            raise LinkError("port %s is busy: another program (a terminal, mpremote, armctl) has it open" % port)
        if "FileNotFoundError" in text or "No such file" in text:
            raise LinkError(missing)
        raise LinkError("cannot open port %s: %s" % (port, text))


class Link:
    """A line-protocol client on a serial port (a USB CDC port, a UART adapter or a pty).

    port: device path or pyserial URL. timeout: seconds of silence (no line
    at all) after which a reply is given up (LinkError). reconnect_s: how long
    a request may wait for a vanished port to come back (a board that resets
    re-enumerates its USB port) before the request is sent.
    """

    def __init__(self, port, baud=DEFAULT_BAUD, timeout=DEFAULT_TIMEOUT_S, reconnect_s=3.0):
        self.port = port
        self.baud = baud
        self.timeout = timeout
        self.reconnect_s = reconnect_s
        self._serial = None
        self._pending = b""
        self._stale = True
        self._sync_reply = None
        # Seconds a request cut short may still keep the board busy (its motion).
        self._busy_s = 0.0
        self.open()

    def open(self):
        """Open the port now (LinkError if missing or busy); the next request resynchronises first."""
        self.close()
        self._serial = open_serial(self.port, self.baud)
        self._pending = b""
        self._stale = True
        self.discard_input()

    def reconnect(self):
        """Close and reopen the port, retrying until reconnect_s has passed."""
        deadline = time.monotonic() + self.reconnect_s
        while True:
            try:
                self.open()
                return
            except LinkError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)

    def close(self):
        if self._serial is not None:
            try:
                self._serial.close()
            except (OSError, serial.SerialException):
                pass
            self._serial = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def discard_input(self):
        """Forget bytes the board sent before now (a banner, a stale reply)."""
        try:
            self._serial.reset_input_buffer()
        except (OSError, serial.SerialException, AttributeError):
            pass
        self._pending = b""

    def write_raw(self, data):
        """Send bytes as they are (control characters for a soft reset, say)."""
        if self._serial is None:
            self.reconnect()
        try:
            self._serial.write(data)
            self._serial.flush()
        except (OSError, serial.SerialException) as e:
            self.close()
            raise LinkError("lost the port %s while writing: %s" % (self.port, e))

    def readline(self, timeout=None, repl_check=False):
        """The next line from the board without its line ending; LinkError after timeout seconds of silence.

        repl_check: raise BoardAtRepl at the first sign of the MicroPython REPL
        (a `>>> ` prompt, a traceback), instead of waiting out the timeout.
        """
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while True:
            text = self._received_line(repl_check)
            if text is not None:
                return text
            if time.monotonic() >= deadline:
                raise LinkError("no answer from %s within %.1f s" % (self.port, wait))
            if self._serial is None:
                raise LinkError("port %s is closed" % self.port)
            try:
                # Whatever has arrived, in one chunk (the port's own timeout is short).
                chunk = self._serial.read(self._serial.in_waiting or 1)
            except (OSError, serial.SerialException) as e:
                self.close()
                raise LinkError("lost the port %s while reading: %s" % (self.port, e))
            self._pending += chunk

    def _received_line(self, repl_check):
        """The next line already received (without its line ending), or None: no waiting."""
        cut = self._pending.find(b"\n")
        if cut >= 0:
            line = self._pending[:cut]
            self._pending = self._pending[cut + 1:]
            text = line.decode("utf-8", "replace").rstrip("\r")
            if repl_check and is_repl_output(text):
                raise BoardAtRepl(self.port, text)
            return text
        if repl_check and self._pending.rstrip(b" ") in (b">>>", b"\r>>>"):
            prompt, self._pending = self._pending, b""
            raise BoardAtRepl(self.port, prompt.decode("utf-8", "replace"))
        return None

    def resync(self, timeout=None):
        """Make sure the next line read answers the next request: `sync TOKEN`, drop all before `ok TOKEN`.

        timeout: seconds of silence allowed (default the link's, plus what a
        motion cut short may still need). The sync line is sent again every
        RESYNC_REPEAT_S of silence (a board that was resetting lost it); the
        token stays the same, and its extra answers are skipped by request().
        BoardAtRepl if the REPL answers.
        """
        wait = (self.timeout + self._busy_s) if timeout is None else timeout
        token = "h" + secrets.token_hex(6)
        self._sync_reply = "ok " + token
        probe = b"sync " + token.encode() + b"\n"
        # First Ctrl-B and LF: the LF ends whatever half line the board holds (stop bytes, a
        # cut-off request; the protocol answers it with an error, dropped here), and a board a
        # file tool left in the raw REPL (silent) leaves it and shows the `>>>` prompt. Only the
        # first probe has them, or each repeat would leave a late answer behind.
        self.write_raw(b"\x02\n")
        silent_until = time.monotonic() + wait
        self.write_raw(probe)
        while True:
            left = silent_until - time.monotonic()
            try:
                text = self.readline(min(RESYNC_REPEAT_S, max(left, 0.0)), repl_check=True)
            except BoardAtRepl:
                self._stale = True
                raise
            except LinkError as e:
                if self._serial is not None and time.monotonic() < silent_until:
                    self.write_raw(probe)
                    continue
                self._stale = True
                raise LinkError("no answer from %s within %.1f s while resynchronising (the board may "
                                "still be busy with a long motion: wait, or give a longer --timeout)"
                                % (self.port, wait) if self._serial is not None else str(e))
            if text.strip() == self._sync_reply:
                self._stale = False
                self._busy_s = 0.0
                return
            if text.startswith("error") and "sync" in text and "unknown command" in text:
                raise LinkError("the firmware on %s predates `sync`: update it with `armctl deploy`" % self.port)
            silent_until = time.monotonic() + wait

    def interrupt(self):
        """Stop the arm (GRBL-style `!` then Ctrl-X), then resynchronise on the next request."""
        self.write_raw(STOP_BYTES)
        self._stale = True

    def request(self, line, timeout=None, on_line=None, motion_s=0.0):
        """Send one request line and return its Reply.

        timeout: seconds of silence allowed between two lines of the reply
        (default the link's). motion_s: how long the request may keep a
        silent board busy (its motion: armctl.pacing estimates it); until then
        silence is expected. on_line(text) sees every reply line as it arrives
        (progress). A request whose write failed is sent again once after a
        reconnect; one whose reply was cut off is not (the board may have
        acted on it): LinkError says so.
        """
        line = line.strip()
        if not line or "\n" in line or "\r" in line:
            raise ValueError("a request is one non-empty line, got %r" % line)
        data = (line + "\n").encode()
        if self._serial is None:
            self.reconnect()
        if self._stale:
            self.resync()
        try:
            self.write_raw(data)
        except LinkError:
            self.reconnect()
            self.resync()
            self.write_raw(data)
        silence = self.timeout if timeout is None else timeout
        busy_until = time.monotonic() + motion_s
        lines = []
        try:
            while True:
                try:
                    text = self.readline(silence + max(0.0, busy_until - time.monotonic()),
                                         repl_check=True)
                except BoardAtRepl:
                    self._stale = True
                    raise
                except LinkError as e:
                    self._stale = True
                    self._busy_s = max(0.0, busy_until - time.monotonic())
                    raise LinkError("%s (request %r%s)" % (
                        e, line, ", not resent: the board may have acted on it" if lines else ""))
                if not text.strip() or (not lines and text.strip() in (line, self._sync_reply)):
                    continue  # blank lines, a terminal's echo, a repeated resync's late answers
                lines.append(text)
                if on_line is not None:
                    on_line(text)
                if is_final(text):
                    return parse(lines)
        except KeyboardInterrupt:
            # The reply is still coming: it must not be taken for the next request's.
            self._stale = True
            self._busy_s = max(0.0, busy_until - time.monotonic())
            raise

    def pipeline(self, requests, window=PIPELINE_WINDOW, max_bytes=PIPELINE_BYTES, timeout=None, on_line=None):
        """Send requests ahead of their replies (bounded window), match replies in order; returns the Replies.

        For requests the board answers at once (ik, fk, where, info, ...):
        only silence counts, no motion allowance. At most window requests and
        max_bytes bytes are in flight. on_line(text) sees every reply line.
        A link failure leaves the link to resynchronise before its next use.
        """
        lines_out = []
        for line in requests:
            line = line.strip()
            if not line or "\n" in line or "\r" in line:
                raise ValueError("a request is one non-empty line, got %r" % line)
            lines_out.append(line)
        if self._serial is None:
            self.reconnect()
        if self._stale:
            self.resync()
        silence = self.timeout if timeout is None else timeout
        in_flight = deque()         # (request, bytes) sent, reply not yet complete
        flight_bytes = 0
        sent = 0
        replies = []
        got = []
        try:
            while len(replies) < len(lines_out):
                # Every request the window has room for, in one write.
                batch = []
                while sent < len(lines_out) and len(in_flight) < window:
                    data = (lines_out[sent] + "\n").encode()
                    if in_flight and flight_bytes + len(data) > max_bytes:
                        break
                    batch.append(data)
                    in_flight.append((lines_out[sent], len(data)))
                    flight_bytes += len(data)
                    sent += 1
                if batch:
                    self.write_raw(b"".join(batch))
                # One line (waited for), then every line already received: the window
                # is refilled once per read, not once per reply.
                text = self.readline(silence, repl_check=True)
                while text is not None:
                    head = in_flight[0][0]
                    if text.strip() and (got or text.strip() not in (head, self._sync_reply)):
                        got.append(text)
                        if on_line is not None:
                            on_line(text)
                        if is_final(text):
                            replies.append(parse(got))
                            got = []
                            flight_bytes -= in_flight.popleft()[1]
                            if not in_flight:
                                break
                    text = self._received_line(repl_check=True)
        except (LinkError, KeyboardInterrupt):
            self._stale = True
            raise
        return replies

    def wait_ready(self, timeout=10.0, probe="help", probe_timeout=2.0):
        """Wait until the board answers the protocol (after a reset); returns its Reply to probe.

        A board still booting is not an error: resynchronisation is retried
        (REPL output while it reboots is expected) until timeout.
        """
        deadline = time.monotonic() + timeout
        last = None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LinkError("board on %s did not answer within %.0f s%s" % (
                    self.port, timeout, "; last: %s" % last if last else ""))
            try:
                if self._serial is None:
                    self.reconnect()
                self.resync(timeout=min(probe_timeout, left))
                return self.request(probe, timeout=min(probe_timeout, max(left, 0.1)))
            except LinkError as e:
                last = str(e).splitlines()[0]
                if self._serial is None:
                    time.sleep(0.2)
