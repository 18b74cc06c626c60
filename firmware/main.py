# SPDX-License-Identifier: MIT
"""Boot: load the board, build the arm, answer the line protocol on the console.

The board file is board.json in the flash root (`armctl deploy` copies the
chosen boards/X.json there); calibration.json beside it, when present, is laid
over it (or a lone calibration.json.tmp, see armfw.store). Under the Unix port ARMFW_BOARD / ARMFW_CALIBRATION or the first
argument name other files. A board that cannot be loaded (or a driver that
cannot start) does not stop the console: every request is answered with
"error BAD_BOARD <why>" so the host sees what is wrong ("error NO_MEMORY ..."
where the heap ran out first).

At boot the servos get no pulse (the board file's "boot": "home" sends the
home pose at once instead); one "# " banner line says what to do next.

Ctrl-C leaves the protocol for the MicroPython REPL with the arm controller
(armfw.motion.ArmController) as the global `controller` (None if it could not
be built) for Python calls, e.g. controller.q or controller.move(...);
armfw.serve() goes back to the protocol, the arm where it was.
"""

import gc
import sys

import micropython

# Collect after every 16 KB allocated (a sixteenth of a smaller heap) rather
# than only when the heap is full. Garbage left lying at the bottom of the heap
# pushes what stays (the code each import or compile makes, the interned names,
# the objects a request keeps) up through it, and the holes that garbage leaves
# between those are too small for a later import, a pool of names or a reply:
# the firmware then needs far more heap than it keeps (README, Memory).
gc.threshold(min(16 * 1024, (gc.mem_free() + gc.mem_alloc()) // 16))
# No line numbers kept with the bytecode compiled from here on (as `armctl deploy`
# compiles .mpy, mpy-cross -O3): the firmware answers every failure with a reply
# word, never a traceback, and the numbers would take heap.
micropython.opt_level(3)

import armfw
from armfw.status import BAD_BOARD, NO_MEMORY


def _out_of_memory(doing):
    """No heap for the console itself: every line is answered NO_MEMORY until the input ends.

    The reply is written in pieces that already exist and the input read a byte at
    a time into a buffer made at import: a heap with nothing left still answers."""
    for built in ("serving", "protocol", "console"):
        globals().pop(built, None)      # what was made of the console is garbage now
    gc.collect()
    try:
        free = " (%d bytes free)" % gc.mem_free()
    except MemoryError:
        free = ""

    def say():
        write = sys.stdout.write
        write("error ")
        write(NO_MEMORY)
        write(" out of memory ")
        write(doing)
        write(free)
        write(": the firmware needs more heap (README, Memory)\n")

    say()
    after_cr = False
    while sys.stdin.buffer.readinto(_ONE_BYTE):
        c = _ONE_BYTE[0]
        if c == 13 or c == 10 and not after_cr:     # a line ends in CR, LF or CR LF
            say()
        after_cr = c == 13
    sys.exit(0)


_ONE_BYTE = bytearray(1)

try:
    from armfw import board as board_file
    from armfw.compat import getenv
except MemoryError:
    _out_of_memory("loading the board")

BOARD = "board.json"
CALIBRATION = "calibration.json"


def _compiled_from_source():
    """True when armfw is .py files on the flash, compiled here: not .mpy, not frozen
    into the image (a frozen module's file is not on the flash)."""
    import os
    try:
        os.stat(armfw.__file__)
    except OSError:
        return False
    return armfw.__file__.endswith(".py")


def _calibration():
    """The calibration file to lay over the board file, or None."""
    if getenv("ARMFW_CALIBRATION"):
        return getenv("ARMFW_CALIBRATION")
    # `armctl calibrate` writes it the armfw.store way: a lone
    # calibration.json.tmp is what a power cut on FAT leaves, and complete.
    from armfw.store import readable
    return readable(CALIBRATION)


def build():
    """(controller, None, None) or (None, reply word, message why not)."""
    path = getenv("ARMFW_BOARD") or (sys.argv[1] if len(sys.argv) > 1 else BOARD)
    try:
        b = board_file.load(path, calibration=_calibration())
        from armfw import drivers
        from armfw.motion import ArmController
        driver = drivers.make(b)
        gripper = None
        if b.gripper is not None:
            from armfw.gripper import Gripper
            gripper = Gripper(driver, b.gripper)
        controller = ArmController(b, driver, gripper)
        if b.boot == board_file.BOOT_HOME:
            controller.park()
        return controller, None, None
    except MemoryError:
        gc.collect()
        try:
            return None, NO_MEMORY, "out of memory building the arm (%d bytes free)" % gc.mem_free()
        except MemoryError:
            return None, NO_MEMORY, "out of memory building the arm"
    except Exception as e:  # a bad board file or a missing device must not end the console
        return None, BAD_BOARD, "%s: %s" % (type(e).__name__, e)


def banner(controller):
    """The one line said at boot: firmware version, board, what to do next."""
    if controller.pose_known():
        then = "at home: ready"
    else:
        then = "servos off: send home (help lists the commands)"
    return "# armfw %s on %s, calibration %s: %s" % (armfw.VERSION, controller.board.name,
                                                      controller.board.calibration, then)


controller, boot_word, boot_error = build()
# The board file is read once: the code that loads it and starts its driver is
# let go for the heap it holds. The arm is built before the console's modules
# load, so that its buffers find whole blocks in a heap that importing has not
# yet cut into pieces.
del board_file
for _loader in ("board", "drivers", "fields", "workspace"):
    sys.modules.pop("armfw." + _loader, None)
    if hasattr(armfw, _loader):
        delattr(armfw, _loader)
gc.collect()
try:
    from armfw import session
    if _compiled_from_source():
        # The board compiles each module when it is first imported, and the G-code
        # face is the largest the protocol loads late: compiled in a heap that the
        # requests before it have cut into pieces, it set the source route's need
        # (README, Memory). Now, while the heap is still whole.
        import armfw.gcode
    del _compiled_from_source
    from armfw.console import Console
    from armfw.protocol import Protocol
    console = Console(sys.stdin.buffer, sys.stdin, sys.stdout.write, None)
    protocol = Protocol(controller, console.write_line, boot_error, console, boot_word)
    if boot_error is not None:
        console.write_line("error %s %s" % (boot_word, boot_error))
    else:
        console.write_line(banner(controller))
    serving = session.Session(protocol, console, controller.driver if controller is not None else None)
except MemoryError:
    _out_of_memory("loading the console")
if session.run(serving):
    if sys.platform == "linux":
        sys.exit(0)     # the host closed our input: a Unix-port simulator ends here
