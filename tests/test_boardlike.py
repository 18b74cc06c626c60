# SPDX-License-Identifier: MIT
"""The firmware on a board-like MicroPython: does it fit a board's heap, and answer as the 64-bit build?

The interpreter is the Unix port built the way the boards keep numbers and
objects (32-bit pointers and small ints, 16-byte GC blocks, single-precision
floats) by ../shared/micropython/build-board-like.sh, plain and with
firmware/manifest.py frozen in (armctl.memory.boardlike). Without the script
beside the clone these tests skip; in CI (CI=true) they fail instead.

Three routes put the firmware on a board, each with a heap goal
(armctl.memory.GOALS_KB): source .py 192 KB (a Raspberry Pi Pico), .mpy
112 KB (an ESP32 without PSRAM), frozen 64 KB (a BBC micro:bit v2). The run is
armctl.memory.mixed_run's few hundred requests of every family, on each arm
kind and on a PCA9685 board over the fake I2C (tests/fake_pca9685.py behind the
stand-in tests/mp/fake_machine/machine.py). A run fits when every request
gets its reply and none says MemoryError, INTERNAL or NO_MEMORY; every reply
must then match the 64-bit simulator's (.venv/bin/micropython) word for word,
numbers within single precision (armctl.memory.differences). The smallest
heap of each route is measured and printed among the figures. A goal the
firmware does not meet yet is a strict xfail (NOT_FITTING_YET and the flags
below): meeting it fails the run until the mark is taken off.
"""

import json
import re
import subprocess

import pytest

from armctl import BOARDS_DIR, FIRMWARE_DIR, memory
from conftest import MP_SCRIPTS, ROOT, VECTORS

BOARDS = ("sim_arm5", "sim_planar", "sim_al5d", "sim_arm5_tool", "pico_pca9685")
# Where the firmware does not fit its route's goal yet: take a board out when it
# does, and its test runs as a plain test (strict xfail fails a goal met while
# still listed, so this cannot go stale).
NOT_FITTING_YET = {
    "source": set(),
    # .mpy keeps every module's bytecode and interned names in the heap: after boot
    # that is about 95 KB on the 5-joint boards, and what the run loads (the command
    # families, G-code and its look-ahead, paths, the pulse choice) takes it to 133 KB,
    # above an ESP32's 112 KB.
    "mpy": set(BOARDS),
    "frozen": set(),
}
# .mpy: at least this much heap free after boot in a Pico's 192 KB.
MPY_FREE_AFTER_BOOT_KB = 96
ROOMY_KB = 1024         # a heap where the run fits on every route: the replies alone are judged
FLAT_LINES = 10000
FLAT_SLACK_BYTES = 256  # retained-heap growth allowed over the whole run (not per line)
# Against a hang, not a speed goal: heap_needs bisects 15 heaps, about 3 minutes alone and
# several times that on a busy machine, and its setup counts against the first test that
# asks for it.
pytestmark = pytest.mark.timeout(1800)


def board_file(name):
    return BOARDS_DIR / (name + ".json")


def run_lines(name):
    return memory.mixed_run(json.loads(board_file(name).read_text()))


# Where the fit depends on how the heap happens to fragment (the same commit has
# fitted in one run and not in the next): not fitting is expected, fitting no surprise.
ON_A_CLIFF = {"source": set(),
              "mpy": set(),
              "frozen": set()}


def goal_mark(route, name):
    return pytest.mark.xfail(name in NOT_FITTING_YET[route], strict=name not in ON_A_CLIFF[route],
                             reason="issue 25: the firmware does not fit %d KB from %s yet"
                             % (memory.GOALS_KB[route], route))


@pytest.fixture(scope="session")
def routes(boardlike_upy, boardlike_frozen, tmp_path_factory):
    return memory.routes(boardlike_upy, boardlike_frozen, tmp_path_factory.mktemp("mpy"))


@pytest.fixture(scope="session")
def fakes(tmp_path_factory):
    """The fake `machine` and I2C chip as .mpy (the board's own machine module is built in)."""
    return memory.compiled_fakes(tmp_path_factory.mktemp("fakes"))


@pytest.fixture(scope="session")
def reference(micropython):
    """reference(board): the 64-bit simulator's output for the board's mixed run (run once)."""
    cache = {}

    def get(name):
        if name not in cache:
            _, cache[name] = memory.answer(micropython, FIRMWARE_DIR, board_file(name), run_lines(name), ROOMY_KB,
                                           extra_path=memory.FAKE_MACHINE_PATH)
        return cache[name]
    return get


@pytest.fixture(scope="session")
def heap_needs(routes, fakes, report):
    """{route: {board: smallest heap in KB}}, bisected once per session and printed."""
    needs = {}
    for route in memory.ROUTES:
        r = routes[route]
        needs[route] = {name: memory.smallest_heap(r.interpreter, r.path, board_file(name), run_lines(name),
                                                   extra_path=fakes)
                        for name in BOARDS}
        report("board-like heap, %s: needs %s KB (goal %d KB; %s)"
               % (route, max(needs[route].values()), memory.GOALS_KB[route],
                  ", ".join("%s %s" % kv for kv in needs[route].items())))
    return needs


def assert_answers_as_64_bit(lines, output, reference_output):
    failures = [line for line in output.splitlines() if any(w in line for w in memory.FAILURE_WORDS)]
    assert not failures, "%d failures, first: %s" % (len(failures), failures[0])
    assert len(memory.finals(output)) == len(lines), "lost replies"
    problems = memory.differences(lines, reference_output, output)
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", BOARDS)
def test_replies_match_the_64_bit_build(name, boardlike_upy, reference, fakes):
    """Source route in a roomy heap: every reply as the 64-bit build's, within single precision."""
    lines = run_lines(name)
    _, out = memory.answer(boardlike_upy, FIRMWARE_DIR, board_file(name), lines, ROOMY_KB, extra_path=fakes)
    assert_answers_as_64_bit(lines, out, reference(name))


@pytest.mark.parametrize("route, name", [pytest.param(route, name, marks=goal_mark(route, name))
                                         for route in memory.ROUTES for name in BOARDS])
def test_route_fits_its_goal(route, name, routes, reference, fakes):
    r = routes[route]
    lines = run_lines(name)
    _, out = memory.answer(r.interpreter, r.path, board_file(name), lines, memory.GOALS_KB[route], extra_path=fakes)
    assert_answers_as_64_bit(lines, out, reference(name))


@pytest.mark.parametrize("name", ("sim_arm5", "sim_planar"))
def test_mpy_answers_joint_space_in_an_esp32s_heap(name, routes, micropython):
    """Where the whole run does not fit 112 KB as .mpy yet, its requests in joint space do
    (armctl.memory.joint_space_run: no G-code, tool lines, poses or paths), each answered
    as the 64-bit build answers it."""
    lines = memory.joint_space_run(json.loads(board_file(name).read_text()))
    kinds = {line.split()[0] for line in lines if line.split()}
    assert {"move", "joints", "ik", "home", "info"} <= kinds and not {"line", "pose", "path"} & kinds, kinds
    _, reference_output = memory.answer(micropython, FIRMWARE_DIR, board_file(name), lines, ROOMY_KB)
    r = routes["mpy"]
    _, out = memory.answer(r.interpreter, r.path, board_file(name), lines, memory.GOALS_KB["mpy"])
    assert_answers_as_64_bit(lines, out, reference_output)


def test_smallest_heap_per_route(heap_needs):
    """Every route fits some heap, and the routes rank as they must: frozen code and
    precompiled .mpy never need more than compiling the source on the board."""
    for name in BOARDS:
        need = {route: heap_needs[route][name] for route in memory.ROUTES}
        assert None not in need.values(), (name, need)
        assert need["frozen"] <= need["mpy"] <= need["source"], (name, need)


def test_deploy_knows_each_routes_need(heap_needs):
    """The need `armctl deploy` checks a board's free heap against (armctl.deploy.HEAP_NEED_KB)
    is the measured one: less would let a firmware that does not fit through, more would
    refuse boards it fits. The measured need has been seen to move by a bisection step (4 KB)
    between runs, and by four where a run sat on a fragmentation cliff: hence 16 KB either side."""
    from armctl.deploy import heap_need_kb
    for route in ("source", "mpy"):
        measured = max(heap_needs[route].values())
        stored = heap_need_kb(route)
        assert measured - 16 <= stored <= measured + 16, (
            "HEAP_NEED_KB in host/armctl/deploy.py says %s needs %d KB, measured %d KB: update it" % (route, stored, measured))


# Out of memory is an answer, not a crash: flip when the firmware answers NO_MEMORY.
ANSWERS_OUT_OF_MEMORY = True


@pytest.mark.xfail(not ANSWERS_OUT_OF_MEMORY, strict=True,
                   reason="issue 25: a MemoryError is not answered NO_MEMORY yet")
@pytest.mark.parametrize("route", memory.ROUTES)
def test_out_of_memory_is_an_answer(route, routes, heap_needs):
    """Below the need (one, four and eight bisection steps): every request still gets exactly one
    final reply, the console stays up to the end of the input, and a failed allocation is
    answered `error NO_MEMORY ...`, never a traceback, INTERNAL or another word."""
    r = routes[route]
    lines = run_lines("sim_arm5")
    need = heap_needs[route]["sim_arm5"]
    answered = 0
    # The fit is not monotonic in the heap (fragmentation): a heap just below the need may
    # still fit, so NO_MEMORY must show in one of them, not in each.
    for heap_kb in (need - 4, need - 16, need - 32):
        code, out = memory.answer(r.interpreter, r.path, board_file("sim_arm5"), lines, heap_kb)
        assert code == 0 and "Traceback" not in out and "INTERNAL" not in out, (heap_kb, out[-1500:])
        assert len(memory.replies(out)[1]) == len(lines), (heap_kb, "lost replies")
        wrong = [line for line in out.splitlines()
                 if "MemoryError" in line and not line.startswith(("error NO_MEMORY", "alarm NO_MEMORY"))]
        assert not wrong, (heap_kb, wrong[:3])
        answered += "error NO_MEMORY" in out or "alarm NO_MEMORY" in out
    assert answered


def probe(route, name, lines, heap_kb, every):
    """The heap probe's samples for lines at heap_kb, every `every` lines and after the last."""
    samples, out = memory.heap_profile(route.interpreter, route.path, board_file(name), lines, heap_kb, every,
                                       extra_path=memory.FAKE_MACHINE_PATH)
    assert len(memory.finals(out)) == len(lines) + 1, out[-2000:]
    return samples


def test_mpy_leaves_room_after_boot(routes, report):
    lines = run_lines("sim_arm5")
    boot, after = probe(routes["mpy"], "sim_arm5", lines, 192, len(lines))
    report("board-like heap, mpy in 192 KB: %d KB free after boot (largest block %d KB), %d KB after the run "
           "(largest block %d KB); goal %d KB free after boot"
           % (boot["free"] // 1024, boot["largest_free"] // 1024, after["free"] // 1024,
              after["largest_free"] // 1024, MPY_FREE_AFTER_BOOT_KB))
    assert boot["free"] >= MPY_FREE_AFTER_BOOT_KB * 1024


def test_a_seventh_pool_of_names_comes_at_once_past_1260_names(boardlike_upy):
    """Names are interned into pools that double (armctl.memory.NAMES_IN_SIX_POOLS): on this
    interpreter, interning names one by one, the seventh pool comes with the 1,261st name,
    and the pools' bytes jump by its 1,280 entries (armctl.memory.SEVENTH_POOL_BYTES) at once."""
    script = ("import micropython\nclass O: pass\no = O()\n"
              "for i in range(1400):\n    setattr(o, 'name%d' % i, 1)\n    micropython.qstr_info()\n")
    out = subprocess.run([boardlike_upy, "-c", script], capture_output=True, text=True, timeout=60).stdout
    pools = [memory.qstr_pool(line) for line in out.splitlines() if line.startswith("qstr pool:")]
    assert len(pools) == 1400
    seventh = next(i for i, pool in enumerate(pools) if pool["n_pool"] == "7")
    before, after = pools[seventh - 1], pools[seventh]
    assert before["n_pool"] == "6" and int(after["n_qstr"]) == memory.NAMES_IN_SIX_POOLS + 1
    jump = int(after["n_total_bytes"]) - int(before["n_total_bytes"]) - (int(after["n_str_data_bytes"])
                                                                         - int(before["n_str_data_bytes"]))
    assert memory.SEVENTH_POOL_BYTES <= jump <= memory.SEVENTH_POOL_BYTES + 32      # its header too


@pytest.mark.parametrize("name", ("sim_arm5", "sim_planar", "sim_al5d", "sim_arm5_tool"))
def test_the_run_interns_fewer_names_than_six_pools_hold(name, routes, report):
    """As .mpy, each board's whole run interns fewer names than six pools hold, so a board
    never makes the seventh, 9 KB at once (docs/BENCHMARKS.md, Memory). The PCA9685 board
    runs beside a fake chip and a stand-in machine module whose own names a board has not."""
    r = routes["mpy"]
    names, pools = memory.names_interned(r.interpreter, r.path, board_file(name), run_lines(name))
    report("board-like names, mpy, %s: %d interned over the run, in %d pools (six hold %d)"
           % (name, names, pools, memory.NAMES_IN_SIX_POOLS))
    assert names < memory.NAMES_IN_SIX_POOLS and pools <= 6


@pytest.mark.parametrize("route", memory.ROUTES)
def test_memory_stays_flat(route, routes, report):
    """10,000 mixed lines: the heap retained after gc.collect() does not grow from one
    block of the run to the next (sampled every block, after its motions end)."""
    block = run_lines("sim_arm5")
    lines = memory.mixed_run(json.loads(board_file("sim_arm5").read_text()), FLAT_LINES)
    # Roomy: growth is measured after gc.collect(), whatever the heap; at the goal the
    # probe's own module can tip a run that fits without it (frozen sim_arm5: 60 KB of 64).
    heap_kb = 512
    samples = probe(routes[route], "sim_arm5", lines, heap_kb, len(block))
    assert len(samples) == len(lines) // len(block) + 1 and len(samples) > 10
    warm = samples[1]["alloc"]          # after the first block: every feature loaded once
    growth = max(s["alloc"] for s in samples[1:]) - warm
    report("board-like heap, %s: %d lines, retained heap %d B after the first %d lines, grows by %d B after"
           % (route, len(lines), warm, len(block), growth))
    assert growth <= FLAT_SLACK_BYTES, [(s["line"], s["alloc"]) for s in samples]


# --- the shared vectors, in single precision ---------------------------------

# The single-precision tolerances: angles within 0.03 degree of the double
# ones (near a singularity an angle goes with the square root of the rounding);
# FK of every answer within the vectors' own 1e-3 mm.
FLOAT32_ANGLE_TOL_DEG = 0.03


@pytest.mark.parametrize("name", sorted(p.name for p in VECTORS.glob("*.json")))
def test_vectors_in_single_precision(name, boardlike_upy, report):
    import test_vectors
    doc = test_vectors.load_doc(name)
    run = subprocess.run([boardlike_upy, str(MP_SCRIPTS / "run_vectors.py"), str(VECTORS / name), str(BOARDS_DIR)],
                         capture_output=True, text=True, timeout=120, env=_env())
    assert run.returncode == 0, run.stderr
    answers, done = test_vectors.parse_lines(run.stdout)
    assert done == len(doc["cases"])
    cases = []
    overflowing = 0
    worst = 0.0
    for case in doc["cases"]:
        if any(isinstance(v, float) and abs(v) > memory.FLOAT32_MAX for v in case["target"]):
            case = dict(case, status="BAD_INPUT", q_deg=None)       # inf in single precision
            overflowing += 1
        else:
            case = dict(case, tol_deg=max(case["tol_deg"], FLOAT32_ANGLE_TOL_DEG))
            got = answers.get(case["id"], (None, None))[1]
            if got and case["q_deg"]:
                worst = max(worst, max(abs(a - b) for a, b in zip(got, case["q_deg"])))
        cases.append(case)
    agree, problems = test_vectors.judge_all(dict(doc, cases=cases), answers)
    report("vectors %s on the board-like interpreter (float32): %d/%d agree (%d overflowing targets BAD_INPUT); "
           "angles within %.3g deg" % (name, agree, len(cases), overflowing, worst))
    assert not problems, "\n".join(problems)


def _env():
    from armctl import upy
    return upy.env()


# --- PROTOCOL.md's transcripts ------------------------------------------------

def test_protocol_transcripts_in_single_precision(boardlike_upy):
    """Every transcript of firmware/PROTOCOL.md, replayed on a fresh board-like board: each
    reply as documented, numbers within single precision (progress reports aside)."""
    import test_protocol_doc
    blocks = test_protocol_doc.transcripts(test_protocol_doc.PROTOCOL.read_text())
    assert len(blocks) >= 2
    for board, exchanges, _ in blocks:
        requests = [request for request, _ in exchanges]
        _, out = memory.answer(boardlike_upy, FIRMWARE_DIR, ROOT / board, requests, ROOMY_KB)
        banner, answered = memory.replies(out)
        assert banner.startswith("# armfw "), banner
        assert len(answered) == len(requests), (board, out[-1000:])
        for request, (_, documented), got in zip(requests, exchanges, answered):
            # progress reports follow the step count, which single precision may change by one
            documented = [line for line in documented if not line.startswith("# progress")]
            assert len(got) == len(documented), ("PROTOCOL.md", board, request, got, documented)
            for want, have in zip(documented, got):
                why = memory.line_difference(want, have)
                assert why is None, "PROTOCOL.md, %s, > %s: %s" % (board, request, why)


# --- the comparator and the harness are not vacuous ---------------------------

def test_differences_tell_rounding_from_a_wrong_answer():
    lines = ["move 1 2", "ik 1e200 0", "info"]
    ref = ("# armfw 1 on b\nok OK 10.000 -20.000 x=1.000 pitch=180.000 steps=83\n"
           "error TOO_FAR no solution for 1e200 0\nok name=b\n")
    same = ("# armfw 1 on b\n# progress state=run steps=20/85\nok OK 10.004 -20.000 x=1.001 pitch=-180.000 steps=85\n"
            "error BAD_INPUT not a finite number: 1e200\nok name=b\n")
    assert memory.differences(lines, ref, same) == []
    for wrong in ("ok OK 10.100 -20.000 x=1.000 pitch=180.000 steps=83",      # an angle 0.1 off
                  "ok OK 10.000 -20.000 x=1.000 pitch=179.000 steps=83",      # pitch 1 degree off
                  "ok OK 10.000 -20.000 x=1.000 pitch=180.000 steps=90",      # 7 steps more
                  "ok SINGULAR 10.000 -20.000 x=1.000 pitch=180.000 steps=83",
                  "ok OK 10.000 -20.000 y=1.000 pitch=180.000 steps=83",
                  "error BAD_BOARD MemoryError: memory allocation failed"):
        out = ref.replace("ok OK 10.000 -20.000 x=1.000 pitch=180.000 steps=83", wrong)
        assert len(memory.differences(lines, ref, out)) == 1, wrong
    lost = "\n".join(ref.splitlines()[:-1]) + "\n"
    assert memory.differences(lines, ref, lost)
    # only a number beyond float32 may turn into BAD_INPUT
    assert memory.differences(["move 1 2"], "# b\nok OK 1.000\n", "# b\nerror BAD_INPUT not a finite number: 1\n")
    # a refusal's step is a step count: a step or two either way, not more
    refused = "# b\nerror TOO_FAR line step 513 at 2.801 1.867 591.596 3.361: unreachable\n"
    assert memory.differences(["line 0 0 600 0"], refused, refused.replace("513", "512")) == []
    assert memory.differences(["line 0 0 600 0"], refused, refused.replace("513", "509"))
    # and where that step is: within a step's travel of the documented point per step away
    assert memory.differences(["line 0 0 600 0"], refused, refused.replace("513 at 2.801", "512 at 3.801")) == []
    assert memory.differences(["line 0 0 600 0"], refused, refused.replace("513 at 2.801", "512 at 5.801"))
    assert memory.differences(["line 0 0 600 0"], refused, refused.replace("2.801", "2.901"))


def test_heap_samples_parse_the_probes_lines():
    out = ("# armfw\n# heap line=0 alloc=1000 free=2000 block=16 modules=boot,planner\nstack: 1 out of 2\n"
           "GC: total: 3000, used: 1000, free: 2000\n No. of 1-blocks: 1, 2-blocks: 2, max blk sz: 3, "
           "max free sz: 100\nqstr pool: n_pool=1, n_qstr=3, n_str_data_bytes=32, n_total_bytes=208\nok\n"
           "# heap line=1 alloc=1500 free=1500 block=16 modules=boot,gcode,planner\n"
           "qstr pool: n_pool=2, n_qstr=30, n_str_data_bytes=300, n_total_bytes=600\n")
    samples = memory.heap_samples(out)
    assert samples == [
        {"line": 0, "alloc": 1000, "free": 2000, "largest_free": 1600, "modules": ("boot", "planner"),
         "names": 3, "names_bytes": 208},
        {"line": 1, "alloc": 1500, "free": 1500, "modules": ("boot", "gcode", "planner"),
         "names": 30, "names_bytes": 600}]
    assert memory.replies(out) == ("# armfw", [["ok"]])
    assert memory.loads(samples, ["G21"]) == [(None, ("boot", "planner"), 1000, 208), ("G21", ("gcode",), 500, 392)]


def test_boardlike_tests_skip_without_the_build_script(tmp_path):
    """A clone without ../shared: skipped, naming the script; with CI=true: failed."""
    clone = tmp_path / "clone"
    (clone / "tests").mkdir(parents=True)
    probe_test = clone / "tests" / "test_probe.py"
    probe_test.write_text("def test_needs_it(boardlike_upy):\n    pass\n")
    (clone / "tests" / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    import os
    import sys
    env = dict(os.environ)
    env.pop(memory.PLAIN_ENV, None)
    env.pop(memory.FROZEN_ENV, None)
    code = ("import sys, pytest; from pathlib import Path; from armctl import memory; "
            "memory.ROOT = Path(sys.argv[1]); sys.exit(pytest.main(['-q', '-rs', '-p', 'no:cacheprovider', sys.argv[2]]))")
    for ci, want in (("", r"1 skipped"), ("true", r"1 error|1 failed")):
        env["CI"] = ci
        done = subprocess.run([sys.executable, "-c", code, str(clone), str(probe_test)], capture_output=True,
                              text=True, env=env, cwd=clone, timeout=120)
        assert re.search(want, done.stdout), done.stdout
        assert memory.BUILD_SCRIPT in done.stdout, done.stdout
