# SPDX-License-Identifier: MIT
"""Robot-arm firmware: kinematics, servo bridge, drivers, motion and the line protocol.

Everything in this package runs unmodified on MicroPython (RP2040, ESP32, the
Unix port) and on CPython, where the host imports it instead of keeping a copy.
Units inside the firmware: millimetres and radians.

The solver's hot functions carry @micropython.native: machine code where the
port has the native emitter (the RP2040, ESP32 and Unix ports do). A port
built without it refuses the decorator when it compiles the module
(SyntaxError); those modules are then loaded from their source without it,
as bytecode that computes the same answers, only slower.
"""

import sys

# The project's version (pyproject.toml, manifest.py; tests/test_imports.py keeps them equal).
VERSION = "0.1.0"


def serve():
    """Back to the line protocol from the REPL (after Ctrl-C), with the arm where it is."""
    from armfw import session
    if session.current is None:
        raise RuntimeError("no console session: main.py did not start one")
    session.run(session.current)


# The modules with @micropython.native functions, each after the ones it imports.
NATIVE_MODULES = ("twolink", "servo", "zones", "kinematics", "motion")

# "native" or "bytecode" per module of NATIVE_MODULES, as loaded (MicroPython only).
emitters = {}


class _Module:
    """A module loaded by _load_bytecode (ports cannot make module objects)."""


def _load_bytecode(name):
    """Load armfw.<name> from its source with its @micropython.* decorator lines left out."""
    path = __file__.rsplit("/", 1)[0] + "/" + name + ".py"
    with open(path) as f:
        lines = f.read().split("\n")
    for i in range(len(lines)):
        if lines[i].strip().startswith("@micropython."):
            lines[i] = ""           # keeps the line numbers of tracebacks
    namespace = {"__name__": "armfw." + name}
    exec("\n".join(lines), namespace)
    module = _Module()
    for key in namespace:
        setattr(module, key, namespace[key])
    sys.modules["armfw." + name] = module
    globals()[name] = module


if sys.implementation.name == "micropython":
    for _name in NATIVE_MODULES:
        try:
            __import__("armfw." + _name)
            emitters[_name] = "native"
        except SyntaxError:         # "invalid micropython decorator": no native emitter
            _load_bytecode(_name)
            emitters[_name] = "bytecode"
