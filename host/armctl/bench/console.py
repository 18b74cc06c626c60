# SPDX-License-Identifier: MIT
"""The live console's step cadence: does reading the console between steps cost the motion?

tests/mp/step_cadence.py runs the firmware's session in real time on the
MicroPython Unix port over pipes; this module sends it a 200-step straight
line twice: alone, and with a `?` status request every TRAFFIC_MS the whole
time (a sender polling far faster than GRBL senders' few per second), and
reports the time from step to step of each (median, p99, max), the status
lines answered, and the bytes the console's wait allocated over 200 waits.
"""

import json
import os
import select
import statistics
import subprocess
import tempfile
import time

from armctl import BOARDS_DIR, ROOT, upy

SCRIPT = ROOT / "tests" / "mp" / "step_cadence.py"
TRAFFIC_MS = 5
START = b"move 150 -50 150 180\n"
LINE = b"line 150 50 150 180\n"          # 100 mm at 0.5 mm per step: 202 steps with its ramps
TIMEOUT_S = 60.0


def _board(folder):
    data = json.loads((BOARDS_DIR / "sim_arm5.json").read_text())
    data["motion"]["line_step_mm"] = 0.5
    path = os.path.join(folder, "cadence_arm5.json")
    with open(path, "w") as f:
        json.dump(data, f)
    return path, data["motion"]["step_ms"]


def _finals(proc, count, traffic):
    """Read until count final lines; with traffic, write `?` every TRAFFIC_MS meanwhile."""
    out = b""
    statuses = 0
    deadline = time.monotonic() + TIMEOUT_S
    next_poll = time.monotonic()
    fd = proc.stdout.fileno()
    while sum(out.count(b"\n" + w) for w in (b"ok", b"error")) + out.startswith(b"ok") < count:
        if time.monotonic() > deadline:
            raise RuntimeError("no reply from %s within %.0f s: %r" % (SCRIPT.name, TIMEOUT_S, out[-300:]))
        wait = max(0.0, next_poll - time.monotonic()) if traffic else 0.5
        ready, _, _ = select.select([fd], [], [], wait)
        if ready:
            out += os.read(fd, 65536)
        if traffic and time.monotonic() >= next_poll:
            proc.stdin.write(b"?")
            proc.stdin.flush()
            next_poll += TRAFFIC_MS / 1000.0
    statuses = out.count(b"# status ")
    return out, statuses


def _one(board, traffic):
    proc = subprocess.Popen([upy.command(), str(SCRIPT), board], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=upy.env())
    try:
        proc.stdin.write(START)
        proc.stdin.flush()
        _finals(proc, 1, False)
        proc.stdin.write(LINE)
        proc.stdin.flush()
        out, statuses = _finals(proc, 1, traffic)
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = rest.decode().strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError("%s failed (exit %s): %s" % (SCRIPT.name, proc.returncode, rest[-500:]))
    figures = json.loads(lines[-1])
    figures["status_lines"] = statuses
    return figures


def _summary(intervals_us):
    ms = sorted(v / 1000.0 for v in intervals_us)
    return {"mean_ms": round(statistics.fmean(ms), 3), "median_ms": round(statistics.median(ms), 3), "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 3),
            "max_ms": round(ms[-1], 3), "steps": len(ms) + 1}


def run(short=False):
    with tempfile.TemporaryDirectory(prefix="armcadence-") as folder:
        board, step_ms = _board(folder)
        quiet = _one(board, False)
        busy = _one(board, True)
    return {"step_ms": step_ms, "traffic_ms": TRAFFIC_MS,
            "quiet": _summary(quiet["intervals_us"]), "traffic": _summary(busy["intervals_us"]),
            "status_lines": busy["status_lines"], "wait_bytes_per_200": quiet["wait_bytes_per_200"]}


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
