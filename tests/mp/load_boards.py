# SPDX-License-Identifier: MIT
# Load board files with the firmware's own loader, under the real MicroPython.
# Usage: micropython load_boards.py FILE[@CALIBRATION] ...
# Prints per file either
#   OK <arg> name=.. mcu=.. driver=.. arm=.. joints=.. channels=.. lo=.. hi=.. home_us=.. gripper=..
#      zones=.. clear_mm=.. probes=..  (probes: the zone check of 16 poses spread over the
#      joint space, "." clear or the first letter of the zone hit)
# or
#   ERR <arg> <BoardError message>
# (angles in degrees to 6 places, so CPython can print the same line).
import sys

from armfw import board

DEG = 180.0 / 3.141592653589793


def describe(b):
    arm = b.solver
    home_us = [0] * arm.n
    bad = b.servos.pulses(arm.home, home_us)
    g = b.gripper
    return " ".join((
        "name=%s" % b.name,
        "mcu=%s" % b.mcu,
        "driver=%s" % b.driver["kind"],
        "arm=%s" % arm.kind,
        "joints=%s" % ",".join(arm.names),
        "channels=%s" % ",".join(str(c) for c in b.servos.channels),
        "lo=%s" % ",".join("%.6f" % (v * DEG) for v in arm.lo),
        "hi=%s" % ",".join("%.6f" % (v * DEG) for v in arm.hi),
        "home_us=%s" % (",".join(str(u) for u in home_us) if bad < 0 else "refused%d" % bad),
        "gripper=%s" % ("-" if g is None else "%d:%d-%d" % (g["channel"], g["open_us"], g["close_us"])),
        describe_zones(arm),
    ))


def describe_zones(arm):
    z = arm.zones
    probes = ""
    q = [0.0] * arm.n
    for k in range(16):
        for j in range(arm.n):
            f = ((k * (j + 3) * 7) % 17) / 16.0
            q[j] = arm.lo[j] + (arm.hi[j] - arm.lo[j]) * f
        probes += "." if z.clear(q) else z.zone_names[z.hit_zone][0]
    return "zones=%s clear_mm=%.3f probes=%s" % (",".join(z.zone_names) or "-", z.clearance(arm.home), probes)


for arg in sys.argv[1:]:
    path, _, cal = arg.partition("@")
    try:
        b = board.load(path, calibration=cal or None)
    except board.BoardError as e:
        print("ERR %s %s" % (arg, e))
        continue
    print("OK %s %s" % (arg, describe(b)))
