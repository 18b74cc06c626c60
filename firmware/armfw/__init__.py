# SPDX-License-Identifier: MIT
"""Robot-arm firmware: kinematics, servo bridge, drivers, motion and the line protocol.

Everything in this package runs unmodified on MicroPython (RP2040, ESP32, the
Unix port) and on CPython, where the host imports it instead of keeping a copy.
Units inside the firmware: millimetres and radians.

Importing the package loads nothing else: a board's heap holds only the
modules its arm, its driver and the commands used so far need.
"""

# The project's version (pyproject.toml, manifest.py; tests/test_imports.py keeps them equal).
VERSION = "0.1.0"


def serve():
    """Back to the line protocol from the REPL (after Ctrl-C), with the arm where it is."""
    from armfw import session
    if session.current is None:
        raise RuntimeError("no console session: main.py did not start one")
    session.run(session.current)
