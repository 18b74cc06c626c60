# SPDX-License-Identifier: MIT
"""`armctl bench`: every speed figure of the product, measured in one run.

Sections (each a module with run(short) -> dict of figures):

- firmware: the firmware's solver under the real MicroPython Unix port,
  against a textbook solver, heap per solve and per move step, native/viper;
- numeric: host numerical IK (armctl.numik DLS and CCD) against IKPy;
- batch: armctl.batch (numpy) against a Python loop over the firmware solver;
- protocol: the line protocol end to end through the simulator;
- fallback: `armctl move`'s numerical fallback end to end per target beside
  the board's own analytic move, and the firmware's chain FK (rate, heap);
- console: the live console's step cadence in real time, with and without
  real-time traffic, and what its wait allocates;
- accuracy: how far the drawn path strays from the intended lines, rebuilt
  from the pulse record, per driver (direct PWM, PCA9685), with each line
  step's pulses chosen jointly and with each joint's rounded on its own;
- motion: the motion profiles on sim_arm5: joint moves' durations beside
  Ruckig's time optimum, the 72-line G1 circle blended against stopping at
  every line's end, the profiles' cost and heap per step on the Unix port
  (with an RP2040 estimate) and the live step's heap against its bound;
- memory: the firmware's heap on a board-like interpreter (32-bit, single
  precision): the smallest heap per route (source, .mpy, frozen) and the free
  heap and largest free block after boot and after a mixed run;
- bus: the bus servo drivers' sync write and sync read on the Unix port,
  and their time on the wire at each bus board's baud rate;
- estimate: the firmware figures scaled to RP2040 and ESP32 boards, clearly
  an estimate (see armctl.bench.estimate for the derivation).

A section that cannot run (a module another part of the project has not
delivered, a missing tool) reports "not available: <why>" and the others
still run. Speed goals live here, printed, never in timed test assertions.
"""

import platform
import sys
import time

SECTIONS = ("firmware", "numeric", "batch", "protocol", "console", "fallback", "accuracy", "motion", "memory", "bus")


def _section(name):
    if name == "firmware":
        from armctl.bench import firmware as module
    elif name == "numeric":
        from armctl.bench import numeric as module
    elif name == "batch":
        from armctl.bench import batch as module
    elif name == "fallback":
        from armctl.bench import fallback as module
    elif name == "console":
        from armctl.bench import console as module
    elif name == "memory":
        from armctl.bench import memory as module
    elif name == "bus":
        from armctl.bench import bus as module
    elif name == "accuracy":
        from armctl.bench import accuracy as module
    elif name == "motion":
        from armctl.bench import motion as module
    else:
        from armctl.bench import protocol as module
    return module


def run(short=False, sections=SECTIONS, progress=None, numeric_budget_s=None):
    """Run the sections; returns {"meta": ..., name: figures or "not available: ..."}."""
    result = {"meta": {"short": short, "python": sys.version.split()[0],
                       "machine": platform.machine(), "processor": platform.processor() or platform.machine(),
                       "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}}
    for name in sections:
        if progress:
            progress("bench: %s ..." % name)
        t0 = time.perf_counter()
        try:
            module = _section(name)
            if name == "numeric":
                figures = module.run(short, budget_s=numeric_budget_s)
            else:
                figures = module.run(short)
        except Exception as e:     # a section must never take the others down
            figures = "not available: %s: %s" % (type(e).__name__, e)
        result[name] = figures
        result["meta"]["%s_s" % name] = round(time.perf_counter() - t0, 2)
    firmware = result.get("firmware")
    if isinstance(firmware, dict):
        from armctl.bench import estimate, targets
        step_ms = targets.load(targets.ARM5).motion["step_ms"]
        result["estimate"] = estimate.estimate(firmware, step_ms)
    elif "firmware" in sections:
        result["estimate"] = "not available: no firmware figures to scale"
    return result
