# SPDX-License-Identifier: MIT
"""The named poses command (armfw.commands): pose save|set|go|del NAME, pose list,
stored in flash by armfw.poses. `pose save` keeps the commanded pose, or, with the
servos relaxed, the one a person moved the arm to (bus servos report it)."""

from armfw import commands, status
from armfw.numeric import DEG
from armfw.protocol import BAD_INPUT, Refused, fmt


def pose(p, args):
    from armfw import poses as named
    from armfw.store import StoreError
    if p.poses is None:
        p.poses = named.Poses(p.n)
    table = p.poses
    action = args[0].lower() if args else ""
    if action == "list":
        p.numbers(args[1:], 0, "none")
        names = table.names()
        for name in names:
            p.write("# %s %s" % (name, " ".join([fmt(v) for v in table.get(name)])))
        return "ok %d" % len(names)
    if action not in ("save", "set", "go", "del") or len(args) < 2:
        raise Refused(BAD_INPUT, "pose save|go|del NAME, pose set NAME Q1..QN, pose list")
    name = args[1]
    why = named.name_error(name)
    if why is not None:
        raise Refused(BAD_INPUT, "%s: %s" % (why, name[:20]))
    try:
        if action == "save" or action == "set":
            if action == "save":
                p.numbers(args[2:], 0, "none")
                if p.controller.pose_known():
                    q = [p.controller.q[i] / DEG for i in range(p.n)]
                else:   # relaxed: where a person moved it, when the servos can say
                    q = [v / DEG for v in p.family(commands.TEACH).taught_pose(p)]
            else:
                q = [v / DEG for v in p.check_limits(p.parse_joints(args[2:]))]
            try:
                if not p.checking:
                    table.put(name, q)
            except ValueError as e:
                raise Refused(BAD_INPUT, str(e))
            return "ok %s %s" % (name, " ".join([fmt(v) for v in q]))
        if action == "del":
            p.numbers(args[2:], 0, "none")
            if table.get(name) is None:
                raise Refused(BAD_INPUT, "no pose named %s" % name)
            if not p.checking:
                table.delete(name)
            return "ok %s" % name
        p.numbers(args[2:], 0, "none")
        q = table.get(name)
        if q is None:
            raise Refused(BAD_INPUT, "no pose named %s" % name)
        goal = p.q_scratch
        for i in range(p.n):
            goal[i] = q[i] * DEG
        return p.go_to(p.check_limits(goal))
    except StoreError as e:
        raise Refused(status.FLASH, str(e))
