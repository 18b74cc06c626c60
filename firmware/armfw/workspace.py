# SPDX-License-Identifier: MIT
"""The board file's workspace section: the arm kind's defaults, and the checked
section made into armfw.zones.Zones (see firmware/PROTOCOL.md, "Workspace").

Read once, when the board file loads (main.py lets it go after boot).
"""

from armfw.compat import const
from armfw.zones import BOX, CYLINDER, FLOOR, TOOL_BOX, Zones, link_names

# A chain arm (armfw.chain) has one link per joint: link<i> runs from joint i's
# origin to the next joint's (the last to the tool tip).
_CHAIN_LINK_RADIUS_MM = const(10.0)


def _default_radius(solver, name):
    if solver.kind == "chain":
        return _CHAIN_LINK_RADIUS_MM
    return DEFAULT_RADII[solver.kind][name]

# Board-file defaults per arm kind (see firmware/PROTOCOL.md, "Workspace").
# arm5: standing on a table at z = 0; the base and shoulder housing is a column
# up to just above the J2 axis. planar: mounted on a post under its shoulder,
# reaching all round it (no floor).
DEFAULT_RADII = {
    "arm5": {"upper_arm": 20.0, "forearm": 15.0, "tool": 8.0},
    "planar": {"upper_arm": 15.0, "forearm": 10.0},
}
_DEFAULT_CLEARANCE_MM = const(5.0)
BASE_RADIUS_MM = 45.0                   # arm5 base column
_BASE_ABOVE_J2_MM = const(25.0)         # the shoulder housing's top above the J2 axis
_POST_HALF_WIDTH_MM = const(20.0)       # planar post
_POST_BELOW_SHOULDER_MM = const(30.0)


def defaults(kind, solver):
    """The workspace section a board of this arm kind gets when it has none (a dict).

    A chain arm gets none: where its base stands is the URDF's business, not a default's.
    """
    if kind == "chain":
        return {"floor": None, "link_radius_mm": {}, "zones": []}
    if kind == "arm5":
        return {
            "floor": {"height_mm": 0.0, "clearance_mm": _DEFAULT_CLEARANCE_MM},
            "link_radius_mm": dict(DEFAULT_RADII["arm5"]),
            "zones": [{"name": "base", "kind": "cylinder", "x_mm": 0.0, "y_mm": 0.0,
                       "radius_mm": BASE_RADIUS_MM, "bottom_mm": 0.0,
                       "top_mm": solver.base + _BASE_ABOVE_J2_MM, "links": ["forearm", "tool"]}],
        }
    return {
        "floor": None,
        "link_radius_mm": dict(DEFAULT_RADII["planar"]),
        "zones": [{"name": "post", "kind": "cylinder", "x_mm": 0.0,
                   "radius_mm": _POST_HALF_WIDTH_MM, "bottom_mm": -2.0 * solver.reach,
                   "top_mm": -_POST_BELOW_SHOULDER_MM, "links": ["forearm"]}],
    }


def _corners(d, where, dims, num, error):
    lo = []
    hi = []
    for key, out in (("min_mm", lo), ("max_mm", hi)):
        v = d.get(key)
        if not isinstance(v, list) or len(v) != dims:
            raise error("%s.%s: must be a list of %d numbers" % (where, key, dims))
        for k in range(dims):
            out.append(num({key: v[k]}, key, where))
    for k in range(dims):
        if lo[k] >= hi[k]:
            raise error("%s.min_mm: %r must be below max_mm %r" % (where, lo[k], hi[k]))
    if dims == 2:       # planar (x, y) into the (x, 0, y) frame
        return [lo[0], 0.0, lo[1], hi[0], 0.0, hi[1]]
    return lo + hi


_WORKSPACE_KEYS = const(("floor", "link_radius_mm", "tool_box", "zones"))
ZONE_KEYS = {"box": ("name", "kind", "min_mm", "max_mm", "links"),
             "cylinder": ("name", "kind", "x_mm", "y_mm", "radius_mm", "bottom_mm", "top_mm", "links")}


def _known_links(names, field, kind, links, error):
    for name in names:
        if name not in links:
            raise error("%s: %r is not a link of the %s arm (%s)" % (field, name, kind, ", ".join(links)))


def from_description(section, solver, where, number, error):
    """Zones for solver from a board file's workspace section (None: the arm kind's defaults).

    number(d, key, where, positive): the board loader's number check;
    error: its exception class, raised naming the bad field.

    Keys missing from the section take the default; "floor": null and
    "zones": [] switch those off. Raises error naming the bad field, or
    when the arm's home pose is not clear.
    """
    def num(d, key, w, default=None, positive=False):
        if key not in d and default is not None:
            return default
        return float(number(d, key, w, positive))

    kind = solver.kind
    where = where + ".workspace"
    base = defaults(kind, solver)
    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise error("%s: must be an object" % where)
    for key in section:
        if key not in _WORKSPACE_KEYS:
            raise error("%s.%s: unknown setting (known: %s)" % (where, key, ", ".join(_WORKSPACE_KEYS)))
    links = link_names(solver)
    dims = 2 if kind == "planar" else 3

    radii_d = section.get("link_radius_mm", base["link_radius_mm"])
    if not isinstance(radii_d, dict):
        raise error("%s.link_radius_mm: must be an object" % where)
    _known_links(radii_d, where + ".link_radius_mm", kind, links, error)
    radii = [num(radii_d, name, where + ".link_radius_mm", _default_radius(solver, name))
             for name in links]
    for name, r in zip(links, radii):
        if r < 0:
            raise error("%s.link_radius_mm.%s: must be >= 0, got %r" % (where, name, r))

    every = tuple(range(len(links)))
    zones = []
    floor = section.get("floor", base["floor"])
    if floor is not None:
        fw = where + ".floor"
        if not isinstance(floor, dict):
            raise error("%s: must be an object or null" % fw)
        clearance = num(floor, "clearance_mm", fw, _DEFAULT_CLEARANCE_MM)
        if clearance < 0:
            raise error("%s.clearance_mm: must be >= 0, got %r" % (fw, clearance))
        zones.append(("floor", FLOOR, [num(floor, "height_mm", fw, 0.0), clearance, 0.0, 0.0, 0.0, 0.0],
                      every))
    box = section.get("tool_box")
    if box is not None:
        if not isinstance(box, dict):
            raise error("%s.tool_box: must be an object or null" % where)
        zones.append(("tool_box", TOOL_BOX, _corners(box, where + ".tool_box", dims, num, error),
                      (len(links) - 1,)))
    listed = section.get("zones", base["zones"])
    if not isinstance(listed, list):
        raise error("%s.zones: must be a list" % where)
    names = [z[0] for z in zones]
    for i, z in enumerate(listed):
        zw = "%s.zones[%d]" % (where, i)
        if not isinstance(z, dict):
            raise error("%s: must be an object" % zw)
        zkind = z.get("kind")
        if zkind not in ZONE_KEYS:
            raise error("%s.kind: must be one of %s, got %r" % (zw, ", ".join(ZONE_KEYS), zkind))
        for key in z:
            if key not in ZONE_KEYS[zkind] or (key == "y_mm" and dims == 2):
                raise error("%s.%s: not a %s setting" % (zw, key, zkind))
        name = z.get("name")
        if not isinstance(name, str) or not name or " " in name:
            raise error("%s.name: must be a word, got %r" % (zw, name))
        if name in names:
            raise error("%s.name: %s is used twice" % (zw, name))
        names.append(name)
        applies = z.get("links")
        if applies is None:
            applies = links
        elif not isinstance(applies, list):
            raise error("%s.links: must be a list of link names" % zw)
        _known_links(applies, zw + ".links", kind, links, error)
        applies = tuple(k for k in every if links[k] in applies)
        if zkind == "box":
            zones.append((name, BOX, _corners(z, zw, dims, num, error), applies))
        else:
            bottom = num(z, "bottom_mm", zw)
            top = num(z, "top_mm", zw)
            if bottom >= top:
                raise error("%s.bottom_mm: %r must be below top_mm %r" % (zw, bottom, top))
            zones.append((name, CYLINDER, [num(z, "x_mm", zw, 0.0),
                                           0.0 if dims == 2 else num(z, "y_mm", zw, 0.0),
                                           num(z, "radius_mm", zw, positive=True), bottom, top, 0.0],
                          applies))
    result = Zones(solver, radii, zones)
    if not result.clear(solver.home):
        raise error("%s: the home pose puts the %s in zone %s" % (
            where, result.link_names[result.hit_link], result.zone_names[result.hit_zone]))
    return result
