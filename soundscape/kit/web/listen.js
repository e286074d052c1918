// Listening from any place: the programme rendered live from its object stems (dry at 1 m,
// web/data.js KIT.listen) where the visitor clicks on the plan, or along the zone's walk.
// A stem comes in pieces of piece_s seconds (a file each, or none where it is silent, each
// with its gain back): the page decodes the piece it plays and the next, schedules each on
// the frame its predecessor ends, and lets go of those played.
// Per stem: its pieces' gains back to pressure at 1 m → a low-pass fitted to the project's air
// absorption at that distance → an HRTF PannerNode (inverse distance, reference 1 m, rolloff 1:
// the 1/r of the project's spreading) → the master. Its early reflections: the court's image
// sources of its place at the listening spot nearest the visitor (as the render finds them),
// each delayed by its path less the direct path, through the air and an HRTF panner at the
// image. Its late sound: a send (the render's own late-tail send gain for its place and the
// spot) to its court zone's ConvolverNodes, which hold that zone's late response at the spot
// (the project's own impulse response from the court's early_ms after the direct sound on)
// on a ring of eight loudspeakers around the listener, played through eight HRTF panners
// there: it arrives from all round.
// Web Audio's frame: X east, Y up, Z south (the listener faces north, −Z).
"use strict";
(function () {
  const KIT = window.KIT, kit = window.kit;
  const $ = (id) => document.getElementById(id);
  const L = KIT.listen;
  const box = $("live");
  if (!L || !box) return;
  const SVG = "http://www.w3.org/2000/svg";
  const decoded = new Map();  // file@rate → AudioBuffer (decoded at the context's rate)
  const pending = new Set();  // files being fetched and decoded (for a test that waits)
  let ctx = null, graph = null, here = null, offset = 0, startedAt = 0, follow = false;
  let followedAt = null;  // the programme's time the listener was last put on the walk
  let starts = 0;  // live starts asked for: only the latest one plays
  // Seconds between asking for a live piece and its first frame: a start given for a time
  // already past would play late by the audio thread's lead, and overlap the next piece.
  const LEAD = 0.1;
  box.hidden = false;

  const mine = () => L.programmes[kit.programme().id];

  // The stem's place at t: the last point of its track at or before t.
  function placeAt(stem, t) {
    let found = stem.track[0];
    for (const p of stem.track) { if (p[0] <= t) found = p; else break; }
    return found.slice(1);
  }

  // The listener at t along a walk [[t, x, y], ...], straight between waypoints.
  function walkAt(walk, t) {
    if (t <= walk[0][0]) return walk[0].slice(1);
    for (let i = 1; i < walk.length; i++) {
      if (t < walk[i][0]) {
        const [t0, x0, y0] = walk[i - 1], [t1, x1, y1] = walk[i], w = (t - t0) / (t1 - t0);
        return [x0 + w * (x1 - x0), y0 + w * (y1 - y0)];
      }
    }
    return walk[walk.length - 1].slice(1);
  }

  // A Butterworth low-pass whose loss at the air's frequency is the air's over d metres.
  function airCutoff(d, rate) {
    const loss = L.programmes && mine() ? mine().air.db_per_m * d : 0;
    const ratio = Math.pow(Math.pow(10, loss / 10) - 1, 0.25);
    const top = 0.45 * rate;
    return ratio > 0 ? Math.min(top, mine().air.hz / ratio) : top;
  }

  function spotNear(x, y) {
    let best = null;
    for (const r of L.responses) {
      const d = Math.hypot(r.x - x, r.y - y);
      if (best === null || d < best.d) best = { spot: r.spot, d };
    }
    return best ? best.spot : null;
  }

  async function decode(context, file) {
    const key = file + "@" + context.sampleRate;
    if (!decoded.has(key)) {
      pending.add(file);
      const made = fetch(file).then((r) => (r.ok ? r.arrayBuffer() : Promise.reject(
        new Error(`${file}: ${r.status}`)))).then((bytes) => context.decodeAudioData(bytes))
        .finally(() => pending.delete(file));
      // a failed fetch or decode is not kept: the next call tries again (a server that
      // stumbled once would otherwise silence the stem for as long as the page is open)
      made.catch(() => { if (decoded.get(key) === made) decoded.delete(key); });
      decoded.set(key, made);
    }
    return decoded.get(key);
  }

  // Let go of every decoded stem piece but pieces from..to of this programme's (a browser
  // holds a decoded piece as 32-bit floats: a long programme is never held whole, nor one
  // left for another).
  function forget(from = 0, to = -1) {
    const kept = new Set(), all = new Set();
    for (const [id, programme] of Object.entries(L.programmes)) {
      for (const stem of programme.stems) {
        stem.files.forEach((file, k) => {
          if (file) (id === kit.programme().id && k >= from && k <= to ? kept : all).add(file);
        });
      }
    }
    for (const key of [...decoded.keys()]) {
      const file = key.slice(0, key.lastIndexOf("@"));
      if (all.has(file) && !kept.has(file)) decoded.delete(key);
    }
  }

  // Piece k of every stem of graph g, decoded and started on its first frame's time: the
  // context's time `origin` + k piece_s (whole frames), or, where that is too near or past
  // (the first piece of a start, a late decode), LEAD from now, that far into the piece:
  // heard where it belongs, never shifted (an offline context starts at its time 0).
  async function schedule(g, k) {
    const p = mine(), c = g.context, P = p.piece_s;
    g.asked.push([k, c.currentTime - g.origin]);
    const made = await Promise.all(g.stems.map(
      (s) => (s.stem.files[k] ? decode(c, s.stem.files[k]) : null)));
    if (g.stopped) return;
    const when = g.origin + k * P;
    const soonest = c instanceof OfflineAudioContext ? 0 : c.currentTime + LEAD;
    const at = Math.max(when, soonest);
    for (const [i, buffer] of made.entries()) {
      if (!buffer || at - when >= buffer.duration) continue;  // silent, or already over
      const s = g.stems[i];
      const source = new AudioBufferSourceNode(c, { buffer });
      const back = new GainNode(c, { gain: s.stem.scales[k] });
      source.connect(back).connect(s.dry);
      source.start(at, at - when);
      g.sources.add(source);
      source.onended = () => { g.sources.delete(source); source.disconnect(); back.disconnect(); };
    }
  }

  // The graph in `context` (live or offline) for the listener at [x, y] at time t.
  // Options for tests: reverb (the late sound), early (the reflections), direct (the direct
  // sound). Nothing plays until pieces are scheduled (schedule) or a click is (measure).
  async function build(context, { x, y, t, solo = null, reverb = true, early = true,
                                  direct = true }) {
    const p = mine();
    const master = context.createGain();
    master.gain.value = Math.pow(10, p.gain_db / 20);
    const splitter = context.createChannelSplitter(2);
    master.connect(context.destination);
    master.connect(splitter);
    const ears = [0, 1].map((k) => {
      const a = context.createAnalyser();
      a.fftSize = 2048;
      splitter.connect(a, k);
      return a;
    });
    const l = context.listener;
    const set = (param, v) => { param.setValueAtTime(v, context.currentTime); };
    set(l.positionX, x); set(l.positionY, 1.5); set(l.positionZ, -y);
    set(l.forwardX, 0); set(l.forwardY, 0); set(l.forwardZ, -1);
    set(l.upX, 0); set(l.upY, 1); set(l.upZ, 0);
    const spot = spotNear(x, y);
    const convolvers = {};  // zone → its convolvers (one per loudspeaker pair of the ring)
    const ring = [];  // the ring's loudspeakers: HRTF panners around the listener
    if (reverb) {
      for (const r of L.responses.filter((r) => r.spot === spot)) {
        convolvers[r.zone] = [];
        for (const [k, file] of r.files.entries()) {
          const c = new ConvolverNode(context, { disableNormalization: true });
          c.buffer = await decode(context, file);
          const g = new GainNode(context, { gain: r.gain });  // sample values kept
          const split = context.createChannelSplitter(2);
          c.connect(g).connect(split);
          for (const side of [0, 1]) {
            const at = 2 * k + side;
            ring[at] = ring[at] || { azimuth: r.azimuths[at], panner: new PannerNode(context, {
              panningModel: "HRTF", distanceModel: "linear", rolloffFactor: 0,
              coneInnerAngle: 360, coneOuterAngle: 360 }) };
            split.connect(ring[at].panner, side);
          }
          convolvers[r.zone].push(c);
        }
      }
      for (const speaker of ring) speaker.panner.connect(master);
    }
    const stems = [];
    const chosen = p.stems.filter((s) => solo === null || s.sources.includes(solo));
    for (const stem of chosen) {
      const dry = new GainNode(context, { gain: 1 });  // the pieces come in here
      const air = airFilter(context);
      const panner = hrtf(context);
      if (direct) dry.connect(air).connect(panner).connect(master);
      const images = [];
      for (const image of (early && stem.early && stem.early[spot]) || []) {
        const delay = new DelayNode(context, { maxDelayTime: 1 });
        const imageAir = airFilter(context), imagePanner = hrtf(context);
        const gain = new GainNode(context, { gain: image[3] });
        dry.connect(delay).connect(gain).connect(imageAir).connect(imagePanner).connect(master);
        images.push({ image, delay, gain, air: imageAir, panner: imagePanner });
      }
      for (const c of convolvers[stem.zone] || []) {
        const send = new GainNode(context, { gain: (stem.sends || {})[spot] ?? 1 });
        dry.connect(send).connect(c);
      }
      stems.push({ stem, dry, air, panner, images });
    }
    const g = { context, master, ears, stems, spot, x, y, ring, sources: new Set(),
                stopped: false, origin: 0, next: 0, loading: null, from: t,
                asked: [],  // [piece, programme time when it was asked for]: for tests
                pieces: Math.max(0, ...p.stems.map((s) => s.files.length)) };
    place(g, x, y, t);
    return g;
  }

  const hrtf = (context) => new PannerNode(context, {
    panningModel: "HRTF", distanceModel: "inverse", refDistance: 1, rolloffFactor: 1,
    maxDistance: 100000, coneInnerAngle: 360, coneOuterAngle: 360 });
  const airFilter = (context) => new BiquadFilterNode(context, { type: "lowpass", Q: -3.0103 });

  function clickBuffer(context) {
    const b = new AudioBuffer({ length: context.sampleRate, sampleRate: context.sampleRate });
    b.getChannelData(0)[0] = 1;
    return b;
  }

  // A panner at [x, y, z] (site metres) heard at distance d: its place and its air.
  function put(panner, air, [x, y, z], d, c, now) {
    panner.positionX.setValueAtTime(x, now);
    panner.positionY.setValueAtTime(z, now);
    panner.positionZ.setValueAtTime(-y, now);
    air.frequency.setValueAtTime(airCutoff(d, c.sampleRate), now);
  }

  // Move the stems, their images, the ring and the listener to time t and place [x, y].
  function place(g, x, y, t) {
    const c = g.context, now = c.currentTime, l = c.listener, speed = mine().speed_of_sound;
    l.positionX.setValueAtTime(x, now); l.positionZ.setValueAtTime(-y, now);
    const ear = [x, y, 1.5];
    for (const s of g.stems) {
      const at = placeAt(s.stem, t), first = s.stem.track[0].slice(1);
      const d = Math.hypot(at[0] - x, at[1] - y, at[2] - 1.5);
      put(s.panner, s.air, at, d, c, now);
      for (const i of s.images) {  // an image moves as its source, mirrored
        const p = [0, 1, 2].map((k) => i.image[k] + i.image[4 + k] * (at[k] - first[k]));
        const di = Math.hypot(p[0] - ear[0], p[1] - ear[1], p[2] - ear[2]);
        put(i.panner, i.air, p, di, c, now);
        i.delay.delayTime.setValueAtTime(Math.max(0, (di - d) / speed), now);
        // a reflection comes after the direct sound, or not at all (outside the walls)
        i.gain.gain.setValueAtTime(di > d ? i.image[3] : 0, now);
      }
    }
    for (const speaker of g.ring || []) {  // 10 m round the listener, facing north
      const a = speaker.azimuth * Math.PI / 180;
      speaker.panner.positionX.setValueAtTime(x - 10 * Math.sin(a), now);
      speaker.panner.positionY.setValueAtTime(1.5, now);
      speaker.panner.positionZ.setValueAtTime(-y - 10 * Math.cos(a), now);
    }
    g.x = x; g.y = y;
  }

  function stop() {
    if (!graph) return;
    graph.stopped = true;
    for (const source of graph.sources) { try { source.stop(); } catch (e) { /* not started */ } }
    graph.master.disconnect();
    graph = null;
  }

  // Play from time t: the piece that holds it and the next decoded first, the rest as the
  // clock comes to them (ahead). Only the latest start plays: an earlier one still
  // decoding lets its graph go.
  async function start(t) {
    stop();
    const ticket = ++starts;
    offset = Math.max(0, Math.min(t, kit.programme().seconds));
    const g = await build(ctx, { x: here[0], y: here[1], t: offset });
    const k = Math.floor(offset / mine().piece_s);
    forget(k, k + 1);
    const ready = Promise.all([k, k + 1].map((j) => Promise.all(g.stems.map(
      (s) => (s.stem.files[j] ? decode(ctx, s.stem.files[j]) : null)))));
    await ready.catch(() => null);  // a piece that failed is asked for again by schedule
    if (ticket !== starts || !kit.player) {  // a later start, or turned off
      g.stopped = true;
      g.master.disconnect();
      return;
    }
    graph = g;
    startedAt = ctx.currentTime + LEAD;
    const rate = ctx.sampleRate;
    g.origin = Math.round((startedAt - offset) * rate) / rate;  // pieces on whole frames
    g.next = k + 2;  // before any wait: ahead() waits for this start's loading
    g.loading = Promise.all([schedule(g, k), schedule(g, k + 1)])
      .finally(() => { g.loading = null; });
    await g.loading;
    if (graph === g) kit.listen.state = "playing";
  }

  // Once the clock is in the piece before the next to schedule, that one is decoded and
  // scheduled (a piece's length ahead), and what was played before is let go. The clock
  // here runs on past the programme's end: the stems ring on after it.
  function ahead(g) {
    if (g.loading || g.next >= g.pieces || g.context.currentTime - g.origin
        < (g.next - 1) * mine().piece_s || performance.now() < (g.retryAt || 0)) return;
    const k = g.next;
    forget(k - 2, k);
    g.loading = schedule(g, k).then(() => { g.next = k + 1; })
      .catch(() => { g.retryAt = performance.now() + 1000; })  // a server that stumbled
      .finally(() => { g.loading = null; });
  }

  function time() {
    if (!ctx || !graph) return offset;
    return Math.max(0, Math.min(ctx.currentTime - graph.origin, kit.programme().seconds));
  }

  function drawHere() {
    const svg = $("plan");
    let dot = svg.querySelector("circle.here");
    if (!here) { if (dot) dot.remove(); return; }
    if (!dot) {
      dot = document.createElementNS(SVG, "circle");
      dot.setAttribute("class", "here");
      svg.appendChild(dot);
    }
    const vb = svg.viewBox.baseVal;
    dot.setAttribute("cx", here[0]); dot.setAttribute("cy", -here[1]);
    dot.setAttribute("r", Math.max(vb.width, vb.height) / 100 * 1.4);
  }

  // Stand at [x, y] (metres): the live graph follows at once; a new spot swaps the court.
  async function moveTo(x, y) {
    here = [x, y];
    drawHere();
    if (!graph) return;
    if (spotNear(x, y) !== graph.spot) await start(time());
    else place(graph, x, y, time());
  }

  function off() {
    stop(); forget(); kit.player = null; kit.listen.state = "off";
    $("livebutton").setAttribute("aria-pressed", "false");
  }

  async function toggle() {
    const button = $("livebutton");
    if (kit.player) { off(); return; }
    if (!mine()) return;
    ctx = ctx || new AudioContext({ latencyHint: "playback" });
    await ctx.resume();
    kit.audio.pause();
    here = here || [kit.zone().x, kit.zone().y];
    drawHere();
    kit.listen.state = "loading";
    kit.player = { time, seek: (t) => { start(t); } };
    button.setAttribute("aria-pressed", "true");
    await start(kit.audio.currentTime || 0);
  }

  function tick() {
    if (graph) {
      const z = kit.zone();
      if (follow && z.walk) {
        const t = time();
        here = walkAt(z.walk, t);
        followedAt = t;
        drawHere();
      }
      place(graph, here[0], here[1], time());
      ahead(graph);
    }
    requestAnimationFrame(tick);
  }

  function showFollow() {
    const z = kit.zone();
    $("followbox").hidden = !(z && z.walk);
  }

  function refresh() {
    const available = Boolean(mine());
    $("livebutton").disabled = !available;
    $("livenote").textContent = available ? "" : "no stems for this programme (too long)";
    showFollow();
    if (kit.player && available) start(0);
    else if (kit.player) off();
    drawHere();
  }

  $("livebutton").addEventListener("click", toggle);
  kit.audio.addEventListener("play", () => { if (kit.player) off(); });  // the loop instead
  $("follow").addEventListener("change", (e) => { follow = e.target.checked; });
  $("plan").addEventListener("click", (e) => {
    const svg = $("plan"), m = svg.getScreenCTM();
    if (!m) return;
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(m.inverse());
    moveTo(p.x, -p.y);
  });
  document.addEventListener("kit:plan", () => { showFollow(); drawHere(); });  // a zone chosen
  document.addEventListener("kit:programme", refresh);

  // For tests and kiosks: render `seconds` from time t heard at [x, y] offline (the same
  // graph; build's options), and give each ear's RMS level in dB (and, with `samples`, each
  // ear's samples).
  async function measure({ x, y, t = 0, seconds = 1, solo = null, reverb = true, early = true,
                           direct = true, click = false, samples = false }) {
    const rate = 48000;
    const off = new OfflineAudioContext(2, Math.round(seconds * rate), rate);
    kit.listen.stage = "building";  // where a measure is (for a test that waits on it)
    const g = await build(off, { x, y, t, solo, reverb, early, direct });
    g.origin = -t;  // the offline context's time 0 is the programme's t
    if (click) {
      for (const s of g.stems) {
        const source = new AudioBufferSourceNode(off, { buffer: clickBuffer(off) });
        source.connect(s.dry);
        source.start(0);
      }
    } else {
      const P = mine().piece_s;
      const pieces = [];
      for (let k = Math.floor(t / P); k * P < t + seconds; k++) pieces.push(schedule(g, k));
      await Promise.all(pieces);
    }
    kit.listen.stage = "rendering";
    const out = await off.startRendering();
    kit.listen.stage = "rendered";
    const db = [0, 1].map((k) => {
      const a = out.getChannelData(k);
      let sum = 0;
      for (const v of a) sum += v * v;
      return 10 * Math.log10(sum / a.length + 1e-30);
    });
    const found = { left_db: db[0], right_db: db[1], stems: g.stems.length, spot: g.spot,
                    images: g.stems.map((s) => s.images.length) };
    if (samples) [found.left, found.right] = [0, 1].map((k) => Array.from(out.getChannelData(k)));
    return found;
  }

  kit.listen = { state: "off", toggle, moveTo, measure, time, here: () => here,
                 pending: () => [...pending], held: () => [...decoded.keys()],
                 graph: () => graph, followed: () => ({ t: followedAt, here }) };
  refresh();
  requestAnimationFrame(tick);
  // and twice a second besides: a hidden tab gets no animation frames, but plays on
  setInterval(() => { if (graph) ahead(graph); }, 500);
}());
