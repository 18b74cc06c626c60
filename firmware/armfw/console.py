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

A board's console gives one byte per read. While serving (begin() to end()),
the Unix port's raw terminal (the simulator's pty) is set to hand over
whatever is waiting (VMIN 0): one read takes a whole pipelined batch into the
read buffer. Its bytes are acted on in order, and a wait that queues a line
returns with the rest left unread, exactly as if they still waited in the
port: a real-time byte acts when it is reached, never ahead of the lines sent
before it.

The console also owns the output: write_line(text) sends one line, and with
echo on, typed characters are echoed and a "> " prompt follows every final
(ok/error) line. While serving, output is gathered and sent in one write
just before the console next waits for input (at the latest after
_GATHER_LINES pieces): a pipelined batch's replies leave together, never later
than the console's next look at its input.
"""

import select
import sys

from armfw.compat import const

try:
    import termios          # the Unix port
except ImportError:         # a board
    termios = None

# Real-time characters (GRBL's own).
STATUS = const(0x3F)        # ?
HOLD = const(0x21)          # !
RESUME = const(0x7E)        # ~
ABORT = const(0x18)         # Ctrl-X
REALTIME = (STATUS, HOLD, RESUME, ABORT)

_BACKSPACE = const(0x08)
_DELETE = const(0x7F)
_KILL_LINE = const(0x15)     # Ctrl-U
LF = const(10)
CR = const(13)

# Longest accepted request (bytes, without the line end); the longest valid
# command is about 60.
MAX_LINE = const(128)
# Bytes one read may take (a host pipelines at most 128 bytes ahead).
READ_BYTES = const(256)
# Output pieces (lines, echoed characters, prompts) gathered at most before they are sent.
_GATHER_LINES = const(16)
# Linux termios: the lflag bit of line-buffered input, the c_cc indices of VTIME and VMIN.
_LINUX_ICANON = const(2)
_LINUX_VTIME = const(5)
_LINUX_VMIN = const(6)
# Lines kept while a motion runs: a sender that waits for each reply needs one.
QUEUE_LINES = 8
# Queue entry of a line that overflowed MAX_LINE (its bytes were dropped).
TOO_LONG = -1

PROMPT = "> "
FINAL_WORDS = ("ok", "error")

# 1 for the bytes that only ever join the line being typed (printable ASCII
# but the real-time characters): without echo they take the short way.
_PLAIN = bytearray(256)
for _c in range(32, 127):
    _PLAIN[_c] = 0 if _c in REALTIME else 1
del _c


def _waiting_reads(fd):
    """(own, waiting): the terminal's settings and the same with reads that return
    what is waiting; None where a read cannot (a board, a pipe, line-buffered input)."""
    if termios is None or sys.platform != "linux":
        return None
    try:
        own = termios.tcgetattr(fd)
        waiting = termios.tcgetattr(fd)
    except (OSError, TypeError):
        return None
    if own[3] & _LINUX_ICANON:
        return None         # a read would still wait for the line end
    waiting[6][_LINUX_VMIN] = 0
    waiting[6][_LINUX_VTIME] = 0
    return own, waiting


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
        self._read = bytearray(READ_BYTES)
        self._one_byte = memoryview(self._read)[:1]
        self._read_into = self._one_byte  # the whole of _read between begin() and end(), where it can
        self._got = 0                     # bytes in _read
        self._done = 0                    # of which acted on
        self._terminal = None             # (fd, own settings) while begin() holds it
        self.reads_all_waiting = False    # True while one read takes every waiting byte
        self._gather = False              # True while serving: output waits in _outbox
        self._outbox = []
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
        self._send(text + "\n")
        if self.echo and text.split(" ", 1)[0] in FINAL_WORDS:
            self._send(PROMPT)

    def write_whole_line(self, line):
        """Send line, which ends in its line end already, after the gathered output and as
        it is: a reply made when the heap has run out, and so the one way out that
        allocates nothing."""
        self.flush()
        self._out(line)

    def _send(self, text):
        if not self._gather:
            self._out(text)
            return
        box = self._outbox
        box.append(text)
        if len(box) >= _GATHER_LINES:
            self.flush()

    def flush(self):
        """Send the gathered output now, in one write (each is a system call on the Unix port)."""
        box = self._outbox
        if not box:
            return
        try:
            text = box[0] if len(box) == 1 else "".join(box)
        except MemoryError:
            # No room to join them: each piece on its own, nothing lost.
            for piece in box:
                self._out(piece)
            box.clear()
            return
        box.clear()
        self._out(text)

    # -- input ----------------------------------------------------------

    def begin(self):
        """Start serving: output gathered; reads that take every waiting byte, where
        the port's terminal allows it."""
        self._gather = True
        if self._terminal is not None:
            return
        try:
            fd = self._stream.fileno()
        except (AttributeError, OSError):
            return
        settings = _waiting_reads(fd)
        if settings is None:
            return
        termios.tcsetattr(fd, termios.TCSANOW, settings[1])
        self._terminal = (fd, settings[0])
        self._read_into = self._read
        self.reads_all_waiting = True

    def end(self):
        """Back to the terminal's own settings (the REPL's, after Ctrl-C); bytes read but
        not yet acted on are dropped, as the terminal drops its input on Ctrl-C."""
        self.flush()
        self._gather = False
        self._got = self._done = 0
        self._read_into = self._one_byte
        self.reads_all_waiting = False
        if self._terminal is not None:
            fd, own = self._terminal
            self._terminal = None
            termios.tcsetattr(fd, termios.TCSANOW, own)

    def wait(self, timeout_ms, until_line=False):
        """Read what arrives within timeout_ms (-1: no limit) and act on it.

        Once something has arrived, reads on while more is waiting, then
        returns (the caller looks at what changed: hold, abort); returns at
        once when (until_line) a line is queued, or at the end of input.
        Bytes read earlier and not yet acted on come first, without a wait.
        Gathered output is sent before input is waited for. Allocates nothing
        (sending gathered lines makes the one string they go out in).
        """
        poll = self._poll
        timeout = timeout_ms
        while True:
            if self._done >= self._got:
                if self._outbox:
                    self.flush()
                if self.closed:
                    return
                ready = False
                for _ in poll.ipoll(timeout):
                    ready = True
                if not ready:
                    return
                got = self._stream.readinto(self._read_into)
                if not got:
                    self.closed = True
                    return
                self._got = got
                self._done = 0
            if self._act(until_line):
                return
            timeout = 0

    def _act(self, until_line):
        """Act on the bytes read and not yet acted on, in order; True (the rest left
        for later) once a line is queued (until_line) or refused."""
        data = self._read
        plain = _PLAIN
        got = self._got
        i = self._done
        while i < got:
            if not self.echo and not self._overflow:
                # The bulk of a host's traffic: plain bytes straight into the line.
                typing = self._typing
                typed = start = self._typed
                while i < got and typed < MAX_LINE and plain[data[i]]:
                    typing[typed] = data[i]
                    typed += 1
                    i += 1
                if typed != start:
                    self._typed = typed
                    self._after_cr = False
                if i >= got:
                    break
            c = data[i]
            i += 1
            self._done = i
            if c == STATUS or c == HOLD or c == RESUME or c == ABORT:
                self.on_realtime(c)
            else:
                self._feed(c)
            if until_line and self.queued or self.refused:
                return True
        self._done = i
        return False

    def _feed(self, c):
        if c == LF or c == CR:
            if c == LF and self._after_cr:
                self._after_cr = False
                return
            self._after_cr = c == CR
            if self.echo:
                self._send("\n")
            self._end_line()
            return
        self._after_cr = False
        if c == _BACKSPACE or c == _DELETE:
            if self._typed and not self._overflow:
                self._typed -= 1
                if self.echo:
                    self._send("\b \b")
            return
        if c == _KILL_LINE:
            if self.echo:
                for _ in range(self._typed):
                    self._send("\b \b")
            self._typed = 0
            self._overflow = False
            return
        if self.echo and 32 <= c < 127:
            self._send(chr(c))
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
        # The typed line's buffer changes places with the one it goes to: nothing is copied.
        if self.queued >= QUEUE_LINES:
            self._refused, self._typing = self._typing, self._refused
            self._refused_len = n
            self.refused = True
            return
        slot = (self._head + self.queued) % QUEUE_LINES
        self._lines[slot], self._typing = self._typing, self._lines[slot]
        self._lengths[slot] = n
        self.queued += 1

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

    def unread(self):
        """Put the line next_line() gave last back at the queue's front (no input read since)."""
        self._head = (self._head - 1) % QUEUE_LINES
        self.queued += 1

    def take_refused(self):
        """The line the full queue could not take (memoryview, or TOO_LONG); clears it."""
        self.refused = False
        if self._refused_len == TOO_LONG:
            return TOO_LONG
        return memoryview(self._refused)[:self._refused_len]
