# SPDX-License-Identifier: MIT
"""Serial bus servos behind a fake machine.UART: what a board's driver talks to in the
simulator (`armctl sim` with a bus servo board: armctl.sim_boot's machine.UART) and the tests
(tests/fake_uart.py).

FakeSTSBus holds Feetech STS3215 servos (ping, read, write, sync write, sync
read, checksums) with a memory table each; FakeDynamixelBus, XL330s. It runs
under CPython and the MicroPython Unix port (the simulator and tests/mp scripts
import it), so: no f-strings, no dataclasses; and its steady state allocates
nothing (buffers made once), so a driver's own allocation can be measured
through it.

What a test can do to the servos:
- servo(id).present / .goal / .torque / .load ... (the memory table decoded);
- move_by_hand(id, ticks): a person turns a limp servo;
- block(id): the servo's horn is held: it stops where it is and its load goes
  to the maximum while it pushes against its goal;
- silent(id) / corrupt(id): it stops answering / answers with a bad checksum;
- echo: every byte written is heard back first (TX and RX on one wire).
The servo follows its goal by a fraction `follow` of the remaining distance
at each read of its position (1.0: at once), a first-order lag.

Feetech's protocol as the fake models it (Feetech's STS memory table and
communication protocol manual; ftservo-python-sdk, which tests/test_sts.py
runs against this fake):
    FF FF ID LEN INSTR PARAMS CHECKSUM, CHECKSUM = ~(ID + LEN + INSTR + PARAMS) & FF
A packet with a bad checksum is ignored (no answer). ID FE is broadcast: a
servo acts on it and does not answer. Only what is listed in `answer` lives.
"""

STS3215_MODEL = 777     # model number register (3..4) of an STS3215
PING = 1
READ = 2
WRITE = 3
SYNC_READ = 0x82
SYNC_WRITE = 0x83
BROADCAST = 0xFE
TORQUE_ENABLE = 40
GOAL_POSITION = 42
PRESENT_POSITION = 56
PRESENT_LOAD = 60
PRESENT_VOLTAGE = 62
PRESENT_TEMPERATURE = 63
MEMORY = 128
MAX_LOAD = 1000         # per mille
TICKS = 4096            # STS3215 position counts a turn


class FakeServo:
    """What every fake servo does: follow its goal when torqued, push against a block.

    A subclass sets memory (its table), id, TORQUE_AT (the torque register) and
    writes its read-only registers in _store()."""

    def _start(self, servo_id, present):
        self.id = servo_id
        self.present = present
        self.goal = present
        self.load = 0
        self.blocked = False
        self.errors = 0     # the status packet's ERROR byte

    @property
    def torque(self):
        return self.memory[self.TORQUE_AT]

    def step(self, follow):
        """Move toward the goal (torque on and not blocked), then refresh the read-only registers."""
        if self.torque and self.blocked:
            d = self.goal - self.present
            self.load = MAX_LOAD if d > 0 else -MAX_LOAD if d < 0 else 0
        else:
            self.load = 0
            if self.torque:
                if follow >= 1.0:
                    self.present = self.goal    # no float: the fake allocates nothing
                else:
                    self.present += int((self.goal - self.present) * follow)
        self._store()


class FakeSTS(FakeServo):
    """One STS3215: its memory table (little-endian words, sign and magnitude)."""

    TORQUE_AT = TORQUE_ENABLE

    def __init__(self, servo_id, present=2048, volts10=74, temp_c=30):
        m = self.memory = bytearray(MEMORY)
        m[3] = STS3215_MODEL & 0xFF
        m[4] = STS3215_MODEL >> 8
        m[5] = servo_id
        m[6] = 0            # 1 Mbit/s
        m[PRESENT_VOLTAGE] = volts10
        m[PRESENT_TEMPERATURE] = temp_c
        self._start(servo_id, present)

    def written(self):
        """After a write: take the goal register."""
        self.goal = self.memory[GOAL_POSITION] | self.memory[GOAL_POSITION + 1] << 8

    def _store(self):
        m = self.memory
        p = self.present % TICKS       # one magnetic encoder turn: past 4095 it reads 0 again
        m[PRESENT_POSITION] = p & 0xFF
        m[PRESENT_POSITION + 1] = p >> 8
        load = self.load
        raw = load if load >= 0 else (-load) | 0x400
        m[PRESENT_LOAD] = raw & 0xFF
        m[PRESENT_LOAD + 1] = raw >> 8


class FakeBus:
    """A machine.UART (write, readinto, any, flush) with servos on the line; a subclass
    speaks the protocol (_take a packet written, _answer with a status packet)."""

    def __init__(self, servos, follow):
        self.servos = {}
        for s in servos:
            self.servos[s.id] = s
        self.follow = follow
        self.echo = False
        self.quiet = {}         # id -> True: does not answer
        self.garbled = {}       # id -> True: answers with a bad checksum
        self.packets = 0        # instruction packets taken (checksum good)
        self.bad_packets = 0    # packets dropped for a bad checksum or framing
        self.record = None      # a list: every packet written is appended (as bytes)
        self._out = bytearray(1024)
        self._head = 0
        self._tail = 0
        self._in = bytearray(512)

    # -- what a test does to the servos -------------------------------------

    def servo(self, servo_id):
        return self.servos[servo_id]

    def move_by_hand(self, servo_id, ticks):
        s = self.servos[servo_id]
        s.present = ticks
        s.step(0.0)

    def block(self, servo_id, blocked=True):
        self.servos[servo_id].blocked = blocked

    def silent(self, servo_id, on=True):
        self.quiet[servo_id] = on

    def corrupt(self, servo_id, on=True):
        self.garbled[servo_id] = on

    # -- machine.UART -------------------------------------------------------

    def any(self):
        return self._tail - self._head

    def flush(self):
        pass

    def readinto(self, buf, n=None):
        if n is None:
            n = len(buf)
        have = self._tail - self._head
        if have == 0:
            return None         # machine.UART after its timeout
        if n > have:
            n = have
        out = self._out
        h = self._head
        for i in range(n):
            buf[i] = out[h + i]
        self._head = h + n
        if self._head == self._tail:
            self._head = self._tail = 0
        return n

    def write(self, buf):
        n = len(buf)
        if self.record is not None:
            self.record.append(bytes(buf))
        if self.echo:
            for i in range(n):
                self._emit(buf[i])
        packet = self._in
        for i in range(n):
            packet[i] = buf[i]
        self._take(packet, n)
        return n

    def _emit(self, b):
        self._out[self._tail] = b
        self._tail += 1

    def _sync_write(self, p, at, end, address, width):
        """The SYNC WRITE entries p[at:end] (ID, then width bytes) into each listed servo."""
        while at + width < end:
            s = self.servos.get(p[at])
            if s is not None:
                for k in range(width):
                    s.memory[address + k] = p[at + 1 + k]
                s.written()
            at += width + 1

    def _sync_read(self, p, at, end, address, width):
        """Each servo listed in p[at:end] answers, in that order."""
        for i in range(at, end):
            s = self.servos.get(p[i])
            if s is not None:
                s.step(self.follow)
                self._answer(s, address, width)


class SDKSerial:
    """What a maker's SDK (its PortHandler's ser) reads and writes: pyserial's side, on a fake bus."""

    def __init__(self, bus):
        self.bus = bus

    def write(self, data):
        return self.bus.write(bytes(data))

    def read(self, n):
        buf = bytearray(n)
        got = self.bus.readinto(buf, n) or 0
        return bytes(buf[:got])

    def reset_input_buffer(self):
        while self.bus.any():
            self.bus.readinto(bytearray(64))

    @property
    def in_waiting(self):
        return self.bus.any()


class FakeSTSBus(FakeBus):
    """STS3215 servos: ids, present (their starting positions: one per ID, or one for all)."""

    # A packet's header, where its length field starts and its width (armctl.sim_bus_pty).
    FRAMING = (b"\xff\xff", 3, 1)

    def __init__(self, ids, present=2048, follow=1.0):
        FakeBus.__init__(self, [FakeSTS(i, present[k] if isinstance(present, (list, tuple)) else present)
                                for k, i in enumerate(ids)], follow)

    def _answer(self, servo, data_at, count):
        """A status packet from servo: its error byte and count bytes of its memory from data_at."""
        if self.quiet.get(servo.id):
            return
        m = servo.memory
        total = servo.id + count + 2 + servo.errors
        self._emit(0xFF)
        self._emit(0xFF)
        self._emit(servo.id)
        self._emit(count + 2)
        self._emit(servo.errors)
        for a in range(data_at, data_at + count):
            self._emit(m[a])
            total += m[a]
        check = ~total & 0xFF
        self._emit(check ^ 0xFF if self.garbled.get(servo.id) else check)

    def _take(self, p, n):
        if n < 6 or p[0] != 0xFF or p[1] != 0xFF or p[3] + 4 != n:
            self.bad_packets += 1
            return
        total = 0
        for i in range(2, n - 1):
            total += p[i]
        if p[n - 1] != ~total & 0xFF:
            self.bad_packets += 1
            return
        self.packets += 1
        target = p[2]
        instruction = p[4]
        params = n - 6      # from p[5]
        if instruction == SYNC_WRITE:
            self._sync_write(p, 7, n - 1, p[5], p[6])
        elif instruction == SYNC_READ:
            self._sync_read(p, 7, n - 1, p[5], p[6])
        else:
            s = self.servos.get(target)
            if s is None:
                return
            if instruction == PING:
                if target != BROADCAST:
                    self._answer(s, 0, 0)
            elif instruction == READ and params == 2:
                s.step(self.follow)
                self._answer(s, p[5], p[6])
            elif instruction == WRITE and params >= 2:
                for k in range(params - 1):
                    s.memory[p[5] + k] = p[6 + k]
                s.written()
                if target != BROADCAST:
                    self._answer(s, 0, 0)


# -- ROBOTIS Dynamixel, Protocol 2.0 ------------------------------------------
#
# (ROBOTIS e-Manual, Protocol 2.0 and the XL330-M288 control table; dynamixel-sdk,
# which tests/test_dynamixel.py runs against this fake.)
#     FF FF FD 00 ID LEN_L LEN_H INSTR PARAMS CRC_L CRC_H
# CRC-16, polynomial 8005, MSB first, initial 0, over every byte before it; FF FF FD
# inside INSTR/PARAMS is stuffed to FF FF FD FD.

XL330_MODEL = 1200
DXL_TORQUE_ENABLE = 64
DXL_HARDWARE_ERROR = 70
DXL_GOAL_POSITION = 116
DXL_PRESENT_LOAD = 126
DXL_PRESENT_POSITION = 132
DXL_PRESENT_VOLTAGE = 144
DXL_PRESENT_TEMPERATURE = 146
DXL_STATUS = 0x55


def crc16_8005(data, start, end, crc=0):
    """CRC of data[start:end], bit by bit from the polynomial (independent of any table)."""
    for i in range(start, end):
        crc ^= data[i] << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


class FakeXL330(FakeServo):
    """One XL330: its control table (little-endian, two's complement)."""

    TORQUE_AT = DXL_TORQUE_ENABLE

    def __init__(self, servo_id, present=2048, volts10=50, temp_c=30):
        m = self.memory = bytearray(256)
        m[0] = XL330_MODEL & 0xFF
        m[1] = XL330_MODEL >> 8
        m[6] = 46           # firmware version
        m[7] = servo_id
        m[DXL_PRESENT_VOLTAGE] = volts10
        m[DXL_PRESENT_TEMPERATURE] = temp_c
        self._start(servo_id, present)

    def _put(self, address, value, width):
        for k in range(width):
            self.memory[address + k] = (value >> (8 * k)) & 0xFF

    def written(self):
        m = self.memory
        g = m[116] | m[117] << 8 | m[118] << 16 | m[119] << 24
        self.goal = g - (1 << 32) if g & 0x80000000 else g

    def _store(self):
        self._put(DXL_PRESENT_POSITION, self.present & 0xFFFFFFFF, 4)
        self._put(DXL_PRESENT_LOAD, self.load & 0xFFFF, 2)


class FakeDynamixelBus(FakeBus):
    """XL330 servos on a Protocol 2.0 bus (as FakeSTSBus)."""

    FRAMING = (b"\xff\xff\xfd\x00", 5, 2)

    def __init__(self, ids, present=2048, follow=1.0):
        FakeBus.__init__(self, [FakeXL330(i, present[k] if isinstance(present, (list, tuple)) else present)
                                for k, i in enumerate(ids)], follow)
        self._status = bytearray(256)

    def _answer(self, servo, data_at, count, data=None):
        """A status packet of servo: its ERROR, then count bytes of memory from data_at."""
        if self.quiet.get(servo.id):
            return
        p = self._status
        p[0] = 0xFF
        p[1] = 0xFF
        p[2] = 0xFD
        p[3] = 0
        p[4] = servo.id
        p[7] = DXL_STATUS
        p[8] = servo.errors
        n = 9
        src = servo.memory if data is None else data
        for a in range(data_at, data_at + count):
            p[n] = src[a]
            n += 1
            if p[n - 1] == 0xFD and p[n - 2] == 0xFF and p[n - 3] == 0xFF:
                p[n] = 0xFD
                n += 1
        length = n - 7 + 2
        p[5] = length & 0xFF
        p[6] = length >> 8
        crc = crc16_8005(p, 0, n)
        if self.garbled.get(servo.id):
            crc ^= 0x5A5A
        p[n] = crc & 0xFF
        p[n + 1] = crc >> 8
        for i in range(n + 2):
            self._emit(p[i])

    def _take(self, p, n):
        if n < 10 or p[0] != 0xFF or p[1] != 0xFF or p[2] != 0xFD or p[3] != 0 or (p[5] | p[6] << 8) + 7 != n:
            self.bad_packets += 1
            return
        if crc16_8005(p, 0, n - 2) != p[n - 2] | p[n - 1] << 8:
            self.bad_packets += 1
            return
        # Unstuff the instruction and parameters.
        end = n - 2
        out = 7
        i = 7
        while i < end:
            p[out] = p[i]
            if p[i] == 0xFD and p[i - 1] == 0xFF and p[i - 2] == 0xFF and i + 1 < end and p[i + 1] == 0xFD:
                i += 1
            out += 1
            i += 1
        self.packets += 1
        target = p[4]
        instruction = p[7]
        params = out - 8
        if instruction in (0x82, 0x83):     # SYNC READ, SYNC WRITE
            address = p[8] | p[9] << 8
            width = p[10] | p[11] << 8
            if instruction == 0x83:
                self._sync_write(p, 12, out, address, width)
            else:
                self._sync_read(p, 12, out, address, width)
            return
        s = self.servos.get(target)
        if s is None:
            return
        if instruction == 0x01:             # PING: model number, firmware version
            self._ping(s)
        elif instruction == 0x02 and params == 4:
            s.step(self.follow)
            self._answer(s, p[8] | p[9] << 8, p[10] | p[11] << 8)
        elif instruction == 0x03 and params >= 3:
            address = p[8] | p[9] << 8
            for k in range(params - 2):
                s.memory[address + k] = p[10 + k]
            s.written()
            self._answer(s, 0, 0)

    def _ping(self, s):
        m = s.memory
        self._answer(s, 0, 3, bytes((m[0], m[1], m[6])))


# -- machine.UART and machine.Pin in the simulator (armctl.sim_boot) -------------

class PacketLog:
    """A FakeBus's record that writes each packet a driver sends as a line of hex to a file
    (ARMFW_SIM_BUS_LOG), so a test outside the simulator sees the bytes on its UART."""

    def __init__(self, f):
        self.f = f

    def append(self, packet):
        import binascii
        self.f.write(binascii.hexlify(packet).decode() + "\n")
        self.f.flush()


def _open_log():
    # Opened when the simulator imports this module, before the flash becomes the root.
    import os
    path = os.getenv("ARMFW_SIM_BUS_LOG")
    return open(path, "a") if path else None


_log = _open_log()

# How far a simulated servo closes on its goal at each read of its position:
# a first-order lag, so `where` shows measured angles a little behind the commanded.
SIM_FOLLOW = 0.5


class Pin:
    """machine.Pin as a bus wiring needs it (a direction pin): it keeps its level."""

    OUT = 1
    IN = 0

    def __init__(self, n, mode=None, value=0):
        self.n = n
        self.level = value

    def value(self, level=None):
        if level is None:
            return self.level
        self.level = level


def UART(uart_id, baudrate=115200, tx=None, rx=None, timeout=0, timeout_char=0):
    """machine.UART in the simulator: the servos the flash's board.json names (its joints'
    IDs and its gripper's), STS3215s or XL330s as its driver says, all at their middle
    tick; stepped in virtual time unless ARMFW_SIM_REALTIME says otherwise. With
    ARMFW_SIM_BUS_LOG set, every packet the driver sends is logged there (PacketLog)."""
    import json
    import os
    from armfw import servobus
    with open("board.json") as f:
        board = json.load(f)
    ids = [j["channel"] for j in board["joints"]]
    if board.get("gripper"):
        ids.append(board["gripper"]["channel"])
    if os.getenv("ARMFW_SIM_REALTIME") not in ("1", "yes", "true"):
        # The session steps the motion without waiting, as for the simulated PWM driver.
        servobus.BusServos.realtime = False
        servobus.BusServos.advance_ms = lambda self, ms: None
    kind = FakeDynamixelBus if board["driver"]["kind"] == "dynamixel" else FakeSTSBus
    bus = kind(ids, follow=SIM_FOLLOW)
    if _log is not None:
        bus.record = PacketLog(_log)
    return bus
