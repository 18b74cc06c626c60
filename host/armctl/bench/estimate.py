# SPDX-License-Identifier: MIT
"""ESTIMATES (not measurements) of the firmware figures on real boards.

No board is attached, so the Unix-port figures are scaled by how much slower
each board runs MicroPython float code, taken from published results of
MicroPython's own float benchmark, tests/perf_bench/bm_float.py (params
N=100 M=100: 250 points, score = 250 / seconds; higher is faster):

- ESP32 at 240 MHz: 4085.76 (v1.13) and 3368.39 (v1.13-180, MicroPython
  pinned to core 0), github.com/micropython/micropython/issues/6565.
- RP2040 at 125 MHz: no published bm_float score was found. Bridge: the
  same single-precision float benchmark run on many boards by scruss
  (scruss.com/blog/tag/benchmark) took 19.8 s on a Pico W (RP2040 @ 125 MHz)
  and 13.0 s on a pyboard v1.1 (STM32F405 @ 168 MHz), whose bm_float score is
  4647.67 (github.com/micropython/micropython/pull/4858): 4647.67 * 13.0 /
  19.8 = 3051. The same bridge puts an ESP32 at 160 MHz (15.4 s) at 3923,
  5885 scaled to 240 MHz, 1.4-1.7x the direct ESP32 scores above, so the
  RP2040 range runs from 3051 / 1.75 to 3051, centre 3051 / 1.3.
- This machine's Unix port: 7.0e5 (bm_float with the same params, run with
  -X heapsize=384k like the firmware benchmark, median of 20 runs, December
  2026). Re-measure it before trusting the estimates on another PC.

A float benchmark because the solver is float-bound: on the RP2040's
Cortex-M0+ every float operation is a software routine (the boot ROM's
single-precision library), on the ESP32 the FPU is single precision, while
the Unix port computes in double precision. bm_float's mix (sin, cos, sqrt,
float arithmetic, attribute access, boxed float allocation) is close to the
solver's. Heap: a float is one GC block on every port; blocks are 16 bytes
on 32-bit boards against 32 on the 64-bit Unix port, so bytes per solve
halve while the number of allocations stays.
"""

UNIX_BM_FLOAT = 7.0e5

BOARDS = {
    "rp2040_125MHz": {"bm_float": 3051.0 / 1.3, "low": 3051.0 / 1.75, "high": 3051.0,
                      "gc_block_bytes": 16},
    "esp32_240MHz": {"bm_float": (3368.39 + 4085.76) / 2, "low": 3368.39, "high": 5885.0,
                     "gc_block_bytes": 16},
}

def time_on(board, unix_time):
    """A Unix-port time (any unit) as an ESTIMATE on board (a key of BOARDS):
    [centre, the fast end, the slow end] of its bm_float range."""
    b = BOARDS[board]
    return [unix_time * UNIX_BM_FLOAT / b[k] for k in ("bm_float", "high", "low")]


def heap_on(board, unix_bytes, unix_block_bytes):
    """Unix-port heap bytes as an ESTIMATE on board: as many GC blocks, the board's size."""
    return unix_bytes // unix_block_bytes * BOARDS[board]["gc_block_bytes"]


# Per-solve rates of the firmware figures that are scaled.
RATES = (("twolink", "safe_per_s"), ("twolink", "textbook_per_s"),
         ("planar", "safe_per_s"), ("planar", "textbook_per_s"),
         ("arm5", "safe_per_s"), ("arm5", "textbook_per_s"), ("tool_offset", "with_per_s"),
         ("move_step", "servo_map_per_s"), ("move_step", "move_step_per_s"))
HEAPS = (("twolink", "safe_heap_bytes"), ("planar", "safe_heap_bytes"),
         ("arm5", "safe_heap_bytes"), ("move_step", "servo_map_heap_bytes"),
         ("move_step", "driver_write_heap_bytes"))


def estimate(firmware, step_ms):
    """Scaled figures for every board in BOARDS from the firmware benchmark's dict.

    step_ms: the motion control period (a line takes one IK step per period).
    """
    block = firmware["port"]["gc_block_bytes"]
    out = {"label": "ESTIMATE, not a measurement: Unix-port figures x (board bm_float / Unix bm_float)",
           "unix_bm_float": UNIX_BM_FLOAT, "step_ms": step_ms}
    for name, b in BOARDS.items():
        scale = b["bm_float"] / UNIX_BM_FLOAT
        est = {"scale": scale, "scale_low": b["low"] / UNIX_BM_FLOAT, "scale_high": b["high"] / UNIX_BM_FLOAT}
        for section, key in RATES:
            value = firmware.get(section, {})
            if isinstance(value, dict) and key in value:
                est["%s.%s" % (section, key)] = value[key] * scale
                est["%s.%s_range" % (section, key)] = [value[key] * est["scale_low"],
                                                       value[key] * est["scale_high"]]
        for section, key in HEAPS:
            value = firmware.get(section, {})
            if isinstance(value, dict) and key in value:
                est["%s.%s" % (section, key)] = int(round(value[key] / block * b["gc_block_bytes"]))
        arm5 = est.get("arm5.safe_per_s")
        if arm5:
            # A straight line solves IK once per step, in the check pass over
            # the whole path before anything moves.
            line = firmware.get("line")
            if isinstance(line, dict):
                # Measured on the bench's line (its steps solved by ik_near, cheaper
                # than a general solve); the live pass sends what the check pass
                # kept, one step per step_ms (the live step without the driver write).
                est["line_first_step_s"] = line["first_step_ms"] / 1000.0 / scale
                est["line_check_s_per_200_steps"] = est["line_first_step_s"] * 200.0 / line["steps"]
                est["line_live_step_ms"] = line["live_step_us"] / 1000.0 / scale
                est["line_cpu_share"] = est["line_live_step_ms"] / step_ms
            else:
                # Without the line's figures: a general solve per step, live too.
                est["line_check_s_per_200_steps"] = 200.0 / arm5
                est["line_cpu_share"] = (1000.0 / step_ms) / arm5
        out[name] = est
    return out
