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

from armfw.compat import const
from armfw.servobus import FIELDS, LIMIT, BusServos, board_functions  # noqa: F401 (FIELDS, LIMIT: armfw.drivers)

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


class STSServos(BusServos):
    """Feetech STS servos on one bus: bus (armfw.servobus.Bus), ids (the board's
    joints in order, then its gripper), ticks_per_rev (the goal must stay below it).

    Pings every ID first and raises BusError naming those that do not answer
    (place: the bus's name in that message); then turns every torque off, so
    no servo holds a pose until the motion code sends one.
    """

    KIND = "STS"
    GOAL = _GOAL_POSITION
    GOAL_WIDTH = 2
    TORQUE = _TORQUE_ENABLE

    def __init__(self, bus, ids, ticks_per_rev=TICKS_PER_REV, place="the bus"):
        n = len(ids)
        BusServos.__init__(self, bus, ids, ticks_per_rev, place, MAX_ID, 8 + 3 * n,
                           n * (_STATUS_OVERHEAD + _FEEDBACK_BYTES))

    # -- packets ----------------------------------------------------------

    def _send(self, end):
        """Checksum tx[2:end] into tx[end] and send the packet tx[:end + 1]."""
        tx = self._tx
        total = 0
        for i in range(2, end):
            total += tx[i]
        tx[end] = ~total & 0xFF
        self.bus.send(self._view(end + 1))

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

    def _good(self, at, servo, size):
        """True if rx[at:at + size] is a well-formed status packet of servo (size: data + 6)."""
        rx = self._rx
        if rx[at] != 0xFF or rx[at + 1] != 0xFF or rx[at + 2] != servo or rx[at + 3] != size - 4:
            return False
        total = 0
        for i in range(at + 2, at + size - 1):
            total += rx[i]
        return rx[at + size - 1] == ~total & 0xFF

    def ping(self, servo):
        """True if servo answers a PING; BusError if it answers with a bad packet."""
        self._header(servo, 2, _PING)
        self._send(5)
        got = self.bus.receive(self._rx, _STATUS_OVERHEAD)
        if got == 0:
            return False
        if got != _STATUS_OVERHEAD or not self._good(0, servo, _STATUS_OVERHEAD):
            self._fail(False, servo, "a ping")
        return True

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
                self._fail(got <= at, servo, "a position read")
            if not self._good(at, servo, size):
                # The next servo's answer where this one's belongs: this one was silent.
                self._fail(rx[at] == 0xFF and rx[at + 1] == 0xFF and rx[at + 2] in self.ids[i + 1:],
                           servo, "a position read")
            self.errors[i] = rx[at + 4]
            d = at + 5
            out[i] = _signed(rx[d] | rx[d + 1] << 8, 15)
            self.position[i] = out[i]
            self.load[i] = _signed(rx[d + 4] | rx[d + 5] << 8, 10)
            self.volts10[i] = rx[d + 6]
            self.temp_c[i] = rx[d + 7]
            at += size
        return out


def _signed(raw, bit):
    """A sign-and-magnitude register value (sign in bit) as an int."""
    sign = 1 << bit
    return -(raw & (sign - 1)) if raw & sign else raw


# -- the board file's driver section (armfw.drivers): servobus's, with this bus's IDs and ticks
check, make = board_functions(STSServos, MAX_ID, TICKS_PER_REV)
