// The kit page: plays a programme and shows what sounds, from window.KIT (web/data.js).
"use strict";
(function () {
  const KIT = window.KIT;
  const SVG = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);
  const audio = $("audio");
  let programme = null, zone = null, render = null;

  // Is t inside one of the sorted, disjoint spans [[start, end], ...]?
  function active(spans, t) {
    let lo = 0, hi = spans.length - 1, found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (spans[mid][0] <= t) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    return found >= 0 && t < spans[found][1];
  }

  function option(select, value, text) {
    const o = document.createElement("option");
    o.value = value; o.textContent = text; select.appendChild(o);
  }

  function el(name, attrs, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  function drawPlan() {
    const svg = $("plan");
    svg.replaceChildren();
    // the plan shows what sounds and who hears it, and the places near them
    // ambience beds (group "place") sound all over the courtyard: drawn, not framed
    const framed = programme.sources.filter((s) => s.group !== "place");
    const heard = framed.concat(programme.zones);
    const near = (p) => heard.some((q) => Math.hypot(p.x - q.x, p.y - q.y) < 15);
    const places = KIT.places.filter(near);
    const pts = heard.concat(places);
    const xs = pts.map((p) => p.x), ys = pts.map((p) => -p.y);
    const pad = 4, least = 30;  // metres: at least this much courtyard in view
    let x0 = Math.min(...xs) - pad, y0 = Math.min(...ys) - pad;
    let w = Math.max(...xs) + pad - x0, h = Math.max(...ys) + pad - y0;
    if (w < least) { x0 -= (least - w) / 2; w = least; }
    if (h < least) { y0 -= (least - h) / 2; h = least; }
    svg.setAttribute("viewBox", `${x0} ${y0} ${w} ${h}`);
    const unit = Math.max(w, h) / 100;  // drawing unit: 1 % of the plan
    drawOutline(svg, unit);
    for (const p of places) {
      el("circle", { cx: p.x, cy: -p.y, r: unit * 0.4, class: "place" }, svg);
      const t = el("text", { x: p.x + unit, y: -p.y + unit * 0.5, class: "place",
                             "font-size": unit * 1.8 }, svg);
      t.textContent = `${p.name} ${p.roman}`;
    }
    for (const s of programme.sources) {
      const g = el("g", { class: "source", "data-source": s.id }, svg);
      el("circle", { cx: s.x, cy: -s.y, r: unit * 1.1 }, g);
      if (s.group !== "place") {
        const t = el("text", { x: s.x + unit * 1.3, y: -s.y + unit * 0.5,
                               "font-size": unit * 1.4 }, g);
        t.textContent = `${s.name} ${s.roman}`;
      }
      const title = el("title", {}, g);
      title.textContent = `${s.name}: ${s.roman} (${s.instrument})`;
    }
    el("circle", { cx: zone.x, cy: -zone.y, r: unit * 1.2, class: "listener" }, svg);
    const facing = Math.atan2(zone.facing[1], zone.facing[0]);
    const radius = unit * 6;
    for (const sp of render.speakers) {
      const a = facing + sp.azimuth * Math.PI / 180;
      const x = zone.x + radius * Math.cos(a), y = zone.y + radius * Math.sin(a);
      const g = el("g", { class: "speaker", "data-speaker": sp.name }, svg);
      el("rect", { x: x - unit, y: -y - unit, width: unit * 2, height: unit * 2 }, g);
      const t = el("title", {}, g);
      t.textContent = `${sp.name}: ${sp.azimuth}° / ${sp.elevation}°`;
    }
  }

  // The court under everything: walls and gate, the hall, its stairs and pillars, targets.
  function drawOutline(svg, unit) {
    const o = KIT.outline;
    const g = el("g", { class: "outline" }, svg);
    el("polyline", { points: o.walls.map(([x, y]) => `${x},${-y}`).join(" "),
                     class: "wall" }, g);
    const [hx, hy, hw, hh] = o.hall;
    el("rect", { x: hx, y: -(hy + hh), width: hw, height: hh, class: "hall" }, g);
    const label = el("text", { x: hx + hw / 2, y: -(hy + hh) + unit * 2.2, class: "hall-name",
                               "font-size": unit * 1.5, "text-anchor": "middle" }, g);
    label.textContent = "堂 hall";
    for (const [x, y, sw, sh] of o.stairs) {
      el("rect", { x, y: -(y + sh), width: sw, height: sh, class: "stair" }, g);
    }
    for (const [x, y] of o.pillars) el("circle", { cx: x, cy: -y, r: unit * 0.5, class: "pillar" }, g);
    for (const t of o.targets) {
      const [a, b, y] = t.line;
      el("line", { x1: a, x2: b, y1: -y, y2: -y, class: "target" }, g);
      const name = el("text", { x: b + unit, y: -y + unit * 0.5, class: "target-name",
                                "font-size": unit * 1.4 }, g);
      name.textContent = `${t.name} ${t.roman}`;
    }
    const gate = o.walls[0], opening = o.walls[o.walls.length - 1];
    const gx = (gate[0] + opening[0]) / 2, gy = gate[1];
    const door = el("text", { x: gx, y: -gy + unit * 2, class: "hall-name",
                              "font-size": unit * 1.5, "text-anchor": "middle" }, g);
    door.textContent = "門 gate";
  }

  function drawTimeline() {
    const nav = $("timeline");
    nav.replaceChildren();
    const secs = programme.sections;
    secs.forEach((s, i) => {
      const next = i + 1 < secs.length ? secs[i + 1].start : programme.seconds;
      const b = document.createElement("button");
      b.dataset.section = s.id;
      b.textContent = s.name;
      b.title = `${s.id} ${s.name} (${Math.round(s.start)} s)`;
      b.style.flex = `${Math.max(next - s.start, 0)} 0 2px`;
      b.addEventListener("click", () => { jump(s.start); });
      nav.appendChild(b);
    });
    const pieces = $("pieces");
    pieces.replaceChildren();
    for (const [id, p] of Object.entries(programme.pieces)) {
      const li = document.createElement("li");
      li.textContent = `${p.title} — ${p.basis}`;
      li.dataset.piece = id;
      pieces.appendChild(li);
    }
  }

  // The clock: the loop's <audio>, or the live player (web/listen.js) while it plays.
  function now() { return window.kit.player ? window.kit.player.time() : audio.currentTime; }

  function jump(t) {
    if (window.kit.player) {
      window.kit.player.seek(t);
    } else {
      audio.currentTime = t;
      if (audio.paused) audio.play().catch(() => {});
    }
    show(t);
  }

  function chooseRender() {
    render = zone.renders.find((r) => r.layout === $("layout").value) || zone.renders[0]
      || { layout: "", files: [], bytes: {}, playable: false, speakers: [] };  // ADM alone
    const file = render.playable ? render.files[0] : null;
    const playable = zone.renders.find((r) => r.playable);
    load(file || (playable ? playable.files[0] : ""));
  }

  // A file of up to BLOB_BYTES is fetched whole and played from memory, so seeking works
  // from any file server (many plain ones, like Python's, answer no Range requests); a
  // larger one, or a page opened from disk, streams from its address.
  const BLOB_BYTES = 256 * 1024 * 1024;
  function load(src) {
    if (audio.dataset.file === src) return;
    audio.dataset.file = src;
    const size = (render.bytes || {})[src] || 0;
    if (!src || size > BLOB_BYTES || location.protocol === "file:") {
      audio.src = src;
      return;
    }
    fetch(src).then((r) => (r.ok ? r.blob() : Promise.reject(r.status)))
      .then((blob) => { if (audio.dataset.file === src) audio.src = URL.createObjectURL(blob); })
      .catch(() => { if (audio.dataset.file === src) audio.src = src; });
  }

  function chooseZone() {
    zone = programme.zones.find((z) => z.id === $("zone").value) || programme.zones[0];
    const layout = $("layout");
    layout.replaceChildren();
    for (const r of zone.renders) option(layout, r.layout, r.layout + (r.playable ? "" : " (venue)"));
    chooseRender();
    drawPlan();
    document.dispatchEvent(new CustomEvent("kit:plan"));
    show(now() || 0);
  }

  function chooseProgramme() {
    programme = KIT.programmes.find((p) => p.id === $("programme").value) || KIT.programmes[0];
    $("title").textContent = "— " + programme.title;
    $("description").textContent = programme.description;
    const zones = $("zone");
    zones.replaceChildren();
    for (const z of programme.zones) option(zones, z.id, z.name || z.id);
    drawTimeline();
    chooseZone();
    document.dispatchEvent(new CustomEvent("kit:programme", { detail: programme }));
  }

  function last(items, t, key) {
    let found = null;
    for (const item of items) { if (item[key] <= t) found = item; else break; }
    return found;
  }

  // Everything on the page for time t (seconds of the programme).
  function show(t) {
    const lit = [], fed = [];
    for (const s of programme.sources) {
      const on = active(s.active, t);
      if (on) lit.push(s.id);
      const node = document.querySelector(`[data-source="${CSS.escape(s.id)}"]`);
      if (node) node.classList.toggle("lit", on);
    }
    for (const sp of render.speakers) {
      const on = active(sp.active, t);
      if (on) fed.push(sp.name);
      const node = document.querySelector(`[data-speaker="${CSS.escape(sp.name)}"]`);
      if (node) node.classList.toggle("lit", on);
    }
    const step = last(programme.steps, t, "t");
    $("passage").textContent = step ? step.quote : "";
    $("gloss").textContent = step ? step.gloss : "";
    const now = zone.captions.filter((c) => c.start <= t && t < c.end);
    const box = $("captions");
    const text = now.map((c) => c.kind + ":" + c.text).join("|");
    if (box.dataset.shown !== text) {
      box.replaceChildren(...now.map((c) => {
        const p = document.createElement("p");
        p.className = c.kind; p.textContent = c.text; return p;
      }));
      box.dataset.shown = text;
    }
    const section = last(programme.sections, t, "start");
    for (const b of $("timeline").children) {
      b.classList.toggle("current", section !== null && b.dataset.section === section.id);
    }
    $("clock").textContent = `${t.toFixed(1)} s of ${programme.seconds.toFixed(0)} s`;
    window.kit.last = { time: t, lit, speakers: fed, captions: now.map((c) => c.text),
                        passage: step ? step.quote : "", section: section ? section.id : "" };
  }

  function tick() {
    if (programme) show(now());
    requestAnimationFrame(tick);
  }

  window.kit = { show: (t) => { show(t); return window.kit.last; }, jump, last: null,
                 player: null, programme: () => programme, zone: () => zone, audio };
  for (const p of KIT.programmes) option($("programme"), p.id, p.title);
  $("programme").addEventListener("change", chooseProgramme);
  $("zone").addEventListener("change", chooseZone);
  $("layout").addEventListener("change", () => {
    chooseRender(); drawPlan(); document.dispatchEvent(new CustomEvent("kit:plan"));
  });
  audio.addEventListener("seeked", () => show(now()));
  chooseProgramme();
  requestAnimationFrame(tick);
}());
