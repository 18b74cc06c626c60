// SPDX-License-Identifier: MIT
// Drawing the arm on 2D canvases: a 3D view (orbit with the mouse, zoom with the wheel)
// and two orthographic views (top: x, y; side: the vertical plane the arm faces).
// Every point comes from the server (the firmware's forward kinematics), in mm, z up.
"use strict";

const STATUS_COLOURS = {
  OK: "#2e7d32", SINGULAR: "#f9a825", TOO_FAR: "#c62828", TOO_CLOSE: "#6a1b9a",
  JOINT_LIMIT: "#ef6c00", COLLISION: "#ad1457", BAD_INPUT: "#616161", BAD_COMMAND: "#616161",
};
const LINK_COLOURS = ["#546e7a", "#1565c0", "#1e88e5", "#42a5f5", "#90caf9"];
const INK = "#263238";
const FAINT = "#cfd8dc";

function statusColour(word) {
  return STATUS_COLOURS[word] || "#616161";
}

// A canvas sized to its box at the screen's pixel density; draw in CSS pixels.
function fitCanvas(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.round(w * ratio) || canvas.height !== Math.round(h * ratio)) {
    canvas.width = Math.round(w * ratio);
    canvas.height = Math.round(h * ratio);
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return { ctx, w, h };
}

function polyline(ctx, pts, close) {
  ctx.beginPath();
  pts.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
  if (close) ctx.closePath();
}

function cross(ctx, p, size, colour, width) {
  ctx.strokeStyle = colour;
  ctx.lineWidth = width || 2.5;
  ctx.beginPath();
  ctx.moveTo(p[0] - size, p[1] - size); ctx.lineTo(p[0] + size, p[1] + size);
  ctx.moveTo(p[0] - size, p[1] + size); ctx.lineTo(p[0] + size, p[1] - size);
  ctx.stroke();
}

// Points of a circle (centre c, radius r) in the plane spanned by unit vectors a and b;
// from angle t0 to t1 (default the whole turn) in n pieces.
function circle3(c, r, a, b, n, t0, t1) {
  const out = [];
  const from = t0 || 0, to = t1 === undefined ? 2 * Math.PI : t1;
  for (let i = 0; i <= (n || 72); i++) {
    const t = from + ((to - from) * i) / (n || 72);
    out.push([c[0] + r * (Math.cos(t) * a[0] + Math.sin(t) * b[0]),
              c[1] + r * (Math.cos(t) * a[1] + Math.sin(t) * b[1]),
              c[2] + r * (Math.cos(t) * a[2] + Math.sin(t) * b[2])]);
  }
  return out;
}

// The arm's facing in the horizontal plane, from its points (the tool's, else the elbow's).
function facing(points) {
  for (let i = points.length - 1; i > 0; i--) {
    const p = points[i];
    if (Math.hypot(p[0], p[1]) > 1e-6) return Math.atan2(p[1], p[0]);
  }
  return 0;
}

// What the views draw, set by the page; each view reads it when it redraws.
const scene = {
  board: null,       // the board description (armctl.ui.geometry.describe)
  points: null,      // link points of the reported pose, mm
  q: null,           // its joint angles, degrees
  grip: null,        // "open" | "closed" | "unknown" | "none"
  ghost: null,       // {points, status}: the IK preview's pose
  target: null,      // [x, y, z] of the target entry (mm), colour of its status
  targetStatus: null,
  line: null,        // line preview: {ok, start, points, at}
  workspace: null,   // side view map {x: [x0, x1], y: [y0, y1], rows}
};

// ---------------------------------------------------------------- 3D view

class View3D {
  constructor(canvas) {
    this.canvas = canvas;
    this.reset();
    let drag = null;
    canvas.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, az: this.az, el: this.el };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener("pointermove", (e) => {
      if (!drag) return;
      this.az = drag.az - (e.clientX - drag.x) * 0.01;
      this.el = Math.max(-0.2, Math.min(1.5, drag.el + (e.clientY - drag.y) * 0.01));
      this.draw();
    });
    canvas.addEventListener("pointerup", () => { drag = null; });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      this.zoom = Math.max(0.3, Math.min(5, this.zoom * Math.exp(-e.deltaY * 0.001)));
      this.draw();
    }, { passive: false });
    canvas.addEventListener("dblclick", () => { this.reset(); this.draw(); });
  }

  reset() {
    this.az = 0.5;       // camera around the vertical axis (rad): x to the right, y going away
    this.el = 0.38;      // camera above the horizon (rad)
    this.zoom = 1;
  }

  // Screen position and depth of a world point (mm).
  project(p) {
    const b = scene.board;
    const reach = b ? b.arm.reach_mm : 300;
    const centre = [0, 0, b && b.arm.kind !== "planar" ? (b.arm.shoulder[2] + reach) * 0.46 : 0];
    const x = p[0] - centre[0], y = p[1] - centre[1], z = p[2] - centre[2];
    const ca = Math.cos(this.az), sa = Math.sin(this.az);
    const right = ca * x + sa * y;
    const away = -sa * x + ca * y;
    const ce = Math.cos(this.el), se = Math.sin(this.el);
    const depth = away * ce - z * se;
    const up = z * ce + away * se;
    const distance = reach * 4;
    const f = distance / (distance + depth);
    const scale = (Math.min(this.w, this.h) / ((b && b.arm.kind === "planar" ? 2.5 : 1.95) * reach)) * this.zoom;
    return [this.w / 2 + right * f * scale, this.h * 0.5 - up * f * scale, depth];
  }

  path(points) {
    return points.map((p) => this.project(p));
  }

  draw() {
    const { ctx, w, h } = fitCanvas(this.canvas);
    this.w = w; this.h = h;
    const b = scene.board;
    if (!b || w < 20 || h < 20) return;      // not laid out (a hidden view)
    const reach = b.arm.reach_mm;
    const planar = b.arm.kind === "planar";
    // Floor: rings every 100 mm and the axes.
    ctx.lineWidth = 1;
    // A planar arm has no floor: its post holds it up in its own plane.
    for (let r = 100; r <= reach * 1.05 && !planar; r += 100) {
      ctx.strokeStyle = "#e3e8eb";
      polyline(ctx, this.path(circle3([0, 0, 0], r, [1, 0, 0], [0, 1, 0])));
      ctx.stroke();
    }
    // The planar arm's plane is drawn upright: its x across, its y up.
    const axes = planar
      ? [[[reach * 1.1, 0, 0], "#e57373", "x"], [[0, 0, reach * 1.1], "#81c784", "y"]]
      : [[[reach * 1.1, 0, 0], "#e57373", "x"], [[0, reach * 1.1, 0], "#81c784", "y"],
         [[0, 0, reach * 1.35], "#64b5f6", "z"]];
    const o = this.project([0, 0, 0]);
    ctx.font = "12px system-ui, sans-serif";
    for (const [end, colour, label] of axes) {
      const e = this.project(end);
      ctx.strokeStyle = colour; ctx.lineWidth = 1.5;
      polyline(ctx, [o, e]); ctx.stroke();
      ctx.fillStyle = colour; ctx.fillText(label, e[0] + 4, e[1] - 4);
    }
    this.drawEnvelope(ctx);
    this.drawZones(ctx);
    if (scene.line) this.drawLine(ctx);
    if (scene.ghost && scene.ghost.points) this.drawArm(ctx, scene.ghost.points, statusColour(scene.ghost.status), true);
    if (scene.points) {
      this.drawLimits(ctx);
      this.drawArm(ctx, scene.points, null, false);
    }
    if (scene.target) {
      const t = this.project(scene.target);
      cross(ctx, t, 6, statusColour(scene.targetStatus));
    }
  }

  drawEnvelope(ctx) {
    const b = scene.board;
    ctx.setLineDash([5, 5]);
    ctx.strokeStyle = "#90a4ae";
    ctx.lineWidth = 1;
    if (b.arm.kind !== "planar") {
      // Everywhere the tool tip can be: a sphere of the whole chain's length about the
      // shoulder, above the floor: its equator and its section in the arm's plane.
      const c = b.arm.shoulder, r = b.arm.reach_mm;
      const yaw = scene.points ? facing(scene.points) : 0;
      polyline(ctx, this.path(circle3(c, r, [1, 0, 0], [0, 1, 0])));
      ctx.stroke();
      const below = Math.asin(Math.min(1, c[2] / r));      // how far the arc runs below the shoulder
      polyline(ctx, this.path(circle3(c, r, [Math.cos(yaw), Math.sin(yaw), 0], [0, 0, 1], 72, -below, Math.PI + below)));
      ctx.stroke();
    } else {
      for (const r of [b.arm.reach_mm, b.arm.inner_mm]) {
        if (r > 0) { polyline(ctx, this.path(circle3(b.arm.shoulder, r, [1, 0, 0], [0, 0, 1]))); ctx.stroke(); }
      }
    }
    ctx.setLineDash([]);
  }

  // Each joint's range of motion as a fan at the joint, in the plane it turns in, with the
  // angle it is at: base yaw on the floor, the pitch joints in the arm's vertical plane.
  drawLimits(ctx) {
    const b = scene.board, q = scene.q.map((v) => (v * Math.PI) / 180), pts = scene.points;
    const rad = (d) => (d * Math.PI) / 180;
    const fans = [];     // [centre, a, b, from, to, at, size]: angles t in the plane c + r (cos t a + sin t b)
    if (b.arm.kind === "arm5") {
      const yaw = q[0], up = [0, 0, 1], out = [Math.cos(yaw), Math.sin(yaw), 0];
      // The base's fan reaches past the base plate.
      fans.push([[0, 0, 2], [1, 0, 0], [0, 1, 0], rad(b.joints[0].min_deg), rad(b.joints[0].max_deg), q[0], 2.4]);
      let before = 0;      // the angle from vertical of the link before the joint
      for (let j = 1; j <= 3; j++) {
        fans.push([pts[j], up, out, before + rad(b.joints[j].min_deg), before + rad(b.joints[j].max_deg), before + q[j]]);
        before += q[j];
      }
    } else if (b.arm.kind === "planar") {
      let before = 0;
      for (let j = 0; j < 2; j++) {
        fans.push([pts[j], [1, 0, 0], [0, 0, 1], before + rad(b.joints[j].min_deg), before + rad(b.joints[j].max_deg), before + q[j]]);
        before += q[j];
      }
    }
    for (const [c, a, e, from, to, at, size] of fans) {
      const r = b.arm.reach_mm * 0.075 * (size || 1);
      const arc = this.path(circle3(c, r, a, e, 36, from, to));
      polyline(ctx, [this.project(c)].concat(arc), true);
      ctx.fillStyle = "rgba(255, 167, 38, 0.16)"; ctx.fill();
      polyline(ctx, arc); ctx.strokeStyle = "rgba(239, 108, 0, 0.7)"; ctx.lineWidth = 1.2; ctx.stroke();
      polyline(ctx, this.path([c, circle3(c, r * 1.25, a, e, 1, at, at)[0]]));
      ctx.strokeStyle = "#ef6c00"; ctx.lineWidth = 2; ctx.stroke();
    }
  }

  // The board's keep-out zones (armfw.zones): translucent, the tool box (stay inside) dashed.
  drawZones(ctx) {
    for (const z of scene.board.zones) {
      ctx.lineWidth = 1.2;
      ctx.strokeStyle = z.kind === "tool_box" ? "#2e7d32" : "rgba(173, 20, 87, 0.55)";
      ctx.fillStyle = "rgba(173, 20, 87, 0.07)";
      ctx.setLineDash(z.kind === "tool_box" ? [6, 4] : []);
      if (z.kind === "cylinder") {
        const planar = scene.board.arm.kind === "planar";
        const c = z.centre;
        const ring = (h) => this.path(planar
          ? [[c[0] - z.radius_mm, 0, h], [c[0] + z.radius_mm, 0, h]]
          : circle3([c[0], c[1], h], z.radius_mm, [1, 0, 0], [0, 1, 0], 36));
        const bottom = ring(z.bottom_mm), top = ring(z.top_mm);
        polyline(ctx, top.concat(bottom.slice().reverse()), true);
        ctx.fill();
        polyline(ctx, top, !planar); ctx.stroke();
        polyline(ctx, bottom, !planar); ctx.stroke();
      } else if (z.kind !== "floor") {
        const [a, b] = [z.min, z.max];
        const corner = (i) => [i & 1 ? b[0] : a[0], i & 2 ? b[1] : a[1], i & 4 ? b[2] : a[2]];
        for (const [i, j] of [[0, 1], [2, 3], [4, 5], [6, 7], [0, 2], [1, 3], [4, 6], [5, 7], [0, 4], [1, 5], [2, 6], [3, 7]]) {
          polyline(ctx, this.path([corner(i), corner(j)])); ctx.stroke();
        }
        if (z.kind === "box") { polyline(ctx, this.path([0, 1, 3, 2].map((i) => corner(i + 4))), true); ctx.fill(); }
      }
      ctx.setLineDash([]);
    }
  }

  drawLine(ctx) {
    const line = scene.line;
    ctx.lineWidth = 2.5;
    if (line.ok) {
      ctx.strokeStyle = STATUS_COLOURS.OK;
      polyline(ctx, this.path([line.start].concat(line.points).map(xyz)));
      ctx.stroke();
      return;
    }
    ctx.strokeStyle = "#ef9a9a";
    polyline(ctx, this.path([line.start, line.at].map(xyz)));
    ctx.stroke();
    if (scene.target) {
      ctx.setLineDash([4, 4]);
      ctx.strokeStyle = "#b0bec5";
      polyline(ctx, this.path([xyz(line.at), scene.target]));
      ctx.stroke();
      ctx.setLineDash([]);
    }
    cross(ctx, this.project(xyz(line.at)), 7, STATUS_COLOURS.TOO_FAR, 3);
  }

  drawArm(ctx, points, colour, ghost) {
    const pts = this.path(points);
    // arm5's first segment is the base column up to the shoulder; planar's is the upper arm.
    const first = scene.board.arm.column ? 0 : 1;
    ctx.lineCap = "round";
    ctx.lineJoin = "round";
    if (ghost) ctx.setLineDash([7, 6]);
    for (let i = 0; i + 1 < pts.length; i++) {
      const link = i + first;
      ctx.strokeStyle = colour || LINK_COLOURS[Math.min(link, LINK_COLOURS.length - 1)];
      ctx.lineWidth = ghost ? 3 : (link === 0 ? 16 : 11 - link * 1.5);
      ctx.globalAlpha = ghost ? 0.8 : 1;
      polyline(ctx, [pts[i], pts[i + 1]]);
      ctx.stroke();
    }
    ctx.setLineDash([]);
    ctx.globalAlpha = 1;
    if (!ghost) {
      // The base plate, the joints, the gripper.
      if (first === 0) {
        const plate = this.path(circle3(points[0], 45, [1, 0, 0], [0, 1, 0], 36));
        ctx.fillStyle = "rgba(84, 110, 122, 0.25)"; ctx.strokeStyle = "#546e7a"; ctx.lineWidth = 1.5;
        polyline(ctx, plate, true); ctx.fill(); ctx.stroke();
      }
      for (let i = 1 - first; i + 1 < pts.length; i++) {
        ctx.beginPath(); ctx.arc(pts[i][0], pts[i][1], 6.5, 0, 2 * Math.PI);
        ctx.fillStyle = "#ffffff"; ctx.fill(); ctx.strokeStyle = INK; ctx.lineWidth = 2; ctx.stroke();
      }
      if (scene.board.gripper) this.drawGripper(ctx, points);
      const tip = pts[pts.length - 1];
      this.canvas.dataset.tool = points[points.length - 1].map((v) => v.toFixed(2)).join(",");
      this.canvas.dataset.toolPx = tip[0].toFixed(1) + "," + tip[1].toFixed(1);
    }
  }

  drawGripper(ctx, points) {
    const n = points.length;
    const tip = points[n - 1], wrist = points[n - 2];
    const d = [tip[0] - wrist[0], tip[1] - wrist[1], tip[2] - wrist[2]];
    const len = Math.hypot(d[0], d[1], d[2]) || 1;
    d[0] /= len; d[1] /= len; d[2] /= len;
    // Across the jaws: in the arm's vertical plane, square to the tool.
    const yaw = facing(points);
    const side = [-Math.sin(yaw), Math.cos(yaw), 0];
    const across = [d[1] * side[2] - d[2] * side[1], d[2] * side[0] - d[0] * side[2], d[0] * side[1] - d[1] * side[0]];
    const state = scene.grip;
    const open = state !== "closed";
    const half = open ? 20 : 6;
    const at = (s, a) => [tip[0] + s * d[0] + a * across[0], tip[1] + s * d[1] + a * across[1], tip[2] + s * d[2] + a * across[2]];
    ctx.strokeStyle = state === "closed" ? "#00897b" : INK;
    ctx.lineWidth = 3.5;
    polyline(ctx, this.path([at(-34, -half), at(-34, half)])); ctx.stroke();
    for (const s of [-1, 1]) {
      polyline(ctx, this.path([at(-34, s * half), at(0, s * half)])); ctx.stroke();
    }
  }
}

function xyz(p) {
  // A tool point as the protocol gives it (x, y[, z, pitch]) as a drawn point.
  return p.length >= 3 ? [p[0], p[1], p[2]] : [p[0], 0, p[1]];
}

// ---------------------------------------------------------------- top and side views

// An orthographic view of one plane. plane "top": (x, y); "side": (r along the facing, z).
class View2D {
  constructor(canvas, plane, onPick) {
    this.canvas = canvas;
    this.plane = plane;
    canvas.addEventListener("click", (e) => {
      const r = canvas.getBoundingClientRect();
      onPick(this.unproject(e.clientX - r.left, e.clientY - r.top), this);
    });
  }

  // The vertical plane the side view shows: the target's direction, else the arm's.
  yaw() {
    if (scene.target && Math.hypot(scene.target[0], scene.target[1]) > 1) return Math.atan2(scene.target[1], scene.target[0]);
    return scene.points ? facing(scene.points) : 0;
  }

  extent() {
    const b = scene.board;
    const reach = b.arm.reach_mm * 1.1;
    if (this.plane === "top") return { x0: -reach, x1: reach, y0: -reach, y1: reach };
    if (b.arm.kind === "planar") return { x0: -reach, x1: reach, y0: -reach, y1: reach };
    // Above the floor the arm stands on (the map shows no more than a hand's width below it).
    return { x0: -reach, x1: reach, y0: -0.15 * reach, y1: b.arm.shoulder[2] + b.arm.reach_mm * 1.04 };
  }

  layout() {
    const e = this.extent();
    const s = Math.min((this.w - 16) / (e.x1 - e.x0), (this.h - 16) / (e.y1 - e.y0));
    this.s = s;
    this.ox = this.w / 2 - ((e.x0 + e.x1) / 2) * s;
    this.oy = this.h / 2 + ((e.y0 + e.y1) / 2) * s;
  }

  // World point (mm) to the plane's coordinates.
  flat(p) {
    if (this.plane === "top") return [p[0], p[1]];
    if (scene.board.arm.kind === "planar") return [p[0], p[2]];
    const yaw = this.yaw();
    return [p[0] * Math.cos(yaw) + p[1] * Math.sin(yaw), p[2]];
  }

  screen(u) {
    return [this.ox + u[0] * this.s, this.oy - u[1] * this.s];
  }

  unproject(px, py) {
    return [(px - this.ox) / this.s, (this.oy - py) / this.s];
  }

  path(points) {
    return points.map((p) => this.screen(this.flat(p)));
  }

  draw() {
    const { ctx, w, h } = fitCanvas(this.canvas);
    this.w = w; this.h = h;
    const b = scene.board;
    if (!b || w < 20 || h < 20) return;      // not laid out (a hidden view)
    this.layout();
    if (this.plane === "side" && scene.workspace) this.drawWorkspace(ctx);
    this.drawZones(ctx);
    // Rings every 100 mm about the base (top) or the axes (side).
    ctx.lineWidth = 1;
    ctx.strokeStyle = "#eceff1";
    const e = this.extent();
    if (this.plane === "top") {
      for (let r = 100; r <= b.arm.reach_mm * 1.1; r += 100) {
        const c = this.screen([0, 0]);
        ctx.beginPath(); ctx.arc(c[0], c[1], r * this.s, 0, 2 * Math.PI); ctx.stroke();
      }
      ctx.setLineDash([5, 5]); ctx.strokeStyle = "#90a4ae";
      const c = this.screen([0, 0]);
      ctx.beginPath(); ctx.arc(c[0], c[1], b.arm.reach_mm * this.s, 0, 2 * Math.PI); ctx.stroke();
      ctx.setLineDash([]);
    } else {
      ctx.strokeStyle = "#b0bec5";
      polyline(ctx, [this.screen([e.x0, 0]), this.screen([e.x1, 0])]); ctx.stroke();   // the floor / x axis
    }
    ctx.strokeStyle = "#cfd8dc";
    polyline(ctx, [this.screen([0, e.y0]), this.screen([0, e.y1])]); ctx.stroke();
    if (this.plane === "top") { polyline(ctx, [this.screen([e.x0, 0]), this.screen([e.x1, 0])]); ctx.stroke(); }
    const line = scene.line;
    if (line) {
      ctx.lineWidth = 2;
      ctx.strokeStyle = line.ok ? STATUS_COLOURS.OK : "#ef9a9a";
      polyline(ctx, this.path((line.ok ? [line.start].concat(line.points) : [line.start, line.at]).map(xyz)));
      ctx.stroke();
      if (!line.ok) cross(ctx, this.screen(this.flat(xyz(line.at))), 5, STATUS_COLOURS.TOO_FAR);
    }
    if (scene.ghost && scene.ghost.points) {
      ctx.setLineDash([5, 4]); ctx.lineWidth = 2; ctx.strokeStyle = statusColour(scene.ghost.status);
      polyline(ctx, this.path(scene.ghost.points)); ctx.stroke(); ctx.setLineDash([]);
    }
    if (scene.points) {
      const pts = this.path(scene.points);
      const first = scene.board.arm.column ? 0 : 1;
      ctx.lineCap = "round"; ctx.lineJoin = "round";
      for (let i = 0; i + 1 < pts.length; i++) {
        ctx.strokeStyle = LINK_COLOURS[Math.min(i + first, LINK_COLOURS.length - 1)];
        ctx.lineWidth = 5;
        polyline(ctx, [pts[i], pts[i + 1]]); ctx.stroke();
      }
      for (const p of pts.slice(1, -1)) {
        ctx.beginPath(); ctx.arc(p[0], p[1], 3.5, 0, 2 * Math.PI);
        ctx.fillStyle = "#fff"; ctx.fill(); ctx.strokeStyle = INK; ctx.lineWidth = 1.5; ctx.stroke();
      }
    }
    if (scene.target) cross(ctx, this.screen(this.flat(scene.target)), 5, statusColour(scene.targetStatus));
    ctx.fillStyle = "#78909c";
    ctx.font = "11px system-ui, sans-serif";
    const labels = this.plane === "top" ? ["x", "y"] : (b.arm.kind === "planar" ? ["x", "y"] : ["r", "z"]);
    ctx.fillText(labels[0] + " →", w - 30, this.screen([0, 0])[1] - 4);
    ctx.fillText("↑ " + labels[1], this.screen([0, 0])[0] + 4, 12);
  }

  // Zones as the plane sees them: top, their footprint; side, their extent along the plane.
  drawZones(ctx) {
    for (const z of scene.board.zones) {
      let lo, hi;
      if (z.kind === "floor") {
        if (this.plane === "top") continue;
        const e = this.extent();
        const y = z.height_mm + z.clearance_mm;
        const a = this.screen([e.x0, y]), b = this.screen([e.x1, e.y0]);
        ctx.fillStyle = "rgba(121, 85, 72, 0.10)";
        ctx.fillRect(a[0], a[1], b[0] - a[0], b[1] - a[1]);
        continue;
      }
      if (z.kind === "cylinder") {
        const r = z.radius_mm;
        const c = this.flat([z.centre[0], z.centre[1], 0]);
        if (this.plane === "top") {
          const s = this.screen([z.centre[0], z.centre[1]]);
          ctx.beginPath(); ctx.arc(s[0], s[1], r * this.s, 0, 2 * Math.PI);
          ctx.fillStyle = "rgba(173, 20, 87, 0.10)"; ctx.fill();
          ctx.strokeStyle = "rgba(173, 20, 87, 0.55)"; ctx.lineWidth = 1; ctx.stroke();
          continue;
        }
        lo = [c[0] - r, z.bottom_mm]; hi = [c[0] + r, z.top_mm];
      } else {
        const corners = [];
        for (let i = 0; i < 8; i++) corners.push(this.flat([i & 1 ? z.max[0] : z.min[0], i & 2 ? z.max[1] : z.min[1], i & 4 ? z.max[2] : z.min[2]]));
        lo = [Math.min(...corners.map((p) => p[0])), Math.min(...corners.map((p) => p[1]))];
        hi = [Math.max(...corners.map((p) => p[0])), Math.max(...corners.map((p) => p[1]))];
      }
      const a = this.screen([lo[0], hi[1]]), b = this.screen([hi[0], lo[1]]);
      ctx.setLineDash(z.kind === "tool_box" ? [5, 4] : []);
      ctx.strokeStyle = z.kind === "tool_box" ? "#2e7d32" : "rgba(173, 20, 87, 0.55)";
      ctx.lineWidth = 1;
      if (z.kind !== "tool_box") { ctx.fillStyle = "rgba(173, 20, 87, 0.10)"; ctx.fillRect(a[0], a[1], b[0] - a[0], b[1] - a[1]); }
      ctx.strokeRect(a[0], a[1], b[0] - a[0], b[1] - a[1]);
      ctx.setLineDash([]);
    }
  }

  // The IK status over the plane (the server's map for the target's pitch), faint.
  drawWorkspace(ctx) {
    const map = scene.workspace;
    const rows = map.rows, n = rows.length, m = rows[0].length;
    if (!map.image) {
      const img = document.createElement("canvas");
      img.width = m; img.height = n;
      const ictx = img.getContext("2d");
      const data = ictx.createImageData(m, n);
      const names = scene.board.statuses;
      for (let j = 0; j < n; j++) {
        for (let i = 0; i < m; i++) {
          const word = names[rows[j][i]];
          const k = ((n - 1 - j) * m + i) * 4;     // first row is the lowest
          if (word === "TOO_FAR") continue;
          const hex = statusColour(word);
          data.data[k] = parseInt(hex.slice(1, 3), 16);
          data.data[k + 1] = parseInt(hex.slice(3, 5), 16);
          data.data[k + 2] = parseInt(hex.slice(5, 7), 16);
          data.data[k + 3] = word === "OK" ? 38 : 60;
        }
      }
      ictx.putImageData(data, 0, 0);
      map.image = img;
    }
    const a = this.screen([map.x[0], map.y[1]]), c = this.screen([map.x[1], map.y[0]]);
    ctx.save();
    const floor = scene.board.zones.find((z) => z.kind === "floor");
    if (floor) {
      // Nothing is reached through the floor: the map stops at it.
      const f = this.screen([0, floor.height_mm + floor.clearance_mm]);
      ctx.beginPath(); ctx.rect(0, 0, this.w, f[1]); ctx.clip();
    }
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(map.image, a[0], a[1], c[0] - a[0], c[1] - a[1]);
    ctx.restore();
  }
}
