# SPDX-License-Identifier: MIT
"""The `help` text: one line per command of armfw.commands, in its order, then the
real-time characters. Imported by `help` alone and released after it (the text
is not kept in a board's heap)."""

HELP = (
    "ik X Y [Z PITCH [ROLL]] [elbow=up|down]  solve, do not move: ok STATUS q1..qn elbow= err_mm=",
    "fk Q1..QN                 tool position of joint angles: ok X Y [Z PITCH]",
    "move X Y [Z PITCH [ROLL]] [elbow=up|down]  joint-interpolated move to the IK solution",
    "line X Y [Z PITCH [ROLL]] straight tool line (IK every step, whole path checked first)",
    "joints Q1..QN             move to joint angles (deg)",
    "path add Q1..QN | record | run | clear  waypoints (deg; record: where moved by hand); run: one motion",
    "servo CH US               raw pulse on one channel (wiring check), inside its window",
    "servo read                bus servos: every servo's present position in its ticks",
    "where                     commanded pose: ok STATUS q1..qn x= y= [z= pitch= roll=] [measured=] grip= clear_mm= ...",
    "home                      move to the board's home pose",
    "grip open|close           open or close the gripper",
    "pick X Y [Z]              above, down, close gripper, lift (arm5: tool pointing down)",
    "place X Y [Z]             above, down, open gripper, lift",
    "jog DX DY [DZ DPITCH]     straight tool line by a relative amount",
    "jog jN DEG                turn joint N by a relative angle",
    "relax                     servo outputs off (move the arm by hand); then home",
    "engage                    bus servos: torque back on where the relaxed arm was left",
    "unlock                    allow motion again after an abort (Ctrl-X)",
    "speed [DEG_PER_S]         show or set the joint speed limit",
    "accel [DEG_S2 [MM_S2]]    show or set the joint (and tool) acceleration limits",
    "progress on|off           '# progress' lines during moves longer than 1 s",
    "echo on|off               echo typed characters and prompt '> ' (people)",
    "check [on|off]            check mode: motions are validated, nothing moves ($C)",
    "wait MS                   dwell: wait MS milliseconds (G4)",
    "G0 G1 G2 G3 G4 G28 G90 G91 M0 M3 M5 M114 M400 ...  G-code (firmware/PROTOCOL.md)",
    "pose save|go|del NAME     save the pose as NAME (relaxed: where moved by hand), move to it, delete it",
    "pose set NAME Q1..QN      save joint angles (deg) as NAME;  pose list: one # line each",
    "info                      board name, arm kind, joint names, zones, clearance",
    "help                      this list",
    "sync TOKEN                answers ok TOKEN (host resynchronisation)",
    "? ! ~ Ctrl-X              real-time, no line end: status, hold, resume, abort",
)
