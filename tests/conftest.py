import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "tests" / "vectors"
BOARDS = ROOT / "boards"
MP_SCRIPTS = ROOT / "tests" / "mp"


@pytest.fixture(scope="session")
def micropython():
    """The real MicroPython Unix port; its absence is a failure, never a skip."""
    from armctl import upy
    return upy.command()
