# SPDX-License-Identifier: MIT
"""The benchmark's figures as a plain-text table (the JSON holds every figure)."""


def _rate(v):
    return "%s/s" % _num(v)


def _num(v):
    if v >= 100:
        return "{:,.0f}".format(v)
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def _pct(v):
    return "%.1f%%" % (100.0 * v)


def _unavailable(lines, title, value):
    lines.append("%s: %s" % (title, value))
    lines.append("")


def firmware_lines(fw):
    port = fw["port"]
    lines = ["Firmware solver under the MicroPython %s Unix port (float%d, %d-byte GC blocks, heap %d KB)"
             % (port["version"], port["float_bits"], port["gc_block_bytes"], fw["heap_total_bytes"] // 1024),
             "  %-34s %12s %12s %7s %15s" % ("", "safe", "textbook", "ratio", "heap B/solve")]
    rows = (("two-link core, one branch", "twolink"),
            ("planar arm ik (2 candidates)", "planar"),
            ("5-joint ik + servo map (4 cand.)", "arm5"))
    for label, key in rows:
        s = fw[key]
        lines.append("  %-34s %12s %12s %7.2f %7d / %-6d" % (
            label, _rate(s["safe_per_s"]), _rate(s["textbook_per_s"]), s["cost_ratio"],
            s["safe_heap_bytes"], s["textbook_heap_bytes"]))
    lines.append("  (ratio = safe time per solve / textbook time per solve; 5-joint ik alone: %s)"
                 % _rate(fw["arm5"]["ik_only_per_s"]))
    for key, label in (("planar", "planar"), ("arm5", "5-joint")):
        t = fw[key]["textbook_answers"]
        s = fw[key]["safe_answers"]
        lines.append("  %s, %d reachable targets: textbook wrong %s (FK misses %d, outside limits %d, "
                     "raised %d); safe solver wrong %d" % (
                         label, t["n"], _pct(t["bad_fraction"]), t["fk_wrong"], t["outside_limits"],
                         t["raised"], s["fk_wrong"] + s["outside_limits"] + s["raised"]))
    parts = fw["arm5"].get("breakdown")
    if isinstance(parts, dict):
        lines.append("  5-joint ik time shares: " + ", ".join(
            "%s %s" % (k, _pct(v["share"])) for k, v in parts.items()))
    t = fw.get("tool_offset")
    if isinstance(t, dict):
        lines.append("  5-joint ik with a tool offset (4, 12, 25 mm): %s vs %s without (%.2fx the time), "
                     "%d B vs %d B heap per solve"
                     % (_rate(t["with_per_s"]), _rate(t["without_per_s"]), t["cost_ratio"],
                        t["with_heap_bytes"], t["without_heap_bytes"]))
    z = fw.get("zones")
    if isinstance(z, dict):
        lines.append("  zone check per step (%s, %d links): %.1f us, %d B heap; one check = %s of a 5-joint ik; "
                     "ik with zones %s vs %s without (zones' share of a solve %s)"
                     % (z["zones"], z["links"], z["check_us"], z["check_heap_bytes"], _pct(z["check_vs_ik"]),
                        _rate(z["ik_zoned_per_s"]), _rate(z["ik_free_per_s"]), _pct(z["ik_share"])))
    line = fw.get("line")
    if isinstance(line, dict):
        lines.append("  %d-step line: first step after %.2f ms (the whole check pass); live step %.1f us, %d B "
                     "without the driver write (%s)"
                     % (line["steps"], line["first_step_ms"], line["live_step_us"], line["live_step_heap_bytes"],
                        "path kept by the check pass" if line["kept_whole"] else "solved again live"))
        if line.get("line_solves") is not None:
            lines.append("    the check pass's continuation solve (ik_near) left %d of its %d solves to the full ik"
                         % (line["full_ik_fallbacks"], line["line_solves"]))
        if line.get("first_step_ms_zones_exact") is not None:
            lines.append("    every zone check exact: first step after %.2f ms; the zone skip leaves %d exact "
                         "checks of %d steps" % (line["first_step_ms_zones_exact"], line["exact_zone_checks"],
                                                 line["steps"]))
        long = line.get("long")
        if isinstance(long, dict):
            lines.append("    the same line too long for the ring (%d steps): first step after %.2f ms; live step "
                         "%.1f us%s, %d B with it"
                         % (long["steps"], long["first_step_ms"], long["live_step_us"],
                            "" if long["refill_us"] is None else " + %.1f us refilling the ring after it"
                            % long["refill_us"], long["live_step_heap_bytes"]))
    elif line is not None:
        lines.append("  line: %s" % line)
    step = fw["move_step"]
    if "move_step_heap_bytes" in step:
        lines.append("  move step (%s): servo map %d B, driver write %d B, both %d B per step; %s"
                     % (step["driver"], step["servo_map_heap_bytes"], step["driver_write_heap_bytes"],
                        step["move_step_heap_bytes"], _rate(step["move_step_per_s"])))
    else:
        lines.append("  move step: servo map %d B per step; driver %s"
                     % (step["servo_map_heap_bytes"], step["driver"]))
    em = fw["emitters"]
    native = em.get("native")
    if isinstance(native, dict):
        lines.append("  @micropython.native (as loaded: %s) over the same source as bytecode: two-link x%.2f, "
                     "planar ik x%.2f, 5-joint ik+map x%.2f (bytecode %s, %d B/solve)"
                     % (", ".join("%s %s" % kv for kv in sorted(em.get("loaded", {}).items())),
                        native["twolink_gain"], native["planar_gain"], native["arm5_gain"],
                        _rate(native["arm5_bytecode_per_s"]), native["arm5_bytecode_heap_bytes"]))
    else:
        lines.append("  @micropython.native: %s" % native)
    viper = em.get("viper")
    if isinstance(viper, dict):
        lines.append("  @micropython.viper on %s (two-link core): x%.2f"
                     % (", ".join(viper["functions"]), viper["twolink_gain"]))
    else:
        lines.append("  @micropython.viper: %s" % viper)
    lines.append("  ns per operation: " + ", ".join("%s %s" % (k, v) for k, v in fw["op_ns"].items()))
    lines.append("")
    return lines


def estimate_lines(est):
    lines = ["ESTIMATE for real boards (scaled from the figures above, NOT measured):"]
    for board in ("rp2040_125MHz", "esp32_240MHz"):
        e = est.get(board)
        if not isinstance(e, dict):
            continue
        parts = []
        for key, label in (("twolink.safe_per_s", "two-link"), ("planar.safe_per_s", "planar ik"),
                           ("arm5.safe_per_s", "5-joint ik+map"),
                           ("tool_offset.with_per_s", "5-joint ik, tool offset")):
            if key in e:
                lo, hi = e[key + "_range"]
                parts.append("%s ~%s (%s..%s)" % (label, _rate(e[key]), _num(lo), _num(hi)))
        lines.append("  %-14s %s" % (board, "; ".join(parts)))
        if "arm5.safe_heap_bytes" in e:
            lines.append("  %-14s heap ~%d B per 5-joint solve, ~%d B per move step; a line at one step per "
                         "%g ms keeps the CPU ~%s busy, its check pass takes ~%.2f s per 200 steps (%s)"
                         % ("", e["arm5.safe_heap_bytes"], e.get("move_step.servo_map_heap_bytes", 0),
                            est["step_ms"], _pct(e["line_cpu_share"]), e["line_check_s_per_200_steps"],
                            "the bench's line scaled" if "line_first_step_s" in e
                            else "a general solve per step"))
    lines.append("  (scale = board bm_float score / this PC's Unix-port score; see docs/BENCHMARKS.md)")
    lines.append("")
    return lines


NUMERIC_ROWS = ("dls", "dls_home", "ccd", "scipy", "rtb_ik_LM", "rtb_ikine_LM", "ikpy")


def numeric_lines(nm):
    lines = ["Host numerical IK, 5-joint arm, %s, start at home, judged by the firmware's FK "
             "(%.3g mm, %.3g rad):" % (nm["mode"], nm["tol_mm"], nm["tol_rad"]),
             "  %-13s %8s %9s %11s %9s %12s" % ("", "targets", "success", "median ms", "p99 ms", "batch")]
    for key in NUMERIC_ROWS:
        if key not in nm:
            continue
        v = nm[key]
        if isinstance(v, dict):
            lines.append("  %-13s %8d %9s %11.3f %9.2f %12s" % (
                key, v["targets"], _pct(v["success_rate"]), v["median_ms"], v["p99_ms"],
                _rate(v["batch_per_s"]) if "batch_per_s" in v else "-"))
        else:
            lines.append("  %-13s %s" % (key, v))
    lines.append("  (dls: first attempt from the closed form's answer, as numik.solve does; dls_home: from home "
                 "only, the numerical method alone; rtb = Robotics Toolbox for Python)")
    lines.append("")
    return lines


def batch_lines(bt):
    lines = ["Batch analytic IK: armctl.batch (numpy) against a loop over the firmware solver (CPython):",
             "  %-8s %8s %14s %12s %8s %11s" % ("", "targets", "batch", "loop", "speedup", "mismatches")]
    for key in ("planar", "arm5"):
        v = bt[key]
        lines.append("  %-8s %8d %14s %12s %7.1fx %11d" % (
            key, v["targets"], _rate(v["batch_per_s"]), _rate(v["loop_per_s"]), v["speedup"],
            v["status_mismatches"]))
    lines.append("")
    return lines


def protocol_lines(pr):
    return ["Protocol through the simulator (%s):" % pr["transport"],
            "  ik: %s replies (round trip median %.2f ms, p99 %.2f ms)"
            % (_rate(pr["ik_replies_per_s"]), pr["ik_round_trip_median_ms"], pr["ik_round_trip_p99_ms"]),
            "  ik pipelined, %d ahead: %s replies (%s); CPU per ik: firmware %s, "
            "host %.0f us (link and pty relay)"
            % (pr["ik_pipelined_window"], _rate(pr["ik_pipelined_replies_per_s"]),
               "one batch" if pr["ik_pipelined_runs"] == 1 else "median of %d batches" % pr["ik_pipelined_runs"],
               "not measured (no /proc, or too few clock ticks)" if pr["ik_pipelined_firmware_cpu_us"] is None
               else "%.0f us (its bound: %s)" % (pr["ik_pipelined_firmware_cpu_us"],
                                                 _rate(1e6 / pr["ik_pipelined_firmware_cpu_us"])),
               pr["ik_pipelined_host_cpu_us"]),
            "  line of %g mm, %d steps: %.1f ms end to end (%.3f ms per step); %s"
            % (pr["line_mm"], pr["line_steps"], pr["line_median_ms"], pr["line_ms_per_step"], pr["note"]),
            ""]


def fallback_lines(fb):
    fk = fb["firmware_chain_fk"]
    return ["Host fallback driving the simulated board (%d FK-made targets each; %s):" % (fb["targets"], fb["note"]),
            "  chain arm (sim_al5d): %.1f ms per target end to end (board NO_CLOSED_FORM + where + "
            "host DLS + firmware FK check + speed + joints + where), %d moved, %d refused COLLISION "
            "(the joint path from the target before through the table)"
            % (fb["chain_fallback_ms"], fb["chain_moved"], fb["chain_refused_collision"]),
            "  5-joint arm, pitch free: %.1f ms per target on the host (%d moved, %d refused COLLISION); "
            "the board's own analytic move with the pitch given: %.1f ms (%d moved, %d refused COLLISION)"
            % (fb["arm5_free_pitch_fallback_ms"], fb["arm5_free_pitch_moved"],
               fb["arm5_free_pitch_refused_collision"], fb["arm5_board_move_ms"], fb["arm5_board_moved"],
               fb["arm5_board_refused_collision"]),
            "  firmware chain FK (%d joints) on the Unix port: %s, %.1f us per call, %d heap bytes per "
            "call (boxed float temporaries; buffers are allocated once)"
            % (fk["joints"], _rate(fk["fk_per_s"]), fk["fk_us"], fk["heap_bytes_per_call"]),
            ""]


def accuracy_lines(ac):
    lines = ["Drawn path against the intended lines, rebuilt from the pulse record (%s, %d lines of %g mm; "
             "distance of each step's tool from its line):" % (ac["board"], ac["pwm"]["lines"], ac["lines_mm"]),
             "  %-22s %18s %18s   %s" % ("driver", "rounded per joint", "chosen jointly", "lines better/equal/worse")]
    for key, label in (("pwm", "direct PWM (1 us)"), ("pca9685", "PCA9685 (4096 counts)")):
        v = ac[key]
        lines.append("  %-22s %6.3f / %5.3f mm %6.3f / %5.3f mm   %d/%d/%d" % (
            label, v["rounded_worst_mm"], v["rounded_mean_mm"], v["joint_worst_mm"], v["joint_mean_mm"],
            v["better"], v["equal"], v["worse"]))
    lines.append("  (worst / mean over %d and %d steps; a line's last step is its target rounded, as before: "
                 "worst before it %.3f against %.3f mm, %.3f against %.3f mm)"
                 % (ac["pwm"]["steps"], ac["pca9685"]["steps"], ac["pwm"]["joint_worst_before_end_mm"],
                    ac["pwm"]["rounded_worst_before_end_mm"], ac["pca9685"]["joint_worst_before_end_mm"],
                    ac["pca9685"]["rounded_worst_before_end_mm"]))
    c = ac["cost"]
    lines.append("  the choice per line step on the Unix port: %.1f us, %d B heap (the step's ik_near: %.1f us, %d B)"
                 % (c["pick_us"], c["pick_heap_bytes"], c["ik_near_us"], c["ik_near_heap_bytes"]))
    lines.append("  ESTIMATE on an RP2040 @ 125 MHz (scaled by bm_float, see the solver's estimate): ~%.1f ms "
                 "(%.1f-%.1f), %d B heap" % (c["rp2040_pick_ms"][0], c["rp2040_pick_ms"][1], c["rp2040_pick_ms"][2],
                                             c["rp2040_pick_heap_bytes"]))
    return lines + [""]


def motion_lines(mo):
    lines = ["Motion profiles on %s (the firmware's own plans, CPython in process):" % mo["board"],
             "  %-36s %6s %8s %10s %7s" % ("joint move from home (deg)", "steps", "seconds", "Ruckig s", "ratio")]
    for m in mo["joint_moves"]:
        ruckig = ("%10.3f %7.3f" % (m["ruckig_s"], m["ratio"])) if m["ruckig_s"] is not None else "%10s %7s" % (
            "-", "-")
        lines.append("  %-36s %6d %8.3f %s" % ("%s %s" % (m["move"], " ".join("%g" % v for v in m["target_deg"])),
                                               m["steps"], m["seconds"], ruckig))
    if not mo["ruckig"]:
        lines.append("  (ruckig not installed: no time-optimal column; pip install 'armctl[bench]')")
    else:
        lines.append("  (Ruckig: time-optimal for the same joint limits, jerk unlimited, time synchronized; "
                     "ratio = firmware / Ruckig)")
    c = mo["circle"]
    lines.append("  G1 circle, %d lines r=%g mm F%g: %d steps blended (%d plans; look-ahead %d, up to %d lines a "
                 "plan) against %d stopping at every end (x%.2f); Ruckig -"
                 % (c["lines"], c["radius_mm"], c["feed_mm_min"], c["blended_steps"], c["plans"], c["look_ahead"],
                    c["queue_lines"], c["alone_steps"], c["ratio"]))
    lines.append("  G1 square of %g mm at F6000 drawn as %s" % (mo["corners"]["square_mm"], "; ".join(
        "%d %s: %d steps (%d plan%s)" % (d["lines"], "lines" if d["cut_mm"] is None else "lines of %g mm" % d["cut_mm"],
                                         d["steps"], d["plans"], "" if d["plans"] == 1 else "s")
        for d in mo["drawing"])))
    r = mo["lines"]
    lines.append("  %d lines between random points (seed %d, %d steps): largest joint acceleration %.0f deg/s^2, "
                 "limit %.0f; %d over" % (r["lines"], r["seed"], r["steps"], r["peak_accel_deg_s2"],
                                          r["limit_deg_s2"], r["over"]))
    co = mo["corners"]
    lines.append("  G1 corners at F6000: a %g mm square twice round %d steps, largest joint acceleration %.0f "
                 "deg/s^2; %d chords of a %g mm circle %d steps, %.0f deg/s^2; limit %.0f"
                 % (co["square_mm"], co["square_steps"], co["square_peak_deg_s2"], co["circle_chords"],
                    co["circle_radius_mm"], co["circle_steps"], co["circle_peak_deg_s2"], co["limit_deg_s2"]))
    k = mo["cost"]
    lines.append("  cost per step on the Unix port (%s), and the ESTIMATE on an RP2040 @ 125 MHz:"
                 % k["command"])
    for key, label in (("joint_fraction", "joint move's fraction"), ("line_ramp_step", "a line's ramp step"),
                       ("blend_step", "a blended queue's step (16 lines)")):
        est = k["rp2040_%s_us" % key]
        lines.append("    %-34s %7.2f us %6d B   RP2040 ~%.0f us (%.0f-%.0f), %d B" % (
            label, k[key + "_us"], k[key + "_heap_bytes"], est[0], est[1], est[2],
            k["rp2040_%s_heap_bytes" % key]))
    lines.append("  live step (step() + refill(), no driver write): joint move %d B, blended lines %d B; "
                 "bound %d B: %s" % (k["live_joint_step_heap_bytes"], k["live_blend_step_heap_bytes"],
                                     k["live_step_budget_bytes"],
                                     "within" if k["live_step_heap_bytes"] <= k["live_step_budget_bytes"]
                                     else "OVER"))
    return lines + [""]


def console_lines(co):
    lines = ["Live console, real time (step_ms %d; traffic: `?` every %d ms):" % (co["step_ms"], co["traffic_ms"]),
             "  %-8s %6s %9s %9s %9s %9s" % ("", "steps", "mean", "median", "p99", "max")]
    for key in ("quiet", "traffic"):
        v = co[key]
        lines.append("  %-8s %6d %7.3f ms %6.3f ms %6.3f ms %6.3f ms" % (
            key, v["steps"], v["mean_ms"], v["median_ms"], v["p99_ms"], v["max_ms"]))
    lines += ["  %d status lines answered during the traffic run; the console's wait allocated %d bytes in 200 waits"
              % (co["status_lines"], co["wait_bytes_per_200"]), ""]
    return lines


def memory_lines(mem):
    lines = ["Firmware heap on the board-like interpreter (32-bit objects, single-precision floats), "
             "mixed run of %s:" % ", ".join("%s (%d lines)" % kv for kv in mem["lines"].items()),
             "  %-7s %8s %8s %8s   %-28s %-28s" % ("route", "needs", "goal", "at heap", "free after boot (largest)",
                                                  "free after the run (largest)")]
    for name, r in mem["routes"].items():
        if "need_kb" not in r:
            lines.append("  %-7s does not fit 512 KB: %s" % (name, r["needs_kb"]))
            continue
        lines.append("  %-7s %5d KB %5d KB %5d KB   %6d KB (%3d KB block)%6s %6d KB (%3d KB block)" % (
            name, r["need_kb"], r["goal_kb"], r["heap_kb"], r["boot_free_bytes"] // 1024,
            r["boot_largest_free_bytes"] // 1024, "", r["run_free_bytes"] // 1024, r["run_largest_free_bytes"] // 1024))
    lines.append("  (needs: the smallest heap, in 4 KB steps, in which main.py boots and answers every line with no "
                 "MemoryError; the most of %s; profiled at the goal, or at the need where it does not fit the "
                 "goal yet)" % ", ".join(mem["boards"]))
    lines += code_resident_lines(mem["routes"])
    names = mem.get("names")
    if names:
        lines.append("  Names the run interns as .mpy: %s, of the %s that six pools hold (the next name takes a "
                     "seventh pool of %.1f KB at once)" % (
                         ", ".join("%s %s" % (board, "?" if n is None else format(n, ","))
                                   for board, n in names["boards"].items()),
                         format(names["six_pools"], ","), names["seventh_pool_bytes"] / 1024.0))
    loads = mem.get("loads")
    if loads:
        lines.append("  What each request of the run first loads (.mpy, %s, %d KB heap; KB: what the heap keeps "
                     "more after it, of it the pools of interned names):" % (loads["board"], loads["heap_kb"]))
        for request, modules, kept, names in loads["requests"]:
            lines.append("    %-28s %6.1f KB (names %4.1f KB)  %s" % (
                "(boot)" if request is None else request[:28], kept / 1024.0, names / 1024.0, " ".join(modules)))
    return lines + [""]


def code_resident(routes):
    """{board: (.mpy need - frozen need, what the .mpy goal leaves beside frozen's need)} in KB:
    frozen, the code and its names stay in flash, so the difference is what they take of the
    heap as .mpy, and the second figure what they may take for .mpy to meet its goal."""
    mpy, frozen = routes.get("mpy", {}).get("needs_kb", {}), routes.get("frozen", {}).get("needs_kb", {})
    return {board: (mpy[board] - frozen[board], routes["mpy"]["goal_kb"] - frozen[board])
            for board in mpy if mpy[board] is not None and frozen.get(board) is not None}


def code_resident_lines(routes):
    resident = code_resident(routes)
    if not resident:
        return []
    return ["  Code and names in the heap as .mpy (its need less frozen's; KB) / what the .mpy goal leaves "
            "them: " + ", ".join("%s %d / %d" % (board, kb, room) for board, (kb, room) in resident.items())]


def bus_lines(bus):
    lines = ["Bus servo drivers under the MicroPython Unix port, 6 servos (%s):" % bus["command"],
             "  %-10s %-20s %-20s %-34s" % ("", "sync write", "sync read", "on the wire (ESTIMATE)")]
    for kind in ("sts", "dynamixel"):
        f = bus[kind]
        lines.append("  %-10s %4.0f us (sim %4.0f)   %4.0f us (sim %4.0f)   write %d B %.2f ms + read %d+%d B %.2f ms"
                     % (kind, f["driver_sync_write_us"], f["simulated_sync_write_us"], f["driver_sync_read_us"],
                        f["simulated_sync_read_us"], f["sync_write_bytes"], f["wire_sync_write_ms"],
                        f["sync_read_request_bytes"], f["sync_read_answer_bytes"], f["wire_sync_read_ms"]))
        lines.append("  %-10s a step on %s at %d baud: %.2f ms on the wire, %s of its %d ms period"
                     % ("", f["board"], f["baud"], f["wire_step_ms"], _pct(f["wire_step_share"]), f["step_ms"]))
    lines.append("  (us: the driver's own work per call, the fastest of 5 runs; sim: with the simulated servos "
                 "answering; wire: bytes x 10 bits / baud, without the servos' return delay)")
    return lines + [""]


SECTION_LINES = (("firmware", firmware_lines), ("estimate", estimate_lines), ("numeric", numeric_lines),
                 ("batch", batch_lines), ("protocol", protocol_lines), ("console", console_lines),
                 ("fallback", fallback_lines), ("accuracy", accuracy_lines), ("motion", motion_lines),
                 ("memory", memory_lines),
                 ("bus", bus_lines))


def text(result):
    """The whole report as one string."""
    lines = []
    for key, fn in SECTION_LINES:
        if key not in result:
            continue
        value = result[key]
        if isinstance(value, dict):
            lines += fn(value)
        else:
            _unavailable(lines, key, value)
    meta = result.get("meta", {})
    lines.append("Run %s, %s, Python %s, %s; seconds per section: %s" % (
        meta.get("started", "?"), "short" if meta.get("short") else "full", meta.get("python", "?"),
        meta.get("processor", "?"),
        ", ".join("%s %s" % (k[:-2], v) for k, v in meta.items() if k.endswith("_s"))))
    return "\n".join(lines)
