# SPDX-License-Identifier: MIT
# The names the firmware interned, counted once main.py has served its input.
#
# Run from the flash folder, beside main.py (armctl.memory.answer(..., script=...)
# copies both there). main.py ends with sys.exit when its input ends; then this
# prints micropython.qstr_info()'s line: n_pool, the pools of names made at run
# time, and n_qstr, the names in them. Its own name and file name are two names
# more than main.py alone interns.
try:
    import main  # noqa: F401  (boots and serves until the input ends)
except SystemExit:
    import micropython
    micropython.qstr_info()
