"""Solver status codes.

OK and SINGULAR carry a valid solution (SINGULAR warns that the pose is near
full stretch or full fold, where a small tool motion needs a large joint motion).
Every other status means no joint angles were produced and nothing may move.
"""

OK = 0
SINGULAR = 1
TOO_FAR = 2
TOO_CLOSE = 3
JOINT_LIMIT = 4
BAD_INPUT = 5
# The host's numerical solvers only (armctl.numik): stopped short of the target
# without a proof that it is out of reach or mechanically forbidden (a local
# failure of the method). The firmware's closed-form solver never answers it.
NOT_CONVERGED = 6

NAMES = ("OK", "SINGULAR", "TOO_FAR", "TOO_CLOSE", "JOINT_LIMIT", "BAD_INPUT", "NOT_CONVERGED")


def name(status):
    return NAMES[status]


def code(status_name):
    """Status code for a name such as "TOO_FAR" (ValueError if unknown)."""
    return NAMES.index(status_name)


def solved(status):
    """True when the status carries joint angles that may be used."""
    return status <= SINGULAR
