# SPDX-License-Identifier: MIT
"""`armctl board wiring NAME -o FILE.svg`: a board's wiring drawn from its board file.

Pin numbers are checked against the Raspberry Pi Pico datasheet's pinout
(GP4 is pin 6, GP5 pin 7, 3V3(OUT) pin 36, GND pin 38) and the PCA9685's
address rule (0x40 + A5..A0), not against the drawing code's tables.
"""

import json
import xml.etree.ElementTree as ET

import pytest

from armctl import BOARDS_DIR, cli, wiring
from conftest import ROOT

# Boards on a servo bus (sts, dynamixel) have no wiring picture yet: docs/HARDWARE.md describes theirs.
WIRED = sorted(p.stem for p in BOARDS_DIR.glob("*.json")
               if json.loads(p.read_text())["driver"]["kind"] in ("pca9685", "pwm"))
DOCS = ROOT / "docs" / "wiring"


def texts(svg_text):
    root = ET.fromstring(svg_text)
    return [el.text or "" for el in root.iter("{http://www.w3.org/2000/svg}text")]


def draw(name, tmp_path):
    out = tmp_path / (name + ".svg")
    assert cli.main(["board", "wiring", name, "-o", str(out)]) == cli.EXIT_OK
    return out.read_text()


def test_there_are_wired_boards():
    assert {"pico_pca9685", "esp32_pca9685", "esp32_pwm"} <= set(WIRED)


@pytest.mark.parametrize("name", WIRED)
def test_every_servo_and_the_power_are_drawn(name, tmp_path):
    board = json.loads((BOARDS_DIR / (name + ".json")).read_text())
    words = texts(draw(name, tmp_path))
    joined = "\n".join(words)
    outputs = [(j["name"], j["channel"], j["min_us"], j["max_us"]) for j in board["joints"]]
    g = board["gripper"]
    outputs.append(("gripper", g["channel"], g["min_us"], g["max_us"]))
    for label, channel, lo, hi in outputs:
        assert "%s servo" % label in words
        assert "%d..%d us" % (lo, hi) in joined
        if board["driver"]["kind"] == "pca9685":
            assert "ch %d" % channel in words
        else:
            assert "GPIO%d" % channel in words       # a pwm board's channel is the pin
    assert "5-6 V" in joined and "bulk capacitor" in joined and "common ground" in joined
    assert "stall current: %d servos" % len(outputs) in joined


def test_the_pico_picture_names_its_pins_by_gp_and_package_pin(tmp_path):
    words = texts(draw("pico_pca9685", tmp_path))
    for pin in ("GP4 (pin 6)", "GP5 (pin 7)", "3V3 (pin 36)", "GND (pin 38)"):
        assert pin in words
    assert "PCA9685 at 0x40" in words and "all address jumpers open" in words and "I2C0, 400 kHz" in words


def test_the_esp32_picture_names_gpio_numbers(tmp_path):
    words = texts(draw("esp32_pca9685", tmp_path))
    assert "GPIO21" in words and "GPIO22" in words


@pytest.mark.parametrize("address, jumpers", [(0x40, "all address jumpers open"), (0x41, "bridge A0"),
                                              (0x45, "bridge A0, A2"), (0x7F, "bridge A0, A1, A2, A3, A4, A5")])
def test_address_jumpers(address, jumpers):
    assert wiring.address_jumpers(address) == jumpers


def test_an_address_no_pca9685_can_have_is_refused():
    with pytest.raises(ValueError):
        wiring.address_jumpers(0x3F)


def test_a_simulated_board_has_nothing_to_wire(tmp_path, capsys):
    assert cli.main(["board", "wiring", "sim_arm5", "-o", str(tmp_path / "x.svg")]) == cli.EXIT_USAGE
    assert "nothing to wire" in capsys.readouterr().err
    assert not (tmp_path / "x.svg").exists()


@pytest.mark.parametrize("name", WIRED)
def test_the_pictures_in_the_docs_are_what_the_command_draws(name, tmp_path):
    """docs/HARDWARE.md shows docs/wiring/NAME.svg: regenerate with `armctl board wiring NAME -o ...`."""
    assert (DOCS / (name + ".svg")).read_text() == draw(name, tmp_path), \
        "docs/wiring/%s.svg is stale: armctl board wiring %s -o docs/wiring/%s.svg" % (name, name, name)
    assert "wiring/%s.svg" % name in (ROOT / "docs" / "HARDWARE.md").read_text()
