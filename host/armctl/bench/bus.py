# SPDX-License-Identifier: MIT
"""Bus servo figures: tests/mp/bench_bus.py under the MicroPython Unix port, and the time
on the wire at each bus board's baud rate.

The script times the STS and Dynamixel drivers' step on six servos (a sync
write of five goals, a sync read of every servo's feedback) and counts the
bytes each puts on the line and gets back. Time on the wire is arithmetic,
not a measurement: a UART byte is 10 bits (start, 8 data, stop), so
bytes * 10 / baud. A sync read also waits each servo's return delay (a
register: 0 on a servo set up as LeRobot sets it up, then n servos * delay
more) and whatever gap the servos leave between answers; neither is counted.
"""

from armctl import BOARDS_DIR, ROOT
from armctl.bench.firmware import run_script
from armfw import board

SCRIPT = ROOT / "tests" / "mp" / "bench_bus.py"
COUNT = 1000
SHORT_COUNT = 100
# The board each driver's wire figures are worked at: its baud rate.
BOARD_OF = {"sts": "so101", "dynamixel": "koch"}
BITS_PER_BYTE = 10


def wire_ms(n_bytes, baud):
    return n_bytes * BITS_PER_BYTE * 1000.0 / baud


def run(short=False):
    """The script's figures per driver, with wire_* figures added; raises RuntimeError."""
    figures = run_script(SCRIPT, SHORT_COUNT if short else COUNT)
    for kind, board_name in BOARD_OF.items():
        f = figures[kind]
        b = board.load(str(BOARDS_DIR / (board_name + ".json")))
        baud = b.driver["baud"]
        f["board"] = board_name
        f["baud"] = baud
        f["step_ms"] = b.motion["step_ms"]
        f["wire_sync_write_ms"] = wire_ms(f["sync_write_bytes"], baud)
        f["wire_sync_read_ms"] = wire_ms(f["sync_read_request_bytes"] + f["sync_read_answer_bytes"], baud)
        f["wire_step_ms"] = f["wire_sync_write_ms"] + f["wire_sync_read_ms"]
        f["wire_step_share"] = f["wire_step_ms"] / f["step_ms"]
    return figures
