# SPDX-License-Identifier: MIT
# Under the real MicroPython: what a `?` status line costs on a bus servo board (its
# measured= field read from the servos) beside the same arm on PWM servos.
# Prints "<case> lines=<n> us=<per line> alloc=<bytes per line> bus_packets=<per line>".
import gc
import json
import sys
import time

TESTS = sys.argv[0].rsplit("/", 2)[0]
sys.path.append(TESTS)                            # for fake_uart
from fake_uart import FakeSTSBus
from armfw import board, drivers, protocol
from armfw.motion import ArmController
from armfw.servobus import Bus
from armfw.sts import STSServos

LINES = 200
IDS = [1, 2, 3, 4, 5, 6]


def bus_board():
    """pico_pca9685's arm on STS3215s (as tests/conftest.py's bus_board)."""
    with open(TESTS.rsplit("/", 1)[0] + "/boards/pico_pca9685.json") as f:
        d = json.load(f)
    d["driver"] = {"kind": "sts", "uart_id": 1, "tx": 4, "rx": 5, "baud": 1000000, "ticks_per_rev": 4096}
    for i, j in enumerate(d["joints"]):
        j.update(channel=i + 1, center_us=2048, us_per_rad=4096 / (2 * 3.141592653589793), min_us=600, max_us=3500)
    d["gripper"] = {"channel": 6, "open_us": 1500, "close_us": 2500, "min_us": 1000, "max_us": 3000}
    return board.from_dict(d)


def cost(name, p, bus=None):
    p.handle(b"home")
    p.status_line()
    gc.collect()
    packets = bus.packets if bus else 0
    before = gc.mem_alloc()
    t0 = time.ticks_us()
    for _ in range(LINES):
        p.status_line()
    dt = time.ticks_diff(time.ticks_us(), t0)
    alloc = gc.mem_alloc() - before
    print("%s lines=%d us=%d alloc=%d bus_packets=%d" % (
        name, LINES, dt // LINES, alloc // LINES, ((bus.packets - packets) // LINES) if bus else 0))


sim = board.load(TESTS.rsplit("/", 1)[0] + "/boards/sim_arm5.json")
cost("pwm", protocol.Protocol(ArmController(sim, drivers.make(sim), None), lambda line: None))
fake = FakeSTSBus(IDS)
cost("sts", protocol.Protocol(ArmController(bus_board(), STSServos(Bus(fake), IDS), None, sleep_ms=lambda ms: None),
                              lambda line: None), fake)
