# SPDX-License-Identifier: MIT
"""The physical arm behind the simulator, which the firmware never sees (armctl sim --truth)."""


class Camera:
    """What a person sees of the simulated arm: where its joints and tool tip physically are.

    truth: a file in calibration.json's form holding the physical arm's servo
    maps and tool offset, the ones a perfect calibration would find; fields it
    lacks are the board file's. The firmware never sees it: the camera reads
    the pulses the servos got through it (the true map may put the board
    file's limits outside their pulse windows, as a real arm may).
    """

    def __init__(self, board_path, truth_path):
        import json
        from armfw import board as boardlib
        from armfw.numeric import DEG
        from armfw.servo import ServoMap
        with open(board_path) as f:
            data = json.load(f)
        with open(truth_path) as f:
            truth = json.load(f)
        if boardlib.TOOL in truth:
            data["arm"][boardlib.TOOL] = truth[boardlib.TOOL]
        self.board = boardlib.from_dict(data, str(board_path))       # the board file's limits, the true tool
        s = self.board.servos
        true = [dict(entry) for entry in truth.get("joints", [{}] * s.n)]
        for j, entry in enumerate(true):
            for key, value in (("offset_deg", s.offsets[j] / DEG), ("sign", s.signs[j]),
                               ("us_per_rad", s.us_per_rad[j]), ("center_us", s.center_us[j])):
                entry.setdefault(key, value)
        self.servos = ServoMap(s.channels, [e["offset_deg"] * DEG for e in true], [e["sign"] for e in true],
                               [e["center_us"] for e in true], [e["us_per_rad"] for e in true],
                               list(s.min_us), list(s.max_us))

    def joints(self, pulses):
        """The physical joint angles (radians) the latest pulse per channel puts the arm at
        (None for a joint whose servo got none); pulses: armctl.sim.Simulator.pulses()."""
        latest = {}
        for _, channel, us in pulses:
            if us > 0:
                latest[channel] = us
        return [self.servos.angle(j, latest[ch]) if ch in latest else None
                for j, ch in enumerate(self.servos.channels)]

    def tip(self, pulses):
        """The tool tip (x, y, z mm) where the arm physically holds it; None before every servo has a pulse."""
        q = self.joints(pulses)
        if None in q:
            return None
        return tuple(self.board.solver.fk(q, [0.0] * len(self.board.solver.targets))[:3])
