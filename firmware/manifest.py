# SPDX-License-Identifier: MIT
# MicroPython manifest: freezes the armfw package into a board's firmware build
# (make BOARD=... FROZEN_MANIFEST=path/to/firmware/manifest.py), the way
# micropython-lib packages are frozen. main.py is not frozen: `armctl deploy`
# copies it, board.json and calibration.json to the board's flash, where boot
# runs it. The version is the project's (pyproject.toml); tests/test_imports.py
# keeps the two equal.
metadata(
    description="Robot-arm firmware: safe analytic IK, servo mapping, PCA9685 and PWM drivers, "
                "motion and a line protocol on the USB console",
    version="0.1.0",
    license="MIT",
)

package("armfw")
