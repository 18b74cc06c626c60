# SPDX-License-Identifier: MIT
"""Every status word a reply can carry, in one place.

Solver statuses are small ints (what armfw.kinematics returns), named by NAMES.
OK and SINGULAR carry a valid solution (SINGULAR warns that the pose is near
full stretch or full fold, where a small tool motion needs a large joint motion).
Every other status means no joint angles were produced and nothing may move.

The line protocol answers "ok STATUS ..." or "error WORD message": WORD is a
solver status name or one of the protocol's own words below. WORDS lists them
all; the host's link (armctl.link) recognises a status by this list. A new
reply word is added here, nowhere else.
"""

from armfw.compat import const

OK = const(0)
SINGULAR = const(1)
TOO_FAR = const(2)
TOO_CLOSE = const(3)
JOINT_LIMIT = const(4)
BAD_INPUT = const(5)
# Reachable within the joint limits, but a link would enter a keep-out zone
# (the floor, the base, a fixture: armfw.zones).
COLLISION = const(6)
# The host's numerical solvers only (armctl.numik): stopped short of the target
# without a proof that it is out of reach or mechanically forbidden (a local
# failure of the method). The firmware's closed-form solver never answers it.
NOT_CONVERGED = const(7)
# A tool offset across the arm's plane (lateral, Y_TCP) keeps the tip at least
# that far from the base axis: a target nearer the axis than the offset has no
# base angle at all (a cylinder around the axis, beside TOO_CLOSE's hole).
NEAR_AXIS = const(8)

NAMES = ("OK", "SINGULAR", "TOO_FAR", "TOO_CLOSE", "JOINT_LIMIT", "BAD_INPUT", "COLLISION",
         "NOT_CONVERGED", "NEAR_AXIS")

# The protocol's own words (armfw.protocol; firmware/PROTOCOL.md says when each is sent).
BAD_COMMAND = "BAD_COMMAND"     # not a command line: unknown word, control bytes, too long
BAD_BOARD = "BAD_BOARD"         # the board file could not be loaded or its driver started
INTERNAL = "INTERNAL"           # the firmware failed where it should not: a bug, reported
FLASH = "FLASH"                 # the board's flash could not be written (full?): old file kept
HOME_FIRST = "HOME_FIRST"       # servos off (boot, relax), pose unknown: motion waits for home
ALARM = "ALARM"                 # motion locked (a move aborted, a G-code motion line refused) until unlock
ABORTED = "ABORTED"             # final reply of a move stopped before its end (Ctrl-X, Ctrl-C)
DROPPED = "DROPPED"             # a line queued during a move that an abort dropped unrun
QUEUE_FULL = "QUEUE_FULL"       # a line sent during a move that the queue had no room for
RELAXED = "RELAXED"             # ok RELAXED: servos off, no pose to report (relax, where)
NO_CLOSED_FORM = "NO_CLOSED_FORM"   # this arm (kind chain) has no IK on the board: the host solves it
NO_MEMORY = "NO_MEMORY"         # the heap ran out: the request did nothing, or the move stopped at a checked step
# Bus servos that report back (armfw.feedback): each stops a motion and names the joint.
BLOCKED = "BLOCKED"             # a joint lags its goal past max_lag, or its load passes max_load
OVERHEAT = "OVERHEAT"           # a servo is over max_temp_c, or reports overheating
VOLTAGE = "VOLTAGE"             # a servo's supply is outside min_volts..max_volts, or it reports so
BUS_ERROR = "BUS_ERROR"         # a servo did not answer, or answered with a bad packet
PROTOCOL_WORDS = (BAD_COMMAND, BAD_BOARD, INTERNAL, FLASH, HOME_FIRST, ALARM, ABORTED, DROPPED,
                  QUEUE_FULL, RELAXED, NO_CLOSED_FORM, NO_MEMORY, BLOCKED, OVERHEAT, VOLTAGE, BUS_ERROR)

WORDS = NAMES + PROTOCOL_WORDS


def name(status):
    return NAMES[status]


def code(status_name):
    """Status code for a name such as "TOO_FAR" (ValueError if unknown)."""
    return NAMES.index(status_name)


def solved(status):
    """True when the status carries joint angles that may be used."""
    return status <= SINGULAR
