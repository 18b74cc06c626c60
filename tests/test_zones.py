"""Keep-out zones: every link, every step, before anything moves (armfw.zones and its hooks).

Judged by tests/zone_oracle.py: a forward kinematics written there and links
sampled every 0.5 mm as capsules, never armfw's own FK or zone code.
"""

import copy
import json
import math
from math import pi

import numpy as np
import pytest

from armctl.sim import Simulator
from armfw import board, fields, kinematics, status, workspace, zones
from armfw.kinematics import MIN_MOTION, PREFER_DOWN, PREFER_UP
from armfw.executor import RING_STEPS
from armfw.motion import ArmController
from armfw.planner import JOINTS, LINE, MOVE
from armfw.gripper import Gripper
from armfw.simservo import SimServo
from conftest import BOARDS
from zone_oracle import World

D = math.radians
ARM5 = BOARDS / "sim_arm5.json"
PLANAR = BOARDS / "sim_planar.json"

# Every kind of zone, stated here (the defaults plus a fixture and a tool box).
ARM5_WORKSPACE = {
    "floor": {"height_mm": 0.0, "clearance_mm": 5.0},
    "link_radius_mm": {"upper_arm": 20.0, "forearm": 15.0, "tool": 8.0},
    "zones": [
        {"name": "base", "kind": "cylinder", "x_mm": 0.0, "y_mm": 0.0, "radius_mm": 45.0,
         "bottom_mm": 0.0, "top_mm": 214.0, "links": ["forearm", "tool"]},
        {"name": "fixture", "kind": "box", "min_mm": [150.0, -60.0, 0.0], "max_mm": [230.0, 20.0, 80.0]},
    ],
}
PLANAR_WORKSPACE = {
    "floor": {"height_mm": -120.0, "clearance_mm": 5.0},
    "link_radius_mm": {"upper_arm": 15.0, "forearm": 10.0},
    "tool_box": {"min_mm": [-170.0, -150.0], "max_mm": [175.0, 175.0]},
    "zones": [
        {"name": "post", "kind": "cylinder", "x_mm": 0.0, "radius_mm": 20.0,
         "bottom_mm": -400.0, "top_mm": -30.0, "links": ["forearm"]},
        {"name": "lamp", "kind": "box", "min_mm": [-120.0, 60.0], "max_mm": [-60.0, 120.0]},
    ],
}
WORKSPACES = {"arm5": (ARM5, ARM5_WORKSPACE), "planar": (PLANAR, PLANAR_WORKSPACE)}


def board_data(kind, workspace="given"):
    path, ws = WORKSPACES[kind]
    data = json.loads(path.read_text())
    if workspace == "given":
        data["workspace"] = copy.deepcopy(ws)
    return data


def load(kind):
    data = board_data(kind)
    return board.from_dict(data, kind), World(data)


def random_poses(arm, count, rng):
    return rng.uniform(arm.lo, arm.hi, (count, arm.n))


# --- the check against the independent judge --------------------------------

@pytest.mark.parametrize("kind", ["arm5", "planar"])
def test_clear_agrees_with_the_capsule_judge(kind):
    """clear() never passes a pose whose capsules enter a zone, and never refuses one that
    is not at least inside the zone grown with square edges (the firmware's documented shape)."""
    b, world = load(kind)
    z = b.solver.zones
    rng = np.random.default_rng(18)
    refused = accepted = 0
    for q in random_poses(b.solver, 1500, rng):
        if z.clear(list(q)):
            accepted += 1
            assert world.capsule_depth(q) <= 1e-6, q
        else:
            refused += 1
            name = z.zone_names[z.hit_zone]
            link = z.link_names[z.hit_link]
            # Sampled every 0.5 mm: a crossing may fall between two samples by a hair.
            assert world.depths(q, square=True)[name, link] > -0.05, (q, name, link)
    assert accepted > 200 and refused > 200, (accepted, refused)


@pytest.mark.parametrize("kind", ["arm5", "planar"])
def test_dense_grid_no_accepted_target_in_a_zone_and_a_clear_branch_is_found(kind):
    b, world = load(kind)
    arm = b.solver
    free = board.from_dict(board_data(kind), kind).solver
    free.zones = None       # the same solver without zones: its branches, judged by the oracle
    out = [0.0] * arm.n
    alt = [0.0] * arm.n
    counts = {"accepted": 0, "collision": 0, "clear_branch_taken": 0}
    if kind == "arm5":
        targets = [(r * math.cos(yaw), r * math.sin(yaw), z, D(p))
                   for yaw in (0.0, 2.3) for r in np.arange(-350.0, 351.0, 17.0)
                   for z in np.arange(-40.0, 520.0, 17.0) for p in (0.0, 60.0, 90.0, 135.0, 180.0)]
    else:
        targets = [(x, y) for x in np.arange(-185.0, 186.0, 5.0) for y in np.arange(-185.0, 186.0, 5.0)]
    for t in targets:
        t = list(t)
        # Where the zone-free solver has a branch the oracle finds well clear,
        # the zoned solver must answer (with a clear pose, checked below).
        clear_branch = False
        for r in (PREFER_UP, PREFER_DOWN):
            if status.solved(free.ik(t, alt, arm.home, r)):
                if max(world.depths(alt, square=True).values(), default=-1.0) < -0.5:
                    clear_branch = True
        for rule in (MIN_MOTION, PREFER_UP, PREFER_DOWN):
            st = arm.ik(t, out, arm.home, rule)
            if status.solved(st):
                counts["accepted"] += 1
                assert world.capsule_depth(out) <= 1e-6, (t, out)
            elif st == status.COLLISION:
                counts["collision"] += 1
            if clear_branch:
                assert status.solved(st), (t, rule, status.name(st))
                counts["clear_branch_taken"] += 1
    assert counts["accepted"] > 1000 and counts["collision"] > 200, counts


def test_min_motion_takes_the_clear_branch_over_the_nearer_one():
    """A fixture where one branch puts its elbow: from a pose next to that branch min
    motion would take it; the other branch is chosen instead."""
    free = board.from_dict(board_data("arm5"), "free").solver
    free.zones = None
    branch = {PREFER_UP: [0.0] * 5, PREFER_DOWN: [0.0] * 5}
    out = [0.0] * 5
    found = 0
    targets = [(x, z, p) for x in (120.0, 200.0, 280.0) for z in (60.0, 150.0, 250.0, 330.0)
               for p in (30.0, 90.0, 150.0)]
    for x, z, pitch in targets:
        t = [x * math.cos(0.7), x * math.sin(0.7), z, D(pitch)]
        if not all(status.solved(free.ik(t, q, None, rule)) and free.elbow == (
                kinematics.UP if rule == PREFER_UP else kinematics.DOWN) for rule, q in branch.items()):
            continue
        for hits, clear in ((PREFER_UP, PREFER_DOWN), (PREFER_DOWN, PREFER_UP)):
            data = board_data("arm5")
            world = World(data)
            elbow = world.points(branch[hits])[1]
            data["workspace"]["zones"].append({"name": "lamp", "kind": "box",
                                               "min_mm": [float(c) - 10.0 for c in elbow],
                                               "max_mm": [float(c) + 10.0 for c in elbow]})
            world = World(data)
            if max(max(world.depths(q, square=True).values()) for q in (branch[clear], free.home)) > -1.0:
                continue    # the lamp would touch the other branch too, or the home pose
            arm = board.from_dict(data, "lamp").solver
            near = [a + 0.01 for a in branch[hits]]
            st = arm.ik(t, out, near, MIN_MOTION)
            assert status.solved(st), (t, status.name(st))
            assert out[:4] == pytest.approx(branch[clear][:4], abs=1e-9), t     # roll stays as it was
            assert status.solved(free.ik(t, out, near, MIN_MOTION))
            assert out[:4] == pytest.approx(branch[hits][:4])         # what min motion alone takes
            found += 1
    assert found >= 10, found


# --- every step of every motion ------------------------------------------------

class Recorder:
    """A CPython controller that records the pose of every step it sends."""

    def __init__(self, kind):
        self.board, self.world = load(kind)
        self.driver = SimServo(self.board.driver)
        self.poses = []
        g = Gripper(self.driver, self.board.gripper) if self.board.gripper else None
        self.arm = ArmController(self.board, self.driver, g, sleep_ms=self._sleep)
        self.arm.park()
        self.booted = self.driver.count

    def _sleep(self, ms):
        self.poses.append(list(self.arm.q))

    def judge(self, motion, target):
        """Run motion(target): if it ran, no step entered a zone; if refused, nothing moved."""
        self.poses.clear()
        before = list(self.arm.q)
        if motion(target):
            for p in self.poses:
                assert self.world.capsule_depth(p) <= 1e-6, (motion.__name__, before, target, p)
            return True
        assert self.poses == [] and self.arm.q == before
        return False


@pytest.mark.parametrize("kind", ["arm5", "planar"])
def test_random_joint_paths_never_step_into_a_zone(kind):
    rec = Recorder(kind)
    arm = rec.arm
    rng = np.random.default_rng(1818)
    ran = [rec.judge(arm.joints, list(q)) for q in random_poses(arm.solver, 70, rng)]
    assert ran.count(True) >= 10 and ran.count(False) >= 10, ran
    assert arm.refusal.status == "COLLISION"       # targets inside the limits: only a zone refuses


@pytest.mark.parametrize("kind", ["arm5", "planar"])
def test_random_tool_moves_and_lines_never_step_into_a_zone(kind):
    rec = Recorder(kind)
    arm = rec.arm
    rng = np.random.default_rng(7)
    ran = []
    for _ in range(60):
        if kind == "arm5":
            t = [rng.uniform(-300, 300), rng.uniform(-300, 300), rng.uniform(-30, 350), D(rng.uniform(0, 180))]
        else:
            t = [rng.uniform(-180, 180), rng.uniform(-180, 180)]
        ran += [rec.judge(arm.move, t), rec.judge(arm.line, t)]
    assert ran.count(True) >= 10 and ran.count(False) >= 10, ran


def test_a_joint_move_between_safe_poses_that_dips_through_the_floor_is_refused():
    # A: upper arm horizontal, forearm on, tool straight down: tip at z = 189 - 150.6 = 38.4.
    # B: forearm straight down (wrist at z = 189 - 126.14 = 62.9), tool horizontal.
    # Half way (q3 = 45, q4 = 0) forearm and tool both point 135 deg from vertical:
    # tip z = 189 - (126.14 + 150.6) * cos(45 deg) = -6.7, under the table.
    # (Base turned 60 deg: B's tool would cross the fixture at yaw 0.)
    rec = Recorder("arm5")
    arm = rec.arm
    a = [D(60), D(90), 0.0, D(90), 0.0]
    b = [D(60), D(90), D(90), D(-90), 0.0]
    half = [D(60), D(90), D(45), D(45), 0.0]
    world = rec.world
    assert world.capsule_depth(a) < -10 and world.capsule_depth(b) < -10
    assert world.depths(half, square=False)["floor", "tool"] > 20
    assert arm.joints(a)
    rec.poses.clear()
    assert not arm.joints(b)
    assert arm.refusal.status == "COLLISION" and rec.poses == [] and arm.q == pytest.approx(a)
    z = arm.solver.zones
    assert z.zone_names[z.hit_zone] == "floor" and z.link_names[z.hit_link] == "tool"
    assert 1 < arm.refusal.step < arm.executor.steps + 100
    # The refusal's tool point is that of the failing step (base at 60 deg, tip within the
    # floor's 5 mm clearance plus the tool's 8 mm radius), not an earlier failure's.
    x, y, zt = arm.refusal.point[:3]
    assert math.degrees(math.atan2(y, x)) == pytest.approx(60.0, abs=1e-6)
    assert -6.7 < zt < 13.0


def test_pick_whose_descent_enters_the_fixture_is_refused_whole():
    # Above the object (tip at z = 100, tool down) clears the fixture (top 80 mm, grown by
    # the tool's 8 mm radius: 88); the descent to z = 60 enters it.
    rec = Recorder("arm5")
    arm = rec.arm
    before = list(arm.q)
    assert not arm.pick((190.0, -20.0, 60.0))
    assert arm.refusal.status == "COLLISION" and arm.refusal.op == 2 and arm.refusal.step > 1
    assert rec.poses == [] and arm.q == before and rec.driver.count == rec.booted


# --- the issue's transcripts and the protocol, on the MicroPython Unix port ----

def test_issue_transcripts_are_refused_on_the_simulator(micropython):
    with Simulator(ARM5) as sim:
        assert sim.request("where")[-1].startswith("ok")
        booted = sim.pulses()
        replies = {line: sim.request(line)[-1] for line in
                    ("move 250 0 -20 120", "joints 0 120 0 0 0", "ik 10 0 150 180",
                     "joints 0 90 0 90 0", "joints 0 90 90 -90 0", "servo 1 2450")}
        assert replies["move 250 0 -20 120"] == (
            "error COLLISION every solution for 250 0 -20 120: tool would enter zone floor")
        assert replies["joints 0 120 0 0 0"].startswith("error COLLISION joints step ")
        assert replies["joints 0 120 0 0 0"].endswith(": tool would enter zone floor")
        assert replies["ik 10 0 150 180"] == (
            "error COLLISION every solution for 10 0 150 180: tool would enter zone base")
        assert replies["joints 0 90 0 90 0"].startswith("ok ")
        moved = sim.pulses()
        assert len(moved) > len(booted)
        assert replies["joints 0 90 90 -90 0"].startswith("error COLLISION joints step ")
        # The raw servo command, the other joints where they are (pose A), takes the
        # shoulder to (2450 - 1500) / 424.448 rad = 128 deg: the tool folds under the table.
        assert replies["servo 1 2450"].startswith("error COLLISION joints step ")
        assert sim.pulses() == moved
        where = sim.request("where")[-1].split()
        clear = dict(w.split("=") for w in where if "=" in w)
        assert clear["zone"] in ("floor", "base") and float(clear["clear_mm"]) > 0
        info = sim.request("info")[-1]
        assert " zones=floor,base " in info and " clear_mm=" in info


def test_where_reports_the_clearance_the_oracle_measures():
    from armfw.protocol import Protocol
    rec = Recorder("arm5")
    lines = []
    proto = Protocol(rec.arm, lines.append)
    for q in ([0.0, D(90), 0.0, D(90), 0.0], [0.3, D(60), D(60), D(30), 0.0]):
        assert rec.arm.joints(q)
        proto.handle(b"where")
        words = dict(w.split("=") for w in lines[-1].split() if "=" in w)
        depths = rec.world.depths(q, square=False)
        nearest = max(depths, key=depths.get)
        assert (words["zone"], words["link"]) == nearest
        assert float(words["clear_mm"]) == pytest.approx(-depths[nearest], abs=1.0)


# --- float32 ----------------------------------------------------------------

# A segment nearly parallel to a box face divides by a tiny difference: inf in
# float32, as on the board, where the comparisons that follow still hold.
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_float32_a_pose_a_hundredth_of_a_mm_inside_is_refused(monkeypatch):
    """With every number and math result rounded to float32 (the board's floats), tool tips
    0.01 mm under the floor's limit and tool segments 0.01 mm inside the base column are
    refused; 0.01 mm outside they pass."""
    from test_float32 import F32, Libm32, arm32
    libm = Libm32(seed=18)
    libm.install(monkeypatch)
    arm = arm32("sim_arm5.json")
    z = workspace.from_description(copy.deepcopy(ARM5_WORKSPACE), arm, "f32", fields.number, fields.BoardError)
    L1, L2, L3, BASE = 126.14, 126.14, 150.6, 189.0
    floor_limit = 5.0 + 8.0         # clearance + tool radius
    rng = np.random.default_rng(32)
    judged = 0
    for _ in range(400):
        # Upper arm and forearm at random, the tool angle chosen so the tip sits at
        # floor_limit -/+ 0.01 mm (double precision here, as the test's own FK).
        q2 = rng.uniform(D(30), D(110))
        q3 = rng.uniform(D(-20), D(100))
        a3 = q2 + q3
        z_wrist = BASE + L1 * math.cos(q2) + L2 * math.cos(a3)
        r_wrist = L1 * math.sin(q2) + L2 * math.sin(a3)
        for delta, want in ((-0.01, False), (0.01, True)):
            c = (floor_limit + delta - z_wrist) / L3
            if not -1.0 < c < -0.2:
                continue
            a4 = math.acos(c)       # tool pointing down and away
            if r_wrist + L3 * math.sin(a4) < 260.0 or r_wrist < 70.0:
                continue            # keep clear of the base column and the fixture
            q = [F32(rng.uniform(-2.0, 2.0)), F32(q2), F32(q3), F32(a4 - a3), F32(0.0)]
            yaw = float(q[0])
            if abs(yaw) < 0.6:
                continue            # the fixture sits at yaw ~ 0
            assert z.clear(q) is want, (delta, [float(v) for v in q])
            judged += 1
    assert judged > 100
    # The base column: the tool horizontal at z = 100, pointing at the axis, its tip
    # 0.01 mm inside / outside radius 45 + 8 (the wrist 150.6 mm further out, elbow up).
    for delta, want in ((-0.01, False), (0.01, True)):
        wr = 53.0 + delta + L3
        wz = 100.0 - BASE
        d = math.hypot(wr, wz)
        q2 = math.atan2(wr, wz) - math.acos(d / (2.0 * L1))
        er = L1 * math.sin(q2)
        ez = L1 * math.cos(q2)
        a3 = math.atan2(wr - er, wz - ez)
        a4 = -math.pi / 2
        for yaw in (-2.0, -1.0, 1.0, 2.0, 3.0):
            q = [F32(yaw), F32(q2), F32(a3 - q2), F32(a4 - a3), F32(0.0)]
            assert z.clear(q) is want, (delta, yaw)
            if not want:
                assert z.zone_names[z.hit_zone] == "base" and z.link_names[z.hit_link] == "tool"


# --- board files ----------------------------------------------------------------

@pytest.mark.parametrize("edit, field", [
    (lambda w: w.update(zones=[{"name": "x", "kind": "sphere"}]), "workspace.zones[0].kind"),
    (lambda w: w.update(zones=[{"name": "a b", "kind": "box", "min_mm": [0, 0, 0], "max_mm": [1, 1, 1]}]),
     "workspace.zones[0].name"),
    (lambda w: w.update(zones=[{"name": "b", "kind": "box", "min_mm": [0, 0], "max_mm": [1, 1]}]),
     "workspace.zones[0].min_mm"),
    (lambda w: w.update(zones=[{"name": "c", "kind": "cylinder", "radius_mm": 10, "bottom_mm": 5,
                                "top_mm": 1}]), "workspace.zones[0].bottom_mm"),
    (lambda w: w.update(zones=[{"name": "c", "kind": "cylinder", "radius_mm": 10, "bottom_mm": 0,
                                "top_mm": 1, "links": ["wing"]}]), "workspace.zones[0].links"),
    (lambda w: w["link_radius_mm"].update(elbow=3), "workspace.link_radius_mm: 'elbow' is not a link"),
    (lambda w: w["floor"].update(clearance_mm=float("nan")), "workspace.floor.clearance_mm"),
    (lambda w: w.update(ceiling=1), "workspace.ceiling"),
    # Home (arm upright, forearm horizontal at z = 315) inside a fixture: refused at load.
    (lambda w: w.update(zones=[{"name": "shelf", "kind": "box", "min_mm": [50, -50, 300],
                                "max_mm": [100, 50, 330]}]), "home pose puts the forearm in zone shelf"),
])
def test_bad_workspace_is_refused_naming_the_field(edit, field):
    data = board_data("arm5")
    edit(data["workspace"])
    with pytest.raises(board.BoardError, match=field.replace("[", r"\[").replace("]", r"\]")):
        board.from_dict(data, "arm5")


def test_defaults_per_arm_kind():
    """No workspace section: arm5 gets the floor (clearance 5 mm) and the base column,
    planar its post; "floor": null and "zones": [] turn them off."""
    arm5 = board.from_dict(board_data("arm5", workspace=None), "a").solver.zones
    planar = board.from_dict(board_data("planar", workspace=None), "p").solver.zones
    assert arm5.zone_names == ["floor", "base"] and planar.zone_names == ["post"]
    data = board_data("arm5", workspace=None)
    data["workspace"] = {"floor": None, "zones": []}
    assert board.from_dict(data, "off").solver.zones.n_zones == 0


# --- seen, not only enforced ----------------------------------------------------

def test_workspace_map_colours_zone_refusals_and_never_shows_ok_under_the_table():
    from armctl import plot
    b = board.load(str(ARM5))     # the default workspace: floor z = 0 + 5 mm, tool radius 8 mm
    (r0, r1), (z0, z1), grid = plot.workspace_grid(b, math.pi / 2, 81)
    zs = np.linspace(z0, z1, 81)
    rs = np.linspace(r0, r1, 81)
    # Tool horizontal: the whole tool sits at the tip's height, so z < 13 is refused.
    low = zs < 13.0 - 1e-9
    assert not np.any(grid[low] <= status.SINGULAR)
    assert np.any(grid[low] == status.COLLISION)
    # ...and so is a tip inside the base column (radius 45 + 8, up to 214 + 8 mm).
    inside = (np.abs(rs)[None, :] < 53.0 - 1e-9) & ((zs > 0) & (zs < 222.0 - 1e-9))[:, None]
    assert not np.any(grid[inside] <= status.SINGULAR)


def test_zones_load_and_check_the_same_under_micropython(micropython, tmp_path):
    """Every kind of zone, parsed and checked by the firmware under the Unix port and
    CPython: the same names, home clearance and verdicts on poses over the joint space."""
    import os
    import subprocess
    import sys
    from conftest import MP_SCRIPTS
    paths = []
    for kind in ("arm5", "planar"):
        path = tmp_path / ("%s.json" % kind)
        path.write_text(json.dumps(board_data(kind)))
        paths.append(str(path))
    bad = board_data("arm5")
    bad["workspace"]["zones"][1]["min_mm"] = [1, 2]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    paths.append(str(tmp_path / "bad.json"))
    script = str(MP_SCRIPTS / "load_boards.py")
    env = dict(os.environ, MICROPYPATH=str(BOARDS.parent / "firmware"))
    mp, cp = (subprocess.run([interpreter, script] + paths, capture_output=True, text=True, env=env,
                             cwd=str(BOARDS.parent), timeout=120) for interpreter in (micropython, sys.executable))
    assert mp.returncode == 0 and cp.returncode == 0, (mp.stderr, cp.stderr)
    assert mp.stdout == cp.stdout
    lines = mp.stdout.splitlines()
    assert " zones=floor,base,fixture " in lines[0] and " zones=floor,tool_box,post,lamp " in lines[1]
    probes = [line.split("probes=")[1] for line in lines[:2]]
    assert all(p.strip(".") for p in probes), probes      # some poses hit something
    assert lines[2].startswith("ERR ") and "workspace.zones[1].min_mm" in lines[2]


@pytest.mark.parametrize("method", ["dls", "ccd"])
def test_numeric_solvers_never_report_a_solution_inside_a_zone(method):
    """Targets at, under and just above the table and around the base column: a numeric
    answer whose links enter a zone is COLLISION, never OK."""
    from armctl import numik, numik_result
    data = board_data("arm5")
    b = board.from_dict(data, "arm5")
    world = World(data)
    rng = np.random.default_rng(13)
    yaw = rng.uniform(-math.pi, math.pi, 120)
    r = rng.uniform(30.0, 330.0, 120)
    z = rng.uniform(-30.0, 60.0, 120)
    targets = np.stack([r * np.cos(yaw), r * np.sin(yaw), z], axis=1)
    batch = numik.solve_batch(b, targets, method=method, restarts=2)
    collisions = 0
    for i in range(len(targets)):
        if numik_result.solved(batch.status[i]):
            assert world.capsule_depth(batch.q[i]) <= 1e-6, (targets[i], batch.q[i])
        collisions += batch.status[i] == status.COLLISION
    assert collisions > 10


# --- the skip: an exact check only where a pose is not provably clear --------

SKIP_BOARDS = {
    "arm5": lambda: board_data("arm5"),
    "planar": lambda: board_data("planar"),
    "arm5 defaults": lambda: board_data("arm5", workspace=None),
    "arm5 tool offset": lambda: json.loads((BOARDS / "sim_arm5_tool.json").read_text()),
}


def joint_walks(arm, rng, count, length):
    """Dense random paths in joint space, inside the limits: count walks of length poses
    each, half creeping (~0.3 deg a pose), half striding (~3 deg), some straight
    through the joint space from one random pose to another."""
    lo = np.array(arm.lo)
    hi = np.array(arm.hi)
    for w in range(count):
        if w % 3 == 2:
            a, b = rng.uniform(lo, hi), rng.uniform(lo, hi)
            yield a + (b - a) * np.linspace(0.0, 1.0, length)[:, None]
            continue
        sigma = D(0.3) if w % 2 else D(3.0)
        steps = rng.normal(0.0, sigma, (length, arm.n))
        yield np.clip(rng.uniform(lo, hi) + np.cumsum(steps, axis=0), lo, hi)


def link_samples(world, q, m=300):
    """Points along every link of pose q by the oracle's FK, at the same fractions of each link."""
    pts = world.points(q)
    f = np.linspace(0.0, 1.0, m)[:, None]
    return np.concatenate([pts[i] + (pts[i + 1] - pts[i]) * f for i in range(len(pts) - 1)])


@pytest.mark.parametrize("kind", ["arm5", "planar"])
def test_joint_reach_bounds_how_far_any_point_of_a_link_moves(kind):
    """The oracle's own forward kinematics, links sampled finely: between two poses no
    sample moves farther than sum_j |dq_j| * reach[j]; turning one joint alone, the
    farthest sample comes near the bound (reach is the geometry, not a guess)."""
    b, world = load(kind)
    arm = b.solver
    reach = np.array(zones.joint_reach(arm))
    rng = np.random.default_rng(31)
    best_single = np.zeros(arm.n)
    for k in range(3000):
        q0 = rng.uniform(arm.lo, arm.hi)
        dq = rng.normal(0.0, (1e-3, 0.03, 0.5)[k % 3], arm.n)
        single = k % 4 == 0
        if single:
            j = rng.integers(arm.n)
            dq = np.where(np.arange(arm.n) == j, dq, 0.0)
        a = link_samples(world, q0)
        c = link_samples(world, q0 + dq)
        moved = np.max(np.linalg.norm(c - a, axis=1))
        bound = float(np.sum(np.abs(dq) * reach))
        assert moved <= bound * (1.0 + 1e-12) + 1e-9, (q0, dq, moved, bound)
        if single and abs(dq[j]) < 0.05 and reach[j] > 0.0:
            best_single[j] = max(best_single[j], moved / bound)
    # The wrist roll of an arm without a tool offset moves nothing (reach 0).
    assert all(best_single[j] > 0.9 for j in range(arm.n) if reach[j] > 0.0), best_single


@pytest.mark.parametrize("name", list(SKIP_BOARDS))
def test_the_skip_never_passes_a_pose_the_exact_check_refuses(name):
    """Dense random paths through the joint space, each pose judged by clear() (the skip
    on) and by clear_exact(): the same verdict, the same zone and link, every pose;
    a pose passed is clear by the capsule judge (boards it can judge); and the
    skip does skip."""
    data = SKIP_BOARDS[name]()
    b = board.from_dict(data, name)
    arm = b.solver
    z = arm.zones
    world = World(data) if "workspace" in data and "tool_mm" not in data["arm"] else None
    exact_calls = [0]
    exact = z.clear_exact

    def counted(q):
        exact_calls[0] += 1
        return exact(q)

    z.clear_exact = counted
    z.track(True)       # as motion's walks do
    rng = np.random.default_rng(17)
    poses = refused = 0
    for path in joint_walks(arm, rng, 60, 150):
        for q in path:
            q = list(q)
            want = exact(q)
            want_hit = (z.hit_zone, z.hit_link)
            z.hit_zone = z.hit_link = -1
            got = z.clear(q)
            assert got == want, (name, q)
            poses += 1
            if not got:
                refused += 1
                assert (z.hit_zone, z.hit_link) == want_hit
            elif world is not None:
                assert world.capsule_depth(q) <= 1e-6, q
    skipped = poses - exact_calls[0]
    assert refused > 100 and skipped > poses // 4, (refused, skipped, poses)


@pytest.mark.parametrize("kind", ["arm5", "planar"])
def test_the_skip_gap_is_never_more_than_the_clearance_the_capsule_judge_measures(kind):
    """After an exact check of a clear pose, the gap the skip works from (armfw's lower
    bound of every link's distance from every zone) is at most the capsules'
    clearance the oracle measures; and it is useful: positive for most clear poses."""
    b, world = load(kind)
    z = b.solver.zones
    rng = np.random.default_rng(5)
    clear = positive = 0
    for q in random_poses(b.solver, 1500, rng):
        q = list(q)
        if not z.clear_exact(q):
            continue
        clear += 1
        gap = min(z._gap(z._pts))
        clearance = -world.capsule_depth(q)
        assert gap <= clearance + 1e-6, (q, gap, clearance)
        positive += gap > 0.0
    assert clear > 200 and positive > clear // 2, (clear, positive)


@pytest.mark.parametrize("kind", ["arm5", "planar"])
def test_random_plans_are_refused_at_the_same_step_zone_and_link_with_and_without_the_skip(kind):
    """Random lines, moves and joint moves from random clear poses, checked by two
    controllers, one of whose zones always check exactly: the same verdicts, the same
    failing step, zone and link, the same kept steps."""
    b, _ = load(kind)
    plain, _ = load(kind)
    plain.solver.zones.clear = plain.solver.zones.clear_exact
    arms = [ArmController(x, SimServo(x.driver), None, sleep_ms=lambda ms: None) for x in (b, plain)]
    for a in arms:
        a.executor.check_only = True
    rng = np.random.default_rng(77)
    solver = b.solver
    collisions = passed = 0
    for k in range(300):
        start = list(rng.uniform(solver.lo, solver.hi))
        if not solver.zones.clear_exact(start):
            continue
        if kind == "arm5":
            target = [rng.uniform(-300, 300), rng.uniform(-300, 300), rng.uniform(-40, 300),
                      rng.uniform(-pi, pi)]
        else:
            target = [rng.uniform(-180, 180), rng.uniform(-180, 180)]
        op = (LINE, MOVE, JOINTS)[k % 3]
        if op == JOINTS:
            target = list(rng.uniform(solver.lo, solver.hi))
        verdicts = []
        for a in arms:
            assert a.output.send_pose(start)
            a.plan()
            a.add(op, target)
            ok = a.begin()
            z = a.solver.zones
            kept = min(a.executor.total, RING_STEPS) * a.solver.n
            if ok:
                verdicts.append((ok, a.executor.total, list(a.executor._ring_us[:kept]), list(a.q)))
            else:
                verdicts.append((ok, a.refusal.status, a.refusal.op, a.refusal.step, a.refusal.joint, list(a.refusal.point),
                                 (z.hit_zone, z.hit_link) if a.refusal.status == "COLLISION" else None))
        assert verdicts[0] == verdicts[1], (k, op, start, target)
        collisions += not verdicts[0][0] and verdicts[0][1] == "COLLISION"
        passed += verdicts[0][0]
    assert collisions > 20 and passed > 20, (collisions, passed)


# --- a tool offset changed at run time --------------------------------------

def test_a_tool_offset_set_at_run_time_is_followed_by_fk_ik_and_the_zones():
    """solver.tool set on a running arm: FK, IK and every zone check (the skip's box
    too) answer as an arm built with that offset does, nothing copied before the change."""
    tool = (6.0, 9.0, 70.0)
    data = board_data("arm5")
    changed = board.from_dict(copy.deepcopy(data), "changed").solver
    data["arm"]["tool_mm"] = list(tool)
    built = board.from_dict(data, "built").solver
    plain = board.from_dict(board_data("arm5"), "plain").solver
    rng = np.random.default_rng(26)
    # A walk with the skip making its box for the offset-free arm first.
    changed.zones.track(True)
    for q in next(joint_walks(changed, rng, 2, 40)):
        changed.zones.clear(q.tolist())
    changed.tool = tool
    # Standing straight up, base and roll at 0: the tip is the offset above the l3 tip.
    up = changed.fk([0.0] * 5, [0.0] * 4)
    assert up[:3] == [6.0, 9.0, changed.base + changed.l1 + changed.l2 + changed.l3 + 70.0]
    # The skip's bound on how far a joint moves a point grows with the offset.
    assert changed.zones.joint_reach == built.zones.joint_reach != plain.zones.joint_reach
    built.zones.track(True)
    differ = 0
    for walk in joint_walks(changed, rng, 6, 60):
        for q in walk.tolist():
            assert changed.fk(q, [0.0] * 4) == built.fk(q, [0.0] * 4)
            assert changed.zones.clear(q) == built.zones.clear(q), q
            target = built.fk(q, [0.0] * 4)
            a = [0.0] * 5
            b = [0.0] * 5
            assert changed.ik(target, a, q) == built.ik(target, b, q)
            assert a == b
            differ += built.zones.clear(q) != plain.zones.clear(q)
    # The offset matters to the zones on these walks: the test would see a stale copy.
    assert differ > 0
