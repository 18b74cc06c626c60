# SPDX-License-Identifier: MIT
"""The bus servo drivers' step under the MicroPython Unix port, run by `armctl bench` (section bus).

    micropython -X heapsize=384k bench_bus.py ROOT COUNT

For each driver (armfw.sts, armfw.dynamixel) on six servos (five joints and a
gripper, as the SO-101 and the Koch): the time of one sync write of six goals
(set_many) and of one sync read of every servo (positions): COUNT calls, the
fastest of REPEATS runs.

Two UARTs under the driver:
- "driver": a replay of what the simulated servos answered, copied into the
  driver's buffer; writes only counted. The time is the driver's own work
  (building, checking and decoding packets): what the board's CPU does.
- "simulated": the simulated servos of armctl.sim_bus (ROOT/host/armctl/sim_bus.py)
  parse each packet and answer it, as in `armctl sim`.
The bytes each operation puts on the line, both ways, are counted: the wire
time at a baud rate is the host's arithmetic. Prints one JSON object.
"""

import json
import sys
import time

sys.path.append((sys.argv[1] if len(sys.argv) > 1 else ".") + "/host/armctl")
from sim_bus import FakeDynamixelBus, FakeSTSBus  # noqa: E402

from armfw.dynamixel import DynamixelServos  # noqa: E402
from armfw.servobus import Bus  # noqa: E402
from armfw.sts import STSServos  # noqa: E402

COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
REPEATS = 5
IDS = [1, 2, 3, 4, 5, 6]


class Counting:
    """A machine.UART in front of another: counts the bytes written and read, and keeps
    what it reads while `kept` is a bytearray."""

    def __init__(self, uart):
        self.uart = uart
        self.written = 0
        self.read = 0
        self.kept = None

    def any(self):
        return self.uart.any()

    def flush(self):
        pass

    def write(self, buf):
        self.written += len(buf)
        return self.uart.write(buf)

    def readinto(self, buf, n=None):
        got = self.uart.readinto(buf, n)
        if got:
            self.read += got
            if self.kept is not None:
                self.kept.extend(buf[:got])
        return got


class Sink:
    """A machine.UART that takes every packet and answers none."""

    def any(self):
        return 0

    def flush(self):
        pass

    def write(self, buf):
        return len(buf)

    def readinto(self, buf, n=None):
        return None


class Replay(Sink):
    """A machine.UART that answers every packet written with the same recorded bytes."""

    def __init__(self, answer):
        self.answer = answer
        self.view = memoryview(answer)
        self.at = len(answer)

    def any(self):
        return len(self.answer) - self.at

    def write(self, buf):
        self.at = 0
        return len(buf)

    def readinto(self, buf, n=None):
        have = len(self.answer) - self.at
        if n is None or n > have:
            n = have
        if n == 0:
            return None
        buf[0:n] = self.view[self.at:self.at + n]
        self.at += n
        return n


def per_call_us(action):
    """The fastest of REPEATS runs of COUNT calls, per call: the least disturbed by the machine's other work."""
    action()
    best = None
    for _ in range(REPEATS):
        t0 = time.ticks_us()
        for _ in range(COUNT):
            action()
        dt = time.ticks_diff(time.ticks_us(), t0)
        if best is None or dt < best:
            best = dt
    return best / COUNT


def measure(make_driver, fake):
    """The figures of one driver: bytes on the line, then the times on each UART."""
    goals = [1000 + 300 * j for j in range(len(IDS))]
    out = [0] * len(IDS)
    line = Counting(fake)
    driver = make_driver(Bus(line))
    driver.set_many(IDS, goals)    # torque goes on: from now on a set_many is one packet
    line.written = line.read = 0
    driver.set_many(IDS, goals)
    figures = {"servos": len(IDS), "sync_write_bytes": line.written}
    line.written = line.read = 0
    line.kept = bytearray()
    driver.positions(out)
    answers, line.kept = line.kept, None
    figures["sync_read_request_bytes"] = line.written
    figures["sync_read_answer_bytes"] = line.read
    figures["simulated_sync_write_us"] = per_call_us(lambda: driver.set_many(IDS, goals))
    figures["simulated_sync_read_us"] = per_call_us(lambda: driver.positions(out))
    driver.bus.uart = Sink()
    figures["driver_sync_write_us"] = per_call_us(lambda: driver.set_many(IDS, goals))
    driver.bus.uart = Replay(answers)
    figures["driver_sync_read_us"] = per_call_us(lambda: driver.positions(out))
    return figures


figures = {"count": COUNT,
           "sts": measure(lambda bus: STSServos(bus, IDS), FakeSTSBus(IDS, follow=0.5)),
           "dynamixel": measure(lambda bus: DynamixelServos(bus, IDS), FakeDynamixelBus(IDS, follow=0.5))}
print(json.dumps(figures))
