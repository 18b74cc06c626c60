# SPDX-License-Identifier: MIT
"""The serial console: bytes in, real-time characters, line editing, a bounded queue of lines.

GRBL's real-time characters (`?` status, `!` hold, `~` resume, Ctrl-X abort)
act the moment they are read, outside any line, and never enter one. Every
other byte goes into the line being typed; backspace (0x08 or 0x7f) takes the
last character back, Ctrl-U the whole line. A line end (LF, CR or CR LF)
moves the line into a queue of QUEUE_LINES lines, so lines sent while the arm
moves are kept and answered in order after the move.

Waiting is select.poll on the input with a timeout, never a sleep: bytes that
arrive while a motion waits for its next step are read at once. The line
buffers, the queue and the poll object are made once; a wait allocates
nothing (poll.ipoll reuses its result tuple after the first call, made here).

The console also owns the output: write_line(text) sends one line, and with
echo on, typed characters are echoed and a "> " prompt follows every final
(ok/error) line.
"""

import select

# Real-time characters (GRBL's own).
STATUS = 0x3F       # ?
HOLD = 0x21         # !
RESUME = 0x7E       # ~
ABORT = 0x18        # Ctrl-X
REALTIME = (STATUS, HOLD, RESUME, ABORT)

BACKSPACE = 0x08
DELETE = 0x7F
KILL_LINE = 0x15    # Ctrl-U
LF = 10
CR = 13

# Longest accepted request (bytes, without the line end); the longest valid
# command is about 60.
MAX_LINE = 128
# Lines kept while a motion runs: a sender that waits for each reply needs one.
QUEUE_LINES = 8
# Queue entry of a line that overflowed MAX_LINE (its bytes were dropped).
TOO_LONG = -1

PROMPT = "> "
FINAL_WORDS = ("ok", "error")


class Console:
    """Line input with real-time characters on a byte stream (sys.stdin.buffer).

    stream: readinto(bytearray) input; pollable: what select.poll registers
    (sys.stdin on a board); out: writes text as it is (sys.stdout.write);
    on_realtime(c): called at once with each real-time byte read.
    """

    def __init__(self, stream, pollable, out, on_realtime):
        self._stream = stream
        self._out = out
        self.on_realtime = on_realtime
        self._poll = select.poll()
        self._poll.register(pollable, select.POLLIN)
        for _ in self._poll.ipoll(0):     # ipoll makes its result tuple on the first call
            pass
        self._byte = bytearray(1)
        self._typing = bytearray(MAX_LINE)
        self._typed = 0
        self._overflow = False
        self._after_cr = False
        self._lines = [bytearray(MAX_LINE) for _ in range(QUEUE_LINES)]
        self._lengths = [0] * QUEUE_LINES
        self._head = 0                    # oldest queued line
        self.queued = 0
        self.closed = False               # end of input seen
        self.echo = False
        # The line the queue had no room for: set until take_refused() reads it.
        self._refused = bytearray(MAX_LINE)
        self._refused_len = 0
        self.refused = False

    # -- output ---------------------------------------------------------

    def write_line(self, text):
        """Send one output line; with echo on, a prompt follows a final line."""
        out = self._out
        out(text)
        out("\n")
        if self.echo and text.split(" ", 1)[0] in FINAL_WORDS:
            out(PROMPT)

    # -- input ----------------------------------------------------------

    def wait(self, timeout_ms, until_line=False):
        """Read what arrives within timeout_ms (-1: no limit) and act on it.

        Once something has arrived, reads on while more is waiting, then
        returns (the caller looks at what changed: hold, abort); returns at
        once when (until_line) a line is queued, or at the end of input.
        Allocates nothing.
        """
        poll = self._poll
        byte = self._byte
        timeout = timeout_ms
        while not self.closed:
            ready = False
            for _ in poll.ipoll(timeout):
                ready = True
            if not ready:
                return
            if not self._stream.readinto(byte):
                self.closed = True
                return
            c = byte[0]
            if c in REALTIME:
                self.on_realtime(c)
            else:
                self._feed(c)
            if until_line and self.queued:
                return
            if self.refused:
                return
            timeout = 0

    def _feed(self, c):
        if c == LF or c == CR:
            if c == LF and self._after_cr:
                self._after_cr = False
                return
            self._after_cr = c == CR
            if self.echo:
                self._out("\n")
            self._end_line()
            return
        self._after_cr = False
        if c == BACKSPACE or c == DELETE:
            if self._typed and not self._overflow:
                self._typed -= 1
                if self.echo:
                    self._out("\b \b")
            return
        if c == KILL_LINE:
            if self.echo:
                for _ in range(self._typed):
                    self._out("\b \b")
            self._typed = 0
            self._overflow = False
            return
        if self.echo and 32 <= c < 127:
            self._out(chr(c))
        if self._overflow:
            return
        if self._typed >= MAX_LINE:
            self._overflow = True
            return
        self._typing[self._typed] = c
        self._typed += 1

    def _end_line(self):
        n = TOO_LONG if self._overflow else self._typed
        self._typed = 0
        self._overflow = False
        if self.queued >= QUEUE_LINES:
            self._copy(self._refused, n)
            self._refused_len = n
            self.refused = True
            return
        slot = (self._head + self.queued) % QUEUE_LINES
        self._copy(self._lines[slot], n)
        self._lengths[slot] = n
        self.queued += 1

    def _copy(self, to, n):
        # Byte by byte: a slice would allocate a copy.
        typing = self._typing
        for i in range(n):
            to[i] = typing[i]

    def clear_typing(self):
        """Forget the line being typed (an abort drops it)."""
        self._typed = 0
        self._overflow = False

    def next_line(self):
        """The oldest queued line as a memoryview (TOO_LONG: an int), or None; it leaves the queue.

        The view stays valid until more input is read.
        """
        if not self.queued:
            return None
        slot = self._head
        self._head = (slot + 1) % QUEUE_LINES
        self.queued -= 1
        n = self._lengths[slot]
        if n == TOO_LONG:
            return TOO_LONG
        return memoryview(self._lines[slot])[:n]

    def take_refused(self):
        """The line the full queue could not take (memoryview, or TOO_LONG); clears it."""
        self.refused = False
        if self._refused_len == TOO_LONG:
            return TOO_LONG
        return memoryview(self._refused)[:self._refused_len]
