# SPDX-License-Identifier: MIT
"""The servo makers' own SDKs against the simulated servo bus, through a real pseudo-terminal:
Feetech's (ftservo-python-sdk, module scservo_sdk) and ROBOTIS's (dynamixel-sdk) open
the pty by name, as they open a USB bus adapter, and ping, sync write, sync read and
read position and load from the simulated STS3215s and XL330s (armctl.sim_bus_pty).
Then the firmware's own drivers, running unmodified in `armctl sim`, send their
packets on the simulated board's UART, and each one is made again by the SDK from
what it says and must be the same bytes.

Expected positions follow the simulated servo's first-order motion, worked here from
its rule (armctl.sim_bus: at each read of its position a torqued servo closes the
given fraction of what remains to its goal, truncated to a whole tick); expected
goals from the board's servo map (2048 at 0 deg, 4096 ticks a turn).

A pty is served by a thread: under load an answer may come late. The SDKs' own
timeouts are sized for a USB adapter's latency (16 to 50 ms); here every wait for
an answer has a deadline of seconds, and nothing sleeps.
"""

import binascii
import os
from contextlib import contextmanager
import random
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_uart import FakeDynamixelBus, FakeSTSBus  # noqa: E402

from armctl.sim import Simulator  # noqa: E402
from armctl.sim_bus_pty import BusPty, PacketSplitter  # noqa: E402
from conftest import BOARDS, makers_sdk, stop  # noqa: E402

IDS = [1, 2, 3, 4, 5, 6]
FOLLOW = 0.5
# How long an SDK waits for an answer before it calls the servo silent, ms.
ANSWER_DEADLINE_MS = 5000.0


@pytest.fixture
def scs():
    return makers_sdk("scservo_sdk", "ftservo-python-sdk")


@pytest.fixture
def dxl():
    return makers_sdk("dynamixel_sdk", "dynamixel-sdk")


def patient(sdk):
    """sdk's PortHandler with ANSWER_DEADLINE_MS as the least time it waits for an answer."""

    class Port(sdk.PortHandler):
        def setPacketTimeout(self, packet_length):
            sdk.PortHandler.setPacketTimeout(self, packet_length)
            self.packet_timeout = max(self.packet_timeout, ANSWER_DEADLINE_MS)

        def setPacketTimeoutMillis(self, msec):
            sdk.PortHandler.setPacketTimeoutMillis(self, max(msec, ANSWER_DEADLINE_MS))

    return Port


@contextmanager
def sdk_on_pty(sdk, bus):
    """(the BusPty serving bus, sdk's port opened on it at 1 Mbit/s), closed after."""
    with BusPty(bus) as pty:
        port = patient(sdk)(pty.path)
        assert port.openPort() and port.setBaudRate(1000000)
        try:
            yield pty, port
        finally:
            port.closePort()


def closer(present, goals):
    """Positions after one more read: each closes FOLLOW of what remains, truncated toward zero."""
    return [p + int((g - p) * FOLLOW) for p, g in zip(present, goals)]


def assert_follows(read_all, present, goals, reads=6):
    """read_all() (a sync read's positions) closes on goals read by read from present."""
    for _ in range(reads):
        present = closer(present, goals)
        assert read_all() == present


def start_and_goals(seed):
    rng = random.Random(seed)
    return [rng.randrange(500, 3600) for _ in IDS], [rng.randrange(500, 3600) for _ in IDS]


def test_feetech_sdk_on_a_pty_pings_sync_writes_and_sync_reads(scs):
    start, goals = start_and_goals(29)
    bus = FakeSTSBus(IDS, present=start, follow=FOLLOW)
    with sdk_on_pty(scs, bus) as (pty, port):
        sdk = scs.sms_sts(port)
        for i in IDS:
            assert sdk.ping(i) == (777, scs.COMM_SUCCESS, 0)       # an STS3215's model number
        # Limp, the servos stay where they are at every read.
        reader = scs.GroupSyncRead(sdk, 56, 2)
        for i in IDS:
            assert reader.addParam(i)
        for _ in range(2):
            assert reader.txRxPacket() == scs.COMM_SUCCESS
            assert [reader.getData(i, 56, 2) for i in IDS] == start
        # Goals, then torque on, one sync write each.
        goal_writer = scs.GroupSyncWrite(sdk, 42, 2)
        torque_writer = scs.GroupSyncWrite(sdk, 40, 1)
        for i, g in zip(IDS, goals):
            assert goal_writer.addParam(i, [sdk.scs_lobyte(g), sdk.scs_hibyte(g)])
            assert torque_writer.addParam(i, [1])
        assert goal_writer.txPacket() == scs.COMM_SUCCESS
        assert torque_writer.txPacket() == scs.COMM_SUCCESS
        # The servos took them (the SDK reads each register back; a read moves the servo once).
        for k, i in enumerate(IDS):
            assert sdk.read2ByteTxRx(i, 42) == (goals[k], scs.COMM_SUCCESS, 0)
            assert sdk.read1ByteTxRx(i, 40) == (1, scs.COMM_SUCCESS, 0)
        # First-order motion, read by read.
        assert_follows(lambda: reader.txRxPacket() == scs.COMM_SUCCESS and [reader.getData(i, 56, 2) for i in IDS],
                       closer(closer(start, goals), goals), goals)
        assert pty.splitter.dropped == 0


def test_feetech_sdk_reads_position_and_load_of_a_held_servo(scs):
    bus = FakeSTSBus(IDS, follow=FOLLOW)
    with sdk_on_pty(scs, bus) as (pty, port):
        sdk = scs.sms_sts(port)
        with pty.lock:
            bus.block(3)
        assert sdk.write1ByteTxRx(3, 40, 1) == (scs.COMM_SUCCESS, 0)
        assert sdk.write2ByteTxRx(3, 42, 2048 - 300) == (scs.COMM_SUCCESS, 0)
        assert sdk.ReadPos(3) == (2048, scs.COMM_SUCCESS, 0)     # held where it was
        load, result, error = sdk.read2ByteTxRx(3, 60)
        # Sign and magnitude, bit 10 the sign: pushing toward lower ticks at full load (1000).
        assert (sdk.scs_tohost(load, 10), result, error) == (-1000, scs.COMM_SUCCESS, 0)
        with pty.lock:
            bus.block(3, False)
        assert sdk.ReadPos(3) == (2048 - 150, scs.COMM_SUCCESS, 0)
        assert sdk.read2ByteTxRx(3, 60) == (0, scs.COMM_SUCCESS, 0)
        # A volt and temperature read as Feetech's table has them (0.1 V, deg C).
        assert sdk.read1ByteTxRx(3, 62) == (74, scs.COMM_SUCCESS, 0)
        assert sdk.read1ByteTxRx(3, 63) == (30, scs.COMM_SUCCESS, 0)


def test_an_absent_id_is_the_sdks_timeout_and_a_bad_checksum_its_corrupt_packet(scs):
    bus = FakeSTSBus([1, 2])
    with sdk_on_pty(scs, bus) as (pty, port):
        sdk = scs.sms_sts(port)
        assert sdk.ping(7)[1] == scs.COMM_RX_TIMEOUT
        with pty.lock:
            bus.corrupt(2)
        assert sdk.ReadPos(2)[1] == scs.COMM_RX_CORRUPT
        assert sdk.ReadPos(1) == (2048, scs.COMM_SUCCESS, 0)


def test_dynamixel_sdk_on_a_pty_pings_sync_writes_and_sync_reads(dxl):
    start, goals = start_and_goals(30)
    bus = FakeDynamixelBus(IDS, present=start, follow=FOLLOW)
    with sdk_on_pty(dxl, bus) as (pty, port):
        ph = dxl.PacketHandler(2.0)
        for i in IDS:
            assert ph.ping(port, i) == (1200, dxl.COMM_SUCCESS, 0)     # an XL330-M288's model number
        reader = dxl.GroupSyncRead(port, ph, 132, 4)
        for i in IDS:
            assert reader.addParam(i)
        assert reader.txRxPacket() == dxl.COMM_SUCCESS
        assert [reader.getData(i, 132, 4) for i in IDS] == start
        torque = dxl.GroupSyncWrite(port, ph, 64, 1)
        goal_writer = dxl.GroupSyncWrite(port, ph, 116, 4)
        for i, g in zip(IDS, goals):
            assert torque.addParam(i, [1])
            assert goal_writer.addParam(i, list(g.to_bytes(4, "little")))
        assert torque.txPacket() == dxl.COMM_SUCCESS
        assert goal_writer.txPacket() == dxl.COMM_SUCCESS
        for k, i in enumerate(IDS):
            assert ph.read4ByteTxRx(port, i, 116) == (goals[k], dxl.COMM_SUCCESS, 0)
        assert_follows(lambda: reader.txRxPacket() == dxl.COMM_SUCCESS and [reader.getData(i, 132, 4) for i in IDS],
                       closer(start, goals), goals)
        assert pty.splitter.dropped == 0


def test_dynamixel_sdk_reads_position_and_load_of_a_held_servo(dxl):
    bus = FakeDynamixelBus(IDS, follow=FOLLOW)
    with sdk_on_pty(dxl, bus) as (pty, port):
        ph = dxl.PacketHandler(2.0)
        with pty.lock:
            bus.block(5)
        assert ph.write1ByteTxRx(port, 5, 64, 1) == (dxl.COMM_SUCCESS, 0)
        assert ph.write4ByteTxRx(port, 5, 116, 2048 + 400) == (dxl.COMM_SUCCESS, 0)
        assert ph.read4ByteTxRx(port, 5, 132) == (2048, dxl.COMM_SUCCESS, 0)
        load, result, error = ph.read2ByteTxRx(port, 5, 126)
        assert (load, result, error) == (1000, dxl.COMM_SUCCESS, 0)     # toward higher ticks, full load
        with pty.lock:
            bus.block(5, False)
        assert ph.read4ByteTxRx(port, 5, 132) == (2048 + 200, dxl.COMM_SUCCESS, 0)
        assert ph.read2ByteTxRx(port, 5, 126) == (0, dxl.COMM_SUCCESS, 0)
        assert ph.ping(port, 9)[1] == dxl.COMM_RX_TIMEOUT


def test_a_packet_in_pieces_with_noise_before_it_is_one_packet(dxl):
    """A serial line gives bytes in any pieces: the pty's server puts each packet together."""
    bus = FakeDynamixelBus([1])
    with sdk_on_pty(dxl, bus) as (pty, port):
        ph = dxl.PacketHandler(2.0)
        # The SDK's own read packet, sent a byte at a time after three bytes of line noise.
        bus.record = []
        assert ph.read4ByteTxRx(port, 1, 132) == (2048, dxl.COMM_SUCCESS, 0)
        request = bus.record[0]
        port.ser.write(b"\x00\xff\x7f")
        for b in request:
            port.ser.write(bytes([b]))
            port.ser.flush()
        port.setPacketTimeoutMillis(0)
        rx, result = ph.rxPacket(port, False)
        assert result == dxl.COMM_SUCCESS and rx[4] == 1 and rx[9:13] == [0, 8, 0, 0]
        assert pty.splitter.dropped == 3


def test_splitter_finds_both_protocols_packets_in_any_pieces():
    rng = random.Random(5)
    sts = bytes.fromhex("ffff0104023802be")                        # READ 2 bytes at 56 from ID 1
    dxl_ping = bytes.fromhex("fffffd0001030001194e")               # ROBOTIS's e-Manual PING example
    for header, at, width, packet in ((b"\xff\xff", 3, 1, sts), (b"\xff\xff\xfd\x00", 5, 2, dxl_ping)):
        stream = b"\x13\xff" + packet + b"\xfe" + packet + packet
        for _ in range(20):
            splitter = PacketSplitter(header, at, width)
            got = []
            i = 0
            while i < len(stream):
                n = rng.randrange(1, 6)
                got += splitter.feed(stream[i:i + n])
                i += n
            assert got == [packet] * 3 and splitter.dropped == 3


def test_armctl_sim_bus_serves_a_boards_servos_until_stopped(dxl, tmp_path):
    link = tmp_path / "bus"
    proc = subprocess.Popen([sys.executable, "-m", "armctl.cli", "sim-bus", "--board", "koch", "--link", str(link)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert first.endswith(" (link %s)\n" % link), first + proc.stderr.read()
        port = patient(dxl)(str(link))
        assert port.openPort() and port.setBaudRate(1000000)
        ph = dxl.PacketHandler(2.0)
        for i in IDS:
            assert ph.ping(port, i) == (1200, dxl.COMM_SUCCESS, 0)
        assert ph.read4ByteTxRx(port, 3, 132) == (2048, dxl.COMM_SUCCESS, 0)
        port.closePort()
    finally:
        stop(proc)
    assert proc.returncode == 0 and not os.path.lexists(link)


# -- the firmware's drivers in the simulator, their packets remade by the SDKs -------------


def logged_packets(path):
    return [binascii.unhexlify(line) for line in Path(path).read_text().split()]


class Recorder:
    """A serial port that keeps what the SDK writes and answers nothing."""

    def __init__(self):
        self.sent = []
        self.in_waiting = 0

    def write(self, data):
        self.sent.append(bytes(data))
        return len(data)

    def read(self, n):
        return b""

    def reset_input_buffer(self):
        pass


def recording_port(sdk):
    port = sdk.PortHandler("recorder")
    port.ser = Recorder()
    port.is_open = True
    port.tx_time_per_byte = 0.01
    return port


def ticks(deg):
    return round(2048 + deg * 4096 / 360)


def sim_packets(monkeypatch, tmp_path, board, q):
    """The packets the firmware's driver sends while `armctl sim` with board boots, moves to q
    and reads where the servos are."""
    log = tmp_path / "bus.log"
    monkeypatch.setenv("ARMFW_SIM_BUS_LOG", str(log))
    with Simulator(board) as sim:
        assert sim.readline().startswith("# armfw ")
        reply = sim.request("joints %s" % " ".join(str(v) for v in q))
        assert reply[-1].startswith("ok OK "), reply
        assert " measured=" in sim.request("where")[-1]
    return logged_packets(log)


def test_the_sts_drivers_packets_in_the_simulator_are_the_feetech_sdks(scs, micropython, monkeypatch, tmp_path):
    q = [10, -20, 30, 10, 0]
    packets = sim_packets(monkeypatch, tmp_path, BOARDS / "so101.json", q)
    port = recording_port(scs)
    sdk = scs.sms_sts(port)
    kinds = set()
    for packet in packets:
        servo, instruction, params = packet[2], packet[4], list(packet[5:-1])
        port.ser.sent.clear()
        port.is_using = False
        if instruction == 0x01:
            sdk.ping(servo)
        elif instruction == 0x83:                      # SYNC WRITE: address, width, then ID + data each
            address, width = params[0], params[1]
            group = scs.GroupSyncWrite(sdk, address, width)
            for at in range(2, len(params), width + 1):
                group.addParam(params[at], params[at + 1:at + 1 + width])
            group.txPacket()
        elif instruction == 0x82:                      # SYNC READ: address, width, then IDs
            group = scs.GroupSyncRead(sdk, params[0], params[1])
            for servo_id in params[2:]:
                group.addParam(servo_id)
            group.txPacket()
        elif instruction == 0x02:
            sdk.readTx(servo, params[0], params[1])
        elif instruction == 0x03:
            sdk.writeTxOnly(servo, params[0], len(params) - 1, params[1:])
        else:
            pytest.fail("an instruction the driver should not send: %r" % packet)
        kinds.add(instruction)
        assert port.ser.sent[0] == packet
    assert {0x01, 0x82, 0x83} <= kinds
    # Every ID pinged at start; the last goals sent are q's ticks (the gripper is not moved).
    assert [p[2] for p in packets if p[4] == 0x01] == IDS
    last = [p for p in packets if p[4] == 0x83 and p[5] == 42][-1]
    goals = [sdk.scs_makeword(last[8 + 3 * k], last[9 + 3 * k]) for k in range(5)]
    assert [last[7 + 3 * k] for k in range(5)] == IDS[:5]
    assert goals == [ticks(v) for v in q]


def test_the_dynamixel_drivers_packets_in_the_simulator_are_the_dynamixel_sdks(dxl, micropython, monkeypatch,
                                                                               tmp_path):
    q = [20, 20, -30, 10, 0]
    packets = sim_packets(monkeypatch, tmp_path, BOARDS / "koch.json", q)
    port = recording_port(dxl)
    ph = dxl.PacketHandler(2.0)
    kinds = set()
    for packet in packets:
        plain = ph.removeStuffing(list(packet))         # the SDK's own unstuffing
        servo, instruction, params = plain[4], plain[7], plain[8:-2]
        port.ser.sent.clear()
        port.is_using = False
        if instruction == 0x01:
            ph.ping(port, servo)
        elif instruction in (0x82, 0x83):               # SYNC READ / WRITE: address, width (2 bytes each), ...
            address = dxl.DXL_MAKEWORD(params[0], params[1])
            width = dxl.DXL_MAKEWORD(params[2], params[3])
            if instruction == 0x83:                     # ... then ID + data each
                group = dxl.GroupSyncWrite(port, ph, address, width)
                for at in range(4, len(params), width + 1):
                    group.addParam(params[at], params[at + 1:at + 1 + width])
            else:                                       # ... then IDs
                group = dxl.GroupSyncRead(port, ph, address, width)
                for servo_id in params[4:]:
                    group.addParam(servo_id)
            group.txPacket()
        elif instruction == 0x02:
            ph.readTx(port, servo, dxl.DXL_MAKEWORD(params[0], params[1]), dxl.DXL_MAKEWORD(params[2], params[3]))
        elif instruction == 0x03:
            ph.writeTxOnly(port, servo, dxl.DXL_MAKEWORD(params[0], params[1]), len(params) - 2, params[2:])
        else:
            pytest.fail("an instruction the driver should not send: %r" % packet)
        kinds.add(instruction)
        assert port.ser.sent[0] == packet
    assert {0x01, 0x82, 0x83} <= kinds
    assert [p[4] for p in packets if p[7] == 0x01] == IDS
    last = [p for p in packets if p[7] == 0x83 and p[8] == 116][-1]
    entries = [last[12 + 5 * k:17 + 5 * k] for k in range(5)]
    assert [e[0] for e in entries] == IDS[:5]
    goals = [dxl.DXL_MAKEDWORD(dxl.DXL_MAKEWORD(e[1], e[2]), dxl.DXL_MAKEWORD(e[3], e[4])) for e in entries]
    assert goals == [ticks(v) for v in q]
