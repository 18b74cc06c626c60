# SPDX-License-Identifier: MIT
"""`armctl bench --short`: runs end to end and writes sane figures.

Structure and sanity only (rates positive, fractions in [0, 1], heap figures
whole numbers >= 0, answers the FK refutes counted as failures): speed goals
live in the benchmark's printed figures, never in timed assertions here.
"""

import json
import math
import subprocess
import sys

import pytest

from conftest import ROOT

from armctl.bench import estimate

# A deadline against a hang, not a speed goal: `bench --short` takes about 2.5 minutes
# alone (most of it the board-like memory bisections) and several times that beside
# other work. Its fixture's setup counts against the first test that asks for it.
BENCH_DEADLINE_S = 1500
pytestmark = pytest.mark.timeout(BENCH_DEADLINE_S + 300)


@pytest.fixture(scope="module")
def bench(tmp_path_factory, micropython):
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "armctl.cli", "bench", "--short", "--json", str(out)],
                          capture_output=True, text=True, timeout=BENCH_DEADLINE_S, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text()), proc.stdout


def positive(v):
    return isinstance(v, (int, float)) and math.isfinite(v) and v > 0


def heap(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def fraction(v):
    return isinstance(v, (int, float)) and 0.0 <= v <= 1.0


def test_every_section_ran(bench):
    result, text = bench
    for key in ("meta", "firmware", "numeric", "batch", "protocol", "console", "fallback", "motion", "memory", "estimate"):
        assert key in result
    # The firmware needs only MicroPython, the batch only numpy: never "not available".
    assert isinstance(result["firmware"], dict), result["firmware"]
    assert isinstance(result["batch"], dict), result["batch"]
    assert result["meta"]["short"] is True
    assert "ESTIMATE" in text and "NOT measured" in text


def test_firmware_figures(bench, report):
    fw = bench[0]["firmware"]
    assert fw["port"]["gc_block_bytes"] in (16, 32)
    for key in ("twolink", "planar", "arm5"):
        s = fw[key]
        assert positive(s["safe_per_s"]) and positive(s["textbook_per_s"]) and positive(s["cost_ratio"])
        assert heap(s["safe_heap_bytes"]) and heap(s["textbook_heap_bytes"])
    for key in ("planar", "arm5"):
        safe = fw[key]["safe_answers"]
        textbook = fw[key]["textbook_answers"]
        assert safe["n"] == textbook["n"] > 0
        # Every target is FK of an in-limit pose: the safe solver must solve all of them right.
        assert safe["raised"] == safe["fk_wrong"] == safe["outside_limits"] == 0
        assert fraction(textbook["bad_fraction"])
        # atan(y / x) mirrors two quadrants: targets behind the base come out wrong.
        assert textbook["fk_wrong"] > 0
        assert textbook["raised"] + textbook["fk_wrong"] + textbook["outside_limits"] <= textbook["n"]
    z = fw["zones"]
    assert z["zones"] == "floor,base" and z["links"] == 3
    assert positive(z["check_per_s"]) and positive(z["ik_free_per_s"]) and positive(z["ik_zoned_per_s"])
    assert heap(z["check_heap_bytes"]) and fraction(z["ik_share"]) and positive(z["check_vs_ik"])
    step = fw["move_step"]
    assert heap(step["servo_map_heap_bytes"]) and positive(step["servo_map_per_s"])
    if "driver_write_heap_bytes" in step:
        assert heap(step["driver_write_heap_bytes"]) and heap(step["move_step_heap_bytes"])
        assert step["move_step_heap_bytes"] >= step["driver_write_heap_bytes"]
    else:
        assert step["driver"].startswith("not available")
    for name in ("native", "viper"):
        v = fw["emitters"][name]
        assert (isinstance(v, dict) and positive(v["twolink_gain"])) or v.startswith("not available")
    assert all(isinstance(v, (int, float)) and v >= 0 for v in fw["op_ns"].values())
    report("bench --short: 5-joint ik+map %.0f/s on the Unix port, %d B/solve, safe/textbook time x%.2f"
           % (fw["arm5"]["safe_per_s"], fw["arm5"]["safe_heap_bytes"], fw["arm5"]["cost_ratio"]))


def test_numeric_figures(bench):
    nm = bench[0]["numeric"]
    assert isinstance(nm, dict), nm
    assert isinstance(nm["ikpy"], dict), nm["ikpy"]     # ikpy is a test dependency
    assert nm["ikpy"]["fk_check_mm"] < 1e-6
    from armctl.bench import report
    for key in report.NUMERIC_ROWS:
        if key not in nm:
            assert key == "ccd"         # left out by default (armctl.bench.numeric.METHODS)
            continue
        v = nm[key]
        if isinstance(v, str):
            assert v.startswith("not available")
            continue
        assert 0 < v["targets"] <= nm["targets"]
        assert fraction(v["success_rate"])
        assert positive(v["median_ms"]) and v["p99_ms"] >= v["median_ms"]
        if "self_reported_ok_rate" in v:
            assert fraction(v["self_reported_ok_rate"]) and heap(v["false_ok"])
            assert positive(v["batch_per_s"]) and fraction(v["batch_success_rate"])


def test_batch_figures(bench):
    bt = bench[0]["batch"]
    for key in ("planar", "arm5"):
        v = bt[key]
        assert positive(v["batch_per_s"]) and positive(v["loop_per_s"]) and positive(v["speedup"])
        assert v["status_mismatches"] == 0            # the twin gives the firmware's answers
        assert v["max_angle_diff_rad"] < 1e-9
        assert fraction(v["solved_fraction"]) and 0 < v["solved_fraction"] < 1


def test_protocol_figures(bench):
    pr = bench[0]["protocol"]
    if isinstance(pr, str):
        assert pr.startswith("not available")
        return
    assert positive(pr["ik_replies_per_s"]) and positive(pr["ik_round_trip_median_ms"])
    assert positive(pr["ik_pipelined_replies_per_s"]) and pr["ik_pipelined_window"] > 1
    assert pr["ik_pipelined_runs"] >= 1 and positive(pr["ik_pipelined_host_cpu_us"])
    # The firmware's CPU needs enough /proc clock ticks: --short may leave it unmeasured.
    assert pr["ik_pipelined_firmware_cpu_us"] is None or positive(pr["ik_pipelined_firmware_cpu_us"])
    # 400 mm at the board's 2 mm line step: at least 200 steps (shorter where joints would be too fast).
    assert pr["line_steps"] >= 200
    assert positive(pr["line_median_ms"])


def test_fallback_figures(bench, report):
    fb = bench[0]["fallback"]
    assert isinstance(fb, dict), fb
    for key in ("chain_fallback_ms", "arm5_free_pitch_fallback_ms", "arm5_board_move_ms"):
        assert positive(fb[key])
    # Targets made by FK of poses clear of the zones are reachable: each one moved, by the host or
    # by the board, unless the board refused the joint path to it (COLLISION: through the table).
    for arm in ("chain", "arm5_free_pitch", "arm5_board"):
        assert fb[arm + "_moved"] + fb[arm + "_refused_collision"] == fb["targets"], arm
    assert fb["arm5_free_pitch_moved"] + fb["arm5_board_moved"] > 0 and fb["chain_moved"] > 0
    fk = fb["firmware_chain_fk"]
    assert positive(fk["fk_per_s"]) and heap(fk["heap_bytes_per_call"])
    # The script's own FK of the zero pose: the AL5D's tip as Robotics Toolbox puts it (mm).
    assert fk["check_fk_zero_mm"] == pytest.approx([175.51, 0.0, 215.37], abs=1e-3)
    report("bench --short: fallback %.1f ms/target (chain), %.1f ms (arm5, pitch free) vs board move %.1f ms; "
           "chain FK %.0f/s, %d B/call on the Unix port" % (
               fb["chain_fallback_ms"], fb["arm5_free_pitch_fallback_ms"], fb["arm5_board_move_ms"],
               fk["fk_per_s"], fk["heap_bytes_per_call"]))


def test_console_figures(bench):
    co = bench[0]["console"]
    assert isinstance(co, dict), co           # needs only MicroPython
    for key in ("quiet", "traffic"):
        v = co[key]
        # Every step of the line was stamped, with real waits between them: 100 mm at 0.5 mm
        # a step with its ramps, 202 steps (tests/test_console.py, LINE_STEPS).
        assert v["steps"] == 202 and all(positive(v[f]) for f in ("mean_ms", "median_ms", "p99_ms", "max_ms"))
    assert co["status_lines"] > 0             # `?` was answered while the line ran
    assert co["wait_bytes_per_200"] == 0


def test_memory_figures(bench, report):
    """Per route: the smallest heap, and the free heap and largest free block after boot and after
    the run, at least one block's worth and no more than the heap; or, without the board-like
    interpreter (no build script beside this clone), "not available" naming the script (not in CI)."""
    import os
    from armctl import memory
    mem, text = bench[0]["memory"], bench[1]
    if not isinstance(mem, dict):
        assert os.environ.get("CI") != "true", mem
        assert mem.startswith("not available") and memory.BUILD_SCRIPT in mem, mem
        return
    assert sorted(mem["routes"]) == sorted(memory.ROUTES)
    for name, r in mem["routes"].items():
        assert r["goal_kb"] == memory.GOALS_KB[name] and r["heap_kb"] == max(r["need_kb"], r["goal_kb"])
        assert r["need_kb"] == max(r["needs_kb"].values()) and r["need_kb"] % 4 == 0
        for key in ("boot", "run"):
            free, largest = r[key + "_free_bytes"], r[key + "_largest_free_bytes"]
            assert heap(free) and heap(largest) and 16 <= largest <= free <= r["heap_kb"] * 1024, (name, r)
        report("bench memory, %s: needs %d KB (goal %d KB); at %d KB %d KB free after boot, %d KB after the run"
               % (name, r["need_kb"], r["goal_kb"], r["heap_kb"], r["boot_free_bytes"] // 1024,
                  r["run_free_bytes"] // 1024))
    assert mem["routes"]["frozen"]["need_kb"] <= mem["routes"]["source"]["need_kb"]
    assert "Firmware heap on the board-like interpreter" in text
    # The code's share of the .mpy need: the two routes' needs, board by board.
    mpy, frozen = mem["routes"]["mpy"]["needs_kb"], mem["routes"]["frozen"]["needs_kb"]
    for board in mem["boards"]:
        assert "%s %d / %d" % (board, mpy[board] - frozen[board], memory.GOALS_KB["mpy"] - frozen[board]) in text
    # The names each board's run interns as .mpy, short of the seventh pool.
    names = mem["names"]
    assert names["six_pools"] == memory.NAMES_IN_SIX_POOLS and sorted(names["boards"]) == sorted(mem["boards"])
    assert all(0 < n < names["six_pools"] for n in names["boards"].values()), names
    assert "Names the run interns as .mpy" in text
    # What each request loads, .mpy: the boot first, then each module once, each row keeping heap.
    loads = mem["loads"]
    assert loads["requests"][0][0] is None and "protocol" in loads["requests"][0][1]
    modules = [m for _, loaded, _, _ in loads["requests"] for m in loaded]
    assert len(modules) == len(set(modules)) and {"gcode", "gcodeblend", "pathprofile"} <= set(modules), modules
    assert all(kept > names >= 0 for _, _, kept, names in loads["requests"])
    assert "What each request of the run first loads" in text


def test_code_resident_is_the_difference_of_the_two_routes_needs():
    from armctl.bench import report as bench_report
    routes = {"mpy": {"needs_kb": {"sim_arm5": 144, "sim_planar": None}, "goal_kb": 112},
              "frozen": {"needs_kb": {"sim_arm5": 56, "sim_planar": 48}}}
    # 144 - 56 KB of code and names; the 112 KB goal leaves them 112 - 56; no figure without a need.
    assert bench_report.code_resident(routes) == {"sim_arm5": (88, 56)}
    assert bench_report.code_resident_lines(routes) == [
        "  Code and names in the heap as .mpy (its need less frozen's; KB) / what the .mpy goal leaves "
        "them: sim_arm5 88 / 56"]
    assert bench_report.code_resident({}) == {} and bench_report.code_resident_lines({}) == []


def test_estimate_is_labelled_and_scaled(bench):
    result = bench[0]
    est = result["estimate"]
    assert "ESTIMATE" in est["label"] and "not a measurement" in est["label"]
    fw = result["firmware"]
    for board, spec in estimate.BOARDS.items():
        e = est[board]
        scale = spec["bm_float"] / estimate.UNIX_BM_FLOAT
        assert e["arm5.safe_per_s"] == pytest.approx(fw["arm5"]["safe_per_s"] * scale)
        lo, hi = e["arm5.safe_per_s_range"]
        assert lo <= e["arm5.safe_per_s"] <= hi
        # A float is one GC block on every port: 16-byte blocks on a 32-bit board.
        blocks = fw["arm5"]["safe_heap_bytes"] / fw["port"]["gc_block_bytes"]
        assert e["arm5.safe_heap_bytes"] == round(blocks * 16)


def test_line_figures(bench):
    line = bench[0]["firmware"]["line"]
    assert isinstance(line, dict), line
    # The protocol bench's 400 mm line in 2 mm steps, kept whole by the check pass where the ring holds it.
    from armfw.executor import RING_STEPS
    assert 190 <= line["steps"] <= 210 and line["kept_whole"] is (line["steps"] <= RING_STEPS)
    assert positive(line["first_step_ms"]) and positive(line["live_step_us"])
    assert heap(line["live_step_heap_bytes"])
    # The skip leaves some exact zone checks, fewer than one a step.
    assert positive(line["first_step_ms_zones_exact"]) and 0 < line["exact_zone_checks"] < line["steps"]
    # One solve per step at least (more where a step is halved); the continuation
    # answers the ordinary line's steps itself, the full ik only where it cannot prove.
    assert line["line_solves"] >= line["steps"]
    assert 0 <= line["full_ik_fallbacks"] <= line["line_solves"] // 20
    # The same line slower: longer than the ring, refilled after each step.
    long = line["long"]
    assert long["steps"] > RING_STEPS and long["kept_whole"] is False
    assert positive(long["first_step_ms"]) and positive(long["live_step_us"]) and positive(long["refill_us"])
    assert heap(long["live_step_heap_bytes"])
    est = bench[0]["estimate"]["rp2040_125MHz"]
    assert fraction(est["line_cpu_share"]) and positive(est["line_first_step_s"])


@pytest.fixture(scope="module")
def motion_bench(tmp_path_factory, micropython):
    """`armctl bench --short --only motion` alone (no board-like build): its JSON and text."""
    out = tmp_path_factory.mktemp("motion") / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "armctl.cli", "bench", "--short", "--only", "motion",
                           "--json", str(out)], capture_output=True, text=True, timeout=BENCH_DEADLINE_S, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text())["motion"], proc.stdout


def trapezoid_s(distance_deg, speed=90.0, accel=360.0):
    """Time-optimal time (s) of one joint from rest to rest over distance_deg, by hand:
    a triangle below speed^2 / accel, else a trapezoid (sim_arm5's standard class)."""
    d = abs(distance_deg)
    return 2 * math.sqrt(d / accel) if d < speed * speed / accel else d / speed + speed / accel


def test_motion_figures(motion_bench, report):
    from test_gcode_blend import chord_mm, steps_alone
    mo, text = motion_bench
    assert isinstance(mo, dict), mo
    step_s = 0.02
    home = (0, 0, 90, 0, 0)
    for m in mo["joint_moves"]:
        # The straight joint line at one class on every joint: the furthest joint's own time.
        optimal = trapezoid_s(max(abs(b - a) for a, b in zip(home, m["target_deg"])))
        assert m["ruckig_s"] == pytest.approx(optimal, rel=1e-4)
        assert optimal <= m["seconds"] < optimal + step_s + 1e-9
        assert m["seconds"] == pytest.approx(m["steps"] * step_s)
        assert 1.0 <= m["ratio"] == pytest.approx(m["seconds"] / m["ruckig_s"])
    c = mo["circle"]
    assert c["alone_steps"] == c["lines"] * steps_alone(chord_mm())
    assert 3 * c["blended_steps"] <= c["alone_steps"]
    # The 80 mm square, whole and cut: 4, 40, 160 and 800 lines. A plan is full at 64 lines, or at
    # 16 once its travel after the first line is 80 mm (4 v^2 / a at 100 mm/s, 500 mm/s^2): the
    # 2 mm lines reach 78 mm, one plan; 0.5 mm lines make 64 + 64 + 32; 0.1 mm lines 12 x 64 + 32.
    # None is faster than 80 mm at 100 mm/s (40 steps).
    assert [(d["lines"], d["plans"]) for d in mo["drawing"]] == [(4, 1), (40, 1), (160, 3), (800, 13)]
    assert all(d["steps"] > 40 for d in mo["drawing"])
    assert "drawn as 4 lines" in text
    r = mo["lines"]
    assert r["lines"] == 24 and r["steps"] > 24 * 10
    assert r["over"] == 0 and 0 < r["peak_accel_deg_s2"] <= r["limit_deg_s2"] == pytest.approx(360.0)
    co = mo["corners"]
    # The square: 8 sides of 20 mm at up to 100 mm/s, from rest to rest, each corner below 10 mm/s:
    # more steps than 160 mm at 2 mm a step.
    assert co["square_steps"] > 80 and co["circle_steps"] > 0
    assert 0 < co["square_peak_deg_s2"] <= co["limit_deg_s2"] and 0 < co["circle_peak_deg_s2"] <= co["limit_deg_s2"]
    assert "G1 corners at F6000" in text
    k = mo["cost"]
    for key in ("joint_fraction", "line_ramp_step", "blend_step"):
        assert positive(k[key + "_us"]) and heap(k[key + "_heap_bytes"])
        centre, fast, slow = k["rp2040_%s_us" % key]
        assert fast < centre < slow and centre == pytest.approx(
            k[key + "_us"] * estimate.UNIX_BM_FLOAT / estimate.BOARDS["rp2040_125MHz"]["bm_float"])
    assert k["live_step_heap_bytes"] <= k["live_step_budget_bytes"] == 200
    assert "Motion profiles on sim_arm5" in text and "within" in text
    report("bench motion: joint moves x%s of Ruckig; circle %d steps blended against %d (x%.2f); 24 random "
           "lines' joint acceleration at most %.0f deg/s^2; live step %d B"
           % ("/".join("%.3f" % m["ratio"] for m in mo["joint_moves"]), c["blended_steps"], c["alone_steps"],
              c["ratio"], r["peak_accel_deg_s2"], k["live_step_heap_bytes"]))


def test_motion_section_without_ruckig_leaves_its_column_out(micropython, monkeypatch):
    from armctl.bench import motion, report
    monkeypatch.setitem(sys.modules, "ruckig", None)        # import ruckig raises ImportError
    mo = motion.run(short=True)
    assert mo["ruckig"] is False
    assert all(m["ruckig_s"] is None and m["ratio"] is None and m["steps"] > 0 for m in mo["joint_moves"])
    text = "\n".join(report.motion_lines(mo))
    assert "ruckig not installed" in text
