# SPDX-License-Identifier: MIT
"""`armctl sim` with a bus servo board: the unmodified firmware on the Unix port drives
simulated STS3215s (armctl.sim_bus on machine.UART) over the real packets.

A simulated servo closes half the distance to its goal at each read of its
position (armctl.sim_bus.SIM_FOLLOW); the expected ticks below are worked from
that and the SO-101's servo map (2048 at 0 deg, 4096 ticks a turn, sign +1).
"""

from armctl.sim import Simulator
from conftest import BOARDS

TICKS_PER_DEG = 4096 / 360


def goal(deg):
    return round(2048 + deg * TICKS_PER_DEG)


def test_so101_boots_on_simulated_bus_servos_and_reports_what_they_read(micropython):
    with Simulator(BOARDS / "so101.json") as sim:
        assert sim.readline().startswith("# armfw ")
        assert sim.request("where") == ["ok RELAXED measured=0.000,0.000,0.000,0.000,0.000 grip=unknown"]
        assert sim.request("servo read") == ["ok 2048 2048 2048 2048 2048 2048"]
        q = [10, -20, 30, 10, 0]
        reply = sim.request("joints %s" % " ".join(str(v) for v in q))
        assert reply[-1].startswith("ok OK 10.000 -20.000 30.000 10.000 0.000 ") and reply[-1].endswith(" steps=1")
        # Sent at once, then one read: each servo has come half way.
        half = [2048 + int((goal(v) - 2048) * 0.5) for v in q]
        measured = ",".join("%.3f" % ((t - 2048) / TICKS_PER_DEG) for t in half)
        assert " measured=%s grip=" % measured in sim.request("where")[-1]
        # The next read: half the rest.
        closer = [t + int((goal(v) - t) * 0.5) for t, v in zip(half, q)]
        assert sim.request("servo read") == ["ok %s 2048" % " ".join(str(t) for t in closer)]
        # Relaxed, the servos stay where they are; engage holds them there.
        assert sim.request("relax") == ["ok RELAXED"]
        shown = " ".join("%.3f" % ((t - 2048) / TICKS_PER_DEG) for t in closer)
        assert sim.request("engage")[-1].startswith("ok OK %s " % shown)
        # ... and a motion from there is interpolated, every step's feedback read in the check.
        reply = sim.request("joints 0 0 0 0 0")
        assert reply[-1].startswith("ok OK 0.000 0.000 0.000 0.000 0.000 ")
        assert int(reply[-1].rsplit("steps=", 1)[1]) > 1
