# SPDX-License-Identifier: MIT
"""The half-duplex UART under the serial bus servo drivers (armfw.sts, armfw.dynamixel).

Bus servos share one signal wire: the board talks, then listens for the
servo's answer on the same wire. Three wirings are common, and the board
file says which (driver fields below):

- a bus adapter that turns the line around by itself (Feetech's URT-1,
  Waveshare's bus servo boards, ROBOTIS U2D2): TX and RX to the adapter, no
  direction pin;
- a tri-state buffer (74HC126/74LS241) whose direction the board drives:
  "dir_pin" is high while the board transmits, low while it listens;
- TX and RX tied to the one wire (through a resistor or a diode): the board
  hears its own bytes, "echo": true reads them back and drops them.

Units: a bus servo takes a goal position in its own ticks (an STS3215 has
4096 per turn, an XL330 4096), not a pulse width. For a board whose driver is
a bus driver, the servo map's "pulse" (armfw.servo: center_us, us_per_rad,
min_us, max_us, the gripper's open_us and close_us) is that tick count:
center_us is the tick at the servo's middle (2048), us_per_rad is
ticks_per_rev / 2 pi (651.9 for 4096), and the window min_us..max_us is in
ticks. Everything else is unchanged: the window is checked against the joint
limits at load, and a goal outside it is refused, never clamped. The driver
refuses anything outside 0..ticks_per_rev - 1 as well.

Feedback fields, read by armfw.feedback (0 or absent: that check is off):

    max_lag      ticks between the goal sent and the position read back
    max_load     the servo's load reading (per mille of its maximum torque)
    min_volts, max_volts, max_temp_c
"""

from array import array

from armfw.compat import const

# The driver section of a bus servo board (each driver adds nothing of its own).
FIELDS = ("kind", "uart_id", "tx", "rx", "baud", "dir_pin", "echo", "timeout_ms", "ticks_per_rev",
          "max_lag", "max_load", "min_volts", "max_volts", "max_temp_c")
LIMIT = ("ticks_per_rev", "a goal of %d ticks is past the last tick of a %d-tick turn")
_DRAIN = const(16)


class BusError(OSError):
    """A servo did not answer, or answered with a bad packet; the message names its ID."""


class Bus:
    """One half-duplex UART: send(packet), then receive(buf, n) the answer.

    uart: a machine.UART (or anything with write, readinto(buf, n), any(), flush);
    direction: a machine.Pin driven high while sending, or None; echo: the board
    hears what it sends (one wire on TX and RX), so each packet is read back first.
    """

    def __init__(self, uart, direction=None, echo=False):
        self.uart = uart
        self.direction = direction
        self.echo = echo
        self._drain = bytearray(_DRAIN)

    def _discard(self, n):
        """Read and drop up to n bytes (n < 0: whatever is waiting); stops at a timeout."""
        uart = self.uart
        buf = self._drain
        while n != 0:
            if n < 0 and not uart.any():
                return
            got = uart.readinto(buf, _DRAIN if n < 0 or n > _DRAIN else n)
            if not got:
                return
            if n > 0:
                n -= got

    def send(self, packet):
        """Write packet (all of it), after dropping any stale byte left on the line."""
        self._discard(-1)
        d = self.direction
        if d is not None:
            d.value(1)
        self.uart.write(packet)
        if d is not None:
            self.uart.flush()       # the last stop bit is out before the line is released
            d.value(0)
        if self.echo:
            self._discard(len(packet))

    def receive(self, buf, n):
        """Read n bytes into buf; returns how many came before the UART's timeout."""
        uart = self.uart
        got = uart.readinto(buf, n) or 0
        while 0 < got < n:      # a gap between bytes longer than timeout_char: rare, may allocate
            more = uart.readinto(memoryview(buf)[got:], n - got)
            if not more:
                break
            got += more
        return got


class BusServos:
    """What the STS and Dynamixel drivers share: the driver interface over sync writes.

    A subclass gives the protocol: GOAL and TORQUE (register addresses), GOAL_WIDTH
    (bytes), KIND (its name in messages), _sync_write(address, width, count) (starts a
    packet in self._tx, returns where its entries go), _send(end) (finishes and sends
    tx[:end]), ping(id) and positions(out).
    """

    def __init__(self, bus, ids, ticks_per_rev, place, max_id, tx_size, rx_size):
        n = len(ids)
        self.bus = bus
        self.ids = list(ids)
        self.n = n
        self.period_us = ticks_per_rev          # the drivers' bound on a pulse, here in ticks
        self._slot = {}
        for i, servo in enumerate(self.ids):
            if type(servo) is not int or servo < 0 or servo > max_id or servo in self._slot:
                raise ValueError("servo ID %r is not 0..%d or is listed twice" % (servo, max_id))
            self._slot[servo] = i
        self._tx = bytearray(tx_size)
        self._views = {}                         # packet length -> memoryview, made on first use
        self._rx = bytearray(rx_size)
        self._torque = bytearray(n)
        self._one_id = [0]
        self._one_goal = [0]
        self.position = array("i", bytes(4 * n))
        self.load = array("h", bytes(2 * n))
        self.volts10 = bytearray(n)
        self.temp_c = bytearray(n)
        self.errors = bytearray(n)
        missing = [servo for servo in self.ids if not self.ping(servo)]
        if missing:
            raise BusError("no %s servo answers at ID %s on %s: check the servo power, the wiring "
                           "and each servo's ID" % (self.KIND, ", ".join(str(m) for m in missing), place))
        self.off()

    def _view(self, size):
        """tx[:size] as a memoryview, made once per size."""
        view = self._views.get(size)
        if view is None:
            view = self._views[size] = memoryview(self._tx)[:size]
        return view

    def _entry(self, at, servo, value, width):
        """One sync write entry at tx[at]: the ID, then value little-endian; returns the next."""
        tx = self._tx
        tx[at] = servo
        for k in range(width):
            tx[at + 1 + k] = value & 0xFF
            value >>= 8
        return at + 1 + width

    def _check(self, servo, ticks):
        slot = self._slot.get(servo)
        if slot is None:
            raise ValueError("no servo with ID %r on this bus" % (servo,))
        if type(ticks) is not int or ticks < 0 or ticks >= self.period_us:
            raise ValueError("goal must be an int 0..%d ticks, got %r" % (self.period_us - 1, ticks))
        return slot

    def set_us(self, servo, ticks):
        """Goal position ticks (int, 0..ticks_per_rev - 1) for servo; torque on if it was off."""
        self._one_id[0] = servo
        self._one_goal[0] = ticks
        self.set_many(self._one_id, self._one_goal)

    def set_many(self, servos, ticks):
        """ticks[i] to servos[i] for every i, in one SYNC WRITE (all checked before any is sent)."""
        count = len(servos)
        if count == 0:
            return
        if count > self.n or len(ticks) != count:
            raise ValueError("one goal per servo of this bus")
        for i in range(count):
            self._check(servos[i], ticks[i])
        at = self._sync_write(self.GOAL, self.GOAL_WIDTH, count)
        for i in range(count):
            at = self._entry(at, servos[i], ticks[i], self.GOAL_WIDTH)
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
            at = self._sync_write(self.TORQUE, 1, off)
            for i in range(count):
                slot = slots[servos[i]]
                if not torque[slot]:
                    at = self._entry(at, servos[i], 1, 1)
                    torque[slot] = 1
            self._send(at)

    def off(self, servo=None):
        """Torque off for servo (None: every servo of the board), in one SYNC WRITE."""
        if servo is None:
            at = self._sync_write(self.TORQUE, 1, self.n)
            for i in range(self.n):
                at = self._entry(at, self.ids[i], 0, 1)
                self._torque[i] = 0
            self._send(at)
            return
        slot = self._slot.get(servo)
        if slot is None:
            raise ValueError("no servo with ID %r on this bus" % (servo,))
        self._send(self._entry(self._sync_write(self.TORQUE, 1, 1), servo, 0, 1))
        self._torque[slot] = 0

    def deinit(self):
        """Every torque off: the servos go limp."""
        self.off()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.deinit()

    def status(self, i):
        """(load per mille, volts10, temp_c, errors) of ids[i], as the last positions() read them."""
        return self.load[i], self.volts10[i], self.temp_c[i], self.errors[i]

    def _fail(self, silent, servo, what):
        if silent:
            raise BusError("servo bus: no answer from ID %d to %s (read timeout)" % (servo, what))
        raise BusError("servo bus: bad packet from ID %d to %s (checksum or framing)" % (servo, what))


# -- the board file's driver section, shared by armfw.sts and armfw.dynamixel --

def check(settings, mcu, where, outputs, max_id, ticks_default):
    """UART wiring, IDs and feedback limits; returns ticks_per_rev (the goal must stay below it)."""
    from armfw.fields import BoardError, gpio, integer, number
    integer(settings, "uart_id", where, 0, 7)
    tx = gpio(integer(settings, "tx", where, 0, 255), where + ".tx", mcu)
    rx = integer(settings, "rx", where, 0, 255)
    if "dir_pin" in settings:
        d = gpio(integer(settings, "dir_pin", where, 0, 255), where + ".dir_pin", mcu)
        if d in (tx, rx):
            raise BoardError("%s.dir_pin: GPIO %d is already tx or rx" % (where, d))
    if "echo" in settings and not isinstance(settings["echo"], bool):
        raise BoardError("%s.echo: must be true or false" % where)
    integer(settings, "baud", where, 9600, 4500000)
    if "timeout_ms" in settings:
        integer(settings, "timeout_ms", where, 1, 1000)
    ticks = integer(settings, "ticks_per_rev", where, 2, 1 << 16) if "ticks_per_rev" in settings else ticks_default
    for key in ("max_lag", "max_load", "min_volts", "max_volts", "max_temp_c"):
        if key in settings and number(settings, key, where) < 0:
            raise BoardError("%s.%s: must be >= 0 (0: off), got %r" % (where, key, settings[key]))
    for field, channel in outputs:
        if channel > max_id:
            raise BoardError("%s: %d is not a servo ID on this bus (0..%d)" % (field, channel, max_id))
    return ticks


def board_functions(servos_class, max_id, ticks_default):
    """A bus driver module's check(settings, mcu, where, outputs) and make(board) (armfw.drivers)."""

    def check_bus(settings, mcu, where, outputs):
        return check(settings, mcu, where, outputs, max_id, ticks_default)

    def make(board):
        from armfw.drivers import channels
        d = board.driver
        return servos_class(open_bus(d), channels(board), d.get("ticks_per_rev", ticks_default), bus_name(d))
    return check_bus, make


def open_bus(d):
    """The Bus of a board's driver section, on machine.UART."""
    from machine import UART, Pin
    uart = UART(d["uart_id"], baudrate=d["baud"], tx=Pin(d["tx"]), rx=Pin(d["rx"]),
                timeout=d.get("timeout_ms", 10), timeout_char=2)
    direction = Pin(d["dir_pin"], Pin.OUT, value=0) if "dir_pin" in d else None
    return Bus(uart, direction, d.get("echo", False))


def bus_name(d):
    """The UART a board's driver section names, for a message."""
    return "UART %d (tx GPIO %d, rx GPIO %d, %d baud)" % (d["uart_id"], d["tx"], d["rx"], d["baud"])
