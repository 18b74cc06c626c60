# SPDX-License-Identifier: MIT
import os
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "tests" / "vectors"
BOARDS = ROOT / "boards"
MP_SCRIPTS = ROOT / "tests" / "mp"

# A deadline for a process to end, not how long it takes: only a hung one waits it out.
EXIT_S = 60.0

# A terminal gives the command it runs Ctrl-C's default action. A script's background
# job (`pytest &`), a CI step or a service may start the suite with SIGINT ignored, and
# an ignored signal stays ignored through fork and exec: every armctl these tests start
# would shrug off the Ctrl-C they send it, and wait out their deadline. The suite takes
# the default back; its children start with it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def stop(proc, timeout=EXIT_S):
    """End proc if it still runs and wait for it: SIGTERM first (`armctl sim` closes its
    simulator on it, leaving no interpreter behind), SIGKILL if it outlives timeout."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def micropython():
    """The real MicroPython Unix port; its absence is a failure, never a skip."""
    from armctl import upy
    return upy.command()


def _boardlike(frozen):
    """The board-like interpreter (armctl.memory.boardlike); skipped when it cannot be had,
    except in CI (CI=true), where its absence is a failure."""
    from armctl import memory
    try:
        return memory.boardlike(frozen)
    except memory.BoardLikeMissing as e:
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs the board-like MicroPython: %s" % e)
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def boardlike_upy():
    """A MicroPython Unix port with a board's numbers: 32-bit objects, single-precision floats
    (../shared/micropython/build-board-like.sh)."""
    return _boardlike(frozen=False)


@pytest.fixture(scope="session")
def boardlike_frozen():
    """The same interpreter with firmware/manifest.py (armfw) frozen in, as a board image."""
    return _boardlike(frozen=True)


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


def bus_board(kind, **driver):
    """pico_pca9685's arm on bus servos of kind (sts, dynamixel): IDs 1..5, the gripper 6,
    windows in ticks; driver: settings to add or change."""
    import json
    d = json.loads((BOARDS / "pico_pca9685.json").read_text())
    d["name"] = "pico_" + kind
    d["driver"] = dict({"kind": kind, "uart_id": 1, "tx": 4, "rx": 5, "baud": 1000000,
                        "ticks_per_rev": 4096}, **driver)
    for i, j in enumerate(d["joints"]):
        j.update(channel=i + 1, center_us=2048, us_per_rad=4096 / (2 * 3.141592653589793),
                 min_us=600, max_us=3500)
    d["gripper"] = {"channel": 6, "open_us": 1500, "close_us": 2500, "min_us": 1000, "max_us": 3000}
    return d


def makers_sdk(module, package):
    """The servo maker's SDK (module, from PyPI package): a test module without it skips,
    naming the package, except in CI (CI=true), where its absence is a failure."""
    if os.environ.get("CI") == "true":
        import importlib
        return importlib.import_module(module)
    return pytest.importorskip(module, reason="%s (the test extra) is not installed" % package)


class NoConsole:
    """A console with nothing typed: what a Session serves when a test drives it by hand."""
    closed = False
    refused = 0

    def wait(self, *args):
        pass

    def next_line(self):
        return None


class ProtocolLink:
    """armctl.link.Link's request(), answered by the firmware's Protocol on CPython (out: the
    list its replies go to); session: the armfw.session.Session that steps a motion to its end."""

    def __init__(self, p, out, session=None):
        self.p = p
        self.out = out
        self.session = session

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def request(self, line, timeout=None, on_line=None, motion_s=0.0):
        from armctl.link import Reply
        start = len(self.out)
        self.p.handle(line.encode())
        while self.session is not None and self.p.machine.moving:
            self.session.tick()
        lines = self.out[start:]
        return Reply(lines[-1], lines[:-1], "\n".join(lines))


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


class OnATerminal:
    """A command run on a pseudo-terminal, as a person runs it: type keys, read the screen."""

    def __init__(self, argv, env=None):
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env)
        os.close(slave)
        self.screen = b""       # everything shown so far
        self._unread = b""

    def _read(self, wait):
        """What the screen shows within wait seconds (b"" if nothing; None once it is closed)."""
        import select
        if not select.select([self.master], [], [], wait)[0]:
            return b""
        try:
            chunk = os.read(self.master, 4096)
        except OSError:         # EIO: every holder of the terminal has closed it
            return None
        self.screen += chunk
        self._unread += chunk
        return chunk or None

    def until(self, marker, timeout=60):
        """The screen from where the last call stopped up to marker (AssertionError on timeout)."""
        import time
        deadline = time.monotonic() + timeout
        while marker not in self._unread:
            assert time.monotonic() < deadline, "no %r in %r" % (marker, self._unread[-500:])
            self._read(0.1)
        got, _, self._unread = self._unread.partition(marker)
        return got + marker

    def type(self, keys):
        os.write(self.master, keys)

    def _where_stuck(self):
        """What the kernel says the command waits in, and the screen's end: a command that
        does not end is failed with them, so that its failure says where it waits."""
        lines = []
        for name in ("wchan", "stack"):
            try:
                with open("/proc/%d/%s" % (self.proc.pid, name)) as f:
                    lines.append("%s: %s" % (name, f.read().strip()))
            except OSError as e:
                lines.append("%s: %s" % (name, e))
        lines.append("screen: %r" % self.screen[-800:])
        return "\n".join(lines)

    def finish(self, timeout=EXIT_S):
        """The exit code, once everything it printed is on the screen.

        The screen is read while waiting: a terminal nobody reads fills, and stops its writer."""
        import time
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None:
            if time.monotonic() >= deadline:
                raise AssertionError("%r has not ended after %g s\n%s"
                                     % (self.proc.args, timeout, self._where_stuck()))
            if self._read(0.05) is None:
                time.sleep(0.05)
        while self._read(0) not in (b"", None):
            pass
        return self.proc.returncode

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)
