# SPDX-License-Identifier: MIT
"""Host tools for the MicroPython robot arm: simulator, link, deploy, numerical IK, calibration, pictures.

The host never keeps a copy of the firmware's math: analytic IK, FK and servo
mapping come from the firmware package itself (armfw), which this package
installs alongside.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE_DIR = ROOT / "firmware"
BOARDS_DIR = ROOT / "boards"
