# SPDX-License-Identifier: MIT
"""Serial bus servos behind a fake machine.UART: what a board's driver talks to in the tests.

FakeSTSBus holds Feetech STS3215 servos (ping, read, write, sync write, sync
read, checksums) with a memory table each. It runs under CPython and the
MicroPython Unix port (tests/mp scripts import it), so: no f-strings, no
dataclasses; and its steady state allocates nothing (buffers made once), so
a driver's own allocation can be measured through it.

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


class FakeSTS:
    """One STS3215: its memory table (little-endian words, sign and magnitude)."""

    def __init__(self, servo_id, present=2048, volts10=74, temp_c=30):
        m = self.memory = bytearray(MEMORY)
        m[3] = STS3215_MODEL & 0xFF
        m[4] = STS3215_MODEL >> 8
        m[5] = servo_id
        m[6] = 0            # 1 Mbit/s
        self.id = servo_id
        self.present = present
        self.goal = present
        self.load = 0
        m[PRESENT_VOLTAGE] = volts10
        m[PRESENT_TEMPERATURE] = temp_c
        self.blocked = False
        self.errors = 0

    def _word(self, address):
        return self.memory[address] | self.memory[address + 1] << 8

    @property
    def torque(self):
        return self.memory[TORQUE_ENABLE]

    def written(self):
        """After a write: take the goal register."""
        self.goal = self._word(GOAL_POSITION)

    def step(self, follow):
        """Move toward the goal (torque on and not blocked), then refresh the read-only registers."""
        if self.torque:
            if self.blocked:
                d = self.goal - self.present
                self.load = MAX_LOAD if d > 0 else -MAX_LOAD if d < 0 else 0
            else:
                if follow >= 1.0:
                    self.present = self.goal    # no float: the fake allocates nothing
                else:
                    self.present += int((self.goal - self.present) * follow)
                self.load = 0
        else:
            self.load = 0
        m = self.memory
        p = self.present
        m[PRESENT_POSITION] = p & 0xFF if p >= 0 else (-p) & 0xFF
        m[PRESENT_POSITION + 1] = (p >> 8) & 0x7F if p >= 0 else ((-p) >> 8) & 0x7F | 0x80
        load = self.load
        raw = load if load >= 0 else (-load) | 0x400
        m[PRESENT_LOAD] = raw & 0xFF
        m[PRESENT_LOAD + 1] = raw >> 8


class FakeSTSBus:
    """A machine.UART (write, readinto, any, flush) with STS servos on the line.

    ids: the servos; present: their starting positions (one per ID, or one for all).
    """

    def __init__(self, ids, present=2048, follow=1.0):
        self.servos = {}
        for k, i in enumerate(ids):
            self.servos[i] = FakeSTS(i, present[k] if isinstance(present, (list, tuple)) else present)
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

    # -- the servos' side ---------------------------------------------------

    def _emit(self, b):
        self._out[self._tail] = b
        self._tail += 1

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
            address = p[5]
            width = p[6]
            at = 7
            while at + width < n:
                s = self.servos.get(p[at])
                if s is not None:
                    for k in range(width):
                        s.memory[address + k] = p[at + 1 + k]
                    s.written()
                at += width + 1
        elif instruction == SYNC_READ:
            address = p[5]
            width = p[6]
            for at in range(7, n - 1):
                s = self.servos.get(p[at])
                if s is not None:
                    s.step(self.follow)
                    self._answer(s, address, width)
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
