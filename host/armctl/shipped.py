"""Where the files armctl ships are: board descriptions, the firmware, the board-side bench script.

In a checkout they are the repository's own folders (boards/, firmware/,
tests/mp/). A wheel (pip install ., pipx) carries the same files inside the
armctl package in the same layout (pyproject.toml maps the folders there), so
the repository keeps one copy of each and one relative layout serves both.
"""

import os
from pathlib import Path

from armfw.board import BoardError

_PACKAGE = Path(__file__).resolve().parent


def _root():
    if (_PACKAGE / "firmware" / "main.py").is_file():
        return _PACKAGE              # installed: armctl/boards, armctl/firmware, ...
    return _PACKAGE.parents[1]       # checkout: host/armctl -> the repository


ROOT = _root()
BOARDS_DIR = ROOT / "boards"

# The board the commands use when none is named: the simulated 5-joint arm.
DEFAULT_BOARD = "sim_arm5"
FIRMWARE_DIR = ROOT / "firmware"


def board_names():
    """Names of the shipped boards (file names without .json), sorted."""
    return sorted(p.stem for p in BOARDS_DIR.glob("*.json"))


def board_path(name_or_path):
    """The board file a --board argument means: an existing path, else a shipped board's name.

    A path that does not exist is returned as given, so loading it names the
    missing file; a bare name that no shipped board has raises BoardError
    listing the names there are.
    """
    text = str(name_or_path)
    if os.path.exists(text) or os.sep in text or text.endswith(".json"):
        return name_or_path
    shipped = BOARDS_DIR / (text + ".json")
    if shipped.is_file():
        return shipped if isinstance(name_or_path, Path) else str(shipped)   # as the option parsed it
    raise BoardError("no board file %r and no shipped board of that name (shipped: %s)"
                     % (text, ", ".join(board_names())))
