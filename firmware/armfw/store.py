# SPDX-License-Identifier: MIT
"""Small JSON files on the board's flash, written so a power cut keeps the old file.

A write goes to NAME.tmp first, whole (a short write - the flash is full - is
an error and the .tmp is removed, never renamed), then NAME.tmp is renamed
over NAME. littlefs and the Unix port rename over a file atomically; FAT
cannot, so there NAME is removed first, and a power cut between the two
steps leaves a lone NAME.tmp that is complete. Readers (readable) take NAME
when it exists, else a lone NAME.tmp that parses whole; a NAME.tmp beside NAME,
or a lone one that does not parse, is a write cut short: ignored (the old file
stands, or none if there was none). Before a write, a lone whole NAME.tmp is
renamed to NAME first (settle), so the new write never truncates the only copy.
`chosen` says which file each read took. `armctl calibrate` writes
calibration.json the same way (its rename step calls commit()).
"""

import json
import os


class StoreError(Exception):
    """The flash could not be read or written; the old file, if any, is untouched."""


# The file opener, replaced in tests to play a full flash or a power cut.
_open = open


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


# What readable() took for each path asked about: the path, path + ".tmp" (a power cut
# between FAT's remove and rename left it, whole) or None (no file). The board's REPL,
# and any report, can say from it which file the board runs with (the calibration file,
# read at boot before this module is let go: the board's source names it).
chosen = {}


def _whole(path):
    """True when path holds a whole JSON document (a write cut short does not parse)."""
    try:
        with _open(path) as f:
            json.load(f)
        return True
    except (OSError, ValueError):
        return False


def readable(path):
    """The file to read for path: path, or a lone whole path.tmp, or None."""
    found = None
    if _exists(path):
        found = path
    elif _exists(path + ".tmp") and _whole(path + ".tmp"):
        found = path + ".tmp"
    chosen[path] = found
    return found


def settle(path):
    """Rename a lone whole path.tmp to path: the next write's .tmp then never replaces the only copy."""
    tmp = path + ".tmp"
    if not _exists(path) and _exists(tmp) and _whole(tmp):
        os.rename(tmp, path)


def read_json(path, default=None):
    """The JSON content of path (see readable); default when there is none."""
    found = readable(path)
    if found is None:
        return default
    try:
        with _open(found) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise StoreError("%s: cannot read: %s" % (found, e))


def commit(path):
    """Rename path.tmp over path (FAT: remove path first)."""
    tmp = path + ".tmp"
    try:
        os.rename(tmp, path)
    except OSError:
        os.remove(path)
        os.rename(tmp, path)


def write_json(path, data):
    """Write data as JSON to path atomically; StoreError (old file kept) if the flash refuses."""
    text = json.dumps(data)
    tmp = path + ".tmp"
    try:
        settle(path)
    except OSError as e:
        raise StoreError("%s not written: its lone whole .tmp could not be renamed into place: %s" % (path, e))
    try:
        with _open(tmp, "w") as f:
            written = f.write(text)
            if written is not None and written != len(text):
                raise OSError(28, "short write (%d of %d bytes)" % (written, len(text)))
    except OSError as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise StoreError("%s not written (flash full?): %s" % (path, e))
    try:
        commit(path)
    except OSError as e:
        raise StoreError("%s not renamed into place: %s" % (path, e))
