# SPDX-License-Identifier: MIT
"""ROBOTIS Dynamixel Protocol 2.0 bus servos, X series (the Koch arm's XL330 and XL430).

The protocol (ROBOTIS e-Manual, "Protocol 2.0", and their SDK, dynamixel-sdk,
which tests/test_dynamixel.py checks the bytes against):

    instruction  FF FF FD 00 ID LEN_L LEN_H INSTR PARAM...        CRC_L CRC_H
    status       FF FF FD 00 ID LEN_L LEN_H 55    ERROR PARAM...  CRC_L CRC_H
    LEN = the bytes after it (instruction, parameters, CRC), after stuffing

CRC: CRC-16 with polynomial 8005, initial value 0, most significant bit
first, over every byte before it. Byte stuffing: inside the instruction and
parameters, FF FF FD (the header) is sent as FF FF FD FD; the receiver drops
the extra FD. ID FE is the broadcast: no servo answers it. SYNC WRITE (83)
and SYNC READ (82) take a 2-byte address and a 2-byte length.

Registers used (X series): 64 torque enable, 70 hardware error status,
116 goal position (4 bytes), and the block 126..146 read back at each step:
126 present load (XL430: per mille of the maximum torque; the XL330 reports
its current in mA there), 132 present position (4 bytes, signed), 144 present
input voltage (0.1 V), 146 present temperature (degrees C). A status packet
whose ERROR has bit 7 set (hardware alert) is followed by a read of register
70, whose bits (0 voltage, 2 overheating, 5 overload) go to errors[i] where
armfw.feedback reads the STS's.

The driver interface is armfw.servobus.BusServos's (set_us, set_many, off,
positions, status); ticks are the X series' 4096 per turn.
"""

from array import array

from armfw.compat import const
from armfw.servobus import FIELDS, LIMIT, BusServos, board_functions  # noqa: F401 (FIELDS, LIMIT: armfw.drivers)

_BROADCAST = const(0xFE)
_PING = const(0x01)
_READ = const(0x02)
_STATUS = const(0x55)
_SYNC_READ = const(0x82)
_SYNC_WRITE = const(0x83)
_TORQUE_ENABLE = const(64)
_HARDWARE_ERROR = const(70)
_GOAL_POSITION = const(116)
_FEEDBACK_AT = const(126)
_FEEDBACK_BYTES = const(21)     # 126..146
_HEADER = const(7)              # FF FF FD 00 ID LEN_L LEN_H
_ALERT = const(0x80)
MAX_ID = const(252)
TICKS_PER_REV = const(4096)

_crc_table = None


def _table():
    """The CRC-16 (8005) table, made on the first Dynamixel bus (512 bytes)."""
    global _crc_table
    if _crc_table is None:
        t = array("H", bytes(512))
        for i in range(256):
            c = i << 8
            for _ in range(8):
                c = ((c << 1) ^ 0x8005) if c & 0x8000 else c << 1
            t[i] = c & 0xFFFF
        _crc_table = t
    return _crc_table


def crc16(crc, buf, start, end):
    """crc updated with buf[start:end] (Protocol 2.0's CRC; start from 0)."""
    t = _crc_table
    for i in range(start, end):
        crc = ((crc << 8) & 0xFFFF) ^ t[((crc >> 8) ^ buf[i]) & 0xFF]
    return crc


class DynamixelServos(BusServos):
    """X series Dynamixels on one bus (as armfw.sts.STSServos)."""

    KIND = "Dynamixel"
    GOAL = _GOAL_POSITION
    GOAL_WIDTH = 4
    TORQUE = _TORQUE_ENABLE

    def __init__(self, bus, ids, ticks_per_rev=TICKS_PER_REV, place="the bus"):
        _table()
        n = len(ids)
        self._head = bytearray(_HEADER)
        # The longest packet is a goal for every servo, 14 + 5n bytes, with room to stuff.
        BusServos.__init__(self, bus, ids, ticks_per_rev, place, MAX_ID, 24 + 6 * n,
                           4 + _FEEDBACK_BYTES + 8)

    # -- packets ----------------------------------------------------------

    def _header(self, servo, instruction):
        tx = self._tx
        tx[0] = 0xFF
        tx[1] = 0xFF
        tx[2] = 0xFD
        tx[3] = 0
        tx[4] = servo
        tx[7] = instruction

    def _send(self, end):
        """Stuff tx[7:end], set LEN, append the CRC and send."""
        tx = self._tx
        i = 8
        while i < end:
            if tx[i] == 0xFD and tx[i - 1] == 0xFF and tx[i - 2] == 0xFF:
                for k in range(end, i, -1):     # rare: a goal or ID never makes FF FF FD
                    tx[k] = tx[k - 1]
                end += 1
                i += 1
            i += 1
        length = end - _HEADER + 2
        tx[5] = length & 0xFF
        tx[6] = length >> 8
        crc = crc16(0, tx, 0, end)
        tx[end] = crc & 0xFF
        tx[end + 1] = crc >> 8
        self.bus.send(self._view(end + 2))

    def _block(self, servo, instruction, address, width):
        """Start a packet whose parameters begin with a 2-byte address and a 2-byte width."""
        self._header(servo, instruction)
        tx = self._tx
        tx[8] = address & 0xFF
        tx[9] = address >> 8
        tx[10] = width & 0xFF
        tx[11] = width >> 8
        return 12

    def _sync_write(self, address, width, count):
        return self._block(_BROADCAST, _SYNC_WRITE, address, width)

    def _answer(self, servo, size):
        """Read servo's status packet; its parameters (unstuffed) in rx[2:], ERROR in rx[1].

        size: the parameters expected. Returns 0, or 1 (nothing came) or 2 (bad packet).
        """
        bus = self.bus
        head = self._head
        rx = self._rx
        got = bus.receive(head, _HEADER)
        if got == 0:
            return 1
        if got < _HEADER or head[0] != 0xFF or head[1] != 0xFF or head[2] != 0xFD or head[3] != 0:
            return 2
        if head[4] != servo:
            return 1 if head[4] in self.ids else 2      # a later servo: this one said nothing
        length = head[5] | head[6] << 8
        if length > len(rx) or bus.receive(rx, length) < length:
            return 2
        crc = crc16(crc16(0, head, 0, _HEADER), rx, 0, length - 2)
        if rx[length - 2] != crc & 0xFF or rx[length - 1] != crc >> 8 or rx[0] != _STATUS:
            return 2
        # Unstuff in place: FF FF FD FD -> FF FF FD (the bytes before are read before
        # they are overwritten, kept in b1 and b2).
        out = 1
        b1 = b2 = 0
        end = length - 2
        for i in range(1, end):
            b = rx[i]
            if not (b == 0xFD and b1 == 0xFF and b2 == 0xFF and i + 1 < end and rx[i + 1] == 0xFD):
                rx[out] = b
                out += 1
            b2 = b1
            b1 = b
        return 0 if out == 2 + size else 2

    def ping(self, servo):
        """True if servo answers a PING; BusError if it answers with a bad packet."""
        self._header(servo, _PING)
        self._send(8)
        result = self._answer(servo, 3)     # model number, firmware version
        if result == 1:
            return False
        if result:
            self._fail(False, servo, "a ping")
        return True

    def positions(self, out):
        """SYNC READ every servo: out[i] = the present position (ticks) of ids[i].

        Also keeps each servo's load, volts10, temp_c and errors (as armfw.sts).
        Raises BusError naming the first servo that did not answer, or answered
        with a bad packet.
        """
        n = self.n
        at = self._block(_BROADCAST, _SYNC_READ, _FEEDBACK_AT, _FEEDBACK_BYTES)
        for i in range(n):
            self._tx[at + i] = self.ids[i]
        self._send(at + n)
        rx = self._rx
        alerts = 0
        for i in range(n):
            servo = self.ids[i]
            result = self._answer(servo, _FEEDBACK_BYTES)
            if result:
                self._fail(result == 1, servo, "a position read")
            d = 2 - _FEEDBACK_AT
            p = rx[d + 132] | rx[d + 133] << 8 | rx[d + 134] << 16 | (rx[d + 135] & 0x7F) << 24
            out[i] = p - (1 << 31) if rx[d + 135] & 0x80 else p
            self.position[i] = out[i]
            load = rx[d + 126] | rx[d + 127] << 8
            self.load[i] = load - 0x10000 if load & 0x8000 else load
            self.volts10[i] = rx[d + 144]
            self.temp_c[i] = rx[d + 146]
            self.errors[i] = rx[1]
            if rx[1] & _ALERT:
                alerts += 1
        if alerts:
            for i in range(n):
                if self.errors[i] & _ALERT:
                    self.errors[i] = self._hardware_error(self.ids[i])
        return out

    def _hardware_error(self, servo):
        """Register 70 of servo (read after it raised its alert bit)."""
        self._send(self._block(servo, _READ, _HARDWARE_ERROR, 1))
        result = self._answer(servo, 1)
        if result:
            self._fail(result == 1, servo, "a hardware error read")
        return self._rx[2]


# -- the board file's driver section (armfw.drivers): servobus's, with this bus's IDs and ticks
check, make = board_functions(DynamixelServos, MAX_ID, TICKS_PER_REV)
