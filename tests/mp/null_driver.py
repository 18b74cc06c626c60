# SPDX-License-Identifier: MIT
# The servo driver the MicroPython benches and checks build their controller on
# (bench_line.py, bench_motion.py, near_check.py): it drives nothing, so a live
# step is timed and weighed without the driver's write.


class NullDriver:
    def set_us(self, channel, us):
        pass

    def off(self, channel=None):
        pass
