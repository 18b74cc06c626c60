# SPDX-License-Identifier: MIT
"""SOURCE: MicroPython code the simulator runs first (`micropython -c`), before main.py,
so the Unix port looks like a board to every client: the flash folder is
the root of the filesystem and nothing outside it is reachable (MicroPython's
VfsPosix mounted with a root), `mpremote fs ls` gets sizes, and
machine.reset() restarts the board (the simulator sees exit code
HARD_RESET_EXIT and runs main.py again). armctl.sim puts the settings
FLASH, PULSE_LOG, RUN_MAIN, HARD_RESET_EXIT, READY_FD and SIM_BUS in front of it. Text
here: CPython never runs it.

A board file that names a bus servo driver (sts, dynamixel) gets simulated servos
on machine.UART (armctl.sim_bus, imported from the folder SIM_BUS before the flash
becomes the root, as a board's servos are outside its flash).
"""

SOURCE = r'''
import sys
import os
import vfs
import machine as _machine_builtin


class _Flash:
    """VfsPosix at FLASH, whose listing carries each file's size as a board's filesystem does."""

    def __init__(self, root):
        self._fs = vfs.VfsPosix(root)

    def mount(self, readonly, mkfs):
        pass

    def umount(self):
        pass

    def ilistdir(self, path):
        for entry in self._fs.ilistdir(path):
            try:
                size = 0 if entry[1] == 0x4000 else self._fs.stat(path.rstrip("/") + "/" + entry[0])[6]
            except OSError:
                size = 0
            yield (entry[0], entry[1], entry[2], size)

    def __getattr__(self, name):
        return getattr(self._fs, name)


class _Machine:
    """The Unix port's machine module, plus reset() as a board has it, and a bus
    servo board's UART (and Pin, which the Unix port lacks) from armctl.sim_bus."""

    def __getattr__(self, name):
        if _sim_bus is not None and name in ("UART", "Pin"):
            return getattr(_sim_bus, name)
        return getattr(_machine_builtin, name)

    def reset(self):
        sys.exit(HARD_RESET_EXIT)


# Opened now: once the flash is the root, nothing outside it is in reach.
_sim_bus = None
try:
    import json
    with open(FLASH + "/board.json") as _f:
        _kind = json.load(_f).get("driver", {}).get("kind")
except (OSError, ValueError, AttributeError):
    _kind = None
if _kind in ("sts", "dynamixel"):
    sys.path.insert(0, SIM_BUS)
    import sim_bus as _sim_bus
    sys.path.pop(0)
_ready = open("/dev/fd/%d" % READY_FD, "w") if READY_FD >= 0 else None
_pulse_log = open(PULSE_LOG, "a") if PULSE_LOG else None
try:
    vfs.umount("/")
    vfs.mount(_Flash(FLASH), "/")
    os.chdir("/")
    sys.path[:] = ["", ".frozen", "/lib"]
    sys.modules["machine"] = _Machine()
    if _pulse_log is not None:
        import armfw.simservo
        armfw.simservo.pulse_log = _pulse_log
finally:
    if _ready is not None:
        # The board is whole (flash mounted, machine.reset() in place), or as whole as
        # a broken firmware on it lets it be (its REPL comes next), and the interpreter
        # turns Ctrl-C into KeyboardInterrupt: the simulator may pass input on. Earlier,
        # a Ctrl-C would leave a REPL without its filesystem.
        _ready.write("1")
        _ready.close()
del _ready, _pulse_log, _Flash, _Machine
if RUN_MAIN:
    exec(compile(open("main.py").read(), "main.py", "exec"))
'''
