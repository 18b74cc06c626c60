# SPDX-License-Identifier: MIT
"""Feetech SCS/STS serial bus servos (STS3215 and kin: the SO-101's, LeRobot's default).

The protocol (Feetech's memory table and communication manual, and their
SDK, ftservo-python-sdk, which tests/test_sts.py checks the bytes against):

    instruction  FF FF ID LEN INSTR PARAM... CHECKSUM      LEN = params + 2
    status       FF FF ID LEN ERROR DATA...  CHECKSUM      LEN = data + 2
    CHECKSUM = ~(ID + LEN + INSTR/ERROR + every PARAM/DATA byte) & FF

Multi-byte registers are little-endian; a negative position, speed or load
is sign and magnitude (bit 15 for position and speed, bit 10 for load). ID FE
is the broadcast: no servo answers it. SYNC WRITE (83) sends one register
block to many servos in one broadcast packet; SYNC READ (82) asks many, and
each answers with a status packet, in the order asked.

Registers used: 40 torque enable, 42 goal position, 56 present position,
58 present speed, 60 present load (per mille of the maximum torque), 62
present voltage (0.1 V), 63 present temperature (degrees C). The status
packet's ERROR byte: 1 voltage, 2 angle sensor, 4 overheat, 8 over current,
32 overload.

The driver (the interface of armfw.drivers, plus feedback for armfw.feedback):

    set_us(id, ticks)           one goal (the servo map's pulse unit is ticks:
                                armfw.servobus); torque goes on if it was off
    set_many(ids, ticks)        every goal in one SYNC WRITE
    off(id=None)                torque off (the servo goes limp): relax
    positions(out)              SYNC READ of every servo: out[i] = the position
                                of ids[i]; load, volts10, temp_c, errors keep
                                the rest of what each answered
    status(i)                   (load, volts10, temp_c, errors) of ids[i] as last read

Writes are broadcasts (no answer to wait for); only ping and SYNC READ
listen. Buffers are made once: set_us, set_many, off and positions allocate
nothing. A missing answer or a bad checksum raises servobus.BusError naming
the servo's ID.
"""

from array import array

from armfw.compat import const
from armfw.servobus import FIELDS, LIMIT, BusError      # noqa: F401 (FIELDS, LIMIT: armfw.drivers)

_BROADCAST = const(0xFE)
_PING = const(0x01)
_SYNC_READ = const(0x82)
_SYNC_WRITE = const(0x83)
_TORQUE_ENABLE = const(40)
_GOAL_POSITION = const(42)
_PRESENT_POSITION = const(56)
_FEEDBACK_BYTES = const(8)      # 56..63: position, speed, load, voltage, temperature
_STATUS_OVERHEAD = const(6)     # FF FF ID LEN ERROR .. CHECKSUM
MAX_ID = const(253)
TICKS_PER_REV = const(4096)     # STS3215 (and STS3032, STS3250): 12-bit magnetic encoder

# _answer's results
_GOOD = const(0)
_SILENT = const(1)
_GARBLED = const(2)


class STSServos:
    """Feetech STS servos on one bus: bus (armfw.servobus.Bus), ids (the board's
    joints in order, then its gripper), ticks_per_rev (the goal must stay below it).

    Pings every ID first and raises BusError naming those that do not answer
    (place: the bus's name in that message); then turns every torque off, so
    no servo holds a pose until the motion code sends one.
    """

    def __init__(self, bus, ids, ticks_per_rev=TICKS_PER_REV, place="the bus"):
        n = len(ids)
        self.bus = bus
        self.ids = list(ids)
        self.n = n
        self.period_us = ticks_per_rev          # the drivers' bound on a pulse, here in ticks
        self._slot = {}
        for i, servo in enumerate(self.ids):
            if type(servo) is not int or servo < 0 or servo > MAX_ID or servo in self._slot:
                raise ValueError("servo ID %r is not 0..%d or is listed twice" % (servo, MAX_ID))
            self._slot[servo] = i
        self._tx = bytearray(8 + 3 * n)         # the longest packet: a goal for every servo
        self._views = {}                         # packet length -> memoryview, made on first use
        self._rx = bytearray(n * (_STATUS_OVERHEAD + _FEEDBACK_BYTES))
        self._torque = bytearray(n)
        self.position = array("i", bytes(4 * n))
        self.load = array("h", bytes(2 * n))
        self.volts10 = bytearray(n)
        self.temp_c = bytearray(n)
        self.errors = bytearray(n)
        missing = [servo for servo in self.ids if not self.ping(servo)]
        if missing:
            raise BusError("no STS servo answers at ID %s on %s: check the servo power, the wiring "
                           "and each servo's ID" % (", ".join(str(m) for m in missing), place))
        self.off()

    # -- packets ----------------------------------------------------------

    def _send(self, end):
        """Checksum tx[2:end] into tx[end] and send the packet tx[:end + 1]."""
        tx = self._tx
        total = 0
        for i in range(2, end):
            total += tx[i]
        tx[end] = ~total & 0xFF
        size = end + 1
        view = self._views.get(size)
        if view is None:
            view = self._views[size] = memoryview(tx)[:size]
        self.bus.send(view)

    def _header(self, servo, length, instruction):
        tx = self._tx
        tx[0] = 0xFF
        tx[1] = 0xFF
        tx[2] = servo
        tx[3] = length
        tx[4] = instruction

    def _sync_write(self, address, width, count):
        """Start a SYNC WRITE of width bytes at address to count servos; returns where entries go."""
        self._header(_BROADCAST, (width + 1) * count + 4, _SYNC_WRITE)
        self._tx[5] = address
        self._tx[6] = width
        return 7

    def _answer(self, at, servo, size):
        """Check the status packet of servo at rx[at:at + size] (size: data + 6)."""
        rx = self._rx
        if rx[at] != 0xFF or rx[at + 1] != 0xFF or rx[at + 2] != servo or rx[at + 3] != size - 4:
            return _GARBLED
        total = 0
        for i in range(at + 2, at + size - 1):
            total += rx[i]
        if rx[at + size - 1] != ~total & 0xFF:
            return _GARBLED
        return _GOOD

    def _fail(self, result, servo, what):
        if result == _SILENT:
            raise BusError("servo bus: no answer from ID %d to %s (read timeout)" % (servo, what))
        raise BusError("servo bus: bad packet from ID %d to %s (checksum or framing)" % (servo, what))

    def ping(self, servo):
        """True if servo answers a PING; BusError if it answers with a bad packet."""
        self._header(servo, 2, _PING)
        self._send(5)
        got = self.bus.receive(self._rx, _STATUS_OVERHEAD)
        if got == 0:
            return False
        result = self._answer(0, servo, _STATUS_OVERHEAD) if got == _STATUS_OVERHEAD else _GARBLED
        if result != _GOOD:
            self._fail(result, servo, "a ping")
        return True

    # -- the driver interface --------------------------------------------

    def _check(self, servo, ticks):
        slot = self._slot.get(servo)
        if slot is None:
            raise ValueError("no servo with ID %r on this bus" % (servo,))
        if type(ticks) is not int or ticks < 0 or ticks >= self.period_us:
            raise ValueError("goal must be an int 0..%d ticks, got %r" % (self.period_us - 1, ticks))
        return slot

    def set_us(self, servo, ticks):
        """Goal position ticks (int, 0..ticks_per_rev - 1) for servo; torque on if it was off."""
        slot = self._check(servo, ticks)
        at = self._sync_write(_GOAL_POSITION, 2, 1)
        tx = self._tx
        tx[at] = servo
        tx[at + 1] = ticks & 0xFF
        tx[at + 2] = ticks >> 8
        self._send(at + 3)
        if not self._torque[slot]:
            self._torque_on(servo)

    def set_many(self, servos, ticks):
        """ticks[i] to servos[i] for every i, in one SYNC WRITE (all checked before any is sent)."""
        count = len(servos)
        if count == 0:
            return
        if count > self.n or len(ticks) != count:
            raise ValueError("one goal per servo of this bus")
        for i in range(count):
            self._check(servos[i], ticks[i])
        at = self._sync_write(_GOAL_POSITION, 2, count)
        tx = self._tx
        for i in range(count):
            t = ticks[i]
            tx[at] = servos[i]
            tx[at + 1] = t & 0xFF
            tx[at + 2] = t >> 8
            at += 3
        self._send(at)
        # The goal goes first: a servo whose torque came on before it would
        # drive to whatever goal it last held.
        torque = self._torque
        slots = self._slot
        off = 0
        for i in range(count):
            if not torque[slots[servos[i]]]:
                off += 1
        if off:
            at = self._sync_write(_TORQUE_ENABLE, 1, off)
            for i in range(count):
                slot = slots[servos[i]]
                if not torque[slot]:
                    tx[at] = servos[i]
                    tx[at + 1] = 1
                    torque[slot] = 1
                    at += 2
            self._send(at)

    def _torque_on(self, servo):
        at = self._sync_write(_TORQUE_ENABLE, 1, 1)
        self._tx[at] = servo
        self._tx[at + 1] = 1
        self._send(at + 2)
        self._torque[self._slot[servo]] = 1

    def off(self, servo=None):
        """Torque off for servo (None: every servo of the board), in one SYNC WRITE."""
        tx = self._tx
        if servo is None:
            at = self._sync_write(_TORQUE_ENABLE, 1, self.n)
            for i in range(self.n):
                tx[at] = self.ids[i]
                tx[at + 1] = 0
                self._torque[i] = 0
                at += 2
            self._send(at)
            return
        slot = self._slot.get(servo)
        if slot is None:
            raise ValueError("no servo with ID %r on this bus" % (servo,))
        at = self._sync_write(_TORQUE_ENABLE, 1, 1)
        tx[at] = servo
        tx[at + 1] = 0
        self._send(at + 2)
        self._torque[slot] = 0

    def deinit(self):
        """Every torque off: the servos go limp."""
        self.off()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.deinit()

    # -- feedback ----------------------------------------------------------

    def positions(self, out):
        """SYNC READ every servo: out[i] = the present position (ticks) of ids[i].

        Also keeps each servo's load (per mille, signed), volts10 (0.1 V),
        temp_c and errors (its status ERROR bits). Raises BusError naming the
        first servo that did not answer, or answered with a bad packet.
        """
        n = self.n
        self._header(_BROADCAST, n + 4, _SYNC_READ)
        tx = self._tx
        tx[5] = _PRESENT_POSITION
        tx[6] = _FEEDBACK_BYTES
        for i in range(n):
            tx[7 + i] = self.ids[i]
        self._send(7 + n)
        size = _STATUS_OVERHEAD + _FEEDBACK_BYTES
        got = self.bus.receive(self._rx, n * size)
        rx = self._rx
        at = 0
        for i in range(n):
            servo = self.ids[i]
            if got < at + size:
                self._fail(_SILENT if got <= at else _GARBLED, servo, "a position read")
            result = self._answer(at, servo, size)
            if result != _GOOD:
                # The next servo's answer where this one's belongs: this one was silent.
                if rx[at] == 0xFF and rx[at + 1] == 0xFF and rx[at + 2] in self.ids[i + 1:]:
                    result = _SILENT
                self._fail(result, servo, "a position read")
            self.errors[i] = rx[at + 4]
            d = at + 5
            out[i] = _signed(rx[d] | rx[d + 1] << 8, 15)
            self.position[i] = out[i]
            self.load[i] = _signed(rx[d + 4] | rx[d + 5] << 8, 10)
            self.volts10[i] = rx[d + 6]
            self.temp_c[i] = rx[d + 7]
            at += size
        return out

    def status(self, i):
        """(load per mille, volts10, temp_c, errors) of ids[i], as the last positions() read them."""
        return self.load[i], self.volts10[i], self.temp_c[i], self.errors[i]


def _signed(raw, bit):
    """A sign-and-magnitude register value (sign in bit) as an int."""
    sign = 1 << bit
    return -(raw & (sign - 1)) if raw & sign else raw


# -- the board file's driver section (armfw.drivers) -----------------------

def check(settings, mcu, where, outputs):
    """UART, IDs (the joints' and gripper's channels) and limits; returns ticks_per_rev."""
    from armfw import servobus
    return servobus.check(settings, mcu, where, outputs, MAX_ID, TICKS_PER_REV)


def make(board):
    from armfw import servobus
    from armfw.drivers import channels
    d = board.driver
    return STSServos(servobus.open_bus(d), channels(board), d.get("ticks_per_rev", TICKS_PER_REV),
                     servobus.where(d))
