# SPDX-License-Identifier: MIT
"""The live console: request lines answered, motions stepped, the console never blocked.

One loop (serve) owns the time. Idle, it waits on the console for a line and
answers it (armfw.protocol). A motion, once its whole plan has been checked,
runs one step per step period; between steps the loop waits on the console
(armfw.console, select.poll with a timeout), so real-time characters act at
once: `?` writes a status line, `!` decelerates the motion to rest on its
path (armfw.hold), `~` accelerates it back, Ctrl-X aborts it (its final line is an error with the pose
reached; queued lines are dropped, each with an error; motion is then locked
until `unlock` or `home`, as GRBL's alarm). Lines that arrive meanwhile wait
in the console's queue and are answered in order after the motion.

A motion longer than PROGRESS_AFTER_MS writes a `# progress` line (the
status line's fields) at least every _PROGRESS_MS while it runs or holds.

Time: real (time.ticks_ms), or the simulated driver's virtual clock when it
does not wait for real (`armctl sim --fast`): then a step takes no real time
but the console is still read before every step.

Ctrl-C raises KeyboardInterrupt out of serve() into the REPL; serve() again
(armfw.serve()) returns to the protocol with the arm where it stopped.
"""

from armfw import console as con
from armfw.clock import StepClock
from armfw.compat import const, sleep_ms, ticks_ms, ticks_diff
from armfw.executor import MotionStopped
from armfw.machinestate import ALARM_ABORTED, ALARM_NO_MEMORY
from armfw.status import ABORTED, DROPPED, INTERNAL, NO_MEMORY, QUEUE_FULL

_PROGRESS_MS = const(400)
PROGRESS_AFTER_MS = const(1000)

_CTRL_C_HINT = const("# protocol stopped (Ctrl-C): Python REPL, the arm controller is `controller`;"
                     " armfw.serve() returns to the protocol")

# The session serving the console (main.py makes it); armfw.serve() resumes it.
current = None


def _quote(raw):
    """The start of a request line, printable, for an error message."""
    if raw == con.TOO_LONG:
        return "(a line too long)"
    return "".join([chr(c) if 32 <= c < 127 else "?" for c in raw[:24]])


class Session:
    """Serves a Protocol on a Console; driver: the servo driver (its clock, when it keeps one)."""

    def __init__(self, protocol, console, driver=None):
        self.protocol = protocol
        self.console = console
        console.on_realtime = self.realtime
        # The simulated driver's clock stamps its pulse records; --fast does not wait for real.
        self._advance = getattr(driver, "advance_ms", None)
        self._virtual = self._advance is not None and not driver.realtime
        self._clock = StepClock()
        self._progress_at = 0
        self._elapsed = 0
        self._drop_after_reply = False
        if protocol.controller is not None:
            # A long plan's check reads the console as it walks: `?` answers, Ctrl-X stops it.
            protocol.controller.planner.poll = self._poll

    # -- real-time characters ---------------------------------------------

    def realtime(self, c):
        """Act on a real-time byte at once (called by the console as it reads it)."""
        p = self.protocol
        if c == con.STATUS:
            p.write(p.status_line())
        elif c == con.HOLD:
            if p.machine.moving or (p.controller is not None and p.controller.planner.checking):
                p.machine.hold()        # during a check: the motion starts held
                if p.machine.moving:
                    p.controller.executor.hold()
        elif c == con.RESUME:
            if p.machine.resume():
                p.controller.executor.resume()
                self._clock.start()
        elif c == con.ABORT:
            self.console.clear_typing()
            if p.machine.moving:
                self.abort("aborted (Ctrl-X)")
            elif p.controller is not None and p.controller.planner.checking:
                # The plan being checked is refused; its reply comes first, then the drops.
                p.controller.planner.cancel()
                self._drop_after_reply = True
            else:
                self._drop_queued()

    def _poll(self):
        """Act on what the console has received, without waiting (during a plan's check)."""
        self.console.wait(0)
        self._refuse_overflow()

    def abort(self, why, word=ABORTED, alarm_reason=ALARM_ABORTED):
        """Stop the running motion (its final line: error `word` with the pose reached),
        lock motion (alarm_reason says why) and drop queued lines."""
        p = self.protocol
        p.motion_stopped(why, word)
        p.machine.lock(alarm_reason)
        self._drop_queued()

    def stop_out_of_memory(self):
        """A step ran out of heap: the motion stops at the last step sent (every one was
        checked), locked as after an abort, and the console carries on."""
        import gc
        self.protocol.controller.stop()     # the rest of the plan is garbage now
        gc.collect()
        self.abort("out of memory during the move", NO_MEMORY, ALARM_NO_MEMORY)

    def _drop_queued(self):
        p = self.protocol
        if p.gcode is not None and p.gcode.drop_lines():
            p.machine.lock(ALARM_ABORTED)
            p.final(True, DROPPED, "aborted before they ran: the queued G1 lines")
        while True:
            raw = self.console.next_line()
            if raw is None:
                return
            p.write("error %s aborted before it ran: %s" % (DROPPED, _quote(raw)))

    def _refuse_overflow(self):
        c = self.console
        if c.refused:
            self.protocol.write("error %s %d lines already wait for the move; not run: %s"
                                % (QUEUE_FULL, con.QUEUE_LINES, _quote(c.take_refused())))

    # -- the loop ---------------------------------------------------------

    def serve(self):
        """Answer lines and step motions until the input ends."""
        self.console.begin()
        try:
            self._serve()
        finally:
            self.console.end()

    def _serve(self):
        p = self.protocol
        c = self.console
        if p.machine.moving:
            # Back from the REPL after Ctrl-C in the middle of a motion.
            self.abort("interrupted (Ctrl-C)")
        while True:
            if p.machine.moving:
                self.tick()
                continue
            raw = c.next_line()
            if raw is not None:
                p.handle(raw)
                self._answered()
                continue
            if p.gcode is not None and p.gcode.waiting():
                # Queued G1 lines start when no more come (armfw.gcodeblend).
                left = p.gcode.blend.quiet_left()
                if left <= 0 or c.closed:
                    p.gcode.start_lines()
                    self._answered()
                    continue
                c.wait(left, True)
                self._refuse_overflow()
                continue
            if c.closed:
                return
            c.wait(-1, True)
            self._refuse_overflow()

    def _answered(self):
        """After a request's reply (or queued G1 lines started): drops a Ctrl-X during its
        check asked for, and the step clock of a motion it started."""
        if self._drop_after_reply:
            self._drop_after_reply = False
            self._drop_queued()
        if self.protocol.machine.moving:
            self._clock.start()
            self._elapsed = 0
            self._progress_at = 0 if self._virtual else ticks_ms()

    def tick(self):
        """One step of the running motion and the wait after it; a step that fails ends
        the motion with a reply (NO_MEMORY, the servos' word, INTERNAL), never a traceback."""
        try:
            self._tick()
        except MemoryError:
            self.stop_out_of_memory()
        except MotionStopped as e:
            self.abort(e.message, e.word, "%s stopped a move" % e.word)
        except Exception as e:  # a step that fails must end in a reply, not a traceback
            self.abort("%s %s: %s" % (INTERNAL, type(e).__name__, e))

    def _long(self):
        controller = self.protocol.controller
        return self.protocol.progress and controller.executor.total * controller.planner.step_ms > PROGRESS_AFTER_MS

    def _tick(self):
        """One step of the running motion and the wait after it (or a wait while held)."""
        p = self.protocol
        c = self.console
        executor = p.controller.executor
        if p.machine.held:
            executor.hold()             # decelerates to rest, or already does
        if executor.resting():
            c.wait(_PROGRESS_MS)
            self._refuse_overflow()
            if p.machine.held and self._long():
                p.write(p.status_line("progress"))
            if c.closed:
                self.abort("input ended")
            return
        wait_ms = p.controller.step()
        if wait_ms < 0:
            p.motion_done()
            return
        p.controller.refill()       # a long plan's ring, in the step's idle time
        self._pause(wait_ms)
        if p.machine.moving and not p.machine.held and self._long():
            now = self._elapsed if self._virtual else ticks_ms()
            if ticks_diff(now, self._progress_at) >= _PROGRESS_MS:
                self._progress_at = now
                p.write(p.status_line("progress"))

    def _pause(self, ms):
        """Let ms pass before the next step, reading the console all the while."""
        p = self.protocol
        c = self.console
        if self._advance is not None:
            self._advance(ms)
        if self._virtual:
            self._elapsed += ms
            c.wait(0)
            self._refuse_overflow()
            return
        self._clock.due_after(ms)
        while True:
            # More than a step late (a slow step), the clock starts afresh; a
            # poll's wake-up jitter is caught up on.
            left = self._clock.left(ms)
            if c.closed and left > 0:
                c.flush()
                sleep_ms(left)          # no input left to wait on
                left = 0
            if left <= 0:
                c.wait(0)
            else:
                c.wait(left)
            self._refuse_overflow()
            if left <= 0 or not p.machine.moving or p.controller.executor.resting():
                return


def run(session):
    """Serve until the input ends (True), or until Ctrl-C (False, after the REPL hint)."""
    global current
    current = session
    try:
        session.serve()
        return True
    except KeyboardInterrupt:
        session.protocol.write(_CTRL_C_HINT)
        return False
