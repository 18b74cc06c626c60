# SPDX-License-Identifier: MIT
"""The simulated board: the unmodified firmware on the real MicroPython Unix port.

A folder plays the board's flash: the firmware (main.py, armfw/) and the
board file (as board.json) are copied into it, like `armctl deploy` does, and
the interpreter runs main.py from it with the simulated servo driver
(armfw.simservo), which appends every pulse to a log beside the flash
(armctl.sim_flash). armctl.sim_tty holds the terminal and process plumbing
under the pseudo-terminal, armctl.sim_camera the physical arm behind it.

Two ways to talk to it:

- pipes (pty=False): request(line) -> list of reply lines; write(bytes) and
  readline() for anything else; the interpreter ends when its input closes.
- a pseudo-terminal (pty=True): `port` is a device path that pyserial,
  mpremote and every host tool open exactly like a board's USB port. Ctrl-C
  drops main.py into the REPL (raw REPL too); when the interpreter exits on a
  soft reset (Ctrl-D) it is started again with the same flash, like a board's
  soft reboot: after a soft reset from the raw REPL the board stays in the raw
  REPL (main.py does not run, as on a real board), otherwise main.py runs. A
  Ctrl-C reaches the interpreter only where it can take it (Simulator._interrupt):
  one sent while it boots lands once main.py serves.

    with Simulator("boards/sim_arm5.json", pty=True) as sim:
        print(sim.port)             # /dev/pts/7
        ...
        sim.pulses()                # [(t_ms, channel, us), ...]
"""


import fcntl
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

from armctl import FIRMWARE_DIR, sim_boot, upy
from armctl.sim_camera import Camera
from armctl.sim_flash import install, parse_pulses, pulse_log
from armctl.sim_tty import SETTLE_S, cooked, one_enter, queued, raw_no_echo, safe_to_interrupt, stopped

LOCK_SUFFIX = ".lock"
# machine.reset() ends the interpreter with this code: a hard reset, main.py runs next.
HARD_RESET_EXIT = 99
RAW_REPL_BANNER = b"raw REPL; CTRL-B to exit\r\n"
FRIENDLY_PROMPT = b">>> "
SOFT_REBOOT = b"soft reboot\r\n"
CTRL_A = b"\x01"
CTRL_C = 3
# After a Ctrl-C reaches the interpreter, the REPL that takes over flushes the
# terminal's pending input when it switches to raw mode; a board's USB buffer
# does not. Hold the host's next bytes until the prompt shows (or this long).
HOLD_AFTER_INTERRUPT_S = 0.5
# A Ctrl-C waits for the interpreter to stand where it can take it (see _interrupt);
# one that computes without waiting for this long gets it anyway (a boot that slow
# would not).
INSIST_AFTER_S = 5.0
FINAL_WORDS = (b"ok", b"error")
# Output kept for a host that reads the pty slowly (or not at all), bytes.
BACKLOG_MAX = 1 << 20


class SimulatorError(RuntimeError):
    """The simulator could not start or stopped answering."""


class Simulator:
    """The firmware under the MicroPython Unix port, with its own flash folder.

    board: board file to install (None: flash_dir must already hold one).
    flash_dir: folder kept as the flash (default: a temporary one, removed on
    close). pty: serve a pseudo-terminal (`port`; `link` also symlinks it).
    realtime: really wait between motion steps (default: virtual time).
    """

    def __init__(self, board=None, pty=False, flash_dir=None, link=None, realtime=False,
                 calibration=None, firmware_dir=FIRMWARE_DIR, reset_calibration=False, truth=None):
        self._tmp = None
        if flash_dir is None:
            self._tmp = tempfile.mkdtemp(prefix="armsim-")
            flash_dir = Path(self._tmp) / "flash"
        self.flash_dir = Path(flash_dir).resolve()
        if board is not None:
            install(self.flash_dir, board, calibration, firmware_dir, reset_calibration)
        elif not (self.flash_dir / "main.py").exists():
            raise SimulatorError("%s holds no firmware (main.py): give a board file to install" % self.flash_dir)
        # The physical arm, hidden from the firmware: see Camera.
        self.camera = Camera(self.flash_dir / "board.json", truth) if truth is not None else None
        self.pulse_log = pulse_log(self.flash_dir)
        self.pty = pty
        self.link = link
        self.realtime = realtime
        self.port = None
        self.boots = 0
        self._proc = None
        self._pending = b""
        self._backlog = b""
        self._stop = threading.Event()
        self._thread = None
        self._sim_master = self._sim_slave = None
        self._host_master = self._host_slave = None
        self._lock_fd = None
        self._proc_exit = None
        self._ready_fd = None
        self.relay_error = None     # what stopped the relay thread, if anything did

    # -- lifetime -------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def env(self):
        """The environment the firmware runs in: its flash directory on the path, the pulse log."""
        e = upy.env(self.flash_dir)
        e["MICROPYPATH"] = "%s:%s/lib:.frozen" % (self.flash_dir, self.flash_dir)
        e["ARMFW_PULSE_LOG"] = str(self.pulse_log)
        e["ARMFW_SIM_REALTIME"] = "1" if self.realtime else "0"
        for key in ("ARMFW_BOARD", "ARMFW_CALIBRATION"):
            e.pop(key, None)
        return e

    def argv(self, main=True, interactive=True, ready_fd=-1):
        """The command line: the boot (flash as root), then main.py when main; then the REPL, when interactive.

        ready_fd: a pipe the boot writes one byte to once the interpreter takes Ctrl-C.
        """
        boot = "FLASH = %r\nPULSE_LOG = %r\nRUN_MAIN = %r\nHARD_RESET_EXIT = %d\nREADY_FD = %d\nSIM_BUS = %r\n%s" % (
            str(self.flash_dir), str(self.pulse_log), main, HARD_RESET_EXIT, ready_fd,
            str(Path(__file__).parent), sim_boot.SOURCE)
        return [upy.command(), "-i", "-c", boot] if interactive or not main else [upy.command(), "-c", boot]

    def start(self):
        self.pulse_log.write_text("")
        if self.pty:
            self._start_pty()
        else:
            self._proc = subprocess.Popen(self.argv(interactive=False), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, cwd=self.flash_dir, env=self.env())
            self.boots = 1
        return self

    def close(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        self._end_process()
        for fd in (self._sim_master, self._sim_slave, self._host_master, self._host_slave, self._ready_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._sim_master = self._sim_slave = self._host_master = self._host_slave = self._ready_fd = None
        if self._lock_fd is not None:
            # Only the simulator that holds the lock owns the link path.
            if os.path.islink(self.link):
                os.unlink(self.link)
            try:
                os.unlink(self.link + LOCK_SUFFIX)
            except OSError:
                pass
            os.close(self._lock_fd)
            self._lock_fd = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _end_process(self):
        p = self._proc
        if p is None:
            return
        if p.stdin is not None:
            try:
                p.stdin.close()
            except OSError:
                pass
        else:
            p.terminate()     # on a terminal the firmware never sees an end of input
        try:
            p.wait(2)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if p.stdout is not None:
            p.stdout.close()
        self._proc = None

    # -- records --------------------------------------------------------

    @property
    def pid(self):
        """The interpreter's process id (None when it is not running)."""
        return self._proc.pid if self._proc is not None else None

    def pulses(self):
        """Every pulse the simulated driver sent since start: [(t_ms, channel, us)].

        t_ms is the driver's clock, which starts at 0 on every boot.
        """
        return parse_pulses(self.pulse_log.read_text())

    # -- pipes ----------------------------------------------------------

    def write(self, data):
        """Send bytes to the firmware's input (pipes)."""
        self._proc.stdin.write(data)
        self._proc.stdin.flush()

    def readline(self, timeout=10.0):
        """The next output line without its line end (pipes); SimulatorError on timeout or exit."""
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SimulatorError("no answer within %.1f s" % timeout)
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise SimulatorError("the firmware ended; its last output: %r" % self._pending[-500:])
                self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.rstrip(b"\r").decode("utf-8", "replace")

    def request(self, line, timeout=10.0):
        """Send one request line; returns its reply lines, the final ok/error line last."""
        self.write(line.encode() + b"\n" if isinstance(line, str) else line + b"\n")
        lines = []
        while True:
            text = self.readline(timeout)
            lines.append(text)
            if text.split(" ", 1)[0].encode() in FINAL_WORDS:
                return lines

    # -- pseudo-terminal --------------------------------------------------

    def _lock_link(self):
        """Own the --link path (flock on LINK.lock holding our pid); SimulatorError names the owner."""
        fd = os.open(self.link + LOCK_SUFFIX, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            owner = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise SimulatorError("%s is served by another simulator (pid %s): stop it, or give another --link"
                                 % (self.link, owner))
        os.ftruncate(fd, 0)
        os.write(fd, b"%d\n" % os.getpid())
        self._lock_fd = fd

    def _start_pty(self):
        if self.link is not None:
            self._lock_link()
        self._host_master, self._host_slave = os.openpty()
        self._sim_master, self._sim_slave = os.openpty()
        raw_no_echo(self._host_slave, signals=False)
        os.set_blocking(self._host_master, False)
        self.port = os.ttyname(self._host_slave)
        if self.link is not None:
            if os.path.islink(self.link):
                os.unlink(self.link)
            os.symlink(self.port, self.link)
        self._spawn(main=True)
        self._thread = threading.Thread(target=self._relay, name="armsim-relay", daemon=True)
        self._thread.start()

    def _spawn(self, main):
        slave = self._sim_slave
        raw_no_echo(slave, signals=True)
        termios.tcflush(slave, termios.TCIFLUSH)

        def controlling_terminal():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        # Until the interpreter handles Ctrl-C itself, a SIGINT would just end it: the relay
        # holds the host's bytes until the boot says it is ready.
        if self._ready_fd is not None:
            os.close(self._ready_fd)
        ready, ready_w = os.pipe()
        self._proc = subprocess.Popen(self.argv(main, ready_fd=ready_w), stdin=slave, stdout=slave, stderr=slave,
                                      cwd=self.flash_dir, env=self.env(),
                                      preexec_fn=controlling_terminal, close_fds=True, pass_fds=(ready_w,))
        os.close(ready_w)
        self._ready_fd = ready
        self.boots += 1

    def _to_host(self, data):
        """Queue output for the host's port; written as fast as the port takes it."""
        self._backlog += data
        if len(self._backlog) > BACKLOG_MAX:
            # Nobody has read the port for a long time: a board's USB output is dropped too.
            self._backlog = self._backlog[-BACKLOG_MAX:]
        self._flush_host()

    def _flush_host(self):
        while self._backlog:
            try:
                n = os.write(self._host_master, self._backlog)
            except BlockingIOError:
                return
            self._backlog = self._backlog[n:]

    def _to_sim(self, data):
        """Write all of data to the interpreter's terminal."""
        while data:
            data = data[os.write(self._sim_master, data):]

    def _interrupt(self, insist):
        """Deliver one Ctrl-C where the interpreter can take it; True once delivered.

        The Unix port raises KeyboardInterrupt straight from its SIGINT handler,
        wherever the interpreter is: inside the parser or the allocator that leaves
        their lock held, and the interpreter hangs at its next use of it (a REPL
        line, a soft reset; a client waiting on it, mpremote say, waits forever). A
        board only takes Ctrl-C between two bytecodes. So the interpreter is stopped,
        looked at, and given the Ctrl-C only where it is safe: as a key when its REPL
        reads the terminal raw, as SIGINT when it waits for input or time (main.py
        serving, a sleep); else it runs on and the Ctrl-C waits: one sent while it
        boots lands once main.py serves (insist: SIGINT anyway, a loop that never waits).
        """
        pid = self._proc.pid
        try:
            os.kill(pid, signal.SIGSTOP)
            try:
                if not stopped(pid):
                    return False
                if not termios.tcgetattr(self._sim_slave)[3] & termios.ISIG:
                    # Its REPL reads the terminal raw: Ctrl-C is a key there. Queued
                    # before it runs on, so it cannot turn signals back on first.
                    before = queued(self._sim_slave)
                    self._to_sim(bytes([CTRL_C]))
                    deadline = time.monotonic() + SETTLE_S
                    while queued(self._sim_slave) <= before and time.monotonic() < deadline:
                        time.sleep(0.0002)
                    return True
                if safe_to_interrupt(pid, insist):
                    os.kill(pid, signal.SIGINT)
                    return True
                return False
            finally:
                os.kill(pid, signal.SIGCONT)
        except (ProcessLookupError, FileNotFoundError):
            return True     # it ended meanwhile: the one started next never saw this Ctrl-C

    def _relay(self):
        """Run the relay; if it fails, close the host's port rather than leave it silent.

        A client reading a silent port may wait forever (mpremote reads a pty with no
        timeout); a closed one fails at once, as a board unplugged does.
        """
        try:
            self._relay_loop()
        except Exception as e:
            self.relay_error = e
            sys.stderr.write("armctl sim: the relay between the port and the interpreter failed: %r\n" % e)
            os.close(self._host_master)
            self._host_master = None
            self._end_process()

    def _relay_loop(self):
        """Copy bytes between the host's port and the interpreter; restart it when it exits."""
        hold_until = 0.0
        held = b""
        interrupt_since = None  # when a Ctrl-C began to wait for a safe moment
        recent = b""            # the interpreter's latest output, to know its state
        raw_repl = False
        inject_raw = False
        after_cr = False
        host_after_cr = False
        while not self._stop.is_set():
            writing = [self._host_master] if self._backlog else []
            waiting = [self._host_master, self._sim_master] + ([self._ready_fd] if self._ready_fd is not None else [])
            ready, writable, _ = select.select(waiting, writing, [], 0.05 if interrupt_since is None else 0.002)
            if writable:
                self._flush_host()
            if self._sim_master in ready:
                try:
                    data = os.read(self._sim_master, 65536)
                except OSError:
                    data = b""
                if data:
                    data, after_cr = cooked(data, after_cr)
                    self._to_host(data)
                    recent = (recent + data)[-200:]
                    if RAW_REPL_BANNER in recent:
                        raw_repl = True
                    if recent.endswith(FRIENDLY_PROMPT):
                        raw_repl = False
                        if inject_raw:
                            inject_raw = False
                            self._to_sim(b"\r" + CTRL_A)
                        hold_until = 0.0
                    if RAW_REPL_BANNER in recent or recent.endswith(FRIENDLY_PROMPT):
                        recent = b""
                        hold_until = 0.0
            if self._host_master in ready:
                try:
                    data = os.read(self._host_master, 65536)
                except OSError:
                    data = b""
                if not raw_repl:
                    # A terminal's Enter as CR LF is one line end; the Unix port's REPL
                    # (unlike a board's) takes the LF as a second Enter.
                    data, host_after_cr = one_enter(data, host_after_cr)
                held += data
            if self._ready_fd is not None and self._ready_fd in ready:
                os.read(self._ready_fd, 16)         # the boot's byte (or its end, if it died)
                os.close(self._ready_fd)
                self._ready_fd = None
            if held and time.monotonic() >= hold_until and self._proc is not None and not inject_raw \
                    and self._ready_fd is None:
                cut = held.find(bytes([CTRL_C]))
                if cut >= 0:
                    # Never as a byte with signals on: the kernel would signal at once.
                    self._to_sim(held[:cut])
                    held = held[cut:]
                    now = time.monotonic()
                    if interrupt_since is None:
                        interrupt_since = now
                    if self._interrupt(insist=now - interrupt_since >= INSIST_AFTER_S):
                        interrupt_since = None
                        held = held[1:]
                        hold_until = time.monotonic() + HOLD_AFTER_INTERRUPT_S
                else:
                    self._to_sim(held)
                    held = b""
            if self._proc is not None and self._proc.poll() is not None:
                self._proc_exit = self._proc.returncode
                # Soft reset: the Unix port exits where a board reboots.
                while True:
                    r, _, _ = select.select([self._sim_master], [], [], 0)
                    if not r:
                        break
                    try:
                        rest = os.read(self._sim_master, 65536)
                    except OSError:
                        break
                    if not rest:
                        break
                    self._to_host(rest)
                self._proc = None
                interrupt_since = None
                if self._stop.is_set():
                    break
                hard = self._proc_exit == HARD_RESET_EXIT
                if self._proc_exit == -signal.SIGINT:
                    # A Ctrl-C came while the Unix port gives SIGINT its default action
                    # (between two REPL lines, or two REPL modes): a board stays at its
                    # REPL, so the interpreter comes back at its REPL, not to main.py (a
                    # client waiting for the REPL, mpremote say, would wait forever).
                    main = False
                else:
                    if not hard:
                        self._to_host(SOFT_REBOOT)
                    main = hard or not raw_repl
                inject_raw = raw_repl and not hard
                raw_repl = False
                recent = b""
                self._spawn(main)
        self._end_process()
