# SPDX-License-Identifier: MIT
"""Firmware solver benchmark, run under the MicroPython Unix port by `armctl bench`.

    micropython -X heapsize=256k bench_solver.py ROOT N_SOLVES

ROOT is the project root (for boards/ and firmware/), N_SOLVES the number of
solves per timed loop and of targets whose answers are checked. Prints one
JSON object on its last line of output.

Run it with a board-sized heap: on the Unix port the cost of every float
allocation grows with the heap size (a 4 MB heap makes the solver 5x slower
than a 256 KB one, cache misses in allocation and sweep), so a big heap
would measure the PC's caches, not the solver. Timed loops therefore cycle
over a set of SET_SIZE targets that fits such a heap.

What it measures, all in this one process:
- solves per second of the firmware's safe solver (armfw.twolink.solve, the
  planar arm's ik, the 5-joint arm's ik plus servo mapping) and of the
  textbook law-of-cosines + acos + atan solver below, on the same targets;
- heap bytes allocated per solve (gc.disable(), gc.mem_alloc() around
  HEAP_ITEMS solves, minus half as many: what a loop allocates once cancels);
- heap bytes per move step: servo mapping into a preallocated list, then the
  PCA9685 driver writing every channel over a fake I2C bus;
- the firmware as it loads (its hot functions @micropython.native where the
  port has the emitter, armfw.emitters) against the same source as bytecode
  (the decorators left out at run time, as a port without the emitter runs
  it), and viper on the two-link core: never a hand-made copy;
- the cost of the operations each solver is made of, to explain the ratio;
- how often the textbook solver is wrong on the same reachable targets.

The bytecode copies are measured first and then freed: every other figure,
the textbook solver's too, is timed in a heap that holds one copy of the
firmware and one of each board it needs, as a board's heap does (a second
copy means less heap free and more objects for every collection to mark).
A firmware without armfw.emitters (before issue 13) runs as it loads, as
bytecode, so the same script measures it.
"""

import gc
import json
import sys
import time
import micropython
from math import acos, atan, atan2, cos, sin, sqrt, isfinite

import armfw
from armfw import board, kinematics, numeric, twolink
from armfw.kinematics import MIN_MOTION

# On a board (`mpremote run`, no arguments): the current folder and 1000 solves.
ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
N_SOLVES = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
SET_SIZE = 100       # distinct targets per arm in the timed loops
HEAP_ITEMS = 8       # solves per heap measurement (gc is off: they must fit)
REPEATS = 5          # each timed loop runs this often; the fastest run counts
FK_TOL_MM = 0.01     # an answer whose FK misses the target by more is wrong
FK_TOL_RAD = 1e-5


# --- The textbook solver: what courses teach and what makes NaN on a board ---

def textbook_twolink(l1, l2, x, y, elbow):
    """Law of cosines, acos, atan; no reachability check, no atan2."""
    c2 = (x * x + y * y - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
    t2 = elbow * acos(c2)
    t1 = atan(y / x) - atan(l2 * sin(t2) / (l1 + l2 * cos(t2)))
    return t1, t2


def textbook_arm5(l1, l2, l3, base, x, y, z, pitch, elbow):
    """The 5-joint arm the textbook way (same frame as armfw.kinematics.Arm5Solver)."""
    q1 = atan(y / x)
    r = sqrt(x * x + y * y)
    t2, t3 = textbook_twolink(l1, l2, z - base - l3 * cos(pitch), r - l3 * sin(pitch), elbow)
    return q1, t2, t3, pitch - t2 - t3, 0.0


def textbook_pulses(q, center_us, us_per_rad):
    return [int(center_us + a * us_per_rad) for a in q]


# --- Targets: FK of random joint angles inside the limits (all reachable) ---

class Lcg:
    """Deterministic uniform numbers, the same on every port."""

    def __init__(self, seed):
        self.state = seed

    def uniform(self, lo, hi):
        self.state = (self.state * 1103515245 + 12345) & 0x7FFFFFFF
        return lo + (hi - lo) * self.state / 0x7FFFFFFF


def make_targets(arm, n, seed, targets=None, poses=None):
    """n reachable targets of arm (and the poses that reach them), into targets and
    poses (lists of n, made here when None)."""
    rnd = Lcg(seed)
    # Allocated whole up front: a list grown one item at a time needs ever
    # larger contiguous blocks in a heap the solver's garbage fragments.
    if targets is None:
        targets = [None] * n
        poses = [None] * n
    found = 0
    q = [0.0] * arm.n
    p = [0.0] * len(arm.targets)
    out = [0.0] * arm.n
    while found < n:
        for i in range(arm.n):
            q[i] = rnd.uniform(arm.lo[i], arm.hi[i])
        if arm.kind == "arm5":
            q[4] = 0.0
        arm.tool_pose(q, p)      # the pitch in the direction the tool reaches
        t = tuple(p)
        if arm.ik(t, out, None, MIN_MOTION) <= 1:
            targets[found] = t
            poses[found] = list(out)
            found += 1
    return targets, poses


# --- Measuring ---

def side_by_side(*jobs):
    """Items per second of each job (fn, items, *args), over N_SOLVES items each.

    The jobs run in turns, REPEATS rounds, and each keeps its fastest round:
    on a shared machine the jobs compared see the same background load, so
    their ratios hold even when the absolute rates wobble.
    """
    best = [0] * len(jobs)
    for k in range(REPEATS):
        for j in range(len(jobs)):
            fn = jobs[j][0]
            items = jobs[j][1]
            args = jobs[j][2:]
            rounds = max(1, N_SOLVES // len(items))
            gc.collect()
            t0 = time.ticks_us()
            for r in range(rounds):
                fn(items, *args)
            dt = max(1, time.ticks_diff(time.ticks_us(), t0))
            if k == 0 or dt < best[j]:
                best[j] = dt
    rates = []
    for j in range(len(jobs)):
        rounds = max(1, N_SOLVES // len(jobs[j][1]))
        rates.append(rounds * len(jobs[j][1]) * 1e6 / best[j])
    return rates


def per_second(fn, items, *args):
    """Items of fn's loop per second, over N_SOLVES items (items cycled)."""
    return side_by_side((fn, items) + args)[0]


def heap_total(fn, items, *args):
    gc.collect()
    gc.disable()
    try:
        a = gc.mem_alloc()
        fn(items, *args)
        b = gc.mem_alloc()
    finally:
        gc.enable()
    return b - a


def heap_per_item(fn, items, *args):
    """Heap bytes one item of fn's loop allocates (an integer, never negative).

    The difference between a run over all items and one over half of them, so
    what a run allocates once (bound methods, the loop's iterator) cancels.
    """
    fn(items[:1], *args)   # a first call may intern names or grow caches
    half = len(items) // 2
    extra = heap_total(fn, items, *args) - heap_total(fn, items[:half], *args)
    return max(0, int(extra / (len(items) - half) + 0.5))


def _one_float(x):
    return x * 1.5


def heap_free():
    gc.collect()
    return gc.mem_free()


def gc_block_bytes():
    gc.collect()
    gc.disable()
    a = gc.mem_alloc()
    _one_float(2.0)
    b = gc.mem_alloc()
    gc.enable()
    return b - a


# --- The loops measured (each item of `items` is one solve or one step) ---

def run_core_safe(items, l1, l2, out):
    solve = twolink.solve
    for t in items:
        solve(l1, l2, t[0], t[1], 1, out)


def run_core_textbook(items, l1, l2, out):
    for t in items:
        textbook_twolink(l1, l2, t[0], t[1], 1)


def run_arm_ik(items, arm, out, current):
    ik = arm.ik
    for t in items:
        ik(t, out, current, MIN_MOTION)


def run_planar_textbook(items, arm, out, current):
    l1 = arm.l1
    l2 = arm.l2
    for t in items:
        textbook_twolink(l1, l2, t[0], t[1], 1)


def run_arm5_safe(items, arm, servos, out, current, out_us):
    ik = arm.ik
    pulses = servos.pulses
    for t in items:
        if ik(t, out, current, MIN_MOTION) <= 1:
            pulses(out, out_us)


def run_arm5_textbook(items, arm, servos, out, current, out_us):
    l1 = arm.l1
    l2 = arm.l2
    l3 = arm.l3
    base = arm.base
    c = servos.center_us[0]
    k = servos.us_per_rad[0]
    for t in items:
        textbook_pulses(textbook_arm5(l1, l2, l3, base, t[0], t[1], t[2], t[3], 1), c, k)


def run_servo_map(poses, servos, out_us):
    pulses = servos.pulses
    for q in poses:
        pulses(q, out_us)


def run_driver_write(poses, channels, out_us, driver):
    n = len(channels)
    set_us = driver.set_us
    for q in poses:
        for j in range(n):
            set_us(channels[j], out_us[j])


def run_move_step(poses, servos, out_us, driver):
    pulses = servos.pulses
    set_us = driver.set_us
    channels = servos.channels
    n = servos.n
    for q in poses:
        if pulses(q, out_us) < 0:
            for j in range(n):
                set_us(channels[j], out_us[j])


# --- Keep-out zones: the check every motion step makes, and what it adds to ik ---

def run_zone_check(poses, zones):
    clear = zones.clear
    for q in poses:
        clear(q)


def run_arm_ik_zoned(items, arm, zones, out, current):
    # The arm's own zones for this loop only: the other figures solve without them.
    arm.zones = zones
    try:
        run_arm_ik(items, arm, out, current)
    finally:
        arm.zones = None


def zone_figures(arm, zones, targets, poses, current, out):
    """The zone check per step (arm5 default zones: floor and base column); arm's ik with
    those zones and without them, measured side by side."""
    heap = heap_per_item(run_zone_check, poses[:HEAP_ITEMS], zones)
    check, with_zones, without = side_by_side((run_zone_check, poses, zones),
                                              (run_arm_ik_zoned, targets, arm, zones, out, current),
                                              (run_arm_ik, targets, arm, out, current))
    return {"zones": ",".join(zones.zone_names), "links": len(zones.link_names),
            "check_per_s": check, "check_us": 1e6 / check, "check_heap_bytes": heap,
            "ik_free_per_s": without, "ik_zoned_per_s": with_zones,
            "check_vs_ik": without / check,
            "ik_share": max(0.0, 1.0 - with_zones / without)}


# --- Where a 5-joint solve spends its time (armfw internals, measured only) ---

def run_ik_and_choice(items, arm, out, current):
    # Each ik, then its branch choice once more: the choice's own time is the difference.
    ik = arm.ik
    cheapest = arm._cheapest
    for t in items:
        ik(t, out, current, MIN_MOTION)
        cheapest(current, MIN_MOTION)


def run_twolink_calls(points, solve_pair, pair):
    for p in points:
        solve_pair(p[0], p[1], pair)


def arm5_breakdown(arm, targets, current, out):
    """Calls per second of parts of Arm5Solver.ik, and each part's share of a whole ik's
    time (the rest: the input checks, the wrist point, the candidates' limit checks and
    the calls; they are inline in ik)."""
    try:
        arm.ik(targets[0], out, current, MIN_MOTION)
        # The one two-link solve (both branches) an ik makes, on its wrist point
        # (worked out before the timing); the turned-base candidates are its mirror images.
        points = _WRIST_POINTS
        for i in range(len(targets)):
            t = targets[i]
            points[i] = (t[2] - arm.base - arm.l3 * cos(t[3]), sqrt(t[0] * t[0] + t[1] * t[1]) - arm.l3 * sin(t[3]))
        ik, both, pair = side_by_side((run_arm_ik, targets, arm, out, current),
                                      (run_ik_and_choice, targets, arm, out, current),
                                      (run_twolink_calls, points, arm._links.solve_pair, [0.0, 0.0, 0.0, 0.0]))
    except Exception as e:
        return "not available: %s: %s" % (type(e).__name__, e)
    choice = 1.0 / max(1e-9, 1.0 / both - 1.0 / ik)
    return {"one two-link solve (TwoLink.solve_pair)": {"per_s": pair, "share": ik / pair},
            "branch choice (Arm5Solver._cheapest)": {"per_s": choice, "share": ik / choice}}


# --- Operation costs (why one solver costs what it does) ---

def op_empty(n, x, y):
    for i in range(n):
        pass


def op_finite2(n, x, y):
    finite = numeric.finite
    for i in range(n):
        finite(x, y)


def op_isfinite(n, x, y):
    for i in range(n):
        isfinite(x)


def op_sqrt(n, x, y):
    for i in range(n):
        sqrt(x)


def op_atan2(n, x, y):
    for i in range(n):
        atan2(y, x)


def op_atan_div(n, x, y):
    for i in range(n):
        atan(y / x)


def op_acos(n, x, y):
    for i in range(n):
        acos(y)


def op_sin(n, x, y):
    for i in range(n):
        sin(x)


def op_mul_add(n, x, y):
    for i in range(n):
        x * y + x


def op_call3(n, x, y):
    for i in range(n):
        _three(x, y, 1)


def _three(a, b, c):
    return None


OPS = (("loop", op_empty), ("finite(x, y) call", op_finite2), ("isfinite(x)", op_isfinite),
       ("sqrt", op_sqrt), ("atan2", op_atan2), ("atan(y / x)", op_atan_div), ("acos", op_acos),
       ("sin", op_sin), ("x * y + x", op_mul_add), ("call f(a, b, c)", op_call3))


def op_costs(n):
    """Nanoseconds per operation, the empty loop's cost subtracted."""
    raw = {}
    for name, fn in OPS:
        best = 0
        for k in range(REPEATS):
            t0 = time.ticks_us()
            fn(n, 1.2345, 0.5678)
            dt = time.ticks_diff(time.ticks_us(), t0)
            if k == 0 or dt < best:
                best = dt
        raw[name] = best * 1000.0 / n
    loop = raw.pop("loop")
    costs = {"loop": round(loop, 1)}
    for name in raw:
        costs[name] = round(max(0.0, raw[name] - loop), 1)
    return costs


# --- The firmware as loaded (native hot functions where the port has the
# emitter, armfw.emitters) against its bytecode, and viper on the two-link core ---

def compiled(path, emitter, only=None):
    """Execute a firmware module's source with its own @micropython decorators
    replaced: by @micropython.<emitter> on the functions named in only (None:
    every def), or by nothing at all (emitter None: the bytecode build)."""
    # Comment lines and docstrings left out (a docstring becomes `pass`, in case
    # it was the whole body), and the module executed one top-level definition
    # at a time, in one namespace, as the whole text runs: the compiler's peak
    # grows with the text it compiles, and kinematics.py at 44 KB no longer
    # compiled in one piece in the board-sized heap (30 KB did).
    ns = {"micropython": micropython, "__name__": "armfw_%s" % emitter}
    lines = []
    in_docstring = False
    with open(path) as f:
        for line in f:
            body = line.lstrip()
            if in_docstring:
                in_docstring = '"""' not in body
                continue
            indent = line[:len(line) - len(body)]
            if body.startswith('"""'):
                in_docstring = '"""' not in body[3:]
                lines.append(indent + "pass\n")
                continue
            if body.startswith("@micropython.") or body.startswith("#"):
                continue
            if not indent and (body.startswith("def ") or body.startswith("class ")):
                _run_lines(lines, ns)       # the statements before this definition are complete
            if not indent and body.startswith("_") and " = const(" in body:
                # A private const exists only in the text compiled with it: made a
                # plain global, the later definitions find it.
                line = line.replace(" = const(", " = (", 1)
            if body.startswith("def "):
                name = body[4:body.index("(")]
                if emitter is not None and (only is None or name in only):
                    lines.append(indent + "@micropython." + emitter + "\n")
            lines.append(line)
    _run_lines(lines, ns)
    return ns


def _run_lines(lines, ns):
    """exec the lines gathered so far in ns, emptying the list first (its text is what runs)."""
    if lines:
        text = "".join(lines)
        del lines[:]
        gc.collect()
        exec(text, ns)


class Module:
    """Attribute access over an exec namespace, so `twolink.solve` finds the compiled one."""

    def __init__(self, ns):
        for k in ns:
            setattr(self, k, ns[k])


def bytecode_builds(planar_board, arm5_board):
    """The solver modules as bytecode (their decorators left out), as a port without
    the native emitter runs them: (twolink.solve, planar, arm5, servo map)."""
    fw = ROOT + "/firmware/armfw/"
    tl = compiled(fw + "twolink.py", None)
    kin = compiled(fw + "kinematics.py", None)
    kin["twolink"] = Module(tl)
    sv = compiled(fw + "servo.py", None)
    p = planar_board.solver
    planar = kin["PlanarSolver"](p.l1, p.l2, p.names, p.lo, p.hi, p.home)
    a = arm5_board.solver
    arm5 = kin["Arm5Solver"](a.l1, a.l2, a.l3, a.base, a.names, a.lo, a.hi, a.home)
    s = arm5_board.servos
    servos = sv["ServoMap"](s.channels, s.offsets, s.signs, s.center_us, s.us_per_rad, s.min_us, s.max_us)
    return tl["solve"], planar, arm5, servos


# Viper compiles the two-link core as it is; the one-branch wrapper `solve`
# stays bytecode (viper reads its branch-sign compare as object-vs-machine-int).
VIPER_FUNCTIONS = ("solve_pair",)


def viper_solve():
    ns = compiled(ROOT + "/firmware/armfw/twolink.py", "viper", VIPER_FUNCTIONS)
    return ns["solve"]


def run_core_with(items, solve, l1, l2, out):
    for t in items:
        solve(l1, l2, t[0], t[1], 1, out)


def emitter_figures(natives, v_solve, planar, arm5, servos, p_targets, a_targets, p_home, a_home,
                    out2, out5, out_us, ah):
    """The firmware as loaded against its bytecode copies (natives, from bytecode_builds)
    and viper on the two-link core (v_solve), side by side while the copies are loaded;
    "heap_free_bytes" is the heap these runs had (the other figures have more)."""
    emitters = {"loaded": getattr(armfw, "emitters", {})}
    if isinstance(natives, str):
        emitters["native"] = natives
    if isinstance(v_solve, str):
        emitters["viper"] = v_solve
    if isinstance(natives, str) and isinstance(v_solve, str):
        return emitters
    emitters["heap_free_bytes"] = heap_free()
    l1 = planar.l1
    l2 = planar.l2
    core_jobs = [(run_core_safe, p_targets, l1, l2, out2)]
    if not isinstance(natives, str):
        b_solve, b_planar, b_arm5, b_servos = natives
        core_jobs.append((run_core_with, p_targets, b_solve, l1, l2, out2))
    if not isinstance(v_solve, str):
        core_jobs.append((run_core_with, p_targets, v_solve, l1, l2, out2))
    core = side_by_side(*core_jobs)
    if not isinstance(v_solve, str):
        emitters["viper"] = {"twolink_per_s": core[-1], "twolink_gain": core[-1] / core[0],
                             "functions": list(VIPER_FUNCTIONS)}
    if isinstance(natives, str):
        return emitters
    p_rates = side_by_side((run_arm_ik, p_targets, planar, out2, p_home),
                           (run_arm_ik, p_targets, b_planar, out2, p_home))
    a_rates = side_by_side((run_arm5_safe, a_targets, arm5, servos, out5, a_home, out_us),
                           (run_arm5_safe, a_targets, b_arm5, b_servos, out5, a_home, out_us))
    # The firmware as loaded (its hot functions native) over the same source as bytecode.
    emitters["native"] = {
        "twolink_per_s": core[0], "twolink_bytecode_per_s": core[1], "twolink_gain": core[0] / core[1],
        "planar_per_s": p_rates[0], "planar_bytecode_per_s": p_rates[1], "planar_gain": p_rates[0] / p_rates[1],
        "arm5_per_s": a_rates[0], "arm5_bytecode_per_s": a_rates[1], "arm5_gain": a_rates[0] / a_rates[1],
        "arm5_heap_bytes": heap_per_item(run_arm5_safe, ah, arm5, servos, out5, a_home, out_us),
        "arm5_bytecode_heap_bytes": heap_per_item(run_arm5_safe, ah, b_arm5, b_servos, out5, a_home, out_us)}
    return emitters


# --- Correctness of each solver on the same targets ---

def check_answers(arm, targets, solver):
    """Counts of answers that raise, miss the target (FK) or break a joint limit."""
    raised = 0
    wrong = 0
    outside = 0
    for t in targets:
        try:
            q = solver(t)
        except (ValueError, ZeroDivisionError):
            raised += 1
            continue
        if q is None:
            raised += 1
            continue
        mm, rad = arm.fk_error(t, q)
        if not (mm <= FK_TOL_MM and rad <= FK_TOL_RAD):
            wrong += 1
        elif not arm.within_limits(q):
            outside += 1
    n = len(targets)
    return {"n": n, "raised": raised, "fk_wrong": wrong, "outside_limits": outside,
            "bad_fraction": (raised + wrong + outside) / n}


def safe_answer(arm):
    def solve(t):
        out = [0.0] * arm.n
        if arm.ik(t, out, None, MIN_MOTION) > 1:
            return None
        return out
    return solve


def textbook_answer(arm):
    if arm.kind == "planar":
        return lambda t: textbook_twolink(arm.l1, arm.l2, t[0], t[1], 1)
    return lambda t: textbook_arm5(arm.l1, arm.l2, arm.l3, arm.base, t[0], t[1], t[2], t[3], 1)


# --- The PCA9685 driver over a bus that only remembers what was written ---

class FakeI2C:
    """The machine.I2C memory-access methods the driver uses, over a 256-byte register file."""

    def __init__(self):
        self.regs = bytearray(256)

    def writeto_mem(self, addr, memaddr, buf, addrsize=8):
        for i in range(len(buf)):
            self.regs[(memaddr + i) & 0xFF] = buf[i]

    def readfrom_mem_into(self, addr, memaddr, buf, addrsize=8):
        for i in range(len(buf)):
            buf[i] = self.regs[(memaddr + i) & 0xFF]


def make_pca9685():
    """A PCA9685 driver on the fake bus, or (None, reason) if the module is not there."""
    try:
        from armfw.pca9685 import PCA9685
    except ImportError as e:
        return None, "armfw.pca9685 not available (%s)" % e
    except MemoryError:
        return None, "out of heap loading armfw.pca9685"
    try:
        return PCA9685(FakeI2C(), 0x40, 50, 25000000), None
    except Exception as e:
        return None, "PCA9685 on a fake bus failed: %s: %s" % (type(e).__name__, e)


# --- The run ---

def ratio(safe_rate, textbook_rate):
    """Safe solver's time per solve over the textbook one's (above 1: safe costs more)."""
    return textbook_rate / safe_rate


# The checked targets' lists, made before the timed runs fragment the heap: made
# later, a 100-item list found no block of 800 bytes in some runs, depending
# on nothing more than the length of the checkout's path.
_CHECK_TARGETS = [None] * SET_SIZE
_CHECK_POSES = [None] * SET_SIZE
_WRIST_POINTS = [None] * SET_SIZE      # arm5_breakdown's, for the same reason


def check_arm(arm, seed):
    """check_answers of both solvers over N_SOLVES targets, SET_SIZE at a time."""
    safe = None
    textbook = None
    for chunk in range(max(1, N_SOLVES // SET_SIZE)):
        # A collection per chunk: the timed runs leave the board-sized heap fragmented.
        gc.collect()
        targets = make_targets(arm, SET_SIZE, seed + chunk, _CHECK_TARGETS, _CHECK_POSES)[0]
        safe = merge(safe, check_answers(arm, targets, safe_answer(arm)))
        textbook = merge(textbook, check_answers(arm, targets, textbook_answer(arm)))
    return safe, textbook


def merge(total, part):
    if total is None:
        return part
    for k in ("n", "raised", "fk_wrong", "outside_limits"):
        total[k] += part[k]
    total["bad_fraction"] = (total["raised"] + total["fk_wrong"] + total["outside_limits"]) / total["n"]
    return total


def print_json(res):
    """print(json.dumps(res)), one top-level item at a time: a heap fragmented by
    the runs may hold no block big enough for the whole text."""
    sep = "{"
    for key in res:
        sys.stdout.write(sep + json.dumps(key) + ": " + json.dumps(res[key]))
        sep = ", "
    sys.stdout.write("}\n")


def main():
    planar_board = board.load(ROOT + "/boards/sim_planar.json")
    arm5_board = board.load(ROOT + "/boards/sim_arm5.json")
    # Every board loaded before the timed runs fragment the heap (loaded after
    # them, sim_arm5_tool's zone storage found no block in some runs).
    tool_arm = board.load(ROOT + "/boards/sim_arm5_tool.json").solver
    tool_arm.zones = None
    # Compiled first, while the heap is not yet fragmented by the targets.
    # (A firmware from before the emitters, e.g. the one before issue 13, runs as bytecode.)
    loaded = getattr(armfw, "emitters", {})
    if "native" not in [loaded[m] for m in loaded]:
        natives = "not available: the firmware loaded no module native (armfw.emitters %r)" % (loaded,)
    else:
        try:
            natives = bytecode_builds(planar_board, arm5_board)
        except Exception as e:
            natives = "not available: %s: %s" % (type(e).__name__, e)
    try:
        v_solve = viper_solve()
    except Exception as e:
        v_solve = "not available: %s: %s" % (type(e).__name__, e)
    driver, why = make_pca9685()
    planar = planar_board.solver
    arm5 = arm5_board.solver
    # The solver figures compare the solver alone with the textbook one; the
    # zones get their own section (zone_figures), which lends them back to arm5.
    planar.zones = None
    arm5_zones = arm5.zones
    arm5.zones = None
    servos = arm5_board.servos
    p_targets = make_targets(planar, SET_SIZE, 12345)[0]
    a_targets, a_poses = make_targets(arm5, SET_SIZE, 54321)
    p_home = list(planar.home)
    a_home = list(arm5.home)
    out2 = [0.0, 0.0]
    out5 = [0.0] * 5
    out_us = [0] * 5
    l1 = planar.l1
    l2 = planar.l2
    ph = p_targets[:HEAP_ITEMS]
    ah = a_targets[:HEAP_ITEMS]

    # The emitters first, while their copies are loaded; then the copies go, and
    # every other figure is measured in a heap that holds, as a board's does,
    # one copy of the firmware: a second copy leaves less heap free (more
    # collections) and more objects for every collection to mark, which slowed
    # every competitor alike by 5-15 %.
    emitters = emitter_figures(natives, v_solve, planar, arm5, servos, p_targets, a_targets, p_home, a_home,
                               out2, out5, out_us, ah)
    natives = v_solve = None
    gc.collect()

    res = {"port": {"version": ".".join(str(v) for v in sys.implementation.version[:3]),
                    "machine": sys.implementation._machine if hasattr(sys.implementation, "_machine") else "",
                    "float_bits": 64 if 1.0 + 2.0 ** -40 != 1.0 else 32,
                    "gc_block_bytes": gc_block_bytes()},
           "heap_total_bytes": gc.mem_alloc() + gc.mem_free(),
           # What the timed loops have to allocate in: the firmware and the
           # targets are loaded by now. Less of it means more collections.
           "heap_free_bytes": heap_free(),
           "n_solves": N_SOLVES, "set_size": SET_SIZE, "heap_items": HEAP_ITEMS}

    # Two-link core: safe and textbook side by side.
    core_safe, core_textbook = side_by_side((run_core_safe, p_targets, l1, l2, out2),
                                            (run_core_textbook, p_targets, l1, l2, out2))
    res["twolink"] = {
        "safe_per_s": core_safe, "textbook_per_s": core_textbook,
        "cost_ratio": ratio(core_safe, core_textbook),
        "safe_heap_bytes": heap_per_item(run_core_safe, ph, l1, l2, out2),
        "textbook_heap_bytes": heap_per_item(run_core_textbook, ph, l1, l2, out2)}

    p_rates = side_by_side((run_arm_ik, p_targets, planar, out2, p_home),
                           (run_planar_textbook, p_targets, planar, out2, p_home))
    p_safe = p_rates[0]
    res["planar"] = {
        "safe_per_s": p_safe, "textbook_per_s": p_rates[1], "cost_ratio": ratio(p_safe, p_rates[1]),
        "safe_heap_bytes": heap_per_item(run_arm_ik, ph, planar, out2, p_home),
        "textbook_heap_bytes": heap_per_item(run_planar_textbook, ph, planar, out2, p_home),
    }
    res["planar"]["safe_answers"], res["planar"]["textbook_answers"] = check_arm(planar, 1000)

    arm5_jobs = [(run_arm_ik, a_targets, arm5, out5, a_home),
                 (run_arm5_safe, a_targets, arm5, servos, out5, a_home, out_us),
                 (run_arm5_textbook, a_targets, arm5, servos, out5, a_home, out_us)]
    a_rates = side_by_side(*arm5_jobs)
    a_safe = a_rates[1]
    res["arm5"] = {
        "ik_only_per_s": a_rates[0],
        "safe_per_s": a_safe, "textbook_per_s": a_rates[2], "cost_ratio": ratio(a_safe, a_rates[2]),
        "safe_heap_bytes": heap_per_item(run_arm5_safe, ah, arm5, servos, out5, a_home, out_us),
        "textbook_heap_bytes": heap_per_item(run_arm5_textbook, ah, arm5, servos, out5, a_home, out_us),
    }
    res["arm5"]["safe_answers"], res["arm5"]["textbook_answers"] = check_arm(arm5, 2000)

    # A tool offset (sim_arm5_tool: 4, 12, 25 mm) takes the general closed form
    # (per half turn of the base: the lateral offset's base angle, then the plane).
    t_rates = side_by_side((run_arm_ik, a_targets, arm5, out5, a_home),
                           (run_arm_ik, a_targets, tool_arm, out5, a_home))
    res["tool_offset"] = {
        "without_per_s": t_rates[0], "with_per_s": t_rates[1], "cost_ratio": ratio(t_rates[1], t_rates[0]),
        "without_heap_bytes": heap_per_item(run_arm_ik, ah, arm5, out5, a_home),
        "with_heap_bytes": heap_per_item(run_arm_ik, ah, tool_arm, out5, a_home)}

    res["arm5"]["breakdown"] = arm5_breakdown(arm5, a_targets, a_home, out5)
    res["zones"] = zone_figures(arm5, arm5_zones, a_targets, a_poses, a_home, out5)

    poses = a_poses[:HEAP_ITEMS]
    step = {"servo_map_heap_bytes": heap_per_item(run_servo_map, poses, servos, out_us)}
    if driver is None:
        step["driver"] = "not available: " + why
        step["servo_map_per_s"] = per_second(run_servo_map, a_poses, servos, out_us)
    else:
        servos.pulses(a_poses[0], out_us)
        step["driver"] = "pca9685 over a fake I2C"
        step["driver_write_heap_bytes"] = heap_per_item(run_driver_write, poses, servos.channels, out_us, driver)
        step["move_step_heap_bytes"] = heap_per_item(run_move_step, poses, servos, out_us, driver)
        step["servo_map_per_s"], step["move_step_per_s"] = side_by_side(
            (run_servo_map, a_poses, servos, out_us), (run_move_step, a_poses, servos, out_us, driver))
    res["move_step"] = step

    res["emitters"] = emitters

    res["op_ns"] = op_costs(max(N_SOLVES, 2000) * 5)
    # The heap is board-sized: free the targets and compiled code before
    # building the output text.
    p_targets = a_targets = a_poses = ph = ah = poses = arm5_zones = driver = None
    gc.collect()
    print_json(res)


main()
