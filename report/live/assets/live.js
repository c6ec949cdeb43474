// idlewatt live view. Polls /api/data (page → server only: the page skips
// what it cannot keep up with, the recording never waits for it), keeps
// per drive and rail rings of min/max/energy buckets at two depths (fine:
// 1 ms or each sample; coarse: 64 of those), and draws the rolling window
// with the report viewer's code (core.js): per pixel column the finest
// level no wider than the column gives the min–max envelope and the mean,
// and a selection integrates the same bucket energies (IW.stats). No
// request leaves the page's own origin.
(function () {
  'use strict';
  var CFG = JSON.parse(document.getElementById('idlewatt-live').textContent);
  var POLL_MS = 250;
  var S = { started: false, ended: false, dt: 1, fineW: 1e-3, coarseW: 0.064, fineN: 0, coarseN: 0, next: null, cnext: null, ev: 0, newest: 0,
    skipped: 0, skipEv: 0, missing: 0, lostEv: false, meter: '', rate: 0 };
  var drives = [], byPort = {}, marks = [], notes = [], phases = [];
  var opt = { win: 60, log: false, mw: false, rails: false };
  var paused = false, follow = true, view = [0, 60], sel = null, curA = null, curB = null, charts = [], inflight = false, drawn = false;
  var STRIP_H = 12, BAND = 'rgba(31,119,180,0.25)', MEAN = '#1f5f9f', RAIL_COL = ['#1b9e77', '#d95f02', '#7570b3', '#e7298a'];
  var esc = IW.esc, fmtT = IW.fmtT;

  // ---- rings ---------------------------------------------------------------
  function ring(size, w) {
    return { size: size, mask: size - 1, w: w, min: new Float32Array(size), max: new Float32Array(size), e: new Float64Array(size),
      q: new Float64Array(size), cnt: new Uint32Array(size), ops: new Float64Array(size), by: new Float64Array(size), hi: 0, lo: 0, any: false };
  }
  // Bucket k's slot, clearing those between the newest and k; -1 if older
  // than the ring holds.
  function slot(r, k) {
    if (!r.any) { r.any = true; r.lo = r.hi = k; }
    if (k < r.hi - r.size) return -1;
    if (k < r.lo) r.lo = k;
    if (k >= r.hi) {
      for (var j = Math.max(r.hi, k - r.size + 1); j <= k; j++) { var s = j & r.mask; r.cnt[s] = 0; r.e[s] = 0; r.q[s] = 0; r.min[s] = NaN; r.max[s] = NaN; r.ops[s] = 0; r.by[s] = 0; }
      r.hi = k + 1;
      r.lo = Math.max(r.lo, r.hi - r.size);
    }
    return k & r.mask;
  }
  function put(r, sj) {
    if (!sj || !sj.n) return;
    var mn = IW.f32(sj.min), mx = IW.f32(sj.max), e = IW.f32(sj.e), c = IW.u32(sj.cnt), q = sj.q ? IW.f32(sj.q) : null;
    for (var j = 0; j < sj.n; j++) {
      var s = slot(r, sj.k0 + j);
      if (s < 0) continue;
      r.min[s] = mn[j]; r.max[s] = mx[j]; r.e[s] = e[j]; r.cnt[s] = c[j]; r.q[s] = q ? q[j] : 0;
    }
  }
  // The ring's buckets [ka, kb) as a base level for core.js.
  function level(r, ka, kb) {
    ka = Math.max(ka, r.lo); kb = Math.min(kb, r.hi);
    var n = Math.max(0, kb - ka);
    var L = { k0: ka, n: n, w: r.w, min: new Float32Array(n), max: new Float32Array(n), e: new Float64Array(n), cnt: new Uint32Array(n), q: new Float64Array(n),
      ioK: [], ioOps: [], ioBytes: [] };
    for (var j = 0; j < n; j++) {
      var s = (ka + j) & r.mask; L.min[j] = r.min[s]; L.max[j] = r.max[s]; L.e[j] = r.e[s]; L.cnt[j] = r.cnt[s]; L.q[j] = r.q[s];
      if (r.ops[s] > 0) { L.ioK.push(ka + j); L.ioOps.push(r.ops[s]); L.ioBytes.push(r.by[s]); }
    }
    return L;
  }
  // The depth that holds [a, b): fine if its ring reaches back to a.
  function depth(a) {
    var d = drives[0];
    if (!d || !d.fine.total.any) return 'coarse';
    return a >= d.fine.total.lo * S.fineW ? 'fine' : 'coarse';
  }

  function driveOf(dj) {
    var d = byPort[dj.port];
    if (d) return d;
    d = { port: dj.port, name: dj.name, nvme: dj.nvme, fine: { total: ring(S.fineN, S.fineW), rails: [] }, coarse: { total: ring(S.coarseN, S.coarseW), rails: [] },
      railNames: dj.rails.map(function (r) { return r.rail; }), busy: {}, pins: [], pinSrc: {} };
    d.railNames.forEach(function () { d.fine.rails.push(ring(S.fineN, S.fineW)); d.coarse.rails.push(ring(S.coarseN, S.coarseW)); });
    byPort[dj.port] = d; drives.push(d);
    return d;
  }

  function takeEvent(e) {
    switch (e.kind) {
      case 'phase': phases.push({ port: e.port, t: e.t, name: e.text }); break;
      case 'mark': marks.push({ port: e.port, t: e.t, text: e.text }); break;
      case 'note': addNoteLocal({ at_s: e.t, to_s: e.t2 || null, text: e.text }); break;
      case 'pin': {
        var ds = e.port === 0 ? drives : [byPort[e.port]].filter(Boolean);
        ds.forEach(function (d) {
          if (e.src === 'host' && d.pinSrc.meter) return; // the meter's own edges win, as in analysis
          if (e.src === 'meter' && !d.pinSrc.meter) { d.pinSrc.meter = true; d.pins = []; }
          if (e.on) d.pins.push([e.t, null]);
          else if (d.pins.length && d.pins[d.pins.length - 1][1] === null) d.pins[d.pins.length - 1][1] = e.t;
        });
        break;
      }
      case 'busy': { var b = byPort[e.port]; if (b) b.busy[e.id] = [e.t, e.t2]; break; }
      case 'io': {
        // Counted into the total's rings (fine bucket k, and its coarse
        // bucket): bounded like the power buckets.
        var x = byPort[e.port];
        if (x) {
          var f = slot(x.fine.total, e.k), c = slot(x.coarse.total, Math.floor(e.k / Math.round(S.coarseW / S.fineW)));
          if (f >= 0) { x.fine.total.ops[f] += e.ops || 0; x.fine.total.by[f] += e.bytes || 0; }
          if (c >= 0) { x.coarse.total.ops[c] += e.ops || 0; x.coarse.total.by[c] += e.bytes || 0; }
        }
        break;
      }
    }
  }

  function ingest(D) {
    S.started = D.started; S.ended = D.ended; S.skipped = D.skipped_samples; S.skipEv = D.skipped_events; S.missing = D.missing_samples;
    S.meter = D.meter || ''; S.rate = D.rate_hz || 0;
    if (!D.started) return;
    if (!S.fineN) { S.dt = D.dt_s; S.fineW = D.fine_w_s; S.coarseW = D.coarse_w_s; S.fineN = D.fine_n; S.coarseN = D.coarse_n; }
    D.drives.forEach(function (dj) {
      var d = driveOf(dj);
      put(d.fine.total, dj.total); put(d.coarse.total, dj.coarse_total);
      dj.rails.forEach(function (r, i) { if (d.fine.rails[i]) put(d.fine.rails[i], r); });
      dj.coarse_rails.forEach(function (r, i) { if (d.coarse.rails[i]) put(d.coarse.rails[i], r); });
    });
    D.events.forEach(takeEvent);
    if (D.ev_lost) S.lostEv = true;
    S.next = D.next; S.cnext = D.cnext; S.ev = D.ev_next; S.newest = D.newest_s;
    // Bound what the page keeps of events as its rings bound the buckets.
    var keepFrom = S.newest - CFG.long_s;
    if (marks.length > 20000) marks = marks.filter(function (m) { return m.t >= keepFrom; });
    drives.forEach(function (d) {
      var ks = Object.keys(d.busy);
      if (ks.length > 50000) ks.forEach(function (k) { if (d.busy[k][1] < keepFrom) delete d.busy[k]; });
      if (d.pins.length > 20000) d.pins = d.pins.filter(function (p) { return p[1] === null || p[1] >= keepFrom; });
    });
    if (phases.length > 20000) phases = phases.slice(-10000);
  }

  // ---- polling: one request at a time; paused = no requests ------------------
  function poll() {
    if (paused || inflight) return;
    inflight = true;
    var u = '/api/data?ev=' + S.ev + (S.next === null ? '&back=' + Math.max(opt.win, 1) : '&since=' + S.next + '&csince=' + S.cnext);
    fetch(u, { cache: 'no-store' }).then(function (r) { return r.json(); }).then(function (D) {
      inflight = false;
      if (paused) return; // arrived after pausing: dropped, asked for again on resume
      ingest(D);
      requestAnimationFrame(frame);
    }).catch(function () {
      inflight = false;
      document.getElementById('status').textContent = 'the recording\'s view is gone (the command has ended)';
      document.getElementById('status').className = 'ended';
    });
  }

  // ---- drawing ---------------------------------------------------------------
  function scaleW() { return opt.mw ? 1000 : 1; }
  function fmtW(w) { return isNaN(w) ? '–' : (opt.mw ? (w * 1000).toPrecision(4) + ' mW' : w.toPrecision(4) + ' W'); }

  function seriesFor(d, dep, a, b) {
    var g = d[dep], w = g.total.w, ka = Math.floor(a / w) - 1, kb = Math.ceil(b / w) + 1;
    return { total: IW.seriesOf(level(g.total, ka, kb), 'total'),
      rails: g.rails.map(function (r, i) { return IW.seriesOf(level(r, ka, kb), d.railNames[i]); }) };
  }

  function dataFor(d, px) {
    var dep = depth(view[0]), w0 = dep === 'fine' ? S.fineW : S.coarseW;
    var cells = IW.grid(view[0], view[1], px, w0);
    var xs = cells.map(function (c) { return (c.lo + c.hi) / 2; });
    var sr = seriesFor(d, dep, view[0], view[1]);
    var t = IW.aggregate(sr.total, cells, S.dt);
    var k = scaleW(), floor = opt.log ? IW.logFloor([t]) : -Infinity;
    function sc(arr) { return IW.scaled(arr, floor, k); }
    var out = [xs, sc(t[2]), sc(t[0]), sc(t[1])];
    sr.rails.forEach(function (r) { out.push(opt.rails ? sc(IW.aggregate(r, cells, S.dt)[2]) : xs.map(function () { return null; })); });
    return out;
  }

  var PHASE_COL = ['#9aa5b1', '#f2c14e', '#4f9d69', '#e4572e', '#6a3d9a', '#1b9e77'];
  function phaseColour(name) {
    var kind = String(name).split(':')[0], h = 0;
    for (var i = 0; i < kind.length; i++) h = (h * 31 + kind.charCodeAt(i)) >>> 0;
    return kind === 'end' ? null : PHASE_COL[h % PHASE_COL.length];
  }
  // A drive's phases as [start, end, name] runs (port 0 = every drive).
  function phaseRuns(d) {
    var ev = phases.filter(function (p) { return p.port === 0 || p.port === d.port; });
    var out = [];
    for (var i = 0; i < ev.length; i++) out.push([ev[i].t, i + 1 < ev.length ? ev[i + 1].t : S.newest, ev[i].name]);
    return out;
  }
  // NVMe drives: the APST/ASPM setting in force, from the phases that name
  // one (idle's NVMe mode); the power state itself is not recorded.
  function apstRuns(d) {
    return phaseRuns(d).filter(function (r) { return /nvme_latency_us=|aspm=/.test(r[2]); });
  }

  function drawStrips(u, d, cv) {
    var dpr = devicePixelRatio, W = u.over.clientWidth, left = u.over.offsetLeft;
    var labels = ['I/O', d.nvme ? 'APST' : 'phase', 'DEVSLP'];
    cv.width = (left + W) * dpr; cv.height = labels.length * STRIP_H * dpr; cv.style.width = (left + W) + 'px'; cv.style.height = (labels.length * STRIP_H) + 'px';
    var ctx = cv.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, left + W, labels.length * STRIP_H);
    ctx.font = '10px sans-serif'; ctx.fillStyle = '#444';
    labels.forEach(function (s, i) { ctx.fillText(s, Math.max(0, left - 44), i * STRIP_H + 9); });
    function X(t) { return left + (t - view[0]) / (view[1] - view[0]) * W; }
    function bar(a, b, y, col, label) {
      var x0 = Math.max(X(a), left), x1 = Math.min(X(b), left + W);
      if (x1 < x0) return;
      ctx.fillStyle = col; ctx.fillRect(x0, y + 1, Math.max(x1 - x0, 1), STRIP_H - 2);
      if (label && x1 - x0 > ctx.measureText(label).width + 6) { ctx.fillStyle = '#fff'; ctx.fillText(label, x0 + 3, y + 9); }
    }
    Object.keys(d.busy).forEach(function (k) { var s = d.busy[k]; bar(s[0], s[1], 0, '#222'); });
    (d.nvme ? apstRuns(d) : phaseRuns(d)).forEach(function (r) {
      var c = d.nvme ? '#1b9e77' : phaseColour(r[2]);
      if (c) bar(r[0], r[1], STRIP_H, c, r[2]);
    });
    d.pins.forEach(function (p) { bar(p[0], p[1] === null ? S.newest : p[1], 2 * STRIP_H, '#6a3d9a'); });
  }

  function overlay(u, d) {
    var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height, dpr = devicePixelRatio;
    ctx.save();
    ctx.beginPath(); ctx.rect(u.bbox.left, top, u.bbox.width, h); ctx.clip();
    ctx.strokeStyle = '#6a3d9a'; ctx.lineWidth = 1.5 * dpr; ctx.setLineDash([6, 3]);
    d.pins.forEach(function (p) { var x0 = u.valToPos(p[0], 'x', true), x1 = u.valToPos(p[1] === null ? S.newest : p[1], 'x', true); ctx.strokeRect(x0, top + 1, x1 - x0, h - 2); });
    ctx.setLineDash([]);
    ctx.strokeStyle = '#b00'; ctx.fillStyle = '#b00'; ctx.lineWidth = dpr; ctx.font = (10 * dpr) + 'px sans-serif';
    var lastX = -1e9;
    marks.forEach(function (m) {
      if (m.port !== 0 && m.port !== d.port) return;
      if (m.t < view[0] || m.t > view[1]) return;
      var x = u.valToPos(m.t, 'x', true);
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + 30 * dpr); ctx.stroke();
      var txt = m.text.length > 48 ? m.text.slice(0, 47) + '…' : m.text;
      if (x - lastX > ctx.measureText(txt).width + 6) { ctx.fillText(txt, x + 3, top + 27 * dpr); lastX = x; }
    });
    ctx.restore();
  }

  function legendHTML(d) {
    var parts = ['<span class="swatch" style="background:' + MEAN + '"></span>mean (W, all rails)', '<span class="swatch" style="background:' + BAND + '"></span>min–max'];
    d.railNames.forEach(function (r, i) { parts.push('<span class="swatch rail-swatch" style="background:' + RAIL_COL[i % RAIL_COL.length] + '"></span>' + esc(r) + ' rail' + (opt.rails ? '' : ' (per-rail off)')); });
    parts.push('<span class="swatch" style="border:2px dashed #6a3d9a;background:none"></span>DEVSLP asserted');
    parts.push('<span class="swatch" style="border:2px dashed #2e7d32;background:none"></span>note');
    return parts.join('');
  }

  function makeChart(d, host) {
    var box = document.createElement('div'); box.className = 'drive';
    var h = document.createElement('h3'); h.textContent = 'Port ' + d.port + ': ' + d.name + (d.nvme ? ' (NVMe)' : ''); box.appendChild(h);
    box.setAttribute('role', 'figure');
    box.setAttribute('aria-label', 'Live power of port ' + d.port + ', ' + d.name + ', with its I/O, phase and DEVSLP strips');
    var leg = document.createElement('div'); leg.className = 'legend-extra'; leg.innerHTML = legendHTML(d); box.appendChild(leg);
    host.appendChild(box);
    var unit = opt.mw ? 'mW' : 'W';
    function val(u, v) { return v == null ? '–' : (+v).toPrecision(4) + ' ' + unit; }
    var ser = [{ label: 't', value: function (u, v) { return v == null ? '' : fmtT(v) + ' s'; } },
      { label: 'mean', stroke: MEAN, width: 1.2, value: val },
      { label: 'min', stroke: 'rgba(31,119,180,0.35)', width: 0.5, points: { show: false }, value: val },
      { label: 'max', stroke: 'rgba(31,119,180,0.35)', width: 0.5, points: { show: false }, value: val }];
    d.railNames.forEach(function (r, i) { ser.push({ label: r, stroke: RAIL_COL[i % RAIL_COL.length], width: 1, value: val }); });
    var strips;
    var u = new uPlot({
      width: IW.plotWidth(), height: 240,
      scales: { x: { time: false, min: view[0], max: view[1] }, y: opt.log ? { distr: 3 } : { range: IW.yRange } },
      series: ser, bands: [{ series: [3, 2], fill: BAND }],
      axes: [{ label: 'time (s)' }, { label: 'power (' + unit + ')', size: 70 }],
      cursor: { sync: { key: 'idlewatt-live' }, drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      hooks: {
        drawClear: [function (u) { overlay(u, d); }],
        draw: [function (u) { IW.drawNotes(u, notes); IW.drawCursors(u, curA, curB); if (strips) drawStrips(u, d, strips); }],
        setSelect: [function (u) {
          if (u.select.width < 2) return;
          setSelection(u.posToVal(u.select.left, 'x'), u.posToVal(u.select.left + u.select.width, 'x'), u);
        }],
      },
    }, dataFor(d, IW.plotWidth() - 80), box);
    strips = document.createElement('canvas'); strips.className = 'strips';
    u.root.insertBefore(strips, u.root.querySelector('.u-legend'));
    IW.wheelZoom(u, function () { return view; }, zoomTo, follownow);
    u.over.addEventListener('click', function (ev) {
      if (u.select.width >= 2) return;
      var t = u.posToVal(ev.offsetX, 'x');
      if (ev.shiftKey) curB = t; else curA = t;
      cursorsChanged();
    });
    return { u: u, d: d };
  }

  function rebuild() {
    var host = document.getElementById('charts');
    charts.forEach(function (c) { c.u.destroy(); });
    host.innerHTML = '';
    charts = drives.map(function (d) { return makeChart(d, host); });
  }

  function frame() {
    if (!S.started) {
      document.getElementById('status').textContent = 'waiting for the recording to start…';
      return;
    }
    if (follow) view = [Math.max(S.newest - opt.win, 0), Math.max(S.newest, opt.win)];
    if (charts.length !== drives.length) rebuild();
    charts.forEach(function (c) {
      var px = Math.round(c.u.bbox.width / devicePixelRatio) || 600;
      c.u.batch(function () {
        c.u.setData(dataFor(c.d, px), false);
        c.u.setScale('x', { min: view[0], max: view[1] });
      });
    });
    if (sel) IW.selectOn(charts, sel[0], sel[1], null);
    IW.showView(view);
    showSelection();
    status();
    document.body.dataset.liveT = String(S.newest);
    if (!drawn) { drawn = true; document.getElementById('depth').textContent = depthText(); }
  }

  function status() {
    var st = document.getElementById('status');
    var parts = [S.ended ? 'recording ended' : (paused ? 'PAUSED' : 'live'), 'newest sample ' + fmtT(S.newest) + ' s', (S.meter ? S.meter + ' ' : '') + S.rate + ' S/s'];
    if (S.missing) parts.push(S.missing + ' samples missing (meter)');
    if (S.skipped) parts.push(S.skipped + ' samples skipped by the view (it fell behind; the capture has them)');
    if (S.skipEv || S.lostEv) parts.push('some events not shown (the view fell behind)');
    st.textContent = parts.join(' · ');
    st.className = S.ended ? 'ended' : (paused ? 'paused' : '');
  }

  function depthText() {
    return 'Live buckets: ' + (S.fineW * 1e3).toPrecision(3) + ' ms (' + Math.round(S.fineW / S.dt) + ' samples) for the last ' + fmtT(S.fineN * S.fineW) +
      ' s, ' + (S.coarseW * 1e3).toPrecision(3) + ' ms for the last ' + fmtT(S.coarseN * S.coarseW) + ' s, each with min, max, energy and count; ' +
      'times and energies on the meter\'s nominal clock (' + (S.dt * 1e6).toPrecision(4) + ' µs per sample) — the report, made from the capture, fits the clock and is the figure of record. ' +
      'Charts drawn by uPlot ' + CFG.uplot_version + ' (MIT).';
  }

  // ---- selection, cursors, export, notes -----------------------------------------
  function statsAll(a, b) {
    var dep = depth(a), w = dep === 'fine' ? S.fineW : S.coarseW;
    return drives.map(function (d) {
      var sr = seriesFor(d, dep, a, b), L0 = sr.total.levels[0];
      var x = { port: d.port, name: d.name, total: sr.total, rails: sr.rails, ioK: L0.ioK, ioOps: L0.ioOps, ioBytes: L0.ioBytes, states: [] };
      var s = IW.stats(x, a, b, { dt: S.dt, width: w, t0: a, t1: b });
      s.depth = dep;
      return s;
    });
  }
  function setSelection(a, b) {
    if (b < a) { var t = a; a = b; b = t; }
    sel = [a, b]; curA = a; curB = b;
    cursorsChanged();
    return statsAll(a, b);
  }
  function cursorsChanged() {
    if (curA !== null && curB !== null) { sel = [Math.min(curA, curB), Math.max(curA, curB)]; IW.selectOn(charts, sel[0], sel[1], null); }
    document.getElementById('cur-a').value = curA === null ? '' : +curA.toPrecision(9);
    document.getElementById('cur-b').value = curB === null ? '' : +curB.toPrecision(9);
    charts.forEach(function (c) { c.u.redraw(false, false); });
    showSelection();
  }
  function showSelection() {
    document.getElementById('b-csv').disabled = !sel;
    if (!sel) return;
    document.getElementById('sel-body').innerHTML = IW.selectionHTML(statsAll(sel[0], sel[1]), sel[0], sel[1], fmtW);
  }
  function csvOf(a, b) {
    var dep = depth(a);
    return IW.csv(drives.map(function (d) {
      var g = d[dep], w = g.total.w, ka = Math.floor(a / w), kb = Math.ceil(b / w);
      return { port: d.port, L: level(g.total, ka, kb), rails: g.rails.map(function (r, i) { return { name: d.railNames[i], L: level(r, ka, kb) }; }) };
    }), a, b, S.dt);
  }
  // A note once, whether it came back from the server or was just made here.
  var noteKeys = {};
  function addNoteLocal(n) {
    var k = n.at_s + '|' + n.to_s + '|' + n.text;
    if (noteKeys[k]) return;
    noteKeys[k] = 1; notes.push(n); showNotes();
    charts.forEach(function (c) { c.u.redraw(false, false); });
  }
  function showNotes() {
    var el = document.getElementById('notes-list');
    el.innerHTML = notes.length ? '<h3>Notes</h3><ul>' + notes.map(function (n) {
      return '<li>' + fmtT(n.at_s) + (n.to_s ? '–' + fmtT(n.to_s) : '') + ' s: ' + esc(n.text) + '</li>';
    }).join('') + '</ul>' : '';
  }
  function addNote() {
    var text = document.getElementById('note-text').value, st = document.getElementById('note-status');
    if (curA === null || !text.trim()) { st.textContent = 'set cursor A (click a chart) and write a note'; return; }
    var body = { at_s: sel ? sel[0] : curA, text: text };
    if (sel && sel[1] > sel[0]) body.to_s = sel[1];
    fetch('/api/note', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }).then(function (r) {
      return r.text().then(function (t) { if (!r.ok) throw new Error(t); });
    }).then(function () {
      st.textContent = 'saved beside the capture';
      document.getElementById('note-text').value = '';
      addNoteLocal({ at_s: body.at_s, to_s: body.to_s === undefined ? null : body.to_s, text: body.text });
    })
      .catch(function (e) { st.textContent = 'not saved: ' + e.message; });
  }

  // ---- controls --------------------------------------------------------------
  function setPaused(p) {
    paused = p;
    document.getElementById('b-pause').textContent = p ? 'Resume' : 'Pause';
    if (!p) { follow = true; poll(); }
    status();
  }
  function zoomTo(a, b) {
    if (!(b > a)) return;
    if (!paused) setPaused(true);
    follow = false;
    view = IW.widen(a, b, S.dt * 8);
    frame();
  }
  function follownow() { setPaused(false); }
  document.getElementById('b-pause').onclick = function () { setPaused(!paused); };
  document.addEventListener('keydown', function (ev) {
    if (ev.key === ' ' && ev.target === document.body) { ev.preventDefault(); setPaused(!paused); }
  });
  document.getElementById('c-window').onchange = function (ev) { opt.win = +ev.target.value; if (!follow) follow = true; frame(); };
  IW.navControls(function () { return view; }, function () { return sel; }, zoomTo, follownow);
  ['log', 'mw', 'rails'].forEach(function (k) {
    document.getElementById('c-' + k).onchange = function (ev) { opt[k] = ev.target.checked; rebuild(); frame(); };
  });
  ['cur-a', 'cur-b'].forEach(function (id) {
    document.getElementById(id).onchange = function (ev) {
      var v = ev.target.value === '' ? null : +ev.target.value;
      if (id === 'cur-a') curA = v; else curB = v;
      cursorsChanged();
    };
  });
  document.getElementById('b-csv').onclick = function () {
    if (sel) IW.download('idlewatt-live-' + fmtT(sel[0]) + '-' + fmtT(sel[1]) + 's.csv', csvOf(sel[0], sel[1]));
  };
  if (CFG.annotate) {
    document.getElementById('annotate').hidden = false;
    document.getElementById('b-note').onclick = addNote;
  }
  window.addEventListener('resize', function () { charts.forEach(function (c) { c.u.setSize({ width: IW.plotWidth(), height: 240 }); }); frame(); });

  setInterval(poll, POLL_MS);
  poll();
  // For tests and the console.
  IW.publish({
    pause: function () { setPaused(true); return paused; },
    resume: function () { setPaused(false); return paused; },
    paused: function () { return paused; },
    select: setSelection,
    stats: statsAll,
    csv: csvOf,
    view: function () { return view.slice(); },
    selection: function () { return sel ? sel.slice() : null; },
    cursors: function () { return [curA, curB]; },
    setWindow: function (s) { opt.win = s; document.getElementById('c-window').value = String(s); follow = true; frame(); return opt.win; },
    newest: function () { return S.newest; },
    drives: function () { return drives.map(function (d) { return { port: d.port, name: d.name, rails: d.railNames, pins: d.pins.length, busy: Object.keys(d.busy).length }; }); },
  });
})();
