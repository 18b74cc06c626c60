# SPDX-License-Identifier: MIT
"""Copy the firmware and a board description to a board's flash with mpremote, then restart it.

Flash layout (what firmware/main.py expects):

    main.py             the protocol loop, run after every reset
    armfw/*.py|*.mpy    the firmware package (.mpy when compiled with mpy-cross)
    board.json          the board description (a copy of boards/<name>.json)
    calibration.json    written by `armctl calibrate`; deploy leaves it alone

The armfw modules go compiled to .mpy for the board's CPU by default (the
board then needs no compiler's peak of RAM at import); source .py on request.
Before copying, the board's free heap is read over the raw REPL after a soft
reset (main.py not running) and the deploy refused when the firmware will not
fit it (HEAP_NEED_KB). mpremote does the copying (`python -m mpremote connect
PORT ...`, one session for every file); the restart is a soft reset from the
normal REPL (Ctrl-C, Ctrl-D), which runs main.py; the board must then answer
`help` with ok and `info` with the deployed board's name.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from armctl import FIRMWARE_DIR
from armctl.link import Link, LinkError, open_serial

CTRL_C = b"\x03"
CTRL_D = b"\x04"
READY_TIMEOUT_S = 15.0
MPREMOTE_TIMEOUT_S = 120.0


class DeployError(Exception):
    """A file could not be prepared for copying (mpy-cross failed, a source is missing)."""


class BoardNotRunning(Exception):
    """The board restarted but cannot run the board file (its `info` says why, e.g. BAD_BOARD)."""


class NotEnoughHeap(Exception):
    """The board's free heap is less than the firmware needs: nothing was copied."""


# The heap (KB) the firmware needs on each route a deploy takes: the smallest heap
# in which main.py boots and answers armctl.memory's mixed run of requests on the
# board-like interpreter (32-bit, single precision; .mpy compiled for x86), the most
# any shipped board needs. tests/test_boardlike.py keeps these the measured figures;
# `armctl bench --only memory` prints them. The port's own start-up takes under 1 KB
# of that heap, so against a board's free heap they err on the safe side (the most
# is the PCA9685 board's, whose I2C is a Python fake there that allocates on every
# write where a board's machine.I2C allocates nothing).
HEAP_NEED_KB = {"source": 180, "mpy": 160}
FREE_HEAP_SCRIPT = "import gc\ngc.collect()\nprint('free heap', gc.mem_free())\n"


def heap_need_kb(route):
    """The heap (KB) the firmware needs when deployed as route ("source" or "mpy")."""
    return HEAP_NEED_KB[route]


def firmware_files(firmware_dir=FIRMWARE_DIR):
    """(source path, flash path) for main.py and every armfw module, sorted."""
    firmware_dir = Path(firmware_dir)
    files = [(firmware_dir / "main.py", "main.py")]
    files += [(p, "armfw/" + p.name) for p in sorted((firmware_dir / "armfw").glob("*.py"))]
    for src, _ in files:
        if not src.is_file():
            raise DeployError("missing firmware file %s" % src)
    return files


# mpy-cross -march per board "mcu" ("host": the Unix port on this machine). The
# firmware is bytecode, which every CPU loads; the .mpy still names the board's
# own CPU, as mpy-cross does for the port it targets.
MPY_ARCH = {"rp2040": "armv6m", "esp32": "xtensawin", "unix": "host"}


def mpy_arch(mcu):
    """mpy-cross -march for a board's mcu; DeployError for an mcu without one."""
    if mcu not in MPY_ARCH:
        raise DeployError("no mpy-cross architecture known for mcu %r (known: %s); deploy with --source"
                          % (mcu, ", ".join(sorted(MPY_ARCH))))
    return MPY_ARCH[mcu]


# mpy-cross -O3 keeps no line numbers with the bytecode, which is heap on the
# board: the firmware answers every failure with a reply word and never shows a
# traceback (README, Memory, has the figures). Asserts, also dropped, it has none.
MPY_OPT = "-O3"
# The source name every module's bytecode carries: the package's, a name the
# board has interned anyway. One name per module would be as many more interned
# names in the heap, and without line numbers a traceback's function name is
# what tells where it was.
MPY_SOURCE_NAME = "armfw"


def compile_mpy(src, dest, arch="host"):
    """Compile src to dest with mpy-cross for CPU arch."""
    done = subprocess.run([sys.executable, "-m", "mpy_cross", "-march=" + arch, MPY_OPT, "-s", MPY_SOURCE_NAME,
                           "-o", str(dest), str(src)], capture_output=True, text=True)
    if done.returncode != 0 or not Path(dest).is_file():
        raise DeployError("mpy-cross failed on %s: %s" % (src, (done.stderr or done.stdout).strip()))


def stage(stage_dir, board_file, mpy=False, firmware_dir=FIRMWARE_DIR):
    """Put every file to copy under stage_dir; returns [(staged path, flash path)], main.py first.

    With mpy the armfw modules are compiled; main.py stays source (MicroPython
    runs only main.py, never main.mpy, after a reset).
    """
    stage_dir = Path(stage_dir)
    (stage_dir / "armfw").mkdir(parents=True, exist_ok=True)
    if mpy:
        with open(board_file) as f:
            arch = mpy_arch(json.load(f).get("mcu"))
    out = []
    for src, flash in firmware_files(firmware_dir):
        if mpy and flash.startswith("armfw/"):
            flash = flash[:-3] + ".mpy"
            compile_mpy(src, stage_dir / flash, arch)
        else:
            shutil.copyfile(src, stage_dir / flash)
        out.append((stage_dir / flash, flash))
    shutil.copyfile(board_file, stage_dir / "board.json")
    out.append((stage_dir / "board.json", "board.json"))
    return out


def prepare_script(keep):
    """Board-side code: make armfw/ and remove modules not being deployed.

    A stale armfw/x.py would shadow a new armfw/x.mpy (MicroPython imports .py first).
    """
    return ("import os\n"
            "try:\n os.mkdir('armfw')\n"
            "except OSError:\n pass\n"
            "for n in os.listdir('armfw'):\n"
            " if n not in %r:\n  os.remove('armfw/'+n)\n  print('removed stale armfw/'+n)\n" % (sorted(keep),))


def mpremote(port, actions, on_line=None, timeout=MPREMOTE_TIMEOUT_S):
    """Run `python -m mpremote connect port` with actions (lists of words, chained with "+").

    on_line(text) sees mpremote's output lines as they come. Raises LinkError
    when the port cannot be opened or mpremote fails (the board did not take it).
    """
    probe = open_serial(port)  # LinkError names a missing or busy port; mpremote's message does not
    probe.close()
    argv = [sys.executable, "-m", "mpremote", "connect", port]
    for i, action in enumerate(actions):
        if i:
            argv.append("+")
        argv.extend(action)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        for text in proc.stdout:
            text = text.rstrip("\n")
            lines.append(text)
            if on_line is not None:
                on_line(text)
        code = proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if code != 0:
        raise LinkError("mpremote failed on %s (exit %d):\n%s" % (port, code, "\n".join(lines[-5:])))
    return lines


def free_heap(port):
    """The board's free heap in bytes, read over the raw REPL after a soft reset (from the
    raw REPL main.py does not run, so no firmware holds any of it)."""
    lines = mpremote(port, [["soft-reset"], ["exec", FREE_HEAP_SCRIPT]])
    for text in lines:
        if text.startswith("free heap "):
            return int(text.split()[2])
    raise LinkError("the board on %s did not say its free heap: %s" % (port, "\n".join(lines[-5:])))


def check_heap(port, route, say, anyway=False):
    """Refuse (NotEnoughHeap) when the board's free heap is less than the firmware needs as
    route; anyway: say so and go on (the board answers what does not fit NO_MEMORY)."""
    free = free_heap(port)
    need = heap_need_kb(route)
    how = "compiled to .mpy" if route == "mpy" else "as source"
    say("board heap: %d KB free; the firmware %s needs %d KB" % (free // 1024, how, need))
    if free >= need * 1024:
        return free
    if anyway:
        say("deploying anyway (--anyway): a request that does not fit the board's heap will be answered "
            "error NO_MEMORY")
        return free
    if route == "source":
        then = "deploy it compiled to .mpy (without --source), which needs %d KB" % heap_need_kb("mpy")
    else:
        then = ("build a MicroPython image with the firmware frozen in (README, \"Memory\"), "
                "or use a board with more RAM")
    raise NotEnoughHeap("the firmware will not fit: the board has %d KB of heap free and the firmware %s needs "
                        "%d KB; nothing was copied. %s; or --anyway copies it regardless, and a request that "
                        "does not fit is answered error NO_MEMORY" % (free // 1024, how, need, then))


def restart(port, baud=115200, timeout=READY_TIMEOUT_S, then="help"):
    """Soft-reset the board from its REPL so main.py runs; returns the Reply to `then`.

    Ctrl-C stops whatever runs (main.py's loop, a half-typed line); Ctrl-D in
    the normal REPL is a soft reset, which runs main.py. The board is ready
    when it answers `help` with ok; `then` is asked next, on the same link.
    """
    with Link(port, baud, timeout=timeout) as link:
        link.write_raw(b"\r" + CTRL_C + CTRL_C)
        link.write_raw(CTRL_D)
        ready = link.wait_ready(timeout)
        return ready if then == "help" else link.request(then)


def deploy(port, board_file, mpy=True, baud=115200, out=sys.stdout, firmware_dir=FIRMWARE_DIR, anyway=False):
    """Copy firmware (armfw compiled to .mpy, or source with mpy False) and board_file to the
    board on port, restart it, check it answers (anyway: even where the board's free heap
    is less than the firmware needs).

    Prints one line per file. Returns the board's `info` Reply. Raises
    LinkError (no board, copy failed), DeployError (a file could not be
    prepared), NotEnoughHeap (the firmware will not fit the board's free
    heap: nothing copied), BoardNotRunning (the board cannot run this board file).
    """
    def say(text):
        print(text, file=out, flush=True)

    with tempfile.TemporaryDirectory(prefix="armctl-deploy-") as tmp:
        files = stage(tmp, board_file, mpy, firmware_dir)      # a file that does not compile: before the board
        check_heap(port, "mpy" if mpy else "source", say, anyway)
        keep = [flash.split("/", 1)[1] for _, flash in files if flash.startswith("armfw/")]
        total = len(files)
        say("deploying %d files (%s) from %s to %s" % (
            total, "armfw compiled to .mpy" if mpy else "source", firmware_dir, port))
        actions = [["exec", prepare_script(keep)]]
        actions += [["fs", "cp", str(src), ":" + flash] for src, flash in files]
        sizes = {str(src): os.path.getsize(src) for src, _ in files}
        flash_of = {str(src): flash for src, flash in files}
        state = {"n": 0, "skipped": 0, "pending": None}

        def flush(note=""):
            if state["pending"] is not None:
                say(state["pending"] + note)
                state["pending"] = None

        def progress(text):
            words = text.split()
            if len(words) == 3 and words[0] == "cp" and words[1] in flash_of:
                flush()
                state["n"] += 1
                state["pending"] = "[%d/%d] %-22s %6d bytes" % (
                    state["n"], total, flash_of[words[1]], sizes[words[1]])
            elif text.startswith("Up to date:"):
                state["skipped"] += 1
                flush("  unchanged")
            elif text.strip():
                flush()
                say("  " + text)

        mpremote(port, actions, progress)
        flush()
        say("copied %d files, %d already up to date; restarting the board" % (
            state["n"] - state["skipped"], state["skipped"]))
    info = restart(port, baud, then="info")
    say("board answers: %s" % info.final)
    expected = json.loads(Path(board_file).read_text())["name"]
    if not info.ok or info.fields.get("name") != expected:
        raise BoardNotRunning("the board restarted but is not running %s: %s" % (expected, info.final))
    return info
