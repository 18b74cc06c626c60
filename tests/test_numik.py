# SPDX-License-Identifier: MIT
"""armctl.numik: numerical IK success rates, honesty on unreachable targets, limits, vectors.

Reachable targets come from the firmware's FK of random in-limit joint angles
(the firmware is the reference); the unreachable ones from hand geometry.
"""

import json
import math
import time

import numpy as np
import pytest

from armfw import board as fw_board
from armfw.status import OK, TOO_FAR, TOO_CLOSE, JOINT_LIMIT, BAD_INPUT, NOT_CONVERGED
from armfw import status as fw_status
from armctl import chain, numik, numik_dls, numik_result

from conftest import BOARDS, VECTORS, board_without_zones

TARGETS = 10000
HIT_MM = 0.1
L1, L2, L3, BASE = 126.14, 126.14, 150.6, 189.0


# The solvers' convergence, on the arms' geometry alone: answers inside a keep-out
# zone are refused by tests/test_zones.py's numeric test.
@pytest.fixture(scope="module")
def arm5():
    return board_without_zones("sim_arm5.json")


@pytest.fixture(scope="module")
def planar():
    return board_without_zones("sim_planar.json")


@pytest.fixture(scope="module")
def arm5_targets(arm5):
    """TARGETS poses drawn inside the limits and the tool (x, y, z, pitch) the firmware's FK gives."""
    arm = arm5.solver
    rng = np.random.default_rng(2026)
    lo, hi = np.array(arm.lo), np.array(arm.hi)
    q = lo + (hi - lo) * rng.random((TARGETS, arm.n))
    targets = np.empty((TARGETS, 4))
    out = [0.0] * 4
    for i in range(TARGETS):
        x, y, z, pitch = arm.fk(list(q[i]), out)
        # FK's pitch is in the plane the base faces; an IK target's pitch is in
        # the plane through the target, which is the opposite one when the arm
        # leans back over the base.
        facing = x * math.cos(q[i, 0]) + y * math.sin(q[i, 0])
        targets[i] = (x, y, z, pitch if facing >= 0 else -pitch)
    return q, targets


def _check_batch(arm, result, targets, mode):
    """Success fraction; every OK answer verified by the firmware's FK, every pose inside the limits."""
    out = [0.0] * 4
    for i in range(len(result)):
        assert arm.within_limits(list(result.q[i]))
        if result.status[i] == OK:
            mm, rad = arm.fk_error(list(targets[i]), list(result.q[i]))
            assert mm <= numik.TOL_MM + 1e-9
            if mode == numik.PITCH:
                assert rad <= numik.TOL_RAD + 1e-9
        else:
            # Every miss is reported with its real residual, never as OK.
            p = arm.fk(list(result.q[i]), out)
            assert result.error_mm[i] == pytest.approx(math.dist(p[:3], targets[i][:3]), abs=1e-6)
    return np.mean((result.status == OK) & (result.error_mm <= HIT_MM))


@pytest.mark.parametrize("method, mode", [("dls", "pitch"), ("dls", "position"), ("ccd", "position")])
def test_success_rate_on_reachable_arm5_targets(arm5, arm5_targets, report, method, mode):
    q_true, targets = arm5_targets
    if mode == numik.PITCH:
        # The generator's pitch convention agrees with the firmware's own check.
        assert max(arm5.solver.fk_error(list(targets[i]), list(q_true[i]))[1] for i in range(0, TARGETS, 97)) < 1e-9
    asked = targets if mode == numik.PITCH else targets[:, :3]
    start = time.perf_counter()
    # CCD crawls near full stretch: it gets three times its default sweeps here.
    sweeps = 3 * numik.CCD_MAX_SWEEPS if method == "ccd" else None
    result = numik.solve_batch(arm5, asked, mode=mode, method=method, max_iter=sweeps)
    took = time.perf_counter() - start
    rate = _check_batch(arm5.solver, result, targets, mode)
    names = {numik_result.status_name(s): int(c) for s, c in enumerate(np.bincount(result.status)) if c}
    report("numik %s %s-mode: %.2f%% of %d reachable arm5 targets within %.1f mm in %.1f s "
           "(median %d, max %d %s incl. restarts; statuses %s)"
           % (method, mode, 100 * rate, TARGETS, HIT_MM, took, np.median(result.iterations),
              result.iterations.max(), "sweeps" if method == "ccd" else "iterations", names))
    assert rate >= 0.99
    # Those missed were reachable, so the only honest labels are "gave up" or
    # "stopped at a limit": never a geometric verdict like TOO_FAR.
    assert set(np.unique(result.status)) <= {OK, JOINT_LIMIT, NOT_CONVERGED}


def _directions(rng, count, max_polar_deg):
    polar = np.radians(rng.uniform(0.0, max_polar_deg, count))
    az = rng.uniform(-math.pi, math.pi, count)
    return np.column_stack([np.sin(polar) * np.cos(az), np.sin(polar) * np.sin(az), np.cos(polar)])


@pytest.mark.parametrize("method, beyond_mm", [("dls", 0.5), ("ccd", 5.0)])
def test_too_far_returns_the_stretched_pose_and_its_residual(arm5, method, beyond_mm):
    # Beyond L1+L2+L3 from the J2 axis, in directions a straight arm can point
    # within its +-135 degree shoulder: the nearest reachable point is on the
    # reach sphere, exactly (distance - reach) from the target. (CCD crawls
    # near full stretch: within a mm or two of the sphere its default sweeps
    # leave it a few hundredths of a mm short of that nearest point.)
    rng = np.random.default_rng(5)
    reach = L1 + L2 + L3
    dist = reach + rng.uniform(beyond_mm, 300.0, 200)
    targets = np.array([0.0, 0.0, BASE]) + _directions(rng, 200, 120.0) * dist[:, None]
    result = numik.solve_batch(arm5, targets, mode="position", method=method)
    assert np.all(result.status == TOO_FAR)
    assert np.allclose(result.error_mm, dist - reach, atol=0.01)
    c = chain.from_board(arm5)
    assert np.all(c.within_limits(result.q))
    assert np.allclose(np.linalg.norm(c.fk(result.q) - targets, axis=1), result.error_mm)


def test_too_far_for_the_wrist_in_pitch_mode(arm5):
    # Tip 400 mm from J2 (inside L1+L2+L3) but tool pointing straight up puts
    # the wrist 150.6 mm lower: sqrt(400^2 + 150.6^2) = 427 mm > L1+L2.
    for method in numik.METHODS:
        r = numik.solve(arm5, [400.0, 0.0, BASE, 0.0], mode="pitch", method=method)
        assert r.status == TOO_FAR and not r.ok
        assert r.error_mm > 0.1 or r.angle_error_rad > 1e-3


@pytest.mark.parametrize("method", numik.METHODS)
def test_planar_hole_and_limit_band(planar, method):
    # Elbow limit +-160 degrees: the closest fold puts the tool at
    # sqrt(100^2 + 80^2 + 2*100*80*cos 160) = 36.95 mm from the shoulder.
    r_fold = math.sqrt(100 ** 2 + 80 ** 2 + 2 * 100 * 80 * math.cos(math.radians(160)))
    for r, want in ((10.0, TOO_CLOSE), (15.0, TOO_CLOSE), (25.0, JOINT_LIMIT), (33.0, JOINT_LIMIT)):
        res = numik.solve(planar, [0.0, r], method=method)
        assert res.status == want, (r, res)
        assert res.error_mm == pytest.approx(r_fold - r, abs=0.01)
        # The firmware says the same about these targets.
        assert planar.solver.ik([0.0, r], [0.0, 0.0]) == want


@pytest.mark.parametrize("method", numik.METHODS)
def test_planar_reachable_and_too_far(planar, method):
    rng = np.random.default_rng(6)
    c = chain.from_board(planar)
    q = c.random_poses(2000, rng)
    targets = c.fk(q)[:, :2]
    result = numik.solve_batch(planar, targets, method=method)
    # CCD crawls near full stretch (|t2| of a degree or two): some of those end
    # NOT_CONVERGED a few hundredths of a mm off, which still counts as a hit.
    assert np.mean(result.error_mm <= HIT_MM) >= 0.99
    assert np.all(result.error_mm[result.ok] <= numik.TOL_MM)
    assert set(np.unique(result.status)) <= {OK, NOT_CONVERGED}
    assert np.all(c.within_limits(result.q))
    angle = rng.uniform(0.0, math.pi, 100)
    dist = rng.uniform(181.0, 400.0, 100)
    far = np.column_stack([dist * np.cos(angle), dist * np.sin(angle)])
    result = numik.solve_batch(planar, far, method=method)
    assert np.all(result.status == TOO_FAR)
    assert np.allclose(result.error_mm, dist - 180.0, atol=0.01)


def test_single_solve_from_the_current_pose(arm5):
    # The worked example of docs/KINEMATICS.md: tip (157.3, 0, 342.4), tool horizontal.
    # Elbow-up answer q2, q3, q4 = -50.024, 105.019, 35.004; the elbow-down
    # one needs q4 = 140.024, past this board's 135 degree wrist limit.
    target = [157.3, 0.0, 342.4, math.pi / 2]
    for analytic_seed in (True, False):
        r = numik.solve(arm5, target, seed=np.radians([0, -45, 100, 30, 0]), analytic_seed=analytic_seed)
        assert r.ok and r.name == "OK" and r.mode == "pitch"
        assert np.allclose(np.degrees(r.q[1:4]), [-50.024, 105.019, 35.004], atol=0.03)
        assert r.error_mm <= numik.TOL_MM
        # Started at the closed form's answer DLS has nothing left to do.
        assert (r.iterations == 0) if analytic_seed else (r.iterations >= 1)
    # Seeded next to the forbidden elbow-down answer it still answers inside the limits.
    r = numik.solve(arm5, target, seed=np.radians([0, 50, -100, 135, 0]))
    assert r.ok and arm5.solver.within_limits(list(r.q))
    assert arm5.solver.fk_error(target, list(r.q))[0] <= numik.TOL_MM


def test_description_chain_without_closed_form():
    # Three-link planar arm, 100/80/50 mm: position only is redundant (no closed form).
    desc = {"joints": [{"axis": [0, 0, 1], "min_deg": -170, "max_deg": 170},
                       {"xyz_mm": [100, 0, 0], "axis": [0, 0, 1], "min_deg": -150, "max_deg": 150},
                       {"xyz_mm": [80, 0, 0], "axis": [0, 0, 1], "min_deg": -150, "max_deg": 150}],
            "tool": {"xyz_mm": [50, 0, 0]}, "tool_axis": [1, 0, 0]}
    c = chain.from_description(desc)
    rng = np.random.default_rng(8)
    targets = c.fk(c.random_poses(1000, rng))
    for method in numik.METHODS:
        result = numik.solve_batch(c, targets, method=method)
        assert np.mean(result.ok) >= 0.99
        hit = result.ok
        assert np.all(np.linalg.norm(c.fk(result.q[hit]) - targets[hit], axis=1) <= numik.TOL_MM)
    far = numik.solve(c, [300.0, 0.0, 0.0])
    assert far.status == TOO_FAR and far.error_mm == pytest.approx(70.0, abs=0.01)


def test_bad_input_is_a_status_not_a_crash(arm5):
    for bad in ([math.nan, 0, 100], [math.inf, 0, 100, 1.0]):
        r = numik.solve(arm5, bad)
        assert r.status == BAD_INPUT and not r.ok
        assert np.all(np.isfinite(r.q))
    with pytest.raises(ValueError):
        numik.solve(arm5, [1.0, 2.0])                 # arm5 needs 3 or 4 numbers
    with pytest.raises(ValueError):
        numik.solve(arm5, [1.0, 2.0, 3.0], method="newton")


def test_never_ok_beyond_reach_hypothesis(arm5):
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=40, deadline=None)
    @given(st.floats(-1000, 1000), st.floats(-1000, 1000), st.floats(-600, 900),
           st.floats(-math.pi, math.pi), st.sampled_from(numik.METHODS))
    def check(x, y, z, pitch, method):
        r = numik.solve(arm5, [x, y, z, pitch], method=method, restarts=1)
        assert arm5.solver.within_limits(list(r.q))
        mm, rad = arm5.solver.fk_error([x, y, z, pitch], list(r.q))
        assert mm == pytest.approx(r.error_mm, abs=1e-6)
        if r.ok:
            assert mm <= numik.TOL_MM + 1e-9 and rad <= numik.TOL_RAD + 1e-9
        if math.dist((x, y, z), (0, 0, BASE)) > L1 + L2 + L3 + 0.01:
            assert r.status == TOO_FAR

    check()


def _vector_files():
    return sorted(VECTORS.glob("*.json")) if VECTORS.is_dir() else []


def _vector_board(name):
    name = str(name)
    if "/" in name:
        path = BOARDS.parent / name
    else:
        path = BOARDS / (name if name.endswith(".json") else name + ".json")
    b = fw_board.load(str(path))
    b.solver.zones = None   # the shared vectors are the solver's geometry alone, as in test_vectors
    return b


@pytest.mark.parametrize("path", _vector_files() or [None], ids=lambda p: p.name if p else "none")
def test_cross_check_with_shared_vectors(path, report):
    if path is None:
        pytest.skip("no tests/vectors/*.json yet")
    data = json.loads(path.read_text())
    b = _vector_board(data["board"])
    pitch_in_deg = "pitch deg" in data.get("units", {}).get("target", "")
    ok_targets, far_targets, ok_seeds = [], [], []
    for case in data["cases"]:
        target = case["target"]
        if (len(target) != len(b.solver.targets)
                or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in target)):
            continue
        if pitch_in_deg and b.solver.kind == "arm5":
            target = target[:3] + [math.radians(target[3])]
        if case["status"] == "OK":
            ok_targets.append(target)
            # With a tool offset the answer depends on the roll the case's current pose gives.
            current = case["current_deg"] or [math.degrees(a) for a in b.solver.home]
            ok_seeds.append([math.radians(v) for v in current])
        elif case["status"] == "TOO_FAR":
            far_targets.append(target)
    for method in numik.METHODS:
        if ok_targets:
            targets = np.array(ok_targets)
            # CCD in position mode with three times its default sweeps, as in
            # the success-rate test (the vectors include near-stretch targets).
            # With a tool offset the roll is the case's (it moves the tip; numik holds it).
            seeds = np.array(ok_seeds) if any(getattr(b.solver, "tool", (0, 0, 0))) else None
            if method == "ccd":
                result = numik.solve_batch(b, targets[:, :3], method=method, mode="position",
                                           max_iter=3 * numik.CCD_MAX_SWEEPS, seed=seeds)
            else:
                result = numik.solve_batch(b, targets, method=method, seed=seeds)
            hit = 0
            for i, t in enumerate(ok_targets):
                miss = b.solver.fk_error(t, list(result.q[i]), ok_seeds[i])[0]
                assert miss == pytest.approx(result.error_mm[i], abs=1e-6)
                if result.ok[i]:
                    assert miss <= numik.TOL_MM
                hit += miss <= HIT_MM
            report("numik %s vs %s: %d/%d analytic-OK targets hit within %.1f mm"
                   % (method, path.name, hit, len(ok_targets), HIT_MM))
            assert hit == len(ok_targets)
        if far_targets:
            result = numik.solve_batch(b, np.array(far_targets), method=method)
            assert not np.any(result.status == fw_status.OK)


def run_cli(capsys, *argv):
    from armctl import cli
    code = cli.main(["solve", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _joints(text):
    line = next(li for li in text.splitlines() if li.startswith("joints_deg:"))
    return [float(part.split("=")[1]) for part in line.split()[1:]]


ARM5_PATH = str(BOARDS / "sim_arm5.json")
PLANAR_PATH = str(BOARDS / "sim_planar.json")


@pytest.mark.parametrize("method", ["analytic", "dls", "ccd"])
def test_cli_solve_spec_example(capsys, method):
    argv = ["--board", ARM5_PATH, "157.3", "0", "342.4", "90", "--method", method]
    if method == "ccd":
        argv = ["--board", ARM5_PATH, "157.3", "0", "342.4", "--method", "ccd"]
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0 and "status: OK" in out
    q = np.radians(_joints(out))
    p = fw_board.load(ARM5_PATH).solver.fk(list(q), [0.0] * 4)
    # Printed to 3 decimals of a degree: the tool lands within a few hundredths of a mm.
    assert math.dist(p[:3], (157.3, 0.0, 342.4)) < 0.05
    if method != "ccd":
        assert _joints(out)[1:4] == pytest.approx([-50.008, 105.018, 34.990], abs=0.01)


def test_cli_solve_pitch_free_defaults_to_dls(capsys):
    code, out, _ = run_cli(capsys, "--board", ARM5_PATH, "200", "50", "120")
    assert code == 0 and "status: OK" in out and "dls" in out and "pitch free" in out


# Numerical answers say how far their nearest pose misses: 600 - 402.88 = 197.12 mm
# from the J2 axis; (0, 10) planar: the tightest fold (elbow 160 degrees) reaches
# 36.95 mm from the shoulder, 26.95 mm short.
@pytest.mark.parametrize("argv, status, misses", [
    (["--board", ARM5_PATH, "600", "0", "189"], "TOO_FAR", "197.12"),
    (["--board", ARM5_PATH, "600", "0", "189", "--method", "ccd"], "TOO_FAR", "197.12"),
    (["--board", ARM5_PATH, "600", "0", "189", "90"], "TOO_FAR", None),
    (["--board", PLANAR_PATH, "0", "10"], "TOO_CLOSE", None),
    (["--board", PLANAR_PATH, "0", "10", "--method", "dls"], "TOO_CLOSE", "26.94"),
    (["--board", PLANAR_PATH, "--", "-50", "-170"], "JOINT_LIMIT", None),
])
def test_cli_solve_refusals_exit_1(capsys, argv, status, misses):
    code, out, _ = run_cli(capsys, *argv)
    assert code == 1
    assert "status: %s" % status in out
    if misses:
        assert "misses by: %s" % misses in out
    else:
        assert "joints_deg" not in out      # the analytic solver gives no angles on failure


def test_cli_solve_elbow_and_current(capsys):
    # Planar (100, 80): elbow down is t2 = +90 (the shared vectors' hand case).
    code, out, _ = run_cli(capsys, "--board", PLANAR_PATH, "100", "80", "--elbow", "down")
    assert code == 0 and _joints(out) == pytest.approx([0.0, 90.0], abs=1e-3)
    code, out, _ = run_cli(capsys, "--board", PLANAR_PATH, "100", "80", "--elbow", "down", "--method", "dls")
    assert code == 0 and _joints(out) == pytest.approx([0.0, 90.0], abs=0.01)
    code, out, _ = run_cli(capsys, "--board", PLANAR_PATH, "100", "80", "--current", "0", "80")
    assert code == 0 and _joints(out) == pytest.approx([0.0, 90.0], abs=1e-3)


@pytest.mark.parametrize("argv", [
    ["--board", ARM5_PATH, "1", "2"],
    ["--board", ARM5_PATH, "1", "2", "3", "--method", "analytic"],
    ["--board", ARM5_PATH, "1", "2", "nan", "90"],
    ["--board", PLANAR_PATH, "1", "2", "--current", "0"],
    ["--board", PLANAR_PATH, "1", "2", "--current", "0", "170"],
    ["--board", "no/such.json", "1", "2"],
])
def test_cli_solve_bad_arguments_exit_2(capsys, argv):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and err.startswith("armctl solve:") and out == ""


def test_cli_solve_described_chain(capsys, tmp_path):
    desc = {"joints": [{"name": "a", "axis": [0, 0, 1], "min_deg": -170, "max_deg": 170},
                       {"name": "b", "xyz_mm": [100, 0, 0], "axis": [0, 0, 1], "min_deg": -150, "max_deg": 150},
                       {"name": "c", "xyz_mm": [80, 0, 0], "axis": [0, 0, 1], "min_deg": -150, "max_deg": 150}],
            "tool": {"xyz_mm": [50, 0, 0]}, "tool_axis": [1, 0, 0]}
    path = tmp_path / "chain3.json"
    path.write_text(json.dumps(desc))
    code, out, _ = run_cli(capsys, "--chain", str(path), "120", "40", "0")
    assert code == 0 and "status: OK" in out
    a, b, c = np.radians(_joints(out))
    # Planar FK by hand, to the 3 decimals of a degree printed.
    x = 100 * math.cos(a) + 80 * math.cos(a + b) + 50 * math.cos(a + b + c)
    y = 100 * math.sin(a) + 80 * math.sin(a + b) + 50 * math.sin(a + b + c)
    assert math.dist((x, y), (120, 40)) < 0.02
    code, out, _ = run_cli(capsys, "--chain", str(path), "300", "0", "0", "--method", "ccd")
    assert code == 1 and "status: TOO_FAR" in out and "misses by: 70.000" in out
    code, _, err = run_cli(capsys, "--chain", str(path), "1", "2", "3", "--method", "analytic")
    assert code == 2 and "no analytic solver" in err


def test_plain_float_jacobian_is_the_derivative_of_fk(arm5):
    # The DLS step's analytic Jacobian against central differences of the FK.
    c = chain.from_board(arm5)
    solver = numik_dls.PlainDLS(c)
    fw = solver.kinematics

    def pose(q):
        tip = fw.fk(q.tolist(), [0.0] * 3)
        return np.array(tip + fw.direction)

    rng = np.random.default_rng(31)
    h = 1e-6
    for q in c.random_poses(50, rng):
        fw.fk(q.tolist(), solver.tip)
        solver._normal_equations([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
        for i in range(c.n):
            dq = np.zeros(c.n)
            dq[i] = h
            plus = pose(q + dq)
            minus = pose(q - dq)
            numeric = (plus - minus) / (2 * h)
            column = np.array(solver.jac[6 * i:6 * i + 6])
            assert np.allclose(column[:3], numeric[:3], atol=1e-5)
            assert np.allclose(column[3:], numik.DIRECTION_WEIGHT_MM * numeric[3:], atol=1e-5)


@pytest.mark.parametrize("analytic_seed", [True, False])
def test_plain_and_vectorised_dls_agree_on_the_rule(arm5, arm5_targets, analytic_seed):
    # PLAIN_MAX targets run in plain floats, one more in numpy: both judged by the firmware's FK.
    _, targets = arm5_targets
    for count in (numik.PLAIN_MAX, numik.PLAIN_MAX + 1):
        result = numik.solve_batch(arm5, targets[:count], analytic_seed=analytic_seed)
        assert np.all(result.status == OK)
        for i in range(count):
            mm, rad = arm5.solver.fk_error(list(targets[i]), list(result.q[i]))
            assert mm <= numik.TOL_MM and rad <= numik.TOL_RAD
            assert arm5.solver.within_limits(list(result.q[i]))


def test_batched_dls_from_the_closed_form(arm5, arm5_targets):
    # Thousands at once (vectorised, seeded by armctl.batch): every one OK, FK round trip.
    _, targets = arm5_targets
    result = numik.solve_batch(arm5, targets[:3000])
    assert np.all(result.status == OK)
    c = chain.from_board(arm5)
    assert np.all(np.linalg.norm(c.fk(result.q) - targets[:3000, :3], axis=1) <= numik.TOL_MM)
    assert np.all(c.within_limits(result.q))


def test_a_local_failure_is_not_a_joint_limit(arm5):
    # The review's target: reachable inside the limits (DLS reaches it), where
    # CCD stops against the shoulder limit. That proves nothing about the target.
    target = [[-73.6757, -50.4777, -111.8186]]
    dls = numik.solve_batch(arm5, target)[0]
    assert dls.ok and arm5.solver.within_limits(list(dls.q))
    for seeded in (True, False):
        ccd = numik.solve_batch(arm5, target, method="ccd", analytic_seed=seeded)[0]
        assert ccd.status in (OK, fw_status.NOT_CONVERGED), ccd
        if not ccd.ok:
            assert ccd.name == "NOT_CONVERGED"


def test_joint_limit_only_with_the_closed_forms_proof(arm5, planar):
    # Every shared vector the firmware calls JOINT_LIMIT: numik says the same, never OK.
    for b, name in ((arm5, "arm5.json"), (planar, "planar.json")):
        data = json.loads((VECTORS / name).read_text())
        pitch_in_deg = "pitch deg" in data.get("units", {}).get("target", "")
        targets = []
        for case in data["cases"]:
            if case["status"] != "JOINT_LIMIT" or case.get("current_deg"):
                continue
            t = list(case["target"])
            if pitch_in_deg and b.solver.kind == "arm5":
                t[3] = math.radians(t[3])
            targets.append(t)
        assert targets
        for method in numik.METHODS:
            result = numik.solve_batch(b, np.array(targets), method=method, restarts=2)
            assert np.all(result.status == JOINT_LIMIT), (name, method, result.status)
    # A chain without a closed form cannot prove a limit: stopped short it is NOT_CONVERGED.
    desc = {"joints": [{"axis": [0, 0, 1], "min_deg": -10, "max_deg": 10},
                       {"xyz_mm": [100, 0, 0], "axis": [0, 0, 1], "min_deg": -10, "max_deg": 10}],
            "tool": {"xyz_mm": [80, 0, 0]}, "tool_axis": [1, 0, 0]}
    r = numik.solve(chain.from_description(desc), [0.0, 150.0, 0.0], restarts=2)
    assert r.name == "NOT_CONVERGED" and not r.ok


def test_acceptance_check_refuses_solutions(arm5, arm5_targets):
    # A keep-out rule as a zone would give one: the elbow must stay on the q3 >= 0 side.
    _, targets = arm5_targets
    picked = targets[:40, :3]
    result = numik.solve_batch(arm5, picked, mode="position", accept=lambda q: q[:, 2] >= 0.0)
    c = chain.from_board(arm5)
    for i in range(len(picked)):
        if result.ok[i]:
            assert result.q[i, 2] >= 0.0 and not result.refused[i]
            assert np.linalg.norm(c.fk(result.q[i]) - picked[i]) <= numik.TOL_MM
        else:
            assert result.status[i] == fw_status.NOT_CONVERGED
    assert np.mean(result.ok) > 0.9
    # Refusing everything leaves nothing OK, every answer marked refused.
    none = numik.solve_batch(arm5, picked[:5], mode="position", restarts=1,
                             accept=lambda q: np.zeros(len(q), dtype=bool))
    assert np.all(none.status == fw_status.NOT_CONVERGED) and np.all(none.refused)


# -- a tool offset (sim_arm5_tool): the chain carries it, DLS follows ----------------

def test_chain_of_a_tool_offset_board_is_the_firmware_fk():
    b = board_without_zones("sim_arm5_tool.json")
    c = chain.from_board(b)
    rng = np.random.default_rng(14)
    q = rng.uniform(-2.3, 2.3, (200, 5))
    tips = c.fk(q)
    for row, tip in zip(q, tips):
        assert list(tip[:3]) == pytest.approx(b.solver.fk(list(row), [0.0] * 4)[:3], abs=1e-9)


def test_dls_reaches_tool_offset_targets_with_the_pitch_in_the_facing_plane():
    """Tips and pitches of random facing poses of the arm with a tool offset: DLS (seeded
    away from the answer, the roll given by the seed) reaches them, the tool pointing at the
    pitch in the plane the base faces (armfw's meaning), within the tolerances."""
    b = board_without_zones("sim_arm5_tool.json")
    solver = b.solver
    rng = np.random.default_rng(15)
    reached = 0
    tried = 0
    while tried < 40:
        q = list(rng.uniform(-1.2, 1.2, 5))
        q[1], q[2], q[3] = abs(q[1]) * 0.8, abs(q[2]), abs(q[3]) * 0.5     # reaching forward
        p = solver.fk(q, [0.0] * 4)
        out = [0.0] * 5
        if solver.ik(p, out, [q[0], 0.0, 0.0, 0.0, q[4]]) not in (fw_status.OK,):
            continue
        tried += 1
        seed = [q[0] + 0.2, q[1] - 0.2, q[2] + 0.2, q[3], q[4]]
        r = numik.solve(b, list(p), seed=seed, analytic_seed=False)
        if r.ok:
            reached += 1
            mm, rad = solver.fk_error(p, list(r.q), seed)
            assert mm <= numik.TOL_MM * 1.01 and rad <= numik.TOL_RAD * 1.01
            assert r.q[4] == pytest.approx(q[4], abs=0.05)      # the roll stays near the seed's
    assert reached >= 36, reached
