# SPDX-License-Identifier: MIT
# Under the real MicroPython: do the servo drivers allocate per write, and do
# they program the same counts as under CPython?
# Prints one line per driver: "<name> writes=<n> alloc=<bytes> locked=<ok|MemoryError>",
# then "counts freq=<hz> prescale=<p> sum=<sum of the chip's counts for 0..period us>".
# alloc is gc.mem_alloc() after minus before the writes; locked runs the same
# writes again under micropython.heap_lock(), where any allocation raises.
import sys

TESTS = sys.argv[0].rsplit("/", 2)[0]
sys.path.append(TESTS)                            # for fake_i2c
from fake_i2c import FakePCA9685, FakePWM, FakePWMU16
from alloc_count import allocation
from armfw.pca9685 import PCA9685
from armfw.pwmservo import PWMServos
from armfw.gripper import Gripper
from armfw import board, drivers

ROUNDS = 500
GRIPPER = {"open_us": 1000, "close_us": 1900, "min_us": 500, "max_us": 2500}


def exercise(driver, channels, gripper):
    n = 0
    for i in range(ROUNDS):
        for ch in channels:
            driver.set_us(ch, 500 + (i * 7 + ch * 13) % 2001)
            n += 1
        driver.off(channels[i % len(channels)])
        gripper.open()
        gripper.close()
        n += 3
    driver.off()
    return n + 1


def measure(name, driver, channels, gripper_channel):
    cfg = dict(GRIPPER)
    cfg["channel"] = gripper_channel
    gripper = Gripper(driver, cfg)
    n, alloc, locked = allocation(lambda: exercise(driver, channels, gripper))
    print("%s writes=%d alloc=%d locked=%s" % (name, n, alloc, locked))


chip = FakePCA9685(record=False)
measure("pca9685", PCA9685(chip, 0x40, 50, 25000000), [0, 1, 2, 3, 4], 5)
if chip.errors:
    print("chip errors:", chip.errors)
pins = [13, 12, 14, 27, 26]
measure("pwm_ns", PWMServos(pins + [25], 50, lambda pin, f: FakePWM(pin, freq=f, duty_u16=0)), pins, 25)
measure("pwm_u16", PWMServos(pins + [25], 50, lambda pin, f: FakePWMU16(pin, freq=f, duty_u16=0)), pins, 25)
# Control: the same writes through a chip that logs every write must show
# allocation, or the measurement above proves nothing.
measure("control_logging_bus", PCA9685(FakePCA9685(record=True), 0x40, 50, 25000000), [0, 1, 2, 3, 4], 5)

# The PCA9685's integer count arithmetic over every pulse width of a frame.
for freq in (50, 60, 330):
    chip = FakePCA9685(record=False)
    p = PCA9685(chip, 0x40, freq, 25000000)
    total = 0
    for us in range(p.period_us + 1):
        p.set_us(0, us)
        total += chip.high_counts(0)
    print("counts freq=%d prescale=%d sum=%d" % (freq, chip.prescale(), total))

# drivers.make on the port: the sim board needs no `machine`.
sim = drivers.make(board.load(TESTS + "/../boards/sim_arm5.json"))
sim.set_us(0, 1500)
sim.deinit()
print("make sim_arm5 %s" % type(sim).__name__)
