# SPDX-License-Identifier: MIT
"""A board's wiring as an SVG picture, drawn from its board file alone.

    armctl board wiring pico_pca9685 -o pico_pca9685.svg

The microcontroller's pins the driver uses (I2C SDA/SCL, or one PWM pin per
servo), the PCA9685's address jumpers and channels, each servo's joint,
channel, pulse window and angle limits, and the servo power: a separate
5-6 V supply on the servos' V+ (never the board's 3.3 V or USB 5 V), a bulk
capacitor across it, and one ground shared by supply, driver and board.
"""

from xml.sax.saxutils import escape

# Raspberry Pi Pico: GPn -> the package's pin number (the Pico datasheet's pinout).
PICO_PINS = {0: 1, 1: 2, 2: 4, 3: 5, 4: 6, 5: 7, 6: 9, 7: 10, 8: 11, 9: 12, 10: 14, 11: 15, 12: 16, 13: 17,
             14: 19, 15: 20, 16: 21, 17: 22, 18: 24, 19: 25, 20: 26, 21: 27, 22: 29, 26: 31, 27: 32, 28: 34}
MCU_NAMES = {"rp2040": "Raspberry Pi Pico (RP2040)", "esp32": "ESP32 dev board"}
# Wire colours: the usual ones of servo leads and breakout boards.
RED, BLACK, ORANGE, BLUE, YELLOW = "#d62728", "#222222", "#ff7f0e", "#1f77b4", "#c9a400"
ROW = 34            # vertical pitch of the servo rows
TOP = 90


class NothingToWire(ValueError):
    """The board drives the simulator: it has no wiring."""


def pin_label(mcu, pin):
    """How a person finds GPIO `pin` on the board: GP4 (pin 6) on a Pico, GPIO21 on an ESP32."""
    if mcu == "rp2040":
        return "GP%d (pin %d)" % (pin, PICO_PINS[pin]) if pin in PICO_PINS else "GP%d" % pin
    return "GPIO%d" % pin


def address_jumpers(address):
    """The PCA9685 address jumpers A5..A0 for a 7-bit address 0x40..0x7F: which to bridge."""
    bits = address - 0x40
    if not 0 <= bits < 64:
        raise ValueError("PCA9685 address 0x%02x is outside 0x40..0x7f" % address)
    bridged = ["A%d" % i for i in range(6) if bits >> i & 1]
    return "bridge " + ", ".join(bridged) if bridged else "all address jumpers open"


def servos(board):
    """(label, channel, detail) of every output: the joints, then the gripper."""
    out = []
    for j in board["joints"]:
        out.append((j["name"], j["channel"], "%d..%d us, %g..%g deg" % (
            j["min_us"], j["max_us"], j["min_deg"], j["max_deg"])))
    g = board.get("gripper")
    if g:
        out.append(("gripper", g["channel"], "%d..%d us (open %d, closed %d)" % (
            g["min_us"], g["max_us"], g["open_us"], g["close_us"])))
    return out


class _Svg:
    def __init__(self):
        self.parts = []

    def box(self, x, y, w, h, title, fill="#f4f4f4"):
        self.parts.append('<rect x="%d" y="%d" width="%d" height="%d" rx="6" fill="%s" stroke="#444"/>'
                          % (x, y, w, h, fill))
        self.text(x + 8, y + 18, title, weight="bold")

    def text(self, x, y, content, size=12, weight="normal", anchor="start", fill="#000"):
        self.parts.append('<text x="%d" y="%d" font-size="%d" font-weight="%s" text-anchor="%s" fill="%s">%s</text>'
                          % (x, y, size, weight, anchor, fill, escape(content)))

    def wire(self, points, colour, width=2):
        self.parts.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="%d"/>'
                          % (" ".join("%d,%d" % p for p in points), colour, width))

    def dot(self, x, y, colour):
        self.parts.append('<circle cx="%d" cy="%d" r="3" fill="%s"/>' % (x, y, colour))

    def render(self, width, height, title):
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
                'font-family="sans-serif">\n<title>%s</title>\n<rect width="100%%" height="100%%" fill="white"/>\n%s\n'
                '</svg>\n' % (width, height, width, height, escape(title), "\n".join(self.parts)))


def svg(board):
    """The wiring picture (SVG text) of a board file's dict; NothingToWire for a simulated board."""
    driver = board["driver"]
    kind = driver["kind"]
    if kind == "sim":
        raise NothingToWire("%s drives the simulator (driver kind \"sim\"): there is nothing to wire"
                            % board["name"])
    mcu = board.get("mcu", "")
    outputs = servos(board)
    n = len(outputs)
    s = _Svg()
    s.text(20, 28, "%s: wiring" % board["name"], size=18, weight="bold")
    s.text(20, 50, board.get("title", ""), size=12)
    rows_top = TOP + 40
    height = rows_top + n * ROW + 190
    mcu_x, mcu_w = 20, 230
    servo_x, servo_w = 690, 330
    mcu_h = 80 + (n * ROW if kind == "pwm" else 60)
    s.box(mcu_x, TOP, mcu_w, mcu_h, MCU_NAMES.get(mcu, mcu or "board"))

    # Servo rows, right: each with its signal (left end), V+ and GND.
    rows = []
    for i, (label, channel, detail) in enumerate(outputs):
        y = rows_top + i * ROW
        s.box(servo_x, y - 14, servo_w, ROW - 6, "")
        s.text(servo_x + 10, y + 2, "%s servo" % label, weight="bold")
        s.text(servo_x + 120, y + 2, detail, size=11)
        rows.append((y, channel))

    gnd_y = rows_top + n * ROW + 60
    if kind == "pca9685":
        sda, scl = driver["sda"], driver["scl"]
        chip_x, chip_w = 380, 200
        s.box(chip_x, TOP, chip_w, rows_top + n * ROW - TOP + 10 + 30, "PCA9685 at 0x%02x" % driver["address"],
              "#e8f0fb")
        chip_bottom = rows_top + n * ROW + 40
        s.text(chip_x + 8, chip_bottom - 26, address_jumpers(driver["address"]), size=11)
        s.text(chip_x + 8, chip_bottom - 10, "%d Hz frames, %.3f MHz oscillator" % (
            driver["freq_hz"], driver["osc_hz"] / 1e6), size=11)
        # MCU side: SDA, SCL, 3V3, GND.
        pins = (("SDA", pin_label(mcu, sda), BLUE), ("SCL", pin_label(mcu, scl), YELLOW),
                ("VCC", "3V3" + (" (pin 36)" if mcu == "rp2040" else ""), RED),
                ("GND", "GND" + (" (pin 38)" if mcu == "rp2040" else ""), BLACK))
        for i, (chip_pin, mcu_pin, colour) in enumerate(pins):
            y = TOP + 40 + i * 20
            s.text(mcu_x + mcu_w - 8, y + 4, mcu_pin, anchor="end", size=11)
            s.text(chip_x - 6, y - 4, chip_pin, anchor="end", size=10)
            s.wire([(mcu_x + mcu_w, y), (chip_x, y)], colour)
            s.dot(mcu_x + mcu_w, y, colour)
            s.dot(chip_x, y, colour)
        s.text(mcu_x + 8, TOP + 36 + 4 * 20 + 10, "I2C%d, %d kHz" % (driver["i2c_id"], driver["i2c_freq"] // 1000),
               size=11)
        for y, channel in rows:
            s.text(chip_x + chip_w - 8, y + 4, "ch %d" % channel, anchor="end", size=11)
            s.wire([(chip_x + chip_w, y), (servo_x, y)], ORANGE)
            s.dot(chip_x + chip_w, y, ORANGE)
        power_to = (chip_x + chip_w // 2, chip_bottom)
    else:
        s.text(mcu_x + 8, TOP + mcu_h - 12, "LEDC PWM, %d Hz; one pin per servo" % driver["freq_hz"], size=11)
        for y, channel in rows:
            s.text(mcu_x + mcu_w - 8, y + 4, pin_label(mcu, channel), anchor="end", size=11)
            s.wire([(mcu_x + mcu_w, y), (servo_x, y)], ORANGE)
            s.dot(mcu_x + mcu_w, y, ORANGE)

    # Servo power: its own supply, a bulk capacitor across it, one common ground.
    sup_x, sup_y = 300, gnd_y + 20
    s.box(sup_x, sup_y, 360, 90, "Servo supply: 5-6 V, its own", "#fff4e0")
    s.text(sup_x + 8, sup_y + 36, "sized for stall current: %d servos x 1-2.5 A each" % n, size=11)
    s.text(sup_x + 8, sup_y + 52, "bulk capacitor 470-1000 uF across V+ and GND", size=11)
    s.text(sup_x + 8, sup_y + 68, "never from the board's 3.3 V or USB 5 V", size=11)
    if kind == "pca9685":
        # The breakout's V+ terminal feeds every channel header (GND, V+, signal).
        s.wire([(sup_x + 150, sup_y), (sup_x + 150, power_to[1])], RED, 3)
        s.wire([(sup_x + 210, sup_y), (sup_x + 210, power_to[1])], BLACK, 3)
        s.text(sup_x + 216, power_to[1] + 16, "V+ and GND terminal; each servo plugs into its channel's "
               "header (GND, V+, signal)", size=10)
        common = "common ground: the board's GND to the PCA9685's GND (it joins logic and terminal ground)"
    else:
        rail_x = servo_x + servo_w + 20
        s.wire([(sup_x + 360, sup_y + 20), (rail_x, sup_y + 20), (rail_x, rows_top - 14)], RED, 3)
        s.wire([(sup_x + 360, sup_y + 70), (rail_x + 20, sup_y + 70), (rail_x + 20, rows_top - 14)], BLACK, 3)
        s.text(servo_x, rows_top - 24, "every servo: V+ (red) and GND (black) from the supply", size=10)
        s.wire([(sup_x, sup_y + 70), (mcu_x + 40, sup_y + 70), (mcu_x + 40, TOP + mcu_h)], BLACK, 3)
        s.text(mcu_x + 48, TOP + mcu_h + 16, "GND", size=11)
        common = "common ground: supply, servos and the board's GND"
    s.text(20, height + 24, common, size=11)
    return s.render(servo_x + servo_w + 70, height + 40, "%s wiring" % board["name"])
