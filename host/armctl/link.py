# SPDX-License-Identifier: MIT
"""The host end of the line protocol: one request line, one reply (firmware/PROTOCOL.md).

A reply is any number of informational lines starting "# " and exactly one
final line starting "ok" or "error" (GRBL-like), for example:

    > ik 150 0 200 90
    # elbow up
    ok OK q=-12.3,45.6,78.9,0,0 err_mm=0.000

    link = Link("/dev/ttyACM0")
    reply = link.request("ik 150 0 200 90")
    reply.ok, reply.status, reply.fields["q"], reply.info_lines

Any failure to talk to the board (port missing, busy, silent, gone) raises
LinkError, which `armctl` turns into exit code 3; an "error" reply is not a
link failure, it is the board's answer.
"""

import os
import time

import serial

from armfw.status import WORDS as STATUS_WORDS

DEFAULT_BAUD = 115200
DEFAULT_TIMEOUT_S = 10.0
INFO_PREFIX = "# "


class LinkError(Exception):
    """No usable link to the board: the port is missing or busy, or the board stopped answering."""


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
    raw:        every line received for this request, as received.
    """

    def __init__(self, final, info_lines, raw):
        head, _, rest = final.partition(" ")
        self.ok = head == "ok"
        self.final = final
        self.info_lines = info_lines
        self.raw = raw
        self.fields = {}
        self.words = []
        self.status = None
        for word in rest.split():
            key, eq, value = word.partition("=")
            if eq and key:
                self.fields[key] = _value(value)
            elif self.status is None and not self.words and word in STATUS_WORDS:
                self.status = word
            else:
                self.words.append(word)
        if self.status is None:
            self.status = "OK" if self.ok else "ERROR"

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

    port: device path or pyserial URL. timeout: seconds to wait for the next
    line of a reply before giving up (LinkError). reconnect_s: how long a
    request may wait for a vanished port to come back (a board that resets
    re-enumerates its USB port) before the request is sent.
    """

    def __init__(self, port, baud=DEFAULT_BAUD, timeout=DEFAULT_TIMEOUT_S, reconnect_s=3.0):
        self.port = port
        self.baud = baud
        self.timeout = timeout
        self.reconnect_s = reconnect_s
        self._serial = None
        self._pending = b""
        self.open()

    def open(self):
        """Open the port now (LinkError if missing or busy); drops whatever the board said before."""
        self.close()
        self._serial = open_serial(self.port, self.baud)
        self._pending = b""
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

    def readline(self, timeout=None):
        """The next line from the board without its line ending; LinkError after timeout seconds."""
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while True:
            cut = self._pending.find(b"\n")
            if cut >= 0:
                line = self._pending[:cut]
                self._pending = self._pending[cut + 1:]
                return line.decode("utf-8", "replace").rstrip("\r")
            if time.monotonic() >= deadline:
                raise LinkError("no answer from %s within %.1f s" % (self.port, wait))
            if self._serial is None:
                raise LinkError("port %s is closed" % self.port)
            try:
                chunk = self._serial.read(self._serial.in_waiting or 1)
            except (OSError, serial.SerialException) as e:
                self.close()
                raise LinkError("lost the port %s while reading: %s" % (self.port, e))
            self._pending += chunk

    def request(self, line, timeout=None, on_line=None):
        """Send one request line and return its Reply.

        timeout: seconds allowed between two lines of the reply (default the
        link's). on_line(text) sees every reply line as it arrives (progress).
        A request whose write failed is sent again once after a reconnect; one
        whose reply was cut off is not (the board may have acted on it):
        LinkError says so.
        """
        line = line.strip()
        if not line or "\n" in line or "\r" in line:
            raise ValueError("a request is one non-empty line, got %r" % line)
        data = (line + "\n").encode()
        try:
            self.write_raw(data)
        except LinkError:
            self.reconnect()
            self.write_raw(data)
        lines = []
        while True:
            try:
                text = self.readline(timeout)
            except LinkError as e:
                raise LinkError("%s (request %r%s)" % (
                    e, line, ", not resent: the board may have acted on it" if lines else ""))
            if not text.strip() or (not lines and text.strip() == line):
                continue  # blank lines and a terminal's echo of the request
            lines.append(text)
            if on_line is not None:
                on_line(text)
            if is_final(text):
                return parse(lines)

    def drain(self, quiet_s=0.3, limit_s=3.0):
        """Read and drop input until the board has been quiet for quiet_s (at most limit_s).

        After a request timed out its late reply may still come; without this
        it would be taken for the next request's reply.
        """
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            try:
                self.readline(quiet_s)
            except LinkError:
                break
        self.discard_input()

    def wait_ready(self, timeout=10.0, probe="help", probe_timeout=2.0):
        """Wait until the board answers probe with "ok" (after a reset); returns that Reply.

        A board still booting is not an error: the probe is repeated, and late
        answers to earlier probes are drained so the next request gets its own reply.
        """
        deadline = time.monotonic() + timeout
        last = None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LinkError("board on %s did not answer %r with ok within %.0f s%s" % (
                    self.port, probe, timeout, "; last: %s" % last if last else ""))
            try:
                reply = self.request(probe, timeout=min(probe_timeout, left))
                if reply.ok:
                    if last is not None:
                        self.drain()
                    return reply
                last = reply.final
            except LinkError as e:
                last = str(e)
                if self._serial is None:
                    time.sleep(0.2)
                    continue
            self.drain()
