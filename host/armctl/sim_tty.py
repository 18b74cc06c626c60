# SPDX-License-Identifier: MIT
"""The terminal and process plumbing under the simulator on a pseudo-terminal: line ends as
a board's console sends them, raw terminals, and when the interpreter may take a Ctrl-C."""

import fcntl
import os
import signal
import struct
import termios
import time
import tty

# How long to wait for the kernel to stop the interpreter, or to queue a byte for it.
SETTLE_S = 0.1


def cooked(data, after_cr):
    """A board's console output: a lone LF goes out as CR LF (the REPL already sends CR LF).

    after_cr: whether the previous chunk ended in CR. Returns (data, after_cr).
    """
    out = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if after_cr and data.startswith(b"\n"):
        out = out[1:]
    return out, data.endswith(b"\r")


def one_enter(data, after_cr):
    """Host input with the LF of each CR LF dropped. after_cr: the previous chunk ended in CR."""
    out = data.replace(b"\r\n", b"\r")
    if after_cr and out.startswith(b"\n"):
        out = out[1:]
    return out, data.endswith(b"\r")


def _proc_fields(pid, name):
    """The text of /proc/PID/NAME."""
    with open("/proc/%d/%s" % (pid, name)) as f:
        return f.read()


def stopped(pid):
    """Wait until pid is stopped (SIGSTOP is delivered asynchronously); False if it does not stop."""
    deadline = time.monotonic() + SETTLE_S
    while _proc_fields(pid, "stat").rpartition(")")[2].split()[0] not in ("T", "t"):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.0002)
    return True


# System calls in which the interpreter waits for input or for time (Linux numbers:
# read of fd 0, poll, select, ppoll, pselect6, nanosleep, clock_nanosleep, epoll_wait,
# epoll_pwait). Only there is a KeyboardInterrupt raised straight from the SIGINT
# handler safe: elsewhere it may leave the parser's or the allocator's lock held, or be
# swallowed (an import's stat through the mounted flash takes any exception for "no
# such file").
WAITING_SYSCALLS = {
    "x86_64": {0, 7, 23, 271, 270, 35, 230, 232, 281},
    "aarch64": {63, 73, 72, 101, 115, 22},
}
READ_SYSCALL = {"x86_64": 0, "aarch64": 63}


def safe_to_interrupt(pid, insist):
    """True when the stopped pid catches SIGINT and waits for input or time (insist: anywhere).

    Linux reports the system call a task is in, with its arguments, in
    /proc/PID/syscall ("-1 ..." in user code). Where that cannot be read, or on an
    architecture not listed, any system call counts.
    """
    status = _proc_fields(pid, "status")
    caught = [line for line in status.splitlines() if line.startswith("SigCgt:")]
    if caught and not int(caught[0].split()[1], 16) & (1 << (signal.SIGINT - 1)):
        return False        # between two REPL lines: SIGINT would end the interpreter
    if insist:
        return True
    try:
        call = _proc_fields(pid, "syscall").split()
    except OSError:
        return True
    if call[0] in ("-1", "running"):
        return False
    machine = os.uname().machine
    if machine not in WAITING_SYSCALLS:
        return True
    number = int(call[0])
    return number in WAITING_SYSCALLS[machine] and (number != READ_SYSCALL[machine] or int(call[1], 16) == 0)


def queued(fd):
    """Bytes the terminal fd holds for its reader."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def raw_no_echo(fd, signals):
    """Raw terminal (no echo, no line editing, no output translation); Ctrl-C still signals if asked."""
    tty.setraw(fd)
    if signals:
        attrs = termios.tcgetattr(fd)
        attrs[3] |= termios.ISIG
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
