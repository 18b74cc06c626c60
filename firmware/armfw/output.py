# SPDX-License-Identifier: MIT
"""What the servos were sent: the driver, the pulse per joint and the pose it commands.

The pose is known once every joint has been sent a pulse since boot or the
last relax; until then there is nothing to interpolate from, and a motion
must start with a pose sent at once (home).
"""


class ServoOutput:
    """driver: the servo driver (armfw.drivers); servos: the board's servo map
    (armfw.servo.ServoMap); q: the commanded pose (radians), a list this
    output writes as it sends."""

    def __init__(self, driver, servos, q):
        self.driver = driver
        self.servos = servos
        self.q = q
        n = len(q)
        self.us = [-1] * n          # last pulse sent per joint (-1: none since boot or relax)
        self.next_us = [0] * n      # the pulses send() sends

    def send(self):
        """Send the pulses of next_us that differ from the last ones sent."""
        us = self.next_us
        sent = self.us
        channels = self.servos.channels
        for i in range(len(sent)):
            if us[i] != sent[i]:
                self.driver.set_us(channels[i], us[i])
                sent[i] = us[i]

    def send_pose(self, q):
        """Send pose q (radians) at once, with no interpolation: the servos move at their own speed.

        For an arm whose pose is unknown (boot, relax), where there is nothing
        to interpolate from. False (nothing sent) if a pulse is outside its window.
        """
        if self.servos.pulses(q, self.next_us) >= 0:
            return False
        for i in range(len(self.q)):
            self.q[i] = q[i]
        self.send()
        return True

    def send_joint_pulse(self, joint, us):
        """Send one joint's pulse us (µs, its window checked) at once; the rest stay as they are."""
        self.driver.set_us(self.servos.channels[joint], us)
        self.us[joint] = us
        self.q[joint] = self.servos.angle(joint, us)

    def relax(self):
        """Stop every servo's pulses (the arm can be moved by hand); the pose is then unknown."""
        self.driver.off()
        for i in range(len(self.us)):
            self.us[i] = -1

    def pose_known(self):
        """True when every joint has been sent a pulse since boot or the last relax()."""
        for us in self.us:
            if us < 0:
                return False
        return True

    def joint_of_channel(self, channel):
        """Joint index driven by channel, or -1."""
        channels = self.servos.channels
        for i in range(len(self.us)):
            if channels[i] == channel:
                return i
        return -1
