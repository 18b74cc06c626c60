# SPDX-License-Identifier: MIT
"""The console's wait allocates nothing: every wait runs with the heap locked.

Idle waits (nothing to read) first, then, once the host has written some
traffic (real-time bytes, edited lines), waits that read it. Prints one line
per phase; a MemoryError (an allocation under the lock) ends the script.
Serves as the session does (begin() to end()): on a pipe a byte per read, on
a raw terminal every waiting byte per read.
"""

import sys

import micropython

from armfw.console import Console

seen = bytearray(16)
count = [0]


def on_realtime(c):
    seen[count[0]] = c
    count[0] += 1


console = Console(sys.stdin.buffer, sys.stdin, sys.stdout.write, on_realtime)
console.begin()
for timeout in (0, 1, 5, 0, 2) * 20:
    micropython.heap_lock()
    console.wait(timeout)
    micropython.heap_unlock()
print("idle waits: ok reads_all_waiting=%s" % console.reads_all_waiting)
lines = []
for _ in range(400):
    micropython.heap_lock()
    console.wait(5)
    micropython.heap_unlock()
    raw = console.next_line()
    if raw is not None:
        lines.append(bytes(raw).decode())
    if len(lines) == 2 and count[0] == 5:
        break
print("traffic waits: ok realtime=%s lines=%s" % (list(seen[:count[0]]), lines))
console.end()
