# SPDX-License-Identifier: MIT
# Under the real MicroPython: do the bus servo drivers allocate per step?
# One step is what the motion code does: every goal in one sync write, then the
# feedback check (a sync read of every servo, compared with the goals).
# Prints per driver "<name> steps=<n> alloc=<bytes> locked=<ok|MemoryError>" (as
# tests/mp/driver_alloc.py), then "positions <name> [...]": the positions read
# back from servos a test placed at 100..600 ticks.
import sys

TESTS = sys.argv[0].rsplit("/", 2)[0]
sys.path.append(TESTS)                            # for fake_uart
from fake_uart import FakeDynamixelBus, FakeSTSBus
from alloc_count import allocation
from armfw import feedback
from armfw.dynamixel import DynamixelServos
from armfw.servobus import Bus
from armfw.sts import STSServos

STEPS = 500
IDS = [1, 2, 3, 4, 5, 6]
JOINTS = [1, 2, 3, 4, 5]


def exercise(driver, goals, limits):
    for i in range(STEPS):
        for j in range(5):
            goals[j] = 1000 + (i * 7 + j * 13) % 2001
        driver.set_many(JOINTS, goals)
        if feedback.check(driver, goals, limits) is not None:
            raise AssertionError("feedback failed")
        if i % 50 == 0:
            driver.off()
    return STEPS


def measure(name, driver):
    goals = [0] * 5
    limits = feedback.Limits({"max_lag": 5, "max_load": 500, "max_temp_c": 60, "min_volts": 4.5, "max_volts": 8.4},
                             ["a", "b", "c", "d", "e", "gripper"])
    n, alloc, locked = allocation(lambda: exercise(driver, goals, limits))
    print("%s steps=%d alloc=%d locked=%s" % (name, n, alloc, locked))


out = [0] * 6
print("positions sts %s" % STSServos(Bus(FakeSTSBus(IDS, present=[100, 200, 300, 400, 500, 600])), IDS).positions(out))
measure("sts", STSServos(Bus(FakeSTSBus(IDS)), IDS))
print("positions dynamixel %s" % DynamixelServos(Bus(FakeDynamixelBus(IDS, present=[100, 200, 300, 400, 500, 600])),
                                                 IDS).positions(out))
measure("dynamixel", DynamixelServos(Bus(FakeDynamixelBus(IDS)), IDS))
# Control: the same steps through a bus that records every packet must show
# allocation, or the measurement above proves nothing.
recording = FakeSTSBus(IDS)
control = STSServos(Bus(recording), IDS)
recording.record = []
measure("control_recording_bus", control)
