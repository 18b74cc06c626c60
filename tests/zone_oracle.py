"""An independent judge of keep-out zones for the tests (numpy; not armfw.zones, not arm.fk).

Joint points come from a forward kinematics written here from the board file's
lengths; each link is sampled every SAMPLE_MM along its segment and judged as a
capsule (a ball of the link's radius around every sample) against the zones
as the board file states them:

- floor: lowest surface point vs height + clearance;
- cylinder / box keep-out: distance from the solid;
- tool box: the tip inside it.

depths(...) says how deep (mm) each link's surface goes into each zone (> 0:
inside). The firmware grows boxes and cylinders by the radius with square
edges, so it may refuse a pose the capsule misses by up to ~0.41 radius at an
edge, never accept one the capsule enters: tests use capsule_depth for
"accepted is clear" and depths(square=True) for "refused is really near".
"""

import math

import numpy as np

SAMPLE_MM = 0.5


class World:
    """Arm lengths and the workspace of a board file (dict as in boards/*.json)."""

    def __init__(self, data):
        arm = data["arm"]
        self.kind = arm["kind"]
        self.l1 = float(arm["l1_mm"])
        self.l2 = float(arm["l2_mm"])
        self.l3 = float(arm.get("l3_mm", 0.0))
        self.base = float(arm.get("base_mm", 0.0))
        ws = data["workspace"]     # the tests always state the workspace they judge
        self.links = ("upper_arm", "forearm", "tool") if self.kind == "arm5" else ("upper_arm", "forearm")
        self.radius = [float(ws["link_radius_mm"][n]) for n in self.links]
        self.floor = ws.get("floor")
        self.tool_box = ws.get("tool_box")
        self.zones = ws.get("zones", [])

    def points(self, q):
        """Joint points (k, 3) mm of pose q (radians): planar (x, 0, y)."""
        q = np.asarray(q, float)
        if self.kind == "planar":
            e = np.array([self.l1 * math.cos(q[0]), 0.0, self.l1 * math.sin(q[0])])
            t = e + self.l2 * np.array([math.cos(q[0] + q[1]), 0.0, math.sin(q[0] + q[1])])
            return np.array([[0.0, 0.0, 0.0], e, t])
        heading = np.array([math.cos(q[0]), math.sin(q[0]), 0.0])
        up = np.array([0.0, 0.0, 1.0])
        pts = [np.array([0.0, 0.0, self.base])]
        angle = 0.0
        for length, dq in ((self.l1, q[1]), (self.l2, q[2]), (self.l3, q[3])):
            angle += dq     # pitch joints about parallel axes: angles add, from vertical
            pts.append(pts[-1] + length * (math.sin(angle) * heading + math.cos(angle) * up))
        return np.array(pts)

    def samples(self, q):
        """[(link index, (m, 3) points along it)]."""
        pts = self.points(q)
        out = []
        for i in range(len(self.links)):
            a, b = pts[i], pts[i + 1]
            m = max(2, int(np.linalg.norm(b - a) / SAMPLE_MM) + 2)
            f = np.linspace(0.0, 1.0, m)[:, None]
            out.append((i, a + (b - a) * f))
        return out

    def _applies(self, zone, link):
        return "links" not in zone or self.links[link] in zone["links"]

    def depths(self, q, square):
        """{(zone name, link name): depth mm} for pose q; depth <= 0: clear of that zone."""
        out = {}
        planar = self.kind == "planar"
        for link, s in self.samples(q):
            r = self.radius[link]
            x, y, z = s[:, 0], s[:, 1], s[:, 2]
            if self.floor is not None:
                d = float(np.max(self.floor.get("height_mm", 0.0) + self.floor.get("clearance_mm", 5.0)
                                 - (z - r)))
                out["floor", self.links[link]] = d
            for zone in self.zones:
                if not self._applies(zone, link):
                    continue
                if zone["kind"] == "cylinder":
                    dx = x - zone.get("x_mm", 0.0)
                    dy = np.zeros_like(y) if planar else y - zone.get("y_mm", 0.0)
                    radial = np.hypot(dx, dy) - zone["radius_mm"]
                    vertical = np.maximum(zone["bottom_mm"] - z, z - zone["top_mm"])
                    outside = np.stack([radial, vertical])
                else:
                    lo = list(zone["min_mm"])
                    hi = list(zone["max_mm"])
                    if planar:      # (x, y) of the plane are x, z here
                        lo = [lo[0], -math.inf, lo[1]]
                        hi = [hi[0], math.inf, hi[1]]
                    outside = np.stack([np.maximum(lo[k] - c, c - hi[k]) for k, c in enumerate((x, y, z))])
                if square:
                    dist = np.max(outside, axis=0)       # the solid grown with square edges
                else:
                    pos = np.where(outside > 0, outside, 0.0)
                    dist = np.where(np.all(outside <= 0, axis=0), np.max(outside, axis=0),
                                    np.sqrt(np.sum(pos * pos, axis=0)))
                d = float(np.max(r - dist))
                out[zone["name"], self.links[link]] = d
            if self.tool_box is not None and link == len(self.links) - 1:
                tip = s[-1]
                lo = list(self.tool_box["min_mm"])
                hi = list(self.tool_box["max_mm"])
                if planar:
                    lo = [lo[0], -math.inf, lo[1]]
                    hi = [hi[0], math.inf, hi[1]]
                d = float(max(max(lo[k] - tip[k], tip[k] - hi[k]) for k in range(3)))
                out["tool_box", self.links[link]] = d
        return out

    def capsule_depth(self, q):
        """The deepest intrusion of pose q's link capsules into any zone (mm; <= 0: clear)."""
        return max(self.depths(q, square=False).values(), default=-math.inf)


def points_many(world, q):
    """Joint points of many poses at once: q (N, n) radians -> (N, k, 3) mm."""
    q = np.asarray(q, float)
    if world.kind == "planar":
        e = np.stack([world.l1 * np.cos(q[:, 0]), np.zeros(len(q)), world.l1 * np.sin(q[:, 0])], axis=1)
        a = q[:, 0] + q[:, 1]
        t = e + world.l2 * np.stack([np.cos(a), np.zeros(len(q)), np.sin(a)], axis=1)
        return np.stack([np.zeros_like(e), e, t], axis=1)
    heading = np.stack([np.cos(q[:, 0]), np.sin(q[:, 0])], axis=1)
    pts = [np.tile([0.0, 0.0, world.base], (len(q), 1))]
    angle = np.zeros(len(q))
    for length, k in ((world.l1, 1), (world.l2, 2), (world.l3, 3)):
        angle = angle + q[:, k]
        step = np.concatenate([length * np.sin(angle)[:, None] * heading,
                               length * np.cos(angle)[:, None]], axis=1)
        pts.append(pts[-1] + step)
    return np.stack(pts, axis=1)


def capsule_depth_many(world, q, samples=64):
    """capsule_depth for many poses (N, n) at once, links sampled at `samples` points: (N,) mm."""
    pts = points_many(world, q)
    f = np.linspace(0.0, 1.0, samples)[None, :, None]
    worst = np.full(len(pts), -np.inf)
    planar = world.kind == "planar"
    for link in range(len(world.links)):
        s = pts[:, link, None, :] + (pts[:, link + 1, None, :] - pts[:, link, None, :]) * f   # (N, m, 3)
        x, y, z = s[..., 0], s[..., 1], s[..., 2]
        r = world.radius[link]
        if world.floor is not None:
            d = world.floor.get("height_mm", 0.0) + world.floor.get("clearance_mm", 5.0) - (z - r)
            worst = np.maximum(worst, d.max(axis=1))
        for zone in world.zones:
            if not world._applies(zone, link):
                continue
            if zone["kind"] == "cylinder":
                dy = 0.0 if planar else y - zone.get("y_mm", 0.0)
                outside = [np.hypot(x - zone.get("x_mm", 0.0), dy) - zone["radius_mm"],
                           np.maximum(zone["bottom_mm"] - z, z - zone["top_mm"])]
            else:
                lo, hi = list(zone["min_mm"]), list(zone["max_mm"])
                if planar:
                    lo, hi = [lo[0], -np.inf, lo[1]], [hi[0], np.inf, hi[1]]
                outside = [np.maximum(lo[k] - c, c - hi[k]) for k, c in enumerate((x, y, z))]
            outside = np.stack(outside)
            pos = np.where(outside > 0, outside, 0.0)
            dist = np.where(np.all(outside <= 0, axis=0), outside.max(axis=0), np.sqrt((pos * pos).sum(axis=0)))
            worst = np.maximum(worst, (r - dist).max(axis=1))
    return worst
