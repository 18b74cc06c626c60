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
