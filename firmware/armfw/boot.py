# SPDX-License-Identifier: MIT
"""Boot: load the board file, build the arm, make the console session that serves it.

main.py calls start() and then serves; this module, the board file's loader
and the driver factory are let go once the session is made, for the heap
their code holds.

The board file is board.json in the flash root (`armctl deploy` copies the
chosen boards/X.json there); calibration.json beside it, when present, is laid
over it (or a lone calibration.json.tmp, see armfw.store). Under the Unix
port ARMFW_BOARD / ARMFW_CALIBRATION or the first argument name other files.
A board that cannot be loaded (or a driver that cannot start) does not stop
the console: every request is answered with "error BAD_BOARD <why>" so the
host sees what is wrong ("error NO_MEMORY ..." where the heap ran out first).

At boot the servos get no pulse (the board file's "boot": "home" sends the
home pose at once instead); one "# " banner line says what to do next.
"""

import gc
import sys

import armfw
from armfw.compat import const, getenv
from armfw.status import BAD_BOARD, NO_MEMORY

BOARD = "board.json"
CALIBRATION = "calibration.json"
# Needed only until the session is made (armfw.<name>); imported again if ever asked for.
_BOOT_ONLY = const(("board", "drivers", "fields", "workspace", "store", "boot"))
_ONE_BYTE = bytearray(1)


def start():
    """(controller, session): the arm built from the board file (None if it could not be)
    and the console session that answers the line protocol for it, not yet serving."""
    controller, boot_word, boot_error = _build()
    # The arm is built before the console's modules load, so that its buffers find
    # whole blocks in a heap that importing has not yet cut into pieces.
    _forget_boot_modules()
    gc.collect()
    try:
        from armfw.console import Console
        from armfw.protocol import Protocol
        from armfw.session import Session
        if _compiled_from_source():
            # The board compiles each module when it is first imported, and the G-code
            # face and its G1 queue are the largest the protocol loads late: compiled in a
            # heap that the requests before them have cut into pieces, each set the source
            # route's need in turn (README, Memory). Now, while the heap is still whole.
            import armfw.gcode
            import armfw.gcodeblend
        console = Console(sys.stdin.buffer, sys.stdin, sys.stdout.write, None)
        protocol = Protocol(controller, console.write_line, boot_error, console, boot_word)
        if boot_error is not None:
            console.write_line("error %s %s" % (boot_word, boot_error))
        else:
            console.write_line(_banner(controller))
        return controller, Session(protocol, console, controller.driver if controller is not None else None)
    except MemoryError:
        console = protocol = None       # what was made of the console is garbage now
        _answer_out_of_memory("loading the console")


def _build():
    """(controller, None, None) or (None, reply word, message why not)."""
    try:
        from armfw import board as board_file
    except MemoryError:
        _answer_out_of_memory("loading the board")
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


def _calibration():
    """The calibration file to lay over the board file, or None."""
    if getenv("ARMFW_CALIBRATION"):
        return getenv("ARMFW_CALIBRATION")
    # `armctl calibrate` writes it the armfw.store way: a lone
    # calibration.json.tmp is what a power cut on FAT leaves, and complete.
    from armfw.store import readable
    return readable(CALIBRATION)


def _forget_boot_modules():
    """The board file is read once: the code that loads it and starts its driver is let go."""
    for name in _BOOT_ONLY:
        sys.modules.pop("armfw." + name, None)
        if hasattr(armfw, name):
            delattr(armfw, name)


def _compiled_from_source():
    """True when armfw is .py files on the flash, compiled here: not .mpy, not frozen
    into the image (a frozen module's file is not on the flash)."""
    import os
    try:
        os.stat(armfw.__file__)
    except OSError:
        return False
    return armfw.__file__.endswith(".py")


def _banner(controller):
    """The one line said at boot: firmware version, board, what to do next."""
    if controller.pose_known():
        then = "at home: ready"
    else:
        then = "servos off: send home (help lists the commands)"
    return "# armfw %s on %s, calibration %s: %s" % (armfw.VERSION, controller.board.name,
                                                      controller.board.calibration, then)


def _answer_out_of_memory(doing):
    """No heap for the console itself: every line is answered NO_MEMORY until the input ends.

    The reply is written in pieces that already exist and the input read a byte at
    a time into a buffer made at import: a heap with nothing left still answers."""
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
