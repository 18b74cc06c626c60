# SPDX-License-Identifier: MIT
"""No pulse outside a joint's window ever reaches a servo driver, on any board.

For every board, a dense sweep of joint angles (inside the limits, far
outside, and NaN/inf/huge) goes down the firmware's path: the arm's joint
limits (arm.within_limits), then the servo map (servos.pulses), then the
board's own driver on fake hardware (a register-level PCA9685, fake
machine.PWM pins, or the simulated driver). What reaches the hardware is
decoded back to microseconds (PCA9685 counts times the count length the
programmed prescale gives; PWM duty_ns / duty_u16) and checked against the
joint's window. Expected pulses come from the board JSON and the linear
formula, worked here, not from the servo map. An angle up to LIMIT_EPS past a
limit counts as inside (the solver's float tolerance); on the committed
boards that still maps into the window.

The PCA9685 quantises a pulse to its count, 4.88 us at 50 Hz: a pulse at a
window edge decodes to within half a count of it. The check there is that
the count lies between the counts of the two window edges (rounding is
monotone), which is what the chip can honestly promise.

Then every solution in tests/vectors/*.json, and the firmware's own IK answer
for every vector target, goes through the same path.

Only hardware can show that the servo really turns to the angle the pulse
means (calibration) and that it stops at its mechanical end stops.
"""

import importlib.util
import json
import math
import sys
from fractions import Fraction

import pytest

from armfw import board, drivers, kinematics
from armfw.servo import REFUSED
from armfw.status import name as status_name, solved
from conftest import BOARDS, MP_SCRIPTS, ROOT, VECTORS, board_without_zones

sys.path.insert(0, str(ROOT / "tests"))
from fake_i2c import FakeMachine, FakePCA9685  # noqa: E402

from armfw.pca9685 import PCA9685  # noqa: E402
from armfw.simservo import SimServo  # noqa: E402

BOARD_FILES = sorted(BOARDS.glob("*.json"))
EPS = kinematics.LIMIT_EPS


def expected_us(j, q):
    """Board JSON joint j at angle q (radians): the unrounded linear pulse."""
    return j["center_us"] + (math.radians(j["offset_deg"]) + j["sign"] * q) * j["us_per_rad"]


def sweep(lo, hi):
    """Dense angles over +-3 pi (0.45 deg apart), the limits' edges, non-finite and huge values."""
    n = 2400
    dense = [-3 * math.pi + 6 * math.pi * k / n for k in range(n + 1)]
    edges = []
    for a in (lo, hi):
        for d in (0.0, 1e-9, -1e-9, EPS / 2, -EPS / 2, 2 * EPS, -2 * EPS, 1e-3, -1e-3):
            edges.append(a + d)
    return dense + edges + [math.nan, math.inf, -math.inf, 1e300, -1e300, 1e-300, -0.0]


class Spy:
    """Wraps a driver: keeps every (channel, us) handed to set_us."""

    def __init__(self, driver):
        self.driver = driver
        self.sent = []

    def set_us(self, channel, us):
        self.sent.append((channel, us))
        self.driver.set_us(channel, us)

    def off(self, channel=None):
        self.driver.off(channel)


def backends(b, monkeypatch):
    """(label, driver, decode(channel, window) -> (us, in_window, tolerance_us)) for the board.

    The board's own driver on fake hardware; the simulated boards also through a
    PCA9685 (their channels are 0..5), so the count-level check runs for them too.
    """
    kind = b.driver["kind"]
    out = []
    if kind in ("pca9685", "sim"):
        if kind == "pca9685":
            fake = FakeMachine(b.driver["address"])
            monkeypatch.setitem(sys.modules, "machine", fake.module())
            drv, chip, osc = drivers.make(b), fake.chip, b.driver["osc_hz"]
        else:
            chip, osc = FakePCA9685(record=False), 25_000_000
            drv = PCA9685(chip, 0x40, b.driver["freq_hz"], osc)
        tick = Fraction((chip.prescale() + 1) * 1_000_000, osc)

        def count_of(us):
            return math.floor(Fraction(us) / tick + Fraction(1, 2))

        def decode_chip(ch, window):
            n = chip.high_counts(ch)
            return n * tick, count_of(window[0]) <= n <= count_of(window[1]), tick / 2
        out.append(("pca9685", drv, decode_chip))
    if kind == "pwm":
        fake = FakeMachine()
        monkeypatch.setitem(sys.modules, "machine", fake.module())
        drv = drivers.make(b)

        def decode_pwm(ch, window):
            us = fake.pwms[ch].pulse_us()
            return us, window[0] <= us <= window[1], 0.0
        out.append(("pwm", drv, decode_pwm))
    if kind in ("sts", "dynamixel"):
        from fake_uart import FakeDynamixelBus, FakeSTSBus
        from armfw.servobus import Bus
        if kind == "sts":
            from armfw.sts import STSServos as Servos
            bus = FakeSTSBus(drivers.channels(b))
        else:
            from armfw.dynamixel import DynamixelServos as Servos
            bus = FakeDynamixelBus(drivers.channels(b))
        drv = Servos(Bus(bus), drivers.channels(b), b.driver["ticks_per_rev"])

        def decode_bus(ch, window):
            goal = bus.servo(ch).goal       # what the servo took, from its goal register
            return goal, window[0] <= goal <= window[1], 0.0
        out.append((kind, drv, decode_bus))
    if kind == "sim":
        drv = drivers.make(b)
        assert isinstance(drv, SimServo)

        def decode_sim(ch, window):
            t, channel, us = list(drv.records())[-1]
            assert channel == ch
            return float(us), window[0] <= us <= window[1], 0.0
        out.append(("sim", drv, decode_sim))
    return out


@pytest.mark.parametrize("path", BOARD_FILES, ids=lambda p: p.stem)
def test_joint_sweep_never_sends_a_pulse_outside_the_window(path, monkeypatch, report):
    b = board.load(str(path))
    data = json.loads(path.read_text())
    arm, servos = b.solver, b.servos
    n = arm.n
    sent_total = 0
    for label, driver, decode in backends(b, monkeypatch):
        spy = Spy(driver)
        for i, j in enumerate(data["joints"]):
            window = (j["min_us"], j["max_us"])
            lo, hi = arm.lo[i], arm.hi[i]
            for q in sweep(lo, hi):
                pose = list(arm.home)
                pose[i] = q
                inside = math.isfinite(q) and lo - EPS <= q <= hi + EPS
                assert arm.within_limits(pose) == inside, (i, q)
                # The servo map alone never clamps: a pulse it gives is the formula's.
                us = servos.pulse(i, q)
                if us != REFUSED:
                    exact = expected_us(j, q)
                    assert us == math.floor(exact + 0.5) and window[0] <= us <= window[1], (i, q, us)
                else:
                    assert not inside, (i, q)
                if not inside:
                    continue            # refused: nothing is sent, nothing is clamped
                pulses = [0] * n
                assert servos.pulses(pose, pulses) == -1
                before = len(spy.sent)
                spy.set_us(servos.channels[i], pulses[i])
                assert spy.sent[before:] == [(j["channel"], pulses[i])]
                got, in_window, tol = decode(j["channel"], window)
                assert in_window, (label, i, q, pulses[i], got)
                assert abs(got - pulses[i]) <= tol
            # every pulse this joint sent is inside its window
            mine = [us for ch, us in spy.sent if ch == j["channel"]]
            assert mine and all(window[0] <= us <= window[1] for us in mine)
            assert min(mine) == math.floor(min(expected_us(j, lo), expected_us(j, hi)) + 0.5)
        sent_total += len(spy.sent)
    report("%s: %d joint pulses swept through its driver(s), all inside their windows"
           % (b.name, sent_total))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e300])
def test_non_finite_pose_sends_nothing(bad):
    for path in BOARD_FILES:
        b = board.load(str(path))
        for i in range(b.solver.n):
            pose = list(b.solver.home)
            pose[i] = bad
            assert not b.solver.within_limits(pose)
            out = [0] * b.solver.n
            assert b.servos.pulses(pose, out) == i


# --- test vectors ---------------------------------------------------------------

VECTOR_FILES = sorted(VECTORS.glob("*.json"))


def test_vectors_exist():
    """The vectors are written by the IK helper; this part must not silently vanish."""
    assert [p.name for p in VECTOR_FILES] == ["arm5.json", "arm5_tool.json", "planar.json"]


def load_runner():
    """The vectors' own case runner (tests/mp/run_vectors.py: JSON target -> arm.ik)."""
    spec = importlib.util.spec_from_file_location("run_vectors", MP_SCRIPTS / "run_vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", VECTOR_FILES, ids=lambda p: p.stem)
def test_every_vector_solution_maps_into_the_windows(path, monkeypatch, report):
    vec = json.loads(path.read_text())
    b = board_without_zones(vec["board"])       # the vectors are the solver's, zones off
    data = json.loads((BOARDS / vec["board"]).read_text())
    arm, servos = b.solver, b.servos
    n = arm.n
    runner = load_runner()
    (label, driver, decode), *_ = backends(b, monkeypatch)
    spy = Spy(driver)

    def send(q, what):
        assert arm.within_limits(q), what
        pulses = [0] * n
        assert servos.pulses(q, pulses) == -1, what
        for i, j in enumerate(data["joints"]):
            window = (j["min_us"], j["max_us"])
            assert pulses[i] == math.floor(expected_us(j, q[i]) + 0.5), what
            spy.set_us(j["channel"], pulses[i])
            got, in_window, tol = decode(j["channel"], window)
            assert in_window and abs(got - pulses[i]) <= tol, (what, i, pulses[i], got)

    given = solved_fw = 0
    out = [0.0] * n
    for case in vec["cases"]:
        if case["q_deg"] is not None:
            send([math.radians(v) for v in case["q_deg"]], case["id"])
            given += 1
        st = runner.solve(arm, case, out)
        assert status_name(st) == case["status"], case["id"]
        if solved(st):
            send(list(out), case["id"] + " (firmware IK)")
            solved_fw += 1
    assert given > 50 and solved_fw == given
    report("%s vectors: %d given solutions and %d firmware IK solutions mapped, all pulses in window"
           % (path.stem, given, solved_fw))


# --- gripper --------------------------------------------------------------------

@pytest.mark.parametrize("path", [p for p in BOARD_FILES if "gripper" in json.loads(p.read_text())],
                         ids=lambda p: p.stem)
def test_gripper_pulses_stay_in_its_window(path, monkeypatch):
    from armfw.gripper import Gripper

    b = board.load(str(path))
    g_cfg = json.loads(path.read_text())["gripper"]
    lo, hi = g_cfg["min_us"], g_cfg["max_us"]
    (label, driver, decode), *_ = backends(b, monkeypatch)
    spy = Spy(driver)
    grip = Gripper(spy, b.gripper)
    assert grip.state is None
    grip.open()
    assert grip.state == "open" and spy.sent[-1] == (g_cfg["channel"], g_cfg["open_us"])
    grip.close()
    assert grip.state == "closed" and spy.sent[-1] == (g_cfg["channel"], g_cfg["close_us"])
    for us in list(range(-10, 3001, 7)) + [lo, hi, lo - 1, hi + 1, 1500.0, True, None, math.nan, "1500"]:
        before = len(spy.sent)
        ok = type(us) is int and lo <= us <= hi
        if ok:
            grip.set_us(us)
            got, in_window, tol = decode(g_cfg["channel"], (lo, hi))
            assert in_window and abs(got - us) <= tol
            assert grip.state == {g_cfg["open_us"]: "open", g_cfg["close_us"]: "closed"}.get(us)
        else:
            state = grip.state
            with pytest.raises(ValueError):
                grip.set_us(us)
            assert grip.state == state and len(spy.sent) == before      # refused, not clamped
    assert all(lo <= us <= hi for ch, us in spy.sent)
    grip.off()
    assert grip.state is None


# --- PWM pins -------------------------------------------------------------------

def _pwm_servos(pins, freq, cls):
    from armfw.pwmservo import PWMServos
    made = {}

    def make(pin, f):
        made[pin] = cls(pin, freq=f, duty_u16=0)
        return made[pin]
    return PWMServos(pins, freq, make), made


@pytest.mark.parametrize("freq", [50, 60, 333])
def test_pwm_duty_u16_is_the_nearest_value(freq):
    """Ports without duty_ns: duty_u16 = us * freq * 65535 / 1e6, nearest (half up);
    machine.PWM documents the duty as duty_u16 / 65535, so a whole period is 65535."""
    from fake_i2c import FakePWMU16
    servos, made = _pwm_servos([4, 5], freq, FakePWMU16)
    assert all(p.u16 == 0 and p.freq() == freq for p in made.values())     # no pulse until commanded
    for us in range(0, 1_000_000 // freq + 1):
        servos.set_us(5, us)
        exact = Fraction(us * freq * 65535, 1_000_000)
        assert made[5].u16 == math.floor(exact + Fraction(1, 2))
        assert abs(made[5].pulse_us() - us) <= 1e6 / (freq * 65535) / 2 + 1e-9
    if freq in (50, 60):        # the frame rates the boards use: no long ints on 32-bit ports
        assert servos.period_us * servos._num + servos._half < 2 ** 30


def test_pwm_duty_ns_where_the_port_has_it():
    from fake_i2c import FakePWM
    servos, made = _pwm_servos([13, 12], 50, FakePWM)
    for us in (0, 500, 1520, 2500, 20000):
        servos.set_us(13, us)
        assert made[13].ns == us * 1000 and made[13].u16 is None


def test_pwm_refusals_off_and_deinit():
    from fake_i2c import FakePWM
    from armfw.pwmservo import PWMServos
    servos, made = _pwm_servos([13, 12], 50, FakePWM)
    for bad in (1500.0, True, -1, 20001, None, math.nan):
        with pytest.raises(ValueError):
            servos.set_us(13, bad)
    with pytest.raises(ValueError):
        servos.set_us(14, 1500)                 # not one of the board's pins
    assert made[13].pulse_us() == 0
    servos.set_us(13, 1500)
    servos.set_us(12, 1600)
    servos.off(13)
    assert made[13].pulse_us() == 0 and made[12].pulse_us() == 1600
    servos.off()
    assert made[12].pulse_us() == 0
    servos.deinit()
    assert all(p.deinited for p in made.values())
    with pytest.raises(ValueError):
        servos.set_us(12, 1500)
    with pytest.raises(ValueError):
        PWMServos([1, 1], 50, lambda pin, f: FakePWM(pin, freq=f))
    with pytest.raises(ValueError):
        PWMServos([1], 50.0, lambda pin, f: FakePWM(pin, freq=f))
