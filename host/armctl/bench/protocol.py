# SPDX-License-Identifier: MIT
"""The line protocol end to end: host Link -> pseudo-terminal -> firmware on the
MicroPython Unix port (armctl.sim) -> reply, exactly as a board on USB is used.

Figures: `ik` replies per second (and per-request round trip), the same
requests pipelined (Link.pipeline, PIPELINE_WINDOW ahead; the median of
PIPELINED_RUNS batches) with the CPU time the firmware and the host spent per
request meanwhile (the firmware's is the bound a faster link cannot pass),
and the time a 200-step straight `line` takes from request to final reply. The simulator
runs in virtual time (a servo step is not waited for), so the line figure is
the cost of planning, checking and sending every step; on a board each step
also lasts step_ms, which the result states next to it.
"""

import os
import statistics
import time

from armctl import BOARDS_DIR

IK_REQUESTS = 1000
SHORT_IK_REQUESTS = 100
PIPELINED_RUNS = 3
# Fewer clock ticks (10 ms each) than this are too coarse for a per-request figure.
MIN_CPU_TICKS = 10
LINES = 10
SHORT_LINES = 2
REQUEST_TIMEOUT_S = 30.0

# A 400 mm straight line in front of the 5-joint arm, tool horizontal: 200
# steps of the board's 2 mm line step, every point reachable.
LINE_START = (250.0, -200.0, 150.0, 90.0)
LINE_END = (250.0, 200.0, 150.0, 90.0)
IK_TARGET = (150.0, 30.0, 300.0, 90.0)


def _words(p):
    return " ".join("%g" % v for v in p)


def _field(reply, name):
    for word in reply.final.split():
        if word.startswith(name + "="):
            return word[len(name) + 1:]
    return None


def _cpu_ticks(pid):
    """Clock ticks of CPU (user + system) process pid has used, or None where /proc does not say."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError, TypeError):
        return None


def run(short=False):
    from armctl.link import PIPELINE_WINDOW, Link
    from armctl.sim import Simulator
    from armfw import board as fw_board
    board = BOARDS_DIR / "sim_arm5.json"
    step_ms = fw_board.load(str(board)).motion["step_ms"]
    n_ik = SHORT_IK_REQUESTS if short else IK_REQUESTS
    n_lines = SHORT_LINES if short else LINES
    with Simulator(str(board), pty=True) as sim:
        with Link(sim.port, timeout=REQUEST_TIMEOUT_S) as link:
            link.wait_ready()
            request = "ik " + _words(IK_TARGET)
            first = link.request(request)
            if not first.ok:
                raise RuntimeError("the simulator refused %r: %s" % (request, first.final))
            round_trips = []
            t_all = time.perf_counter()
            for _ in range(n_ik):
                t0 = time.perf_counter()
                link.request(request)
                round_trips.append(time.perf_counter() - t0)
            ik_elapsed = time.perf_counter() - t_all
            pipelined_rates = []
            firmware_ticks = _cpu_ticks(sim.pid)
            host_cpu = time.process_time()
            for _ in range(1 if short else PIPELINED_RUNS):
                t_all = time.perf_counter()
                piped = link.pipeline([request] * n_ik, window=PIPELINE_WINDOW)
                pipelined_rates.append(n_ik / (time.perf_counter() - t_all))
                if [r.final for r in piped] != [first.final] * n_ik:
                    raise RuntimeError("pipelined ik replies differ from the single request's")
            n_piped = n_ik * len(pipelined_rates)
            host_cpu = time.process_time() - host_cpu
            firmware_cpu = None
            if firmware_ticks is not None and _cpu_ticks(sim.pid) is not None:
                firmware_ticks = _cpu_ticks(sim.pid) - firmware_ticks
                if firmware_ticks >= MIN_CPU_TICKS:
                    firmware_cpu = firmware_ticks / os.sysconf("SC_CLK_TCK")

            move = link.request("move " + _words(LINE_START))
            if not move.ok:
                raise RuntimeError("the simulator refused the move to the line start: %s" % move.final)
            line_times = []
            steps = []
            ends = (LINE_END, LINE_START)
            for k in range(n_lines):
                t0 = time.perf_counter()
                reply = link.request("line " + _words(ends[k % 2]))
                line_times.append(time.perf_counter() - t0)
                if not reply.ok:
                    raise RuntimeError("the simulator refused a line: %s" % reply.final)
                steps.append(int(_field(reply, "steps") or 0))
    return {
        "transport": "pseudo-terminal, armctl.link.Link, firmware main.py on the Unix port",
        "ik_requests": n_ik,
        "ik_replies_per_s": n_ik / ik_elapsed,
        "ik_round_trip_median_ms": statistics.median(round_trips) * 1000.0,
        "ik_round_trip_p99_ms": sorted(round_trips)[max(0, int(0.99 * len(round_trips)) - 1)] * 1000.0,
        "ik_pipelined_window": PIPELINE_WINDOW,
        "ik_pipelined_replies_per_s": statistics.median(pipelined_rates),
        "ik_pipelined_runs": len(pipelined_rates),
        # CPU per pipelined request: the firmware's (None where /proc does not say, or
        # a run too short for its 10 ms clock ticks) and this process's (link and pty relay).
        "ik_pipelined_firmware_cpu_us": None if firmware_cpu is None else firmware_cpu / n_piped * 1e6,
        "ik_pipelined_host_cpu_us": host_cpu / n_piped * 1e6,
        "line_mm": abs(LINE_END[1] - LINE_START[1]),
        "line_runs": n_lines,
        "line_steps": steps[0],
        "line_median_ms": statistics.median(line_times) * 1000.0,
        "line_ms_per_step": statistics.median(line_times) * 1000.0 / max(1, steps[0]),
        "line_on_a_board_s": steps[0] * step_ms / 1000.0,
        "note": "virtual time: servo steps are not waited for; on a board each of the "
                "%d steps lasts step_ms = %d ms" % (steps[0], step_ms),
    }
