# SPDX-License-Identifier: MIT
"""Host tools for the MicroPython robot arm: simulator, link, deploy, numerical IK, calibration, pictures.

The host never keeps a copy of the firmware's math: analytic IK, FK and servo
mapping come from the firmware package itself (armfw), which this package
installs alongside.
"""

from armctl.shipped import BOARDS_DIR, FIRMWARE_DIR, ROOT  # noqa: F401  (checkout or installed wheel)
