# SPDX-License-Identifier: MIT
"""Keep-out zones: the floor, an optional tool box, named keep-out volumes; every link checked.

Frame (mm): arm5 - the base frame, x and y horizontal, z up, z = 0 the plane
the base stands on. Planar - the arm's vertical plane, x horizontal, y up, the
shoulder at the origin; its points are handled as (x, 0, y), so one set of
3-D tests serves both kinds (a planar "cylinder" is the strip |x - x0| < r).

Links are capsules: the segment between two joint points (the solver's
joint_points, the same points its FK ends in) and a radius.
  arm5:   upper_arm (J2 axis - elbow), forearm (elbow - wrist), tool (wrist - tool tip)
  planar: upper_arm (shoulder - elbow), forearm (elbow - tool tip)
A segment crossing a zone counts, not only its end points.

Zones (a link is "in" a zone when its capsule enters it):
  floor     the link's lowest point must stay clearance_mm above height_mm
            (a segment's lowest point is one of its ends: exact).
  box       axis-aligned keep-out box; tested as the segment against the box
            grown by the link radius on every side (square corners: a hair
            stricter than the capsule near an edge, never more lenient).
  cylinder  vertical keep-out cylinder (axis x_mm, y_mm, radius_mm,
            bottom_mm..top_mm), grown by the link radius the same way.
  tool box  the tool tip must stay inside it (stay-in, not keep-out).
A zone may apply to some links only ("links"): the base column does not
apply to the upper arm, which is bolted to it and kept off it by the
shoulder's joint limits.

Cost: clear(q) is the joint points (one FK) plus a few
comparisons and multiplications per link and zone; all storage is allocated
in the constructor, nothing per call.

The skip: a pose near the last pose that was checked exactly is clear without
an exact check when it provably is. The exact check of a clear pose also
measures a lower bound of its clearance (the gap between each link segment
and each zone as grown by the link's radius, the region the check refuses);
no point of the arm moves farther than sum_j |dq_j| * reach[j] between two
poses (see joint_reach), so while that bound stays below the gap (less
SKIP_MARGIN_MM, for rounding), every link segment stays outside every grown
zone: the exact check would pass it too. The bound is kept as a box in joint
space around the exact check's pose (each joint its share of the gap), so the
skip is comparisons only: no float arithmetic, nothing on the heap. Any
other pose is checked exactly, so the first refused pose and its zone and
link are found as without the skip. Measuring the gap and making the box
costs about what the exact check does, so it is done only while a caller
says the poses follow a path (track(); armfw.planner's walks do).

The shapes' segment and distance geometry is armfw.zoneshapes; the board
file's workspace section and its defaults, armfw.workspace.
"""

from math import sqrt

from armfw.compat import const
from armfw.numeric import floats

FLOOR = const(0)
BOX = const(1)
CYLINDER = const(2)
TOOL_BOX = const(3)

LINKS = {"planar": ("upper_arm", "forearm"), "arm5": ("upper_arm", "forearm", "tool")}


def link_names(solver):
    """The names of the arm's links, in the order of its joint points (a chain arm,
    armfw.chain: link<i> from joint i's origin to the next joint's, the last to the tip)."""
    if solver.kind == "chain":
        return tuple("link%d" % (i + 1) for i in range(solver.n))
    return LINKS[solver.kind]


def joint_reach(solver):
    """Per joint j, an upper bound (mm) of how far any point of a link segment lies from
    joint j's axis, counting only points that joint j moves; None when not derived
    (chain arms: their zone checks are all exact).

    Turning joint j alone by dq moves each point by at most reach[j] * |dq|;
    turning several, by at most the sum (the joints in turn, the triangle
    inequality), however the other joints stand: the bound holds for every
    pose, so for the straight joint-space path between two poses. A point of a
    link segment is a fixed mix of its two joint points, so it moves at most as
    far as the farther of them; the capsule's radius is part of the zone it is
    checked against (grown by it), not of the moving points.

    arm5 (joint points: the J2 axis on the base axis, elbow, wrist, tool tip;
    the tool tip lies tip = sqrt(tx^2 + ty^2 + (l3 + tz)^2) from the wrist for
    every wrist roll, (tx, ty, tz) the tool offset in the tool frame whose z
    axis the wrist rolls about):
      base yaw (the vertical axis through the J2 point): every point lies
        within l1 + l2 + tip of the J2 point, so horizontally within that of
        the axis;
      shoulder J2 (its axis through the J2 point): l1 + l2 + tip;
      elbow (through the elbow point): l2 + tip;
      wrist pitch (through the wrist point): tip;
      wrist roll (the tool axis through the wrist): only the offset's part
        across that axis moves, sqrt(tx^2 + ty^2) (0 without an offset).
    planar (shoulder at the origin, elbow, tip): shoulder l1 + l2, elbow l2.
    """
    if solver.kind == "arm5":
        t = getattr(solver, "tool", (0.0, 0.0, 0.0))
        across = sqrt(t[0] * t[0] + t[1] * t[1])
        tip = sqrt(across * across + (solver.l3 + t[2]) * (solver.l3 + t[2]))
        arm = solver.l1 + solver.l2 + tip
        return [arm, arm, solver.l2 + tip, tip, across]
    if solver.kind == "planar":
        return [solver.l1 + solver.l2, solver.l2]
    return None


# Points per link segment for clearance(): a 150 mm tool sampled every ~5 mm.
_SAMPLES = const(32)


# How much larger (mm) the margin boxes of Zones.clear_exact are than what they
# bound: the exact tests round at their edges, so only a segment this far clear
# is decided by comparisons alone.
_BOX_MARGIN_MM = const(1e-6)


# The skip's safety margin (mm) against rounding: the exact check and the
# bound are computed in floats (float32 on most boards: ~1e-4 mm at arm scale).
_SKIP_MARGIN_MM = const(0.01)
# The part of the skip's gap shared out evenly among the joints (the rest goes
# by how far each moved points lately).
_SHARE_FLOOR = const(0.25)


class Zones:
    """Zones of one arm (its armfw.kinematics solver), links with radii; see the module doc.

    radii: link radius per link (mm, in LINKS order). zones: list of
    (name, kind, params, links) with params a list of 6 floats:
      FLOOR (height, clearance, 0, 0, 0, 0); BOX (x0, y0, z0, x1, y1, z1);
      CYLINDER (x, y, radius, bottom, top, 0); TOOL_BOX as BOX;
    and links the link indexes the zone applies to.
    After clear() returns False: hit_zone, hit_link say which (indexes into
    zone_names, link_names).
    """

    def __init__(self, solver, radii, zones):
        self.kind = solver.kind
        self.solver = solver
        self.link_names = link_names(solver)
        nl = len(self.link_names)
        self.n_links = nl
        self.radii = list(radii)
        self.n_zones = len(zones)
        self.zone_names = [z[0] for z in zones]
        self.zone_kinds = [z[1] for z in zones]
        self.params = [list(z[2]) for z in zones]
        # The shapes' geometry, loaded only for an arm that has zones.
        self._shapes = None
        # The clipping's interval, the zone checks' own: the host runs several arms'
        # checks at once in threads (a page's preview beside its workspace map).
        self._span = [0.0, 1.0]
        if zones:
            from armfw import zoneshapes
            self._shapes = zoneshapes
        # Per zone and link: the zone grown by that link's radius (None: not
        # applied), so a check is comparisons only.
        self._grown = []
        for name, kind, p, links in zones:
            row = []
            for l in range(nl):
                if l not in links:
                    row.append(None)
                    continue
                r = radii[l]
                if kind == FLOOR:
                    g = [p[0] + p[1] + r, 0.0, 0.0, 0.0, 0.0, 0.0]
                elif kind == BOX:
                    g = [p[0] - r, p[1] - r, p[2] - r, p[3] + r, p[4] + r, p[5] + r]
                    if self.kind == "planar":
                        g[1] = -1.0     # a planar box spans the plane's depth
                        g[4] = 1.0
                    m = _BOX_MARGIN_MM
                    g += [g[0] - m, g[1] - m, g[2] - m, g[3] + m, g[4] + m, g[5] + m]
                elif kind == CYLINDER:
                    g = [p[0], p[1], (p[2] + r) * (p[2] + r), p[3] - r, p[4] + r, p[2] + r]
                    if self.kind == "planar":
                        g[1] = 0.0
                    # The box around the grown cylinder, a hair larger (see clear_exact).
                    m = _BOX_MARGIN_MM
                    g += [g[0] - p[2] - r - m, g[1] - p[2] - r - m, g[3] - m,
                          g[0] + p[2] + r + m, g[1] + p[2] + r + m, g[4] + m]
                else:   # TOOL_BOX: the tip itself, no radius
                    g = list(p)
                    if self.kind == "planar":
                        g[1] = -1.0
                        g[4] = 1.0
                row.append(g)
            self._grown.append(row)
        # Every (zone, link, the link's first index in _pts, kind, grown zone) the
        # check makes, zone by zone.
        self._pairs = [(z, l, 3 * l, self.zone_kinds[z], self._grown[z][l]) for z in range(self.n_zones)
                       for l in range(nl) if self._grown[z][l] is not None]
        # The solver's joint points (Solver.joint_points), the list it refills on
        # every call: what the last exact check tested, for the skip's gap.
        self._pts = solver.joint_points(solver.home)
        self.hit_zone = -1
        self.hit_link = -1
        # The skip (see the module doc): a box in joint space around the last pose
        # checked exactly and found clear, inside which every pose is clear.
        self._n_joints = solver.n
        # Per joint the open interval (_lo[j], _hi[j]); two lists, not one of pairs,
        # so the skip's test reads each bound by the joint's index.
        self._lo = floats(solver.n)
        self._hi = floats(solver.n)
        self._near = False                     # True: the box holds
        self._tracking = False                 # track()
        self._ref = floats(solver.n)            # the pose of the last exact check
        self._moved = floats(solver.n)          # scratch: how far each joint moved points since it
        # arm5: zones the base's turn cannot bring a link nearer to (the floor, a
        # cylinder on the base axis: a point's distance from them depends only on
        # its height and its distance from the axis, which the turn keeps).
        self._turn_free = [self.kind == "arm5" and (
            z[1] == FLOOR or (z[1] == CYLINDER and z[2][0] == 0.0 and z[2][1] == 0.0)) for z in zones]
        self._gaps = floats(2)          # _gap's answer: turn-free zones, the others
        self.nearest_zone = -1
        self.nearest_link = -1
        self.arm_changed()

    def arm_changed(self):
        """The solver's geometry changed (its tool offset: Arm5Solver.tool): the joint
        reach follows, and the skip's box, made for the old geometry, is dropped."""
        self.joint_reach = joint_reach(self.solver)
        self._near = False
        if self.joint_reach is not None:
            # 1 / reach per joint (0: a joint that moves no point); how many joints
            # move points, and how many of those after the first.
            self._per_reach = [1.0 / r if r > 0.0 else 0.0 for r in self.joint_reach]
            self._moving = len([r for r in self.joint_reach if r > 0.0])
            self._rest_moving = len([r for r in self.joint_reach[1:] if r > 0.0])

    # -- the check --------------------------------------------------------

    def clear(self, q):
        """True when no link of pose q (radians) is in any zone; else sets hit_zone, hit_link.

        Skips the exact check where the last clear pose's gap proves q clear (module doc).
        """
        if self.n_zones == 0:
            return True
        if self._near:
            lo = self._lo
            hi = self._hi
            for j in range(self._n_joints):
                if not lo[j] < q[j] < hi[j]:     # (NaN is outside)
                    break
            else:
                return True
        if not self.clear_exact(q):
            return False
        if self._tracking:
            self._keep_box(q, self._gap(self._pts))
        return True

    def track(self, on):
        """on: the poses clear() is asked about next follow a path in small steps (a
        motion's walk), so each exact check also makes the skip's box; off: unrelated
        poses (an ik request), where making it would only cost time. The box made
        stays (the skip still tries it: comparisons only)."""
        self._tracking = on and self.joint_reach is not None

    def _keep_box(self, q, gaps):
        """Make the skip's box around pose q from its gaps (mm): gaps[0] to the zones the
        base's turn keeps its distance from, gaps[1] to the others.

        A pose inside the box differs from q by sum_j |dq_j| * reach[j] (module
        doc, joint_reach) of at most: over the joints after the first, rest =
        min(gaps[0], part of gaps[1]); with the first joint, gaps[1] (on arm5
        the turn-free zones do not see the first joint). Less SKIP_MARGIN_MM
        each, for rounding. How rest is shared out only decides how far the box
        reaches along each joint, never whether it is sound: each joint gets
        SHARE_FLOOR of an equal share and the rest in proportion to how far it
        moved points since the previous exact check, so the box stretches along
        the path a motion is taking.
        """
        other = gaps[1] - _SKIP_MARGIN_MM
        n = self._n_joints
        if self.kind == "arm5":
            first = 1
            m = self._rest_moving
            rest = other * m / (m + 1)      # the turn keeps its share of the others' gap
            free = gaps[0] - _SKIP_MARGIN_MM
            if free < rest:
                rest = free
        else:
            first = 0
            m = self._moving
            rest = other
        ref = self._ref
        reach = self.joint_reach
        moved = self._moved
        total = 0.0
        for j in range(first, n):
            a = q[j]
            d = a - ref[j]
            d = (d if d >= 0.0 else -d) * reach[j]
            moved[j] = d
            total += d
            ref[j] = a
        ref[0] = q[0]
        self._near = rest > 0.0
        if not self._near:
            return
        lo = self._lo
        hi = self._hi
        per_reach = self._per_reach
        even = _SHARE_FLOOR / m
        follow = 1.0 - _SHARE_FLOOR      # once, not per joint: a float result each time
        for j in range(first, n):
            a = q[j]
            r = per_reach[j]
            if r > 0.0:
                if total > 0.0:
                    w = rest * (even + follow * moved[j] / total) * r
                else:
                    w = rest / m * r
            else:
                w = 1e30
            lo[j] = a - w
            hi[j] = a + w
        if first:
            w = (other - rest) * per_reach[0] if other < 1e29 else 1e30
            a = q[0]
            lo[0] = a - w
            hi[0] = a + w

    def clear_exact(self, q):
        """clear() without the skip: every link against every zone."""
        if self.n_zones == 0:
            return True
        p = self.solver.joint_points(q)
        tip = 3 * self.n_links
        for z, l, i, kind, g in self._pairs:
            if kind == FLOOR:
                floor = g[0]
                hit = p[i + 2] < floor or p[i + 5] < floor
            elif kind == TOOL_BOX:
                hit = not (g[0] <= p[tip] <= g[3] and g[1] <= p[tip + 1] <= g[4]
                           and g[2] <= p[tip + 2] <= g[5])
            else:
                # A link nowhere near the zone, the usual case: the segment lies wholly
                # on the far side of a face of the zone's margin box g[6:9] - g[9:12].
                # Comparisons only, no arithmetic, so no float results on the heap;
                # inline, not a function of its own: it runs for every link and zone
                # on every check.
                for k in range(3):
                    j = i + k
                    a = p[j]
                    e = p[j + 3]
                    lo = g[6 + k]
                    hi = g[9 + k]
                    if (a <= lo and e <= lo) or (a >= hi and e >= hi):
                        hit = False
                        break
                else:
                    shapes = self._shapes
                    hit = (shapes.segment_in_box(p, i, g, self._span) if kind == BOX
                           else shapes.segment_in_cylinder(p, i, g, self._span))
            if hit:
                self.hit_zone = z
                self.hit_link = l
                return False
        return True

    def _gap(self, p):
        """Lower bounds (mm) of the distance from every link segment of joint points p to
        every zone grown by the link's radius, into _gaps: [0] the turn-free zones,
        [1] the others (1e30: none; <= 0: no gap known). For the skip.

        Floor: the lower end's height above the grown floor (exact). Box: the
        largest gap along one axis (a separating slab, never more than the
        distance). Cylinder: the larger of the gap along its axis and the gap
        across it (the segment's least distance from the axis less the grown
        radius). Tool box: how deep the tip is inside it.
        """
        # The two least gaps kept in locals and stored once.
        free_gap = 1e30
        other_gap = 1e30
        tip = 3 * self.n_links
        planar = self.kind == "planar"
        turn_free = self._turn_free
        for z, l, i, kind, g in self._pairs:
            if kind == FLOOR:
                a = p[i + 2]
                e = p[i + 5]
                d = (a if a < e else e) - g[0]
            elif kind == TOOL_BOX:
                d = 1e30
                for k in range(3):
                    if k == 1 and planar:
                        continue        # the plane has no depth
                    e = p[tip + k] - g[k]
                    if e < d:
                        d = e
                    e = g[k + 3] - p[tip + k]
                    if e < d:
                        d = e
            else:
                # Along z (both kinds), then x and y (box) or across the axis (cylinder).
                lo = g[2] if kind == BOX else g[3]
                hi = g[5] if kind == BOX else g[4]
                a = p[i + 2]
                e = p[i + 5]
                d = lo - (a if a > e else e)
                e = (a if a < e else e) - hi
                if e > d:
                    d = e
                if kind == BOX:
                    for k in range(2):
                        a = p[i + k]
                        e = p[i + 3 + k]
                        f = g[k] - (a if a > e else e)
                        if f > d:
                            d = f
                        f = (a if a < e else e) - g[k + 3]
                        if f > d:
                            d = f
                else:
                    e = self._shapes.across_gap(p, i, g)
                    if e > d:
                        d = e
            if turn_free[z]:
                if d < free_gap:
                    free_gap = d
            elif d < other_gap:
                other_gap = d
        gaps = self._gaps
        gaps[0] = free_gap
        gaps[1] = other_gap
        return gaps

    def clearance(self, q):
        """Smallest gap (mm) between a link's surface and a zone for pose q (< 0: inside).

        Sets nearest_zone, nearest_link. For where/info, not the per-step check:
        segments are sampled every few mm. inf when there are no zones.
        """
        p = self.solver.joint_points(q)
        shapes = self._shapes
        best = 1e30
        self.nearest_zone = -1
        self.nearest_link = -1
        tip = 3 * self.n_links
        for z in range(self.n_zones):
            kind = self.zone_kinds[z]
            prm = self.params[z]
            for l in range(self.n_links):
                if self._grown[z][l] is None:
                    continue
                if kind == TOOL_BOX:
                    gap = shapes.inside_depth(p[tip], p[tip + 1], p[tip + 2], prm, self.kind == "planar")
                else:
                    i = 3 * l
                    gap = 1e30
                    for s in range(_SAMPLES + 1):
                        f = s / _SAMPLES
                        x = p[i] + (p[i + 3] - p[i]) * f
                        y = p[i + 1] + (p[i + 4] - p[i + 1]) * f
                        h = p[i + 2] + (p[i + 5] - p[i + 2]) * f
                        d = shapes.distance(kind, prm, x, y, h, self.kind == "planar")
                        if d < gap:
                            gap = d
                    gap -= self.radii[l]
                if gap < best:
                    best = gap
                    self.nearest_zone = z
                    self.nearest_link = l
        return best if self.nearest_zone >= 0 else float("inf")


def from_description(section, solver, where, number, error):
    """Zones for solver from a board file's workspace section: armfw.workspace, loaded
    for the board loader only."""
    from armfw.workspace import from_description
    return from_description(section, solver, where, number, error)
