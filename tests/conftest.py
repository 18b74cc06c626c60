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


def board_without_zones(board_name):
    """boards/<board_name> with its solver's keep-out zones off: the solver's geometry alone
    (zones have their own tests, tests/test_zones.py)."""
    from armfw import board
    b = board.load(str(BOARDS / board_name))
    b.solver.zones = None
    return b


def solver_only(board_name):
    """The solver of board_without_zones(board_name)."""
    return board_without_zones(board_name).solver


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
