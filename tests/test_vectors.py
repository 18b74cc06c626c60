# SPDX-License-Identifier: MIT
"""The shared IK vectors (tests/vectors/*.json) against the firmware, under CPython and MicroPython.

Both runs solve each case with the same code (tests/mp/run_vectors.py: imported
here, run as a script by the real MicroPython Unix port) and are judged by the
same comparator: the expected status, the expected angles within the case's
tolerance, and, for every answer that carries angles, limits and a forward-
kinematics round trip computed with numpy (tests/derive_vectors.py), not arm.fk.
"""

import copy
import importlib.util
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from conftest import BOARDS, MP_SCRIPTS, VECTORS, solver_only

import derive_vectors as derive
from armctl import upy
from armfw import status

FILES = sorted(derive.VECTOR_FILES.values())
FK_TOL_MM = 1e-3
FK_TOL_RAD = 1e-6
LIMIT_TOL_DEG = 1e-4


def load_runner():
    spec = importlib.util.spec_from_file_location("run_vectors", MP_SCRIPTS / "run_vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_doc(name):
    return json.loads((VECTORS / name).read_text())


def fk_problem(geom, target, q_deg, current_deg=None):
    """None if the numpy FK of q_deg reproduces target, else what is wrong.

    An arm5 target on the base axis has its pitch in the plane of the current
    yaw (0 without a current pose), as the solver reads it.
    """
    q = np.radians(q_deg)
    if geom.kind == "planar":
        err = float(np.hypot(*(derive.fk_planar(geom, q) - np.array(target, float))))
        return None if err <= FK_TOL_MM else "FK misses by %.3g mm" % err
    x, y, z, pitch_deg = target
    if geom.tool.any():
        # With a tool offset the base does not face the tip: the tool must point at
        # the pitch in the plane the base faces (leaning back: the negated pitch).
        tip, tool = derive.fk_chain(geom, q)
        err = float(np.linalg.norm(tip - np.array([x, y, z], float)))
        a4 = derive.wrap(q[1] + q[2] + q[3])
        ang = abs(abs(a4) - abs(derive.wrap(math.radians(pitch_deg))))
        ang += float(np.linalg.norm(tool - np.array([math.sin(a4) * math.cos(q[0]), math.sin(a4) * math.sin(q[0]),
                                                     math.cos(a4)])))
        if err > FK_TOL_MM or ang > FK_TOL_RAD:
            return "FK misses by %.3g mm, tool by %.3g rad" % (err, ang)
        return None
    tip, tool = derive.fk_arm5(geom, q)
    current = None if current_deg is None else np.radians(current_deg)
    yaw = derive.facing_yaw(target, current)
    err = float(np.linalg.norm(tip - np.array([x, y, z], float)))
    want = derive.tool_direction(x, y, math.radians(pitch_deg), yaw)
    ang = 2.0 * math.asin(min(1.0, float(np.linalg.norm(tool - want)) / 2.0))
    if err > FK_TOL_MM or ang > FK_TOL_RAD:
        return "FK misses by %.3g mm, tool by %.3g rad" % (err, ang)
    return None


def judge(geom, case, got_status, got_q):
    """Problems (list of text) with one answer: status name and angles in degrees or None."""
    problems = []
    if got_status != case["status"]:
        problems.append("status %s, expected %s" % (got_status, case["status"]))
    solved = got_status in ("OK", "SINGULAR")
    if solved != (got_q is not None):
        problems.append("angles %r with status %s" % (got_q, got_status))
    if got_q is not None:
        if not all(math.isfinite(a) for a in got_q):
            problems.append("non-finite angle in %r" % (got_q,))
            return problems
        for i, a in enumerate(got_q):
            lo, hi = math.degrees(geom.lo[i]), math.degrees(geom.hi[i])
            if a < lo - LIMIT_TOL_DEG or a > hi + LIMIT_TOL_DEG:
                problems.append("joint %d = %.6f outside %g..%g" % (i, a, lo, hi))
        bad = fk_problem(geom, case["target"], got_q, case["current_deg"])
        if bad:
            problems.append(bad)
    want = case["q_deg"]
    if want is not None and got_q is not None:
        diff = max(abs(a - b) for a, b in zip(got_q, want))
        if len(got_q) != len(want) or diff > case["tol_deg"]:
            problems.append("q %s, expected %s (off by %.3g deg, tol %g)"
                            % (["%.6f" % a for a in got_q], want, diff, case["tol_deg"]))
    return problems


def judge_all(doc, answers):
    """(agreeing count, problem lines) over a document; answers: id -> (status, q_deg)."""
    geom = derive.Geometry(doc["board"])
    problems = []
    for case in doc["cases"]:
        if case["id"] not in answers:
            problems.append("%s: no answer" % case["id"])
            continue
        for p in judge(geom, case, *answers[case["id"]]):
            problems.append("%s: %s" % (case["id"], p))
    agree = len(doc["cases"]) - len({p.split(":")[0] for p in problems})
    return agree, problems


def cpython_answers(doc):
    runner = load_runner()
    arm = solver_only(doc["board"])
    answers = {}
    for case in doc["cases"]:
        out = [0.0] * arm.n
        st = runner.solve(arm, case, out)
        answers[case["id"]] = (status.name(st), [math.degrees(a) for a in out] if status.solved(st) else None)
    return answers


def parse_lines(text):
    answers = {}
    done = None
    for line in text.splitlines():
        parts = line.split()
        if parts[0] == "done":
            done = int(parts[1])
            continue
        answers[parts[0]] = (parts[1], [float(v) for v in parts[2:]] or None)
    return answers, done


@pytest.mark.parametrize("name", FILES)
def test_vectors_cpython(name, report):
    doc = load_doc(name)
    agree, problems = judge_all(doc, cpython_answers(doc))
    report("vectors %s under CPython %s: %d/%d agree"
           % (name, ".".join(map(str, sys.version_info[:3])), agree, len(doc["cases"])))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", FILES)
def test_vectors_micropython(name, micropython, report):
    doc = load_doc(name)
    run = upy.run(MP_SCRIPTS / "run_vectors.py", VECTORS / name, BOARDS)
    assert run.returncode == 0, run.stderr
    answers, done = parse_lines(run.stdout)
    assert done == len(doc["cases"])
    version = subprocess.run([micropython, "-c", "import sys; print('%d.%d.%d' % sys.implementation.version[:3])"],
                             capture_output=True, text=True, env=upy.env()).stdout.strip()
    agree, problems = judge_all(doc, answers)
    report("vectors %s under MicroPython %s: %d/%d agree" % (name, version, agree, len(doc["cases"])))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("board_file, name", sorted(derive.VECTOR_FILES.items()))
def test_derivation_reproduces_committed_file(board_file, name):
    derived = json.loads(derive.render(derive.build(board_file)))
    drift = vector_drift(derived, load_doc(name))
    assert not drift, "tests/vectors/%s is stale: run .venv/bin/python tests/derive_vectors.py\n%s" \
        % (name, "\n".join(drift[:20]))


# Why numbers, not text: the derivation's floats pass through numpy's sin, cos
# and arctan2, whose SIMD code paths differ between CPUs (AVX-512 or not) and
# numpy builds by an ulp or two. A full-precision number then changes in its
# last digits (~1e-14 relative), and an angle the file rounds to 9 decimals can
# flip its last one (1e-9 deg); near full stretch the angle goes with the
# square root of the rounding, so a few ulps of the cosine move it ~2e-6 deg.
# Everything else (ids, statuses, rules, notes, structure) must match exactly;
# targets and current poses within INPUT_TOL (a nanometre / 1e-9 deg, far
# above ~1e-13 of ulp drift on values of a few hundred); expected angles within
# a tenth of the case's own tolerance, so ulp drift passes and any change that
# could alter a verdict on a solver's answer (TOL_DEG 1e-6, SINGULAR 1e-4) fails.
INPUT_TOL = 1e-9
ANGLE_TOL_SHARE = 0.1


def vector_drift(derived, committed):
    """Where two vector documents differ beyond CPU-dependent rounding (list of text)."""
    drift = []
    _drift(dict(derived, cases=None), dict(committed, cases=None), INPUT_TOL, "", drift)
    if len(derived["cases"]) != len(committed["cases"]):
        return drift + ["%d cases derived, %d committed" % (len(derived["cases"]), len(committed["cases"]))]
    for new, old in zip(derived["cases"], committed["cases"]):
        where = "case %s" % old.get("id")
        _drift(dict(new, q_deg=None), dict(old, q_deg=None), INPUT_TOL, where, drift)
        _drift(new["q_deg"], old["q_deg"], ANGLE_TOL_SHARE * old["tol_deg"], where + " q_deg", drift)
    return drift


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _drift(a, b, tol, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            out.append("%s: fields %s vs %s" % (path, sorted(a), sorted(b)))
            return
        for key in a:
            _drift(a[key], b[key], tol, "%s.%s" % (path, key), out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append("%s: %d vs %d items" % (path, len(a), len(b)))
            return
        for i, (x, y) in enumerate(zip(a, b)):
            _drift(x, y, tol, "%s[%d]" % (path, i), out)
    elif _is_number(a) and _is_number(b):
        if not abs(a - b) <= tol:
            out.append("%s: %r derived, %r committed (tolerance %g)" % (path, a, b, tol))
    elif a != b or type(a) is not type(b):
        out.append("%s: %r derived, %r committed" % (path, a, b))


def test_vector_drift_tells_rounding_from_a_changed_answer():
    doc = load_doc("arm5.json")
    case = next(c for c in doc["cases"] if c["status"] == "OK" and c["q_deg"][1] != 0)
    assert vector_drift(copy.deepcopy(doc), doc) == []
    ulps = copy.deepcopy(doc)
    near = next(c for c in ulps["cases"] if c["id"] == case["id"])
    near["target"][0] = math.nextafter(near["target"][0], math.inf)
    near["q_deg"][1] += 1e-9                  # a 9-decimal rounding that flipped
    assert vector_drift(ulps, doc) == []
    for field, change in (("q_deg", 2e-7), ("target", 1e-6)):
        moved = copy.deepcopy(doc)
        next(c for c in moved["cases"] if c["id"] == case["id"])[field][1] += change
        assert len(vector_drift(moved, doc)) == 1, field
    flipped = copy.deepcopy(doc)
    next(c for c in flipped["cases"] if c["id"] == case["id"])["status"] = "SINGULAR"
    assert vector_drift(flipped, doc)
    shorter = copy.deepcopy(doc)
    shorter["cases"].pop()
    assert vector_drift(shorter, doc)


def test_vectors_cover_the_issue():
    """At least 200 cases; every status, rule, quadrant and branch is exercised."""
    docs = {name: load_doc(name) for name in FILES}
    assert sum(len(d["cases"]) for d in docs.values()) >= 200
    for name, doc in docs.items():
        cases = doc["cases"]
        statuses = {c["status"] for c in cases}
        # COLLISION is a board's zones, not the solver's geometry: the vectors run with zones off.
        # NOT_CONVERGED is the host numerical solvers' word: the closed form never says it.
        # NEAR_AXIS needs a lateral tool offset (sim_arm5_tool); TOO_CLOSE the planar arm's hole.
        wanted = set(status.NAMES) - {"COLLISION", "NOT_CONVERGED"} - (
            {"TOO_CLOSE"} if doc["board"] != "sim_planar.json" else set()) - (
            {"NEAR_AXIS"} if doc["board"] != "sim_arm5_tool.json" else set())
        assert wanted <= statuses, (name, wanted - statuses)
        assert {c["rule"] for c in cases} == {"min", "up", "down"}
        assert any(c["current_deg"] for c in cases if c["rule"] == "min")
        solved = [c for c in cases if c["q_deg"] is not None]
        quadrants = {(c["target"][0] > 0, c["target"][1] > 0) for c in solved if abs(c["target"][1]) > 1e-9}
        assert len(quadrants) == 4, (name, quadrants)
        elbow = 1 if doc["board"] == "sim_planar.json" else 2
        assert any(c["q_deg"][elbow] > 1 for c in solved) and any(c["q_deg"][elbow] < -1 for c in solved)
        for c in cases:
            assert c["note"], c["id"]
            for v in c["target"]:
                assert v is None or isinstance(v, (int, float, str)), c["id"]
    arm5 = {c["id"]: c for c in docs["arm5.json"]["cases"]}
    assert any(abs(c["q_deg"][0]) < 90 and math.hypot(*c["target"][:2]) > 1 and
               abs(math.degrees(math.atan2(c["target"][1], c["target"][0]))) > 135
               for c in arm5.values() if c["q_deg"]), "no target behind the base was solved"


def test_spec_worked_example_in_vectors():
    """The printed angles of the worked example in docs/KINEMATICS.md (course-rounded inputs) within 0.02 deg of the derived ones."""
    cases = {c["id"]: c for c in load_doc("arm5.json")["cases"]}
    up = cases["arm5-spec-example-up"]
    assert up["status"] == "OK"
    assert np.allclose(up["q_deg"][1:4], [-50.024, 105.019, 35.004], atol=0.02)
    assert cases["arm5-spec-example-down-falls-back"]["q_deg"] == up["q_deg"]
    assert cases["arm5-only-forbidden-wrist-would-do"]["status"] == "JOINT_LIMIT"


def test_comparator_rejects_wrong_answers():
    """The judge is not vacuous: a wrong status, a nudged angle, a forbidden or NaN angle all fail."""
    doc = load_doc("arm5.json")
    geom = derive.Geometry(doc["board"])
    case = next(c for c in doc["cases"] if c["id"] == "arm5-spec-example-up")
    good = case["q_deg"]
    assert judge(geom, case, "OK", good) == []
    assert judge(geom, case, "SINGULAR", good)
    assert judge(geom, case, "OK", [good[0], good[1] + 1e-4] + good[2:])
    assert judge(geom, case, "OK", good[:3] + [good[3] + 360.0, good[4]])      # same pose, outside limits
    assert judge(geom, case, "OK", [math.nan] + good[1:])
    assert judge(geom, case, "JOINT_LIMIT", None)
    far = next(c for c in doc["cases"] if c["status"] == "TOO_FAR")
    assert judge(geom, far, "TOO_FAR", None) == []
    assert judge(geom, far, "SINGULAR", good)
