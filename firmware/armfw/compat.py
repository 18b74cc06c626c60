# SPDX-License-Identifier: MIT
"""The MicroPython names the firmware uses that CPython lacks, with CPython stand-ins.

On a board and on the Unix port these are MicroPython's own; under CPython
(the host and the tests import the firmware) they are equivalents:

    const(x)                          micropython.const; CPython: x itself
    sleep_ms(ms), sleep_us(us)        time.sleep_ms / sleep_us
    ticks_ms(), ticks_us(),           time.ticks_*; CPython: monotonic ms / us,
    ticks_add(t, delta),              plain arithmetic (no wrap-around to handle)
    ticks_diff(a, b)
    getenv(name)                      os.getenv; boards have no environment: None

The firmware is bytecode only: machine code (the native emitter) would live in
the heap on an RP2040, and the boards' heap is the budget that matters most
(docs/BENCHMARKS.md, "Memory").
"""

try:
    from micropython import const
except ImportError:     # CPython
    def const(x):
        return x

try:
    from time import sleep_ms, sleep_us, ticks_ms, ticks_us, ticks_add, ticks_diff
except ImportError:     # CPython
    from time import monotonic, monotonic_ns, sleep

    def sleep_ms(ms):
        sleep(ms / 1000)

    def sleep_us(us):
        sleep(us / 1000000)

    def ticks_ms():
        return int(monotonic() * 1000)

    def ticks_us():
        return monotonic_ns() // 1000

    def ticks_add(t, delta):
        return t + delta

    def ticks_diff(a, b):
        return a - b

try:
    from os import getenv
except ImportError:     # boards have no environment
    def getenv(name):
        return None
