// SPDX-License-Identifier: MIT
// The page: one websocket to the armctl ui server, panels built from the board's description.
"use strict";

const $ = (id) => document.getElementById(id);

// A number with d decimals, never "-0.0".
function fixed(v, d) {
  const text = v.toFixed(d);
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text;
}

const ui = {
  ws: null,
  nextId: 1,
  waiting: new Map(),      // id -> resolve of the answer
  board: null,
  pose: null,
  previewKey: null,        // the target entries the shown preview answers
  preview: null,
  views: [],
};

// ---------------------------------------------------------------- link to the server

function connect() {
  // Beside the page: its address carries the launch's token (/<token>/ws).
  const url = new URL("ws", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(url);
  ui.ws = ws;
  ws.onmessage = (e) => receive(JSON.parse(e.data));
  ws.onclose = () => {
    setState("disconnected");
    for (const resolve of ui.waiting.values()) resolve({ ok: false, final: "error the page lost the server" });
    ui.waiting.clear();
    setTimeout(connect, 1000);
  };
}

function ask(message) {
  const id = ui.nextId++;
  return new Promise((resolve) => {
    ui.waiting.set(id, resolve);
    ui.ws.send(JSON.stringify(Object.assign({ id }, message)));
  });
}

function receive(m) {
  if (m.type === "hello") return hello(m);
  if (m.type === "line") return addLine(m);
  if (m.type === "pose") return showPose(m);
  if (m.type === "info") return ui.hello && showInfo(Object.assign(ui.hello, {info: m.info}));
  const resolve = ui.waiting.get(m.id);
  if (resolve) { ui.waiting.delete(m.id); resolve(m); }
}

// ---------------------------------------------------------------- building the page

function hello(m) {
  ui.hello = m;
  ui.board = m.board;
  scene.board = m.board;
  $("board-name").textContent = m.board.name;
  $("source").textContent = m.simulator ? "simulator" : "board";
  $("transcript").textContent = "";
  m.transcript.forEach(addLine);
  buildJog(m.board);
  buildJoints(m.board);
  buildTarget(m.board);
  showInfo(m);
  $("gripper-row").hidden = !m.board.gripper;
  $("top-figure").hidden = m.board.arm.kind === "planar";
  $("side-caption").textContent = m.board.arm.kind === "planar"
    ? "The arm's plane (x, y) — click sets the target"
    : "Side view: the vertical plane of the target — click sets r, z";
  $("speed").value = m.speed_deg_s;
  showPose(m.pose);
  loadWorkspace();
}

function button(label, title, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  if (title) b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

function step() {
  return parseFloat($("step").value);
}

function buildJog(board) {
  const box = $("jog");
  box.textContent = "";
  const axes = board.targets.map((name) => ({ label: name, axis: name }));
  const roll = board.joints.findIndex((j) => /roll/.test(j.name));
  if (roll >= 0) axes.push({ label: "roll", axis: roll + 1 });
  for (const a of axes) {
    const row = document.createElement("div");
    row.className = "axis";
    const label = document.createElement("span");
    label.textContent = a.label;
    row.append(label,
      button("−", "jog " + a.label + " by −step", () => jog(a.axis, -step())),
      button("+", "jog " + a.label + " by +step", () => jog(a.axis, step())));
    row.dataset.axis = a.label;
    box.append(row);
  }
}

function jog(axis, amount) {
  ask({ op: "jog", axis, step: amount });
}

function buildJoints(board) {
  const box = $("joints");
  box.textContent = "";
  board.joints.forEach((j, i) => {
    const row = document.createElement("div");
    row.className = "joint";
    row.dataset.joint = i + 1;
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = (i + 1) + " " + j.name;
    name.title = j.name + ": " + j.min_deg + "° .. " + j.max_deg + "°, channel " + j.channel;
    const bar = document.createElement("div");
    bar.className = "limit";
    bar.title = "limits " + j.min_deg + "° .. " + j.max_deg + "°, home " + j.home_deg + "°";
    const place = (deg) => (100 * (deg - j.min_deg) / (j.max_deg - j.min_deg)) + "%";
    bar.innerHTML = '<span class="zero"></span><span class="home"></span><span class="ghost" hidden></span><span class="mark"></span>';
    bar.querySelector(".zero").style.left = place(0);
    bar.querySelector(".home").style.left = place(j.home_deg);
    const value = document.createElement("span");
    value.className = "value";
    row.append(name, button("−", "turn by −step", () => jog(i + 1, -step())), bar,
               button("+", "turn by +step", () => jog(i + 1, step())), value);
    row.place = place;
    box.append(row);
  });
}

function buildTarget(board) {
  const box = $("target-fields");
  box.textContent = "";
  for (const name of board.targets) {
    const label = document.createElement("label");
    label.textContent = name + (name === "pitch" ? " °" : " mm");
    const input = document.createElement("input");
    input.name = name;
    input.inputMode = "decimal";
    input.addEventListener("input", schedulePreview);
    label.append(input);
    box.append(label);
  }
}

function showInfo(m) {
  const box = $("info");
  box.textContent = "";
  const rows = [["title", m.board.title], ["link", m.simulator ? "simulator (the firmware on the Unix port)" : "serial"],
                ["live console", m.live_console ? "yes (status, hold, abort)" : "no"]];
  for (const word of (m.info || "").split(" ").slice(1)) {
    const [k, v] = word.split("=");
    if (v !== undefined) rows.push([k, v]);
  }
  for (const [k, v] of rows) {
    const a = document.createElement("span"); a.textContent = k;
    const b = document.createElement("span"); b.textContent = v;
    box.append(a, b);
  }
}

// ---------------------------------------------------------------- the pose the board reports

function setState(state) {
  const badge = $("state");
  badge.textContent = state;
  badge.className = "badge " + state;
  // What the board waits for: unlock after a stop, home while the servos are off.
  document.querySelector('[data-send="unlock"]').classList.toggle("attention", state === "alarm");
  document.querySelector('[data-send="home"]').classList.toggle("attention", state === "relaxed");
}

function showPose(p) {
  ui.pose = p;
  scene.points = p.points;
  scene.q = p.q_deg;
  scene.grip = p.grip;
  setState(p.state);
  const m = p.motion;
  $("busy").textContent = !p.busy ? "" : "running: " + p.busy +
    (m ? " — " + fixed(m.speed_mm_s, 1) + " mm/s, stops within " + fixed(m.stop_mm, 1) + " mm" : "");
  $("grip").textContent = p.grip || "?";
  const t = p.tool || {};
  const names = ui.board.targets;
  $("readout").textContent = p.q_deg
    ? names.map((n) => n.padEnd(6) + (t[n] !== undefined ? fixed(t[n], 1) : "?").padStart(8) + (n === "pitch" ? " °" : " mm")).join("\n")
    : "pose unknown (servos relaxed): Home";
  const c = p.clearance || {};
  if (p.q_deg && typeof c.clear_mm === "number") {
    $("readout").textContent += "\nclear " + String(c.clear_mm).padStart(9) + " mm" + (c.zone ? "  (" + c.link + " to " + c.zone + ")" : "");
  }
  document.querySelectorAll(".joint").forEach((row, i) => {
    const q = p.q_deg ? p.q_deg[i] : null;
    row.querySelector(".value").textContent = q === null ? "?" : fixed(q, 1) + "°";
    const mark = row.querySelector(".mark");
    mark.hidden = q === null;
    if (q !== null) mark.style.left = row.place(q);
  });
  if ($("speed") !== document.activeElement) $("speed").value = p.speed_deg_s;
  redraw();
}

// ---------------------------------------------------------------- target and preview

let previewTimer = null;

function targetWords() {
  const words = ui.board.targets.map((n) => document.querySelector('#target-fields input[name="' + n + '"]').value.trim());
  // A 5-joint arm's pitch left empty is free: the host solves the target (armctl move's fallback).
  const pitchIndex = ui.board.targets.indexOf("pitch");
  if (pitchIndex === words.length - 1 && words[pitchIndex] === "") words.pop();
  return words;
}

function schedulePreview() {
  clearTimeout(previewTimer);
  $("go-move").disabled = $("go-line").disabled = true;
  previewTimer = setTimeout(runPreview, 250);
}

async function runPreview() {
  const words = targetWords();
  const elbow = $("elbow").value || null;
  const key = JSON.stringify([words, elbow]);
  if (words.some((w) => w === "")) return;
  const pitchIndex = ui.board.targets.indexOf("pitch");
  if (pitchIndex >= 0 && isFinite(parseFloat(words[pitchIndex]))) loadWorkspace(parseFloat(words[pitchIndex]));
  const answer = await ask({ op: "preview", words, elbow });
  if (key !== JSON.stringify([targetWords(), $("elbow").value || null])) return;   // the entries changed meanwhile
  ui.preview = answer;
  ui.previewKey = key;
  showPreview(answer, words);
}

function showPreview(a, words) {
  const box = $("preview");
  box.className = "preview";
  box.textContent = "";
  const status = a.type === "preview" ? a.status : (a.status || "BAD_INPUT");
  const word = document.createElement("span");
  word.className = "word";
  word.id = "preview-status";
  word.textContent = status;
  word.style.color = statusColour(status);
  box.append(word);
  const detail = document.createElement("div");
  const host = a.solver === "host-dls";
  if (a.q_deg) {
    detail.innerHTML = (host ? "solver: <b></b> · FK err <code></code> mm" : "elbow <b></b> · err <code></code> mm") +
      "<br>joints <code class=q></code><br>pulses <code class=us></code>";
    detail.querySelector("b").textContent = host ? "host dls (the board has no answer)" : a.elbow;
    detail.querySelector("code").textContent = a.err_mm;
    detail.querySelector(".q").textContent = a.q_deg.map((v) => fixed(v, 1)).join("  ") + " °";
    detail.querySelector(".us").textContent = a.pulses.map((v) => (v === null ? "refused" : v)).join("  ") + " µs";
  } else {
    detail.textContent = a.final.replace(/^error \S+ /, "");
  }
  box.append(detail);
  const line = a.line;
  const lineText = document.createElement("div");
  lineText.id = "line-preview";
  if (line) {
    if (line.ok) lineText.textContent = "straight line: OK, " + line.steps + " steps";
    else lineText.textContent = "straight line: " + line.status + " at " + line.operation + " step " + line.step +
      " (" + line.at.map((v) => fixed(v, 1)).join(", ") + "): " + line.reason;
    lineText.style.color = line.ok ? STATUS_COLOURS.OK : statusColour(line.status);
    box.append(lineText);
  }
  const solved = a.type === "preview" && a.ok && (status === "OK" || status === "SINGULAR");
  $("go-move").disabled = !solved;
  $("go-line").disabled = !(line && line.ok);
  // The drawing: the ghost arm, the target, the line.
  const nums = words.map(parseFloat);
  scene.target = nums.every(isFinite) ? (nums.length >= 3 ? nums.slice(0, 3) : [nums[0], 0, nums[1]]) : null;
  scene.targetStatus = status;
  scene.ghost = a.points ? { points: a.points, status } : null;
  scene.line = line || null;
  document.querySelectorAll(".joint .ghost").forEach((g, i) => {
    g.hidden = !a.q_deg;
    if (a.q_deg) g.style.left = g.closest(".joint").place(a.q_deg[i]);
  });
  redraw();
}

function clearPreview() {
  scene.ghost = scene.line = null;
  $("go-move").disabled = $("go-line").disabled = true;
  redraw();
}

async function go(mode) {
  const words = targetWords();
  const elbow = $("elbow").value;
  clearPreview();
  const request = [mode].concat(words);
  const host = ui.preview && ui.preview.solver === "host-dls";
  if (mode === "move" && elbow && !host) request.push("elbow=" + elbow);
  await ask({ op: "send", words: request });
  schedulePreview();
}

function setTarget(values) {
  ui.board.targets.forEach((n, i) => {
    if (values[n] !== undefined) document.querySelector('#target-fields input[name="' + n + '"]').value = values[n];
  });
  schedulePreview();
}

function currentTarget() {
  const t = (ui.pose && ui.pose.tool) || {};
  const out = {};
  for (const n of ui.board.targets) {
    const v = parseFloat(document.querySelector('#target-fields input[name="' + n + '"]').value);
    out[n] = isFinite(v) ? v : (t[n] !== undefined ? t[n] : 0);
  }
  return out;
}

function pick(u, view) {
  const t = currentTarget();
  const r1 = (v) => Math.round(v * 10) / 10;
  if (ui.board.arm.kind === "planar") return setTarget({ x: r1(u[0]), y: r1(u[1]) });
  if (view.plane === "top") return setTarget(Object.assign(t, { x: r1(u[0]), y: r1(u[1]) }));
  const yaw = view.yaw();
  setTarget(Object.assign(t, { x: r1(u[0] * Math.cos(yaw)), y: r1(u[0] * Math.sin(yaw)), z: r1(u[1]) }));
}

// ---------------------------------------------------------------- workspace map

let workspacePitch = null;

async function loadWorkspace(pitch) {
  const p = pitch === undefined ? (ui.pose && ui.pose.tool && ui.pose.tool.pitch !== undefined ? ui.pose.tool.pitch : 90) : pitch;
  const rounded = 5 * Math.round(p / 5);
  if (rounded === workspacePitch) return;
  workspacePitch = rounded;
  const map = await ask({ op: "workspace", pitch: rounded });
  if (map.type === "workspace" && map.rows && map.pitch_deg === workspacePitch) {
    scene.workspace = map;
    if (ui.board.arm.kind !== "planar") $("side-caption").textContent =
      "Side view: the target's vertical plane, IK status for pitch " + map.pitch_deg + "° — click sets r, z";
    redraw();
  }
}

// ---------------------------------------------------------------- transcript

function addLine(e) {
  const box = $("transcript");
  const div = document.createElement("div");
  div.textContent = e.text;
  let cls = e.dir === ">" ? "sent" : e.dir === "x" ? "refused" : e.dir === "!" ? "link" : "info-line";
  if (e.dir === "<" && e.text.startsWith("ok")) cls = "ok";
  // An alarm line (queued G1 lines failed after their ok) is an error too, answering no request.
  if (e.dir === "<" && (e.text.startsWith("error") || e.text.startsWith("alarm "))) cls = "error";
  if (e.kind === "stop") cls = "stop-line";
  div.className = cls + (e.kind === "status" ? " status" : "");
  const stick = box.scrollTop + box.clientHeight >= box.scrollHeight - 30;
  box.append(div);
  while (box.childElementCount > 1500) box.firstChild.remove();
  if (stick) box.scrollTop = box.scrollHeight;
}

// ---------------------------------------------------------------- drawing

let drawPending = false;

function redraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    ui.views.forEach((v) => v.draw());
  });
}

// ---------------------------------------------------------------- wiring

function start() {
  ui.views = [new View3D($("view3d")), new View2D($("top"), "top", pick), new View2D($("side"), "side", pick)];
  window.addEventListener("resize", redraw);
  $("stop").addEventListener("click", () => ask({ op: "stop" }));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") ask({ op: "stop" });     // a stop within reach of the keyboard too
  });
  document.querySelectorAll("[data-send]").forEach((b) =>
    b.addEventListener("click", () => ask({ op: "send", words: b.dataset.send.split(" ") })));
  $("speed-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const v = $("speed").value.trim();
    ask({ op: "send", words: v ? ["speed", v] : ["speed"] });
  });
  $("target").addEventListener("submit", (e) => e.preventDefault());
  $("elbow").addEventListener("change", schedulePreview);
  $("go-move").addEventListener("click", () => go("move"));
  $("go-line").addEventListener("click", () => go("line"));
  $("show-status").addEventListener("change", (e) => {
    $("transcript").classList.toggle("hide-status", !e.target.checked);
    $("transcript").scrollTop = $("transcript").scrollHeight;
  });
  $("transcript").classList.add("hide-status");
  $("console").addEventListener("submit", (e) => {
    e.preventDefault();
    const words = $("console-line").value.trim().split(/\s+/).filter(Boolean);
    if (words.length) ask({ op: "send", words });
    $("console-line").value = "";
  });
  connect();
}

start();
