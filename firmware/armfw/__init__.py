"""Robot-arm firmware: kinematics, servo bridge, drivers, motion and the line protocol.

Everything in this package runs unmodified on MicroPython (RP2040, ESP32, the
Unix port) and on CPython, where the host imports it instead of keeping a copy.
Units inside the firmware: millimetres and radians.
"""

VERSION = "0.2.0"


def serve():
    """Back to the line protocol from the REPL (after Ctrl-C), with the arm where it is."""
    from armfw import session
    if session.current is None:
        raise RuntimeError("no console session: main.py did not start one")
    session.run(session.current)
