# SPDX-License-Identifier: MIT
"""armctl.chain: the data-described serial chain agrees with the firmware's FK (the reference)."""

import json
import math

import numpy as np
import pytest

from armfw import board as fw_board
from armctl import chain, upy

from conftest import BOARDS, MP_SCRIPTS, ROOT

ARM5 = BOARDS / "sim_arm5.json"
PLANAR = BOARDS / "sim_planar.json"


@pytest.fixture(scope="module")
def arm5():
    return fw_board.load(str(ARM5))


@pytest.fixture(scope="module")
def planar():
    return fw_board.load(str(PLANAR))


def test_arm5_fk_matches_firmware_on_random_poses(arm5):
    c = chain.from_board(arm5)
    q = c.random_poses(3000, np.random.default_rng(1))
    tip = c.fk(q)
    direction = c.tool_direction(q)
    for i in range(len(q)):
        ref = arm5.solver.fk(list(q[i]), [0.0] * 4)
        assert np.allclose(tip[i], ref[:3], atol=1e-9)
        # The firmware's pitch is from vertical, in the plane the base faces.
        want = [math.sin(ref[3]) * math.cos(q[i, 0]), math.sin(ref[3]) * math.sin(q[i, 0]), math.cos(ref[3])]
        assert np.allclose(direction[i], want, atol=1e-12)


def test_planar_fk_matches_firmware_on_random_poses(planar):
    c = chain.from_board(planar)
    q = c.random_poses(3000, np.random.default_rng(2))
    tip = c.fk(q)
    for i in range(len(q)):
        ref = planar.solver.fk(list(q[i]), [0.0, 0.0])
        assert np.allclose(tip[i], [ref[0], ref[1], 0.0], atol=1e-9)


def test_limits_names_home_come_from_the_board(arm5, planar):
    for b in (arm5, planar):
        c = chain.from_board(b)
        assert c.names == b.solver.names
        assert np.array_equal(c.lo, b.solver.lo) and np.array_equal(c.hi, b.solver.hi)
        assert np.array_equal(c.home, b.solver.home)


def test_reach_by_hand(arm5, planar):
    c = chain.from_board(arm5)
    # J2 axis stays put whatever the base yaw does; the rest is L1 + L2 + L3.
    assert np.allclose(c.anchor, [0.0, 0.0, 189.0])
    assert c.reach == pytest.approx(126.14 + 126.14 + 150.6)
    p = chain.from_board(planar)
    assert np.allclose(p.anchor, 0.0) and p.reach == pytest.approx(180.0)


def test_home_pose_by_hand(arm5):
    # Home: shoulder 0 (up), elbow 90: forearm and tool horizontal along +x.
    c = chain.from_board(arm5)
    pts = c.joint_points(c.home)
    assert np.allclose(pts[-1], [126.14 + 150.6, 0.0, 189.0 + 126.14])
    assert np.allclose(pts[2], [0.0, 0.0, 189.0 + 126.14])


def test_jacobian_matches_finite_differences(arm5):
    c = chain.from_board(arm5)
    q = c.random_poses(50, np.random.default_rng(3))
    jac, tip, direction = c.jacobian(q)
    h = 1e-6
    for j in range(c.n):
        dq = np.zeros(c.n)
        dq[j] = h
        d_tip = (c.fk(q + dq) - c.fk(q - dq)) / (2 * h)
        d_dir = (c.tool_direction(q + dq) - c.tool_direction(q - dq)) / (2 * h)
        assert np.allclose(jac[:, :3, j], d_tip, atol=1e-5)
        # The tool direction turns at ω × d.
        assert np.allclose(np.cross(jac[:, 3:, j], direction), d_dir, atol=1e-6)


def test_batch_shapes(arm5):
    c = chain.from_board(arm5)
    q = np.zeros((4, 7, c.n))
    assert c.fk(q).shape == (4, 7, 3)
    assert c.jacobian(q)[0].shape == (4, 7, 6, c.n)
    assert c.fk(np.zeros(c.n)).shape == (3,)


def test_description_chain_matches_planar_by_hand():
    # A three-link planar arm (no closed form in armfw), links 100, 80, 50 mm.
    desc = {"joints": [{"axis": [0, 0, 1]},
                       {"xyz_mm": [100, 0, 0], "axis": [0, 0, 1]},
                       {"xyz_mm": [80, 0, 0], "axis": [0, 0, 1]}],
            "tool": {"xyz_mm": [50, 0, 0]}, "tool_axis": [1, 0, 0]}
    c = chain.from_description(desc)
    rng = np.random.default_rng(4)
    q = c.random_poses(500, rng)
    a1, a2, a3 = q[:, 0], q[:, 0] + q[:, 1], q[:, 0] + q[:, 1] + q[:, 2]
    x = 100 * np.cos(a1) + 80 * np.cos(a2) + 50 * np.cos(a3)
    y = 100 * np.sin(a1) + 80 * np.sin(a2) + 50 * np.sin(a3)
    assert np.allclose(c.fk(q), np.column_stack([x, y, np.zeros_like(x)]))
    assert c.reach == pytest.approx(230.0)


def test_description_rpy_rotates_the_axis():
    # A joint frame rolled 90 degrees about x turns its z axis into -y.
    c = chain.from_description({"joints": [{"rpy_deg": [90, 0, 0], "axis": [0, 0, 1]}],
                                "tool": {"xyz_mm": [10, 0, 0]}})
    assert np.allclose(c.fk([math.pi / 2]), [0.0, 0.0, 10.0], atol=1e-12)


@pytest.mark.parametrize("desc, field", [
    ({"joints": []}, "chain.joints"),
    ({"joints": [{"axis": [0, 0, 0]}]}, "chain.joints[0].axis"),
    ({"joints": [{"xyz_mm": [1, 2]}]}, "chain.joints[0].xyz_mm"),
    ({"joints": [{"min_deg": 10, "max_deg": -10}]}, "chain.joints[0]"),
])
def test_bad_description_names_the_field(desc, field):
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
        chain.from_description(desc)


def _test_chains(arm5, planar):
    """(chain, pose count, seed) for the firmware FK checks: board arms and a description
    with rotated joint frames, a tilted axis, a negative axis and a rotated tool."""
    desc = {"joints": [{"axis": [0, 0, -1]},
                       {"xyz_mm": [0, 0, 50], "rpy_deg": [90, 0, 30], "axis": [0, 1, 0]},
                       {"xyz_mm": [100, 10, 0], "axis": [1, 1, 0]},
                       {"xyz_mm": [0, 80, 5], "rpy_deg": [-20, 45, 10], "axis": [-1, 0, 0]}],
            "tool": {"xyz_mm": [10, 20, 60], "rpy_deg": [0, 90, 0]}, "tool_axis": [1, 0, 0]}
    return [(chain.from_board(arm5), 500, 3), (chain.from_board(planar), 200, 4),
            (chain.from_description(desc), 300, 5)]


def _numpy_frames(c, count, seed):
    """Random poses and what the numpy chain says of them (Chain.frames, Chain.jacobian)."""
    q = c.random_poses(count, np.random.default_rng(seed))
    joints, end = c.frames(q)
    jac, tip, direction = c.jacobian(q)
    assert np.allclose(tip, end[:, :3, 3], atol=0)
    return q, {"tip": tip, "direction": direction, "origins": joints[:, :, :3, 3],
               "axes": np.swapaxes(jac[:, 3:, :], 1, 2), "jacobian": jac}


def _agree(want, i, tip, direction, origins, axes, atol_mm=1e-9, atol=1e-12):
    """The firmware FK's buffers for pose i against the numpy chain; the Jacobian rebuilt from them too."""
    origins = np.reshape(origins, (-1, 3))
    axes = np.reshape(axes, (-1, 3))
    assert np.allclose(tip, want["tip"][i], atol=atol_mm)
    assert np.allclose(direction, want["direction"][i], atol=atol)
    assert np.allclose(origins, want["origins"][i], atol=atol_mm)
    assert np.allclose(axes, want["axes"][i], atol=atol)
    linear = np.cross(axes, np.asarray(tip) - origins).T
    assert np.allclose(linear, want["jacobian"][i, :3], atol=atol_mm)


def test_firmware_chain_fk_matches_the_numpy_chain(arm5, planar):
    # What numik's plain-float DLS runs on: armctl.chain.plain_solver's ChainSolver.
    for c, count, seed in _test_chains(arm5, planar):
        solver = chain.plain_solver(c)
        q, want = _numpy_frames(c, count, seed)
        tip = [0.0] * 3
        for i in range(count):
            assert solver.fk(q[i].tolist(), tip) is tip
            _agree(want, i, tip, solver.direction, solver.origins[:3 * c.n], solver.joint_axes)
            assert solver.origins[3 * c.n:] == tip


def test_firmware_chain_fk_matches_the_numpy_chain_under_micropython(arm5, planar, micropython, tmp_path):
    chains, wants = [], []
    for c, count, seed in _test_chains(arm5, planar):
        s = chain.plain_solver(c)
        q, want = _numpy_frames(c, count, seed)
        chains.append({"xyz": s.xyz, "fixed": s.fixed, "axes": s.axes, "tool_xyz": s.tool_xyz,
                       "tool_rot": s.tool_rot, "tool_axis": s.tool_axis, "names": s.names,
                       "lo": s.lo, "hi": s.hi, "home": s.home, "poses": q.tolist()})
        wants.append(want)
    path = tmp_path / "chains.json"
    path.write_text(json.dumps(chains))
    out = upy.run(MP_SCRIPTS / "chain_frames.py", path, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().split("\n")
    total = sum(len(d["poses"]) for d in chains)
    assert lines[-1] == "done %d" % total and len(lines) == total + 1
    for line in lines[:-1]:
        head, tip, direction, origins, axes = line.split("|")
        c, i = (int(v) for v in head.split())
        _agree(wants[c], i, *(np.array(f.split(), float) for f in (tip, direction, origins, axes)))
