# SPDX-License-Identifier: MIT
"""The SO-101's closed form on the board (armfw.chain5), against the URDF it was imported from.

The referee is the board file's own chain (the joints' xyz_mm, rpy_deg and axis
from the URDF), run through the host's numpy FK (armctl.chain.Chain), never the
solver's derived parameters; the host's DLS (armctl.numik) on that chain is the
second opinion on what is reachable.
"""

import json
import math

import numpy as np
import pytest

from armctl import chain as chain_mod, numik, upy
from armfw import board as board_file, status
from conftest import BOARDS, MP_SCRIPTS

SO101 = BOARDS / "so101.json"

# The lateral tool offset makes targets this close to the pan axis a question of
# the roll (NEAR_AXIS inside |b|, the base angle swinging fast just outside).
NEAR_PAN_MM = 15.0

# The closed form takes the pitch joints' axes as parallel; the URDF's rounded right
# angles (1.5708 for pi/2) leave them a few 1e-6 rad apart.
PITCH_TOL_RAD = 1e-5


def closed_form():
    b = board_file.load(str(SO101))
    b.solver.zones = None       # the geometry alone; the floor zone is tests/test_so101.py's
    return b.solver


def referee():
    """The URDF's chain in numpy, owing nothing to the closed form."""
    c = chain_mod.from_board(board_file.load(str(SO101)))
    c.solver = None
    return c


def pitch_of(urdf, q):
    """Tool pitch (rad) of poses q as the protocol speaks it, from the chain alone: the
    gripper's direction (the board's tool_axis) from vertical in the plane the base
    faces (the shoulder axis times up), negated when the tip is behind the pan axis."""
    joints, end = urdf.frames(q)
    shoulder = joints[..., 1, :3, :3] @ urdf.axes[1]
    forward = np.stack([shoulder[..., 1], -shoulder[..., 0], np.zeros_like(shoulder[..., 0])], axis=-1)
    forward /= np.linalg.norm(forward, axis=-1, keepdims=True)
    d = urdf.tool_direction(q)
    pitch = np.arctan2(np.sum(d * forward, axis=-1), d[..., 2])
    pan = joints[..., 0, :3, 3]
    behind = np.sum((end[..., :3, 3] - pan) * forward, axis=-1) < 0.0
    return np.where(behind, -pitch, pitch)


def test_the_parameters_read_from_the_chain_agree_with_the_urdf_by_hand():
    """A hand calculation from the joints' xyz_mm (the URDF's origins): the pan frame turns
    the world by (x, y, z) -> (y, x, -z), the arm reaches along -y at pan 0, and each
    later joint's origin offset lands in the arm's plane as (forward, up, lateral):
        shoulder 30.3992 ahead of the pan axis, 94.8817 + 54.2 up, 18.2778 to the right
        elbow    28.0 ahead, 112.57 up          (upper arm bent 13.97 deg forward)
        wrist    134.9 ahead, 5.2 up            (forearm 87.79 deg from vertical at 0)
        roll     61.1 ahead, 18.1 to the left   (its axis points back at the wrist)
        tip      98.1274 ahead, 7.9 down, 0.2181 to the right of the roll axis.
    The URDF rounds its right angles (1.5708 rad): agreement to 2 um and 1e-3 deg."""
    s = closed_form()
    mm = dict(abs=2e-3)
    deg = dict(abs=1e-3)
    assert (s._cx, s._cy) == pytest.approx((20.7909, -23.0745), **mm)
    assert s._pan_sign == -1.0 and s._roll_sign == -1.0
    assert math.degrees(s._h0) == pytest.approx(-90.0, **deg)
    assert (s._sf, s._su) == pytest.approx((30.3992, 94.8817 + 54.2), **mm)
    assert s._links.l1 == pytest.approx(math.hypot(28.0, 112.57), **mm)
    assert s._links.l2 == pytest.approx(math.hypot(134.9, 5.2), **mm)
    assert math.degrees(s._k1) == pytest.approx(math.degrees(math.atan2(28.0, 112.57)), **deg)
    assert math.degrees(s._k2) == pytest.approx(math.degrees(math.atan2(134.9, 5.2)), **deg)
    assert math.degrees(s._k3) == pytest.approx(90.0, **deg)
    assert s._along == pytest.approx(61.1 + 98.1274, **mm)
    assert s._across == pytest.approx(0.0, **mm)
    assert s._lateral == pytest.approx(-18.2778 + 18.1, **mm)
    assert (s._tn, s._tl) == pytest.approx((7.9, -0.218121), **mm)


def test_a_chain_not_built_like_the_arm5_is_refused():
    d = json.loads(SO101.read_text())
    d["joints"][2]["axis"] = [1.0, 0.0, 0.0]
    with pytest.raises(board_file.BoardError, match=r"b.json.arm.closed_form: .*joint 3 must turn about joint 2's axis"):
        board_file.from_dict(d, "b.json")
    d = json.loads(SO101.read_text())
    d["arm"]["closed_form"] = "planar"
    with pytest.raises(board_file.BoardError, match=r"closed_form"):
        board_file.from_dict(d, "b.json")


def joint_grid():
    """Poses on a grid inside the limits (the elbow clear of full stretch, -73.8 deg,
    where the closed form says SINGULAR and a 2 um difference decides TOO_FAR)."""
    axes = [np.radians(np.linspace(-105, 105, 8)), np.radians(np.linspace(-95, 95, 8)),
            np.radians([-90, -60, -40, -15, 10, 35, 60, 90]), np.radians(np.linspace(-90, 90, 7)),
            np.radians([-120.0, 0.0, 37.0, 150.0])]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 5)


def grid_targets(ref, step=1):
    """(poses, tips, pitches) of every step-th grid pose whose tip is NEAR_PAN_MM or more
    from the pan axis, by the referee's FK."""
    poses = joint_grid()[::step]
    tips = ref.fk(poses)
    pan = ref.frames(poses[:1])[0][0, 0, :3, 3]
    far = np.hypot(tips[:, 0] - pan[0], tips[:, 1] - pan[1]) >= NEAR_PAN_MM
    return poses[far], tips[far], pitch_of(ref, poses[far])


def test_every_answer_lands_on_its_target_by_the_urdf_fk_over_a_dense_grid(report):
    s = closed_form()
    ref = referee()
    poses, tips, pitches = grid_targets(ref)
    out = [0.0] * 5
    solved = np.zeros_like(poses)
    counts = {}
    for k, (q, tip, pitch) in enumerate(zip(poses, tips, pitches)):
        # From home (the roll given): the cheapest branch, any of the four.
        current = [0.0, 0.0, 0.0, 0.0, float(q[4])]
        st = s.ik([float(v) for v in tip] + [float(pitch)], out, current)
        counts[status.name(st)] = counts.get(status.name(st), 0) + 1
        assert status.solved(st), (np.degrees(q), status.name(st))
        solved[k] = out
    miss = np.linalg.norm(ref.fk(solved) - tips, axis=-1)
    turn = np.abs(np.angle(np.exp(1j * (pitch_of(ref, solved) - pitches))))
    assert miss.max() <= 1e-3, miss.max()
    assert turn.max() <= PITCH_TOL_RAD, turn.max()
    assert np.all(ref.within_limits(solved))
    assert np.allclose(solved[:, 4], poses[:, 4])       # the roll kept
    report("so101 closed form: %d grid targets (%s), URDF FK misses by at most %.2g mm, pitch by %.2g rad"
           % (len(solved), counts, miss.max(), turn.max()))


def test_each_grid_pose_is_found_again_from_itself():
    """With the pose itself as the current one, minimum motion picks its own branch. The
    pitch read from the chain's tool frame is the roll axis's within PITCH_TOL_RAD, which
    near full stretch moves the joints ten times as far: 1e-4 rad."""
    s = closed_form()
    ref = referee()
    out = [0.0] * 5
    worst = 0.0
    for q, tip, pitch in zip(*grid_targets(ref, 7)):
        st = s.ik([float(v) for v in tip] + [float(pitch)], out, [float(v) for v in q])
        assert status.solved(st)
        worst = max(worst, float(np.max(np.abs(np.array(out) - q))))
    assert worst < 1e-4, worst


def cartesian_targets():
    """Points on a box around the arm at a pitch each, as a user would ask."""
    xs = np.linspace(-250, 350, 7)
    ys = np.linspace(-450, 250, 8)
    zs = np.linspace(-20, 380, 6)
    grid = np.stack(np.meshgrid(xs, ys, zs, indexing="ij"), axis=-1).reshape(-1, 3)
    return grid


def test_where_the_dls_reaches_a_point_the_closed_form_reaches_it_too_with_the_same_tool_pose(report):
    """Position only, the roll held: the DLS finds some pitch; asked for that pitch (read
    from the DLS's own pose by the chain), the closed form reaches the point, with the
    same tip, pitch and roll. Where the DLS finds the point beyond reach, no pitch the
    closed form is asked (every 15 degrees) gives a pose."""
    s = closed_form()
    ref = referee()
    targets = cartesian_targets()
    roll = math.radians(25.0)
    seed = np.array([0.0, 0.0, 0.0, 0.0, roll])
    batch = numik.solve_batch(ref, targets, mode=numik.POSITION, seed=seed, restarts=3)
    out = [0.0] * 5
    both = far = dls_missed = cf_only = 0
    for k, t in enumerate(targets):
        result = batch[k]
        tip = [float(v) for v in t]
        if result.ok:
            # The DLS stops within TOL_MM, pressed against a limit where the exact
            # pose would break it: the closed form is asked for the pose it found.
            q = np.asarray(result.q)
            pitch = float(pitch_of(ref, q))
            found = ref.fk(q)
            st = s.ik([float(v) for v in found] + [pitch], out, seed.tolist())
            assert status.solved(st), (t, status.name(st), np.degrees(q))
            mine = np.array(out)
            assert np.linalg.norm(ref.fk(mine) - found) <= 1e-3
            assert np.linalg.norm(found - t) <= numik.TOL_MM
            assert abs(float(pitch_of(ref, mine)) - pitch) <= PITCH_TOL_RAD
            assert mine[4] == q[4] == roll
            both += 1
        elif result.status in (status.TOO_FAR, status.TOO_CLOSE):
            for p in np.radians(np.arange(-180, 180, 15)):
                st = s.ik(tip + [float(p)], out, seed.tolist())
                assert not status.solved(st), (t, math.degrees(p), np.degrees(out))
            far += 1
        else:
            # The DLS stopped short (NOT_CONVERGED: against a limit, nothing proven):
            # any pose the closed form finds must be on the point.
            for p in np.radians(np.arange(-180, 180, 15)):
                if status.solved(s.ik(tip + [float(p)], out, seed.tolist())):
                    assert np.linalg.norm(ref.fk(np.array(out)) - t) <= 1e-3
                    cf_only += 1
                    break
            dls_missed += 1
    report("so101 closed form vs DLS: %d points both reach, %d beyond reach for both, %d the DLS did not "
           "settle (the closed form reaches %d of them at some pitch)" % (both, far, dls_missed, cf_only))
    assert both > 200 and far > 20


def test_pointing_down_the_two_agree_on_which_points_are_reachable(report):
    """Pitch mode with the gripper straight down (the board's position-only pitch): the
    DLS reaches a point exactly when the closed form does (one miss of the DLS allowed
    per hundred, where its restarts ran out), and their poses point the same way."""
    s = closed_form()
    ref = referee()
    xs = np.linspace(-200, 300, 11)
    ys = np.linspace(-400, 200, 11)
    pts = np.stack(np.meshgrid(xs, ys, [20.0, 120.0], indexing="ij"), axis=-1).reshape(-1, 3)
    down = np.tile([0.0, 0.0, -1.0], (len(pts), 1))
    seed = np.zeros(5)
    batch = numik.solve_batch(ref, np.hstack([pts, down]), mode=numik.PITCH, seed=seed, restarts=3)
    out = [0.0] * 5
    agree = cf_only = 0
    for k, t in enumerate(pts):
        st = s.ik([float(v) for v in t], out, seed.tolist())    # position only: the board's pitch
        if batch[k].ok:
            assert status.solved(st), (t, status.name(st))
            assert np.linalg.norm(ref.fk(np.array(out)) - t) <= 1e-3
            assert np.allclose(ref.tool_direction(np.array(out)), [0.0, 0.0, -1.0], atol=PITCH_TOL_RAD)
            agree += 1
        elif status.solved(st):
            assert np.linalg.norm(ref.fk(np.array(out)) - t) <= 1e-3
            cf_only += 1
        else:
            agree += 1
    report("so101 pointing down: %d points agree, %d reached by the closed form only" % (agree, cf_only))
    assert cf_only <= len(pts) // 100 + 1


@pytest.mark.parametrize("target, current, word", [
    ([900.0, 0.0, 100.0, math.pi / 2], None, "TOO_FAR"),
    ([20.7909, -23.0745 - 3.0, 150.0, math.pi], [0.0, 0.0, 0.0, 0.0, math.pi / 2], "NEAR_AXIS"),
    ([float("nan"), 0.0, 100.0, 1.0], None, "BAD_INPUT"),
    ([100.0, float("inf"), 100.0, 1.0], None, "BAD_INPUT"),
    ([100.0, -250.0, 60.0, float("-inf")], None, "BAD_INPUT"),
    ([100.0, -250.0, 60.0, 1.0], [0.0, 0.0, float("nan"), 0.0, 0.0], "BAD_INPUT"),
    (["1", 0.0, 0.0, 0.0], None, "BAD_INPUT"),
    ([1.0, 2.0], None, "BAD_INPUT"),
])
def test_what_has_no_pose_gets_its_word_and_leaves_out_alone(target, current, word):
    s = closed_form()
    out = [7.0] * 5
    assert status.name(s.ik(target, out, current)) == word
    assert out == [7.0] * 5


def test_a_pose_past_the_wrists_limit_is_refused_as_joint_limit():
    """The tool pose of the wrist flexed to 149 degrees (its limit is 95): every candidate
    that reaches it breaks a limit."""
    s = closed_form()
    ref = referee()
    q = np.array([0.0, 0.0, 0.0, math.radians(149.0), 0.0])
    target = [float(v) for v in ref.fk(q)] + [float(pitch_of(ref, q))]
    out = [7.0] * 5
    assert status.name(s.ik(target, out)) == "JOINT_LIMIT" and out == [7.0] * 5


def test_under_micropython_the_answers_are_cpythons(micropython):
    """tests/mp/grid_check.py on the real MicroPython Unix port: the same status and
    angles as CPython, position-only targets and every rule included."""
    s = board_file.load(str(SO101)).solver
    s.zones = None
    ref = referee()
    poses = joint_grid()[::41]
    tips = ref.fk(poses)
    pitches = pitch_of(ref, poses)
    lines = []
    expected = []
    rules = ("min", "up", "down")
    out = [0.0] * 5
    for k, (q, tip, pitch) in enumerate(zip(poses, tips, pitches)):
        target = [float(v) for v in tip] + ([float(pitch)] if k % 3 else [])
        current = [0.1, -0.2, 0.3, 0.1, float(q[4])]
        rule = rules[k % 3]
        lines.append("%s %s | %s" % (rule, " ".join(repr(v) for v in target), " ".join(repr(v) for v in current)))
        st = s.ik(target, out, current, ("min", "up", "down").index(rule))
        expected.append((status.name(st), list(out) if status.solved(st) else None))
    run = upy.run(MP_SCRIPTS / "grid_check.py", SO101, stdin="\n".join(lines) + "\n")
    assert run.returncode == 0, run.stderr
    got = run.stdout.splitlines()
    assert got[-1] == "done %d" % len(lines)
    for line, (word, q) in zip(got[:-1], expected):
        words = line.split()
        assert words[0] == word
        if q is not None:
            assert [float(v) for v in words[1:]] == pytest.approx(q, abs=1e-9)
    assert sum(1 for w, _ in expected if w in ("OK", "SINGULAR")) > len(expected) // 2


def test_the_board_answers_tool_targets_on_its_bus_under_micropython(micropython):
    """main.py on the Unix port with the SO-101's fake STS3215s (tests/mp/fake_machine): ik and
    move with a pitch, move with X Y Z alone (the board's pitch: straight down), and an
    unreachable point refused, where a chain arm used to answer NO_CLOSED_FORM."""
    from armctl import FIRMWARE_DIR, memory
    ref = referee()
    q = np.radians([20.0, -30.0, 40.0, 50.0, 0.0])
    tip = ref.fk(q)
    pitch = math.degrees(float(pitch_of(ref, q)))
    words = " ".join("%.4f" % v for v in tip)
    lines = ["home", "ik %s %.4f" % (words, pitch), "move %s %.4f" % (words, pitch), "where",
             "move 150 -200 40", "where", "move 900 0 100 90"]
    _, out = memory.answer(micropython, FIRMWARE_DIR, SO101, lines, 512,
                           extra_path=memory.FAKE_MACHINE_PATH, extra_env={"ARMCTL_FAKE_BUS": "1,2,3,4,5,6"})
    _, replies = memory.replies(out)
    finals = [r[-1] for r in replies]
    assert finals[1].startswith("ok OK "), finals
    # From home, the cheapest of the four candidates is the pose the target came from.
    assert [float(v) for v in finals[1].split()[2:7]] == pytest.approx(np.degrees(q), abs=2e-3)

    def field(line, key):
        return float(line.split(key + "=")[1].split()[0])

    for reply, (x, y, z), p in ((finals[3], tip, pitch), (finals[5], (150.0, -200.0, 40.0), 180.0)):
        assert reply.startswith("ok OK "), finals
        assert [field(reply, k) for k in ("x", "y", "z")] == pytest.approx([x, y, z], abs=2e-3)
        assert abs((field(reply, "pitch") - p + 180.0) % 360.0 - 180.0) < 2e-3
    assert finals[6].startswith("error TOO_FAR"), finals


def as_float32(value):
    """A parsed board file with every number a float32 (tests/test_float32.F32)."""
    from test_float32 import F32
    if isinstance(value, dict):
        return {k: as_float32(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_float32(v) for v in value]
    if isinstance(value, float):
        return F32(value)
    return value


def test_in_single_precision_the_answers_stay_on_target(monkeypatch, report):
    """Every number a float32 and the math functions off by an ulp (tests/test_float32.py's
    emulation, extended to armfw.chain and armfw.chain5): no NaN, every grid target still
    solved, inside the limits, and on target by the double-precision URDF FK within what
    float32 rounding of 400 mm coordinates explains."""
    from test_float32 import F32, Libm32
    from armfw import arm5, chain, chain5, twolink
    Libm32(seed=101).install(monkeypatch)
    for module in (chain, chain5):
        for name, source in (("sqrt", twolink), ("sin", twolink), ("atan2", twolink), ("cos", arm5)):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, getattr(source, name))
    monkeypatch.setattr(chain5, "pi", F32(math.pi))
    s = board_file.from_dict(as_float32(json.loads(SO101.read_text()))).solver
    s.zones = None
    ref = referee()
    out = [0.0] * 5
    worst = 0.0
    solved = 0
    for q, tip, pitch in zip(*grid_targets(ref, 13)):
        target = [F32(v) for v in tip] + [F32(pitch)]
        st = s.ik(target, out, [F32(0.0)] * 4 + [F32(q[4])])
        assert status.solved(st), (np.degrees(q), status.name(st))
        assert all(math.isfinite(v) for v in out)
        assert ref.within_limits(np.array(out, dtype=float))
        worst = max(worst, float(np.linalg.norm(ref.fk(np.array(out, dtype=float)) - tip)))
        solved += 1
    report("so101 closed form in float32: %d grid targets solved, URDF FK within %.3g mm" % (solved, worst))
    assert worst < 0.01


def test_armctl_move_with_a_pitch_is_solved_by_the_so101_board(micropython, capsys):
    """`armctl move X Y Z PITCH` on the SO-101: the pitch goes to the board's closed form
    (a chain arm without one takes X Y Z only), and the arm ends where FK says."""
    from armctl import cli
    from armctl.link import Link
    from armctl.sim import Simulator
    with Simulator(BOARDS / "so101.json", pty=True) as sim:
        with Link(sim.port) as link:
            assert link.request("home").ok
        assert cli.main(["move", "--port", sim.port, "150", "-200", "40", "150"]) == 0
        assert capsys.readouterr().out.startswith("solver=board status=OK")
        with Link(sim.port) as link:
            where = link.request("where")
        assert cli.main(["move", "--port", sim.port, "150", "-200", "40", "150", "10"]) != 0
        assert "takes X Y Z [PITCH], got 5 numbers" in capsys.readouterr().err
    assert [where.fields[k] for k in ("x", "y", "z", "pitch")] == pytest.approx([150, -200, 40, 150], abs=1e-2)
