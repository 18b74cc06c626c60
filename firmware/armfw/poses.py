# SPDX-License-Identifier: MIT
"""Named joint poses kept in poses.json on the board's flash (written through armfw.store).

The file maps a name to joint angles in degrees, in joint order:
{"rest": [0, 10, 120, 50, 0], ...}. Names are 1.._MAX_NAME characters of
letters, digits, "_" and "-", starting with a letter; at most MAX_POSES are
kept. Every change rewrites the whole file atomically: a power cut keeps the
old file, a full flash is an error and the old file stays.
"""

from armfw import store
from armfw.compat import const

FILE = "poses.json"
_MAX_NAME = const(16)
MAX_POSES = const(32)

_NAME_CHARS = const("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def name_error(name):
    """Why name cannot name a pose, or None when it can."""
    if not 1 <= len(name) <= _MAX_NAME:
        return "a pose name has 1..%d characters" % _MAX_NAME
    if not ("a" <= name[0].lower() <= "z"):
        return "a pose name starts with a letter"
    for ch in name:
        if ch not in _NAME_CHARS:
            return "a pose name holds letters, digits, _ and - only"
    return None


class Poses:
    """The named poses of an n-joint arm, read from path on first use."""

    def __init__(self, n, path=FILE):
        self.n = n
        self.path = path
        self._poses = None

    def _load(self):
        if self._poses is None:
            data = store.read_json(self.path, {})
            poses = {}
            if isinstance(data, dict):
                for name, q in data.items():
                    # A pose for another arm (or hand-edited badly) is skipped, not fatal.
                    if name_error(name) is None and isinstance(q, list) and len(q) == self.n:
                        poses[name] = [float(v) for v in q]
            self._poses = poses
        return self._poses

    def names(self):
        return sorted(self._load())

    def get(self, name):
        """Joint angles (degrees) of name, or None."""
        return self._load().get(name)

    def put(self, name, q_deg):
        """Save (or replace) name; StoreError (nothing changed) when the flash refuses,
        ValueError when the table is full."""
        poses = self._load()
        if name not in poses and len(poses) >= MAX_POSES:
            raise ValueError("%d poses already saved (delete one first)" % MAX_POSES)
        new = dict(poses)
        new[name] = [round(v, 4) for v in q_deg]
        store.write_json(self.path, new)
        self._poses = new

    def delete(self, name):
        """Delete name; False when there is none. StoreError when the flash refuses."""
        poses = self._load()
        if name not in poses:
            return False
        new = dict(poses)
        del new[name]
        store.write_json(self.path, new)
        self._poses = new
        return True
