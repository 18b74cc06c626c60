# SPDX-License-Identifier: MIT
"""`armctl bench --only bus`: the bus servo drivers' step under MicroPython, and its time on the wire.

The byte counts are checked against the packet layouts of the makers' manuals,
for n = 6 servos:
- Feetech SYNC WRITE: FF FF ID LEN INSTR ADDR WIDTH, n x (ID + 2 goal bytes), CHECKSUM;
  SYNC READ: FF FF ID LEN INSTR ADDR WIDTH, n IDs, CHECKSUM; each answer
  FF FF ID LEN ERROR, the 8 bytes from register 56 (position to temperature), CHECKSUM.
- Dynamixel Protocol 2.0: FF FF FD 00 ID LEN_L LEN_H INSTR, ADDR and WIDTH of 2
  bytes each, n x (ID + 4 goal bytes) or n IDs, CRC_L CRC_H; each answer
  FF FF FD 00 ID LEN_L LEN_H 55 ERROR, the 21 bytes from register 126 (load to
  temperature), CRC_L CRC_H. No goal here contains FF FF FD: no stuffing.
Times are only checked to be times: their values go to docs/BENCHMARKS.md.
"""

import math

from armctl.bench import bus, report

N = 6


def test_bus_bench_counts_the_packets_bytes_and_their_wire_time(micropython):
    figures = bus.run(short=True)
    sts, dxl = figures["sts"], figures["dynamixel"]
    assert sts["servos"] == dxl["servos"] == N
    assert sts["sync_write_bytes"] == 7 + N * 3 + 1 == 26
    assert sts["sync_read_request_bytes"] == 7 + N + 1
    assert sts["sync_read_answer_bytes"] == N * (5 + 8 + 1)
    assert dxl["sync_write_bytes"] == 8 + 4 + N * 5 + 2 == 44
    assert dxl["sync_read_request_bytes"] == 8 + 4 + N + 2
    assert dxl["sync_read_answer_bytes"] == N * (9 + 21 + 2)
    for f in (sts, dxl):
        assert f["baud"] == 1000000
        # 10 bits a byte at 1 Mbit/s: 10 us a byte.
        assert math.isclose(f["wire_sync_write_ms"], f["sync_write_bytes"] * 0.01)
        assert math.isclose(f["wire_sync_read_ms"], (f["sync_read_request_bytes"] + f["sync_read_answer_bytes"]) * 0.01)
        for key in ("driver_sync_write_us", "driver_sync_read_us", "simulated_sync_write_us", "simulated_sync_read_us"):
            assert math.isfinite(f[key]) and f[key] > 0
    text = "\n".join(report.bus_lines(figures))
    assert "write 44 B 0.44 ms" in text and "write 26 B 0.26 ms" in text
