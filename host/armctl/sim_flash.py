# SPDX-License-Identifier: MIT
"""The simulated board's flash: a folder that holds the firmware and the board file, as a
deploy leaves them, and the log beside it of every pulse the simulated driver sent."""

import shutil
from pathlib import Path

from armctl import FIRMWARE_DIR

LOG_NAME = "pulses.log"


def install(flash_dir, board, calibration=None, firmware_dir=FIRMWARE_DIR, reset_calibration=False):
    """Copy the firmware and the board file (as board.json) into flash_dir, like a deploy.

    The calibration.json the flash holds is kept, as `armctl deploy` keeps it,
    unless calibration replaces it or reset_calibration removes it.
    """
    flash = Path(flash_dir)
    flash.mkdir(parents=True, exist_ok=True)
    shutil.copy(Path(firmware_dir) / "main.py", flash / "main.py")
    package = flash / "armfw"
    if package.exists():
        shutil.rmtree(package)
    shutil.copytree(Path(firmware_dir) / "armfw", package,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(board, flash / "board.json")
    if calibration is not None:
        shutil.copy(calibration, flash / "calibration.json")
    elif reset_calibration and (flash / "calibration.json").exists():
        (flash / "calibration.json").unlink()


def pulse_log(flash_dir):
    """Where the simulator with this flash folder records its pulses: beside the flash."""
    return flash_dir.parent / (flash_dir.name + "-" + LOG_NAME)


def parse_pulses(text):
    """(t_ms, channel, us) tuples from a pulse log's text (us: int, or float from a
    simulated PCA9685)."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3:
            # A simulated PCA9685 records the width its counts make (float us).
            us = float(parts[2]) if "." in parts[2] else int(parts[2])
            out.append((int(parts[0]), int(parts[1]), us))
    return out
