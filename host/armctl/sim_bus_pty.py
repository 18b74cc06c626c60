# SPDX-License-Identifier: MIT
"""Simulated bus servos (armctl.sim_bus) served on a pseudo-terminal: any program that
opens a serial port by name, such as a servo maker's SDK or LeRobot, can open
`BusPty.path` as it would a USB bus adapter's /dev/ttyUSB0 and talk to the
simulated STS3215s or XL330s over the real packets.

The fake buses take one whole instruction packet per write, as a driver's
UART.write() hands them one; a serial port delivers bytes in whatever pieces
the line gives. PacketSplitter puts the pieces back together by each
protocol's header and length field, as a servo's receiver does: bytes before
a header are dropped (counted), a length no servo would accept drops the
header's first byte and looks again.

A thread serves the pty; a test changing the servos (block, move_by_hand,
silent...) holds `lock` so a packet is not half answered meanwhile.
"""

import os
import select
import threading
import tty

from armctl.sim_bus import FakeDynamixelBus, FakeSTSBus

# The longest instruction packet either fake takes (its receive buffer).
LONGEST = 512


class PacketSplitter:
    """Whole packets out of a byte stream, for one protocol.

    header: the bytes a packet starts with; length_at: where its little-endian
    length field starts, length_bytes: its width (both protocols count from the
    byte after the field to the end of the checksum)."""

    def __init__(self, header, length_at, length_bytes):
        self.header = bytes(header)
        self.length_at = length_at
        self.length_bytes = length_bytes
        self.pending = bytearray()
        self.dropped = 0        # bytes that began no packet

    def feed(self, data):
        """The packets data completes, in order (bytes each)."""
        self.pending += data
        packets = []
        while True:
            start = self.pending.find(self.header)
            if start < 0:
                # Keep a tail that may be the start of a header.
                keep = len(self.header) - 1
                cut = max(0, len(self.pending) - keep)
                while cut < len(self.pending) and not self.header.startswith(bytes(self.pending[cut:])):
                    cut += 1
                self.dropped += cut
                del self.pending[:cut]
                return packets
            if start:
                self.dropped += start
                del self.pending[:start]
            end_of_field = self.length_at + self.length_bytes
            if len(self.pending) < end_of_field:
                return packets
            length = int.from_bytes(self.pending[self.length_at:end_of_field], "little")
            total = end_of_field + length
            if length < 2 or total > LONGEST:
                self.dropped += 1
                del self.pending[:1]
                continue
            if len(self.pending) < total:
                return packets
            packets.append(bytes(self.pending[:total]))
            del self.pending[:total]


class BusPty:
    """bus (a FakeSTSBus or FakeDynamixelBus) answering on a pseudo-terminal at `path`."""

    def __init__(self, bus):
        self.bus = bus
        self.splitter = PacketSplitter(*bus.FRAMING)
        self.lock = threading.Lock()
        self.served = 0         # instruction packets handed to the bus
        self._master, self._slave = os.openpty()
        # Raw: no echo, no line editing, no CR/LF translation, as a serial line.
        tty.setraw(self._slave)
        self.path = os.ttyname(self._slave)
        self._stop = threading.Event()
        self._answer = bytearray(LONGEST)
        self._thread = threading.Thread(target=self._serve, name="bus-pty", daemon=True)
        self._thread.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._stop.set()
        self._thread.join(10)
        # The slave end stays open until now: without any holder a pty's master reads EIO.
        for fd in (self._master, self._slave):
            os.close(fd)

    def _serve(self):
        while not self._stop.is_set():
            if not select.select([self._master], [], [], 0.05)[0]:
                continue
            try:
                data = os.read(self._master, 4096)
            except OSError:
                return
            for packet in self.splitter.feed(data):
                with self.lock:
                    self.bus.write(packet)
                    self.served += 1
                    answer = self._drain()
                if answer:
                    os.write(self._master, answer)

    def _drain(self):
        out = b""
        while self.bus.any():
            n = self.bus.readinto(self._answer, len(self._answer))
            out += bytes(self._answer[:n])
        return out


def serve(kind, ids, follow):
    """A BusPty of simulated servos: kind "sts" (STS3215) or "dynamixel" (XL330)."""
    bus = (FakeDynamixelBus if kind == "dynamixel" else FakeSTSBus)(ids, follow=follow)
    return BusPty(bus)
