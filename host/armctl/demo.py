# SPDX-License-Identifier: MIT
"""The demo: a pick and place on the simulated board, over the real protocol, with a picture.

The simulator runs the unmodified firmware under the MicroPython Unix port
behind a pseudo-terminal; the demo talks to it through armctl.link exactly as
to a board on USB, prints the transcript, then rebuilds the tool path from
the pulses the simulated servos received (decoded with armfw's servo map and
forward kinematics, never with the commanded angles) and draws it.
"""

import sys

from armfw import board as boardlib

# Object and destination (mm, base frame) for each arm kind: inside the
# workspace, with room above for the approach.
PICK_PLACE = {
    "arm5": ((200.0, -80.0, 40.0), (50.0, 180.0, 40.0)),
    "planar": ((140.0, -30.0), (40.0, 120.0)),
}
REQUEST_TIMEOUT_S = 60.0


def script(board):
    """The demo's requests: pick and place with a gripper, straight lines without one."""
    pick, place = PICK_PLACE[board.solver.kind]

    def words(p):
        return " ".join("%g" % v for v in p)

    if board.gripper is not None:
        moves = ["grip open", "pick " + words(pick), "place " + words(place)]
    else:
        moves = ["move " + words(pick), "line " + words(place), "line " + words(pick)]
    return ["info", "home"] + moves + ["home", "where"]


def waypoints(board):
    """The targets of the demo (mm): pick and place points, with their approach points above."""
    pick, place = PICK_PLACE[board.solver.kind]
    if board.solver.kind != "arm5":
        return [list(pick), list(place)]
    up = board.motion["approach_mm"]
    return [[pick[0], pick[1], pick[2] + up], list(pick), [pick[0], pick[1], pick[2] + up],
            [place[0], place[1], place[2] + up], list(place), [place[0], place[1], place[2] + up]]


def tool_path(board, records):
    """Tool positions (mm) the servos took, from pulse records (t_ms, channel, us).

    Each distinct time gives one pose: the latest pulse of every joint's
    channel, turned back into an angle by the board's servo map, then into a
    tool position by forward kinematics. Poses before every joint has had a
    pulse, and pulses of 0 (channel off), are skipped.
    """
    servos = board.servos
    joint_of = {ch: j for j, ch in enumerate(servos.channels)}
    pulses = [None] * servos.n
    path = []
    q = [0.0] * servos.n
    out = [0.0] * len(board.solver.targets)
    dims = 3 if board.solver.kind == "arm5" else 2

    def emit():
        if None in pulses:
            return
        for j in range(servos.n):
            q[j] = servos.angle(j, pulses[j])
        p = board.solver.fk(q, out)[:dims]
        if not path or path[-1] != p:
            path.append(list(p))

    last_t = None
    for t, ch, us in records:
        if last_t is not None and t != last_t:
            emit()
        last_t = t
        j = joint_of.get(ch)
        if j is not None and us > 0:
            pulses[j] = us
    emit()
    return path


def run(board_path, out_png, out=sys.stdout):
    """Run the demo; returns (exit code, tool path in mm, pulse records (t_ms, channel, us))."""
    from armctl import cli
    from armctl.link import Link
    from armctl.sim import Simulator

    def say(text):
        print(text, file=out, flush=True)

    board = boardlib.load(str(board_path))
    requests = script(board)
    say("demo: %s (%s)" % (board.name, board.title))
    with Simulator(board_path, pty=True) as sim:
        say("simulator on %s; %d requests" % (sim.port, len(requests)))
        with Link(sim.port, timeout=REQUEST_TIMEOUT_S) as link:
            link.wait_ready()
            for i, request in enumerate(requests, 1):
                say("[%d/%d] > %s" % (i, len(requests), request))
                reply = link.request(request, on_line=lambda text: say("        " + text))
                if not reply.ok:
                    say("demo: the board refused %r" % request)
                    return cli.EXIT_REFUSED, [], sim.pulses()
        records = sim.pulses()
    path = tool_path(board, records)
    say("decoded %d tool positions from %d servo pulses" % (len(path), len(records)))
    from armctl import plot
    plot.path_figure(board, path, str(out_png), waypoints=waypoints(board),
                     title="%s on the simulator: tool path decoded from %d servo pulses"
                     % (board.name, len(records)))
    say("picture: %s" % out_png)
    return cli.EXIT_OK, path, records
