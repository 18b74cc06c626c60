# SPDX-License-Identifier: MIT
"""The command table: every protocol command, the family module that answers it,
and whether it may move the arm.

armfw.protocol dispatches by it, importing a family's module the first time
one of its commands arrives (a board's heap holds only the families used);
the host derives from it which requests move the arm (its pacing, the UI's
redraw, `armctl run`'s check). `help` prints armfw.helptext, the same
commands in the same order (tests/test_protocol_doc.py holds the two and
firmware/PROTOCOL.md's command table equal).
"""

from armfw.compat import const

# Families: the module armfw.cmd_<family> holds one function per command of it,
# named as the command (f(protocol, args) -> the final line, or None while a motion runs).
MOTION = "motion"
SETTINGS = "settings"
POSES = "poses"
TEACH = "teach"

# (name, family, moves): moves is True where the command may move the arm or change
# what the board knows of its pose (so a host reads the pose again after it).
COMMANDS = (
    ("ik", MOTION, False),
    ("fk", MOTION, False),
    ("move", MOTION, True),
    ("line", MOTION, True),
    ("joints", MOTION, True),
    ("path", MOTION, True),
    ("servo", MOTION, True),
    ("where", MOTION, False),
    ("home", MOTION, True),
    ("grip", MOTION, True),
    ("pick", MOTION, True),
    ("place", MOTION, True),
    ("jog", MOTION, True),
    ("relax", MOTION, True),
    ("engage", TEACH, True),
    ("unlock", SETTINGS, True),
    ("speed", SETTINGS, False),
    ("accel", SETTINGS, False),
    ("progress", SETTINGS, False),
    ("echo", SETTINGS, False),
    ("check", SETTINGS, False),
    ("wait", MOTION, True),
    ("pose", POSES, True),
    ("info", SETTINGS, False),
    ("help", SETTINGS, False),
    ("sync", SETTINGS, False),
)

# Commands a board whose arm could not be built still answers.
WITHOUT_ARM = ("help", "sync")


def find(name):
    """(name, family, moves) of a command, or None."""
    for entry in COMMANDS:
        if entry[0] == name:
            return entry
    return None


def moving():
    """The names of the commands that may move the arm."""
    return tuple(entry[0] for entry in COMMANDS if entry[2])


# The G-code words that move the arm (G01 is G1; armfw.gcode translates each onto a command above).
GCODE_MOTION = ("G0", "G1", "G2", "G3", "G4", "G28", "M0", "M3", "M5")
# And the words after which the pose may differ otherwise: servos off (relax).
GCODE_POSE = GCODE_MOTION + ("M18", "M84")

_DIGITS = const("0123456789")


def is_gcode(text):
    """True for a line the G-code face answers: N.., G.., M.., $.. (case-insensitive)."""
    if not text:
        return False
    c = text[0]
    if c == "$":
        return True
    if c not in "GMNgmn" or len(text) < 2:
        return False
    return text[1] in _DIGITS or (c in "Nn" and text[1] == "-")


def gcode_word(word):
    """The command of a G-code word as GCODE_MOTION spells it: G01 -> G1, m03 -> M3, G1X10 -> G1
    (ValueError where no number follows the letter)."""
    word = word.upper()
    if word[:1] not in ("G", "M"):
        return word
    end = 1
    while end < len(word) and word[end] in _DIGITS:
        end += 1
    return word[0] + str(int(word[1:end]))
