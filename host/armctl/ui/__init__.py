# SPDX-License-Identifier: MIT
"""`armctl ui`: a local web page that shows the arm live and drives it.

- armctl.ui.geometry: what the page draws, computed with the firmware's own
  kinematics (armfw): link points of a pose, the reach envelope, pulses.
- armctl.ui.preview: a straight line checked by the firmware's own motion
  planner on the host, before anything moves.
- armctl.ui.session: the one link to the board every open tab shares
  (requests one at a time, a transcript, the pose the board reports).
- armctl.ui.words: what a page may send (request words within the line
  protocol's rules, numbers a board's float holds).
- armctl.ui.probe: the servo maps and tool offset the board runs, asked of
  the board in check mode (nothing moves).
- armctl.ui.server: the aiohttp application (page, static files, websocket)
  behind its door (a token per launch, a Host allowlist, the Origin).
- static/: the page, its drawing code and style (no third-party script).
"""
