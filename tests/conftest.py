# SPDX-License-Identifier: MIT
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


def solver_only(board_name):
    """The arm of boards/<board_name> with its keep-out zones off: the solver's geometry alone
    (zones have their own tests, tests/test_zones.py)."""
    from armfw import board
    arm = board.load(str(BOARDS / board_name)).solver
    arm.zones = None
    return arm


_SUMMARY = []


@pytest.fixture(scope="session")
def report():
    """report(line): a line for the end-of-run summary (figures a reader of CI should see)."""
    return _SUMMARY.append


def pytest_terminal_summary(terminalreporter):
    if _SUMMARY:
        terminalreporter.section("figures")
        for line in _SUMMARY:
            terminalreporter.write_line(line)
