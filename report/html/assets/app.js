// idlewatt report viewer. Reads the JSON in #idlewatt-data (see
// report/html/page.go for its shape), builds a min/max/energy pyramid per
// drive and rail from the embedded base buckets, and draws each drive with
// uPlot: per pixel column, the finest level no wider than the column gives
// min, max and mean (energy ÷ time), so no spike disappears at any zoom.
// Selections integrate the same per-bucket energies, pro-rating the two
// edge buckets, so they agree with report.json. No network access.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('idlewatt-data').textContent);
  var R = D.report;
  var DT = D.dt_s || 1;
  D.phases = D.phases || []; D.marks = D.marks || []; D.drives = D.drives || [];

  // ---- data ----------------------------------------------------------------
  function bytes(b64) {
    var s = atob(b64), u = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    return u.buffer;
  }
  function f32(b64) { return b64 ? new Float32Array(bytes(b64)) : new Float32Array(0); }
  function u32(b64) { return b64 ? new Uint32Array(bytes(b64)) : new Uint32Array(0); }

  // A series is a pyramid: levels[0] is the embedded base, each next level
  // merges pairs of buckets (k, k+1 with k even) of the one below.
  function series(s, width) {
    var L0 = { k0: s.k0, n: s.n, w: width, min: f32(s.min), max: f32(s.max),
      e: Float64Array.from(f32(s.e)), cnt: u32(s.cnt), q: s.q ? Float64Array.from(f32(s.q)) : null };
    var levels = [L0];
    while (levels[levels.length - 1].n > 4) {
      var a = levels[levels.length - 1];
      var k0 = Math.floor(a.k0 / 2), kn = Math.floor((a.k0 + a.n - 1) / 2), n = kn - k0 + 1;
      var b = { k0: k0, n: n, w: a.w * 2, min: new Float32Array(n).fill(NaN), max: new Float32Array(n).fill(NaN),
        e: new Float64Array(n), cnt: new Uint32Array(n), q: a.q ? new Float64Array(n) : null };
      for (var j = 0; j < a.n; j++) {
        var o = Math.floor((a.k0 + j) / 2) - k0;
        if (a.cnt[j] > 0) {
          b.min[o] = isNaN(b.min[o]) ? a.min[j] : Math.min(b.min[o], a.min[j]);
          b.max[o] = isNaN(b.max[o]) ? a.max[j] : Math.max(b.max[o], a.max[j]);
        }
        b.e[o] += a.e[j]; b.cnt[o] += a.cnt[j];
        if (b.q) b.q[o] += a.q[j];
      }
      levels.push(b);
    }
    return { levels: levels, name: s.rail || 'total' };
  }

  var drives = D.drives.map(function (d) {
    var st = [];
    for (var i = 0; i < (d.state_t || []).length; i++) st.push([d.state_t[i], d.state_s[i]]);
    return { port: d.port, name: d.name, total: series(d.total, D.width_s),
      rails: (d.rails || []).map(function (r) { return series(r, D.rail_width_s); }),
      states: st, statesCut: d.states_cut, busy: d.busy || [], busyCut: d.busy_cut, pins: d.pins || [],
      raw: (d.raw || []).map(function (r) { return { t: r.t_s, w: f32(r.w) }; }), peakT: d.peak_t_s,
      ioK: d.io_k || [], ioOps: d.io_ops || [], ioBytes: d.io_bytes || [],
      rep: R.drives.filter(function (x) { return x.port === d.port; })[0] };
  });

  // Time range covered by samples.
  var T0 = Infinity, T1 = -Infinity;
  drives.forEach(function (d) {
    var L = d.total.levels[0];
    if (L.n === 0) return;
    T0 = Math.min(T0, L.k0 * L.w); T1 = Math.max(T1, (L.k0 + L.n) * L.w);
  });
  if (!isFinite(T0)) { T0 = 0; T1 = 1; }

  // Aggregate a series over [a, b) into cells of width c (a grid of x
  // values): per cell min, max and mean from the coarsest level whose
  // buckets are no wider than the cell; cells narrower than the base
  // bucket take the bucket they fall in.
  function levelFor(s, c) {
    var ls = s.levels, best = ls[0];
    for (var i = 1; i < ls.length; i++) if (ls[i].w <= c) best = ls[i];
    return best;
  }
  function grid(a, b, px) {
    // Cells: pixel columns, or base buckets when zoomed deeper than them.
    var c = (b - a) / Math.max(px, 1), w0 = D.width_s;
    if (c < w0) {
      var k = Math.floor(a / w0), kz = Math.ceil(b / w0), xs = [];
      for (; k < kz; k++) xs.push({ lo: k * w0, hi: (k + 1) * w0 });
      return xs;
    }
    var out = [];
    for (var i = 0; i < px; i++) out.push({ lo: a + i * c, hi: a + (i + 1) * c });
    return out;
  }
  // Deeper than the base buckets, full-resolution segments replace them:
  // one cell per sample, or per column when samples are denser than pixels.
  function withRaw(d, cells, a, b, px) {
    if (!d.raw.length || !cells.length) return cells;
    var spans = [], out = [];
    d.raw.forEach(function (s) {
      var n = s.w.length, end = s.t + n * DT;
      if (end < a || s.t > b) return;
      spans.push([s.t, end]);
      var j0 = Math.max(0, Math.floor((a - s.t) / DT)), j1 = Math.min(n, Math.ceil((b - s.t) / DT) + 1);
      var col = (b - a) / Math.max(px, 1), cur = null;
      for (var j = j0; j < j1; j++) {
        var t = s.t + j * DT, v = s.w[j];
        if (DT >= col) { out.push({ lo: t - DT / 2, hi: t + DT / 2, raw: [v, v, v] }); continue; }
        var k = Math.floor((t - a) / col);
        if (!cur || cur.k !== k) { cur = { k: k, lo: a + k * col, hi: a + (k + 1) * col, raw: [v, v, 0], n: 0 }; out.push(cur); }
        cur.raw[0] = Math.min(cur.raw[0], v); cur.raw[1] = Math.max(cur.raw[1], v); cur.raw[2] += v; cur.n++;
      }
      out.forEach(function (x) { if (x.n) { x.raw[2] /= x.n; x.n = 0; } });
    });
    if (!spans.length) return cells;
    cells.forEach(function (x) {
      var m = (x.lo + x.hi) / 2;
      for (var i = 0; i < spans.length; i++) if (m >= spans[i][0] && m < spans[i][1]) return;
      out.push(x);
    });
    out.sort(function (p, q) { return p.lo - q.lo; });
    return out;
  }

  function aggregate(s, cells) {
    var n = cells.length, mn = new Array(n), mx = new Array(n), me = new Array(n);
    if (n === 0) return [mn, mx, me];
    if (s === 'raw') {
      for (var r = 0; r < n; r++) {
        var x = cells[r].raw;
        if (x) { mn[r] = x[0]; mx[r] = x[1]; me[r] = x[2]; } else { mn[r] = mx[r] = me[r] = undefined; }
      }
      return [mn, mx, me];
    }
    var c = cells[0].hi - cells[0].lo;
    var L = levelFor(s, c);
    for (var i = 0; i < n; i++) {
      var lo = cells[i].lo, hi = cells[i].hi, jmin, jmax;
      if (L.w > c) { // deeper than this series goes: the bucket holding the cell's middle
        jmin = jmax = Math.floor((lo + hi) / 2 / L.w) - L.k0;
      } else {
        jmin = Math.ceil(lo / L.w - 1e-9) - L.k0; jmax = Math.ceil(hi / L.w - 1e-9) - L.k0 - 1;
      }
      jmin = Math.max(jmin, 0); jmax = Math.min(jmax, L.n - 1);
      var lo_ = Infinity, hi_ = -Infinity, e = 0, cnt = 0;
      for (var j = jmin; j <= jmax; j++) {
        if (L.cnt[j] === 0) continue;
        lo_ = Math.min(lo_, L.min[j]); hi_ = Math.max(hi_, L.max[j]); e += L.e[j]; cnt += L.cnt[j];
      }
      if (cnt === 0) { mn[i] = mx[i] = me[i] = null; continue; }
      mn[i] = lo_; mx[i] = hi_; me[i] = e / (cnt * DT);
    }
    return [mn, mx, me];
  }

  // Sum over [a, b) of a level-0 array, pro-rating the two edge buckets.
  function integrate(L, arr, a, b) {
    var s = 0;
    var j0 = Math.max(Math.floor(a / L.w) - L.k0, 0), j1 = Math.min(Math.floor(b / L.w) - L.k0, L.n - 1);
    for (var j = j0; j <= j1; j++) {
      var lo = (L.k0 + j) * L.w, hi = lo + L.w;
      var f = (Math.min(hi, b) - Math.max(lo, a)) / L.w;
      if (f <= 0) continue;
      s += arr[j] * Math.min(f, 1);
    }
    return s;
  }

  // Everything the selection panel shows for drive d over [a, b).
  function stats(d, a, b) {
    var L = d.total.levels[0];
    var e = integrate(L, L.e, a, b), n = integrate(L, L.cnt, a, b);
    var mn = Infinity, mx = -Infinity;
    var j0 = Math.max(Math.floor(a / L.w) - L.k0, 0), j1 = Math.min(Math.ceil(b / L.w) - L.k0 - 1, L.n - 1);
    for (var j = j0; j <= j1; j++) if (L.cnt[j] > 0) { mn = Math.min(mn, L.min[j]); mx = Math.max(mx, L.max[j]); }
    var rails = d.rails.map(function (r) {
      var Lr = r.levels[0];
      var er = integrate(Lr, Lr.e, a, b), qr = integrate(Lr, Lr.q, a, b), nr = integrate(Lr, Lr.cnt, a, b);
      return { rail: r.name, energy_j: er, charge_mah: qr / 3.6, mean_w: nr > 0 ? er / (nr * DT) : NaN };
    });
    var ops = 0, by = 0;
    for (var i = 0; i < d.ioK.length; i++) {
      var t = d.ioK[i] * D.width_s;
      if (t >= a && t < b) { ops += d.ioOps[i]; by += d.ioBytes[i]; }
    }
    var res = {}, tot = 0, ca = Math.max(a, T0), cb = Math.min(b, T1);
    for (var k = 0; k < d.states.length; k++) {
      var s0 = Math.max(d.states[k][0], ca), s1 = Math.min(k + 1 < d.states.length ? d.states[k + 1][0] : T1, cb);
      if (s1 > s0 && d.states[k][1] !== 'gap') { res[d.states[k][1]] = (res[d.states[k][1]] || 0) + (s1 - s0); tot += s1 - s0; }
    }
    for (var key in res) res[key] /= tot;
    return { port: d.port, name: d.name, from_s: a, to_s: b, duration_s: b - a, measured_s: n * DT, samples: n,
      energy_j: e, energy_mwh: e / 3.6, mean_w: n > 0 ? e / (n * DT) : NaN,
      min_w: isFinite(mn) ? mn : NaN, max_w: isFinite(mx) ? mx : NaN, rails: rails,
      io_ops: ops, io_bytes: by, residency: res };
  }

  // ---- drawing ---------------------------------------------------------------
  var STATE_COL = { active: '#e4572e', background: '#f4a582', idle: '#9aa5b1', partial: '#f2c14e', slumber: '#4f9d69', devslp: '#6a3d9a', off: '#222', unknown: '#ddd' };
  var RAIL_COL = ['#1b9e77', '#d95f02', '#7570b3', '#e7298a'];
  var BAND = 'rgba(31,119,180,0.25)', MEAN = '#1f5f9f';
  var opt = { log: false, mw: false, rails: false, overlay: false };
  var view = [T0, T1], sel = null, charts = [], syncing = false;
  var STRIP_H = 12, STRIPS = ['I/O', 'state', 'DEVSLP'];

  function scaleW() { return opt.mw ? 1000 : 1; }
  function unit() { return opt.mw ? 'mW' : 'W'; }
  function fmtW(w) { return isNaN(w) ? '–' : (opt.mw ? (w * 1000).toPrecision(4) + ' mW' : w.toPrecision(4) + ' W'); }
  function fmtT(t) { return Math.abs(t) < 1e-9 ? '0' : Math.abs(t) >= 100 ? t.toFixed(2) : t.toPrecision(5); }

  // Overlay: every drive's mean and band on one chart, on the bucket grid
  // (full-resolution windows are drawn in the per-drive charts).
  var DRIVE_COL = ['#1f5f9f', '#d95f02', '#1b9e77', '#7570b3', '#e7298a', '#66a61e'];
  function driveBand(i) {
    var c = DRIVE_COL[i % DRIVE_COL.length];
    return 'rgba(' + parseInt(c.slice(1, 3), 16) + ',' + parseInt(c.slice(3, 5), 16) + ',' + parseInt(c.slice(5, 7), 16) + ',0.2)';
  }
  function dataForOverlay(px) {
    var cells = grid(view[0], view[1], px);
    var out = [cells.map(function (c) { return (c.lo + c.hi) / 2; })];
    var k = scaleW(), floor = -Infinity;
    var aggs = drives.map(function (d) { return aggregate(d.total, cells); });
    if (opt.log) {
      var lo = Infinity;
      aggs.forEach(function (t) { t[2].forEach(function (v) { if (v !== null && v > 0) lo = Math.min(lo, v); }); });
      floor = isFinite(lo) ? lo / 2 : 1e-6;
    }
    function sc(arr) { return arr.map(function (v) { return v === null || v === undefined ? null : Math.max(v, floor) * k; }); }
    aggs.forEach(function (t) { out.push(sc(t[2]), sc(t[0]), sc(t[1])); });
    return out;
  }

  function dataFor(d, px) {
    if (d.overlay) return dataForOverlay(px);
    var cells = grid(view[0], view[1], px);
    var deep = (view[1] - view[0]) / Math.max(px, 1) < D.width_s;
    if (deep) cells = withRaw(d, cells, view[0], view[1], px);
    var xs = cells.map(function (c) { return (c.lo + c.hi) / 2; });
    var k = scaleW(), floor = -Infinity;
    var t = aggregate(d.total, cells);
    if (deep) {
      // Cells from full-resolution segments carry their own values.
      var r = aggregate('raw', cells);
      for (var i = 0; i < cells.length; i++) if (cells[i].raw) { t[0][i] = r[0][i]; t[1][i] = r[1][i]; t[2][i] = r[2][i]; }
    }
    if (opt.log) {
      // A log axis cannot show 0 or noise below it: clamp at half the
      // lowest positive mean in view.
      var lo = Infinity;
      t[2].forEach(function (v) { if (v !== null && v > 0) lo = Math.min(lo, v); });
      floor = isFinite(lo) ? lo / 2 : 1e-6;
    }
    function sc(arr) { return arr.map(function (v) { return v === null ? null : Math.max(v, floor) * k; }); }
    var out = [xs, sc(t[2]), sc(t[0]), sc(t[1])];
    d.rails.forEach(function (r) { out.push(opt.rails ? sc(aggregate(r, cells)[2]) : xs.map(function () { return null; })); });
    return out;
  }

  function plotWidth() { return Math.max(300, Math.min(document.documentElement.clientWidth - 60, 1600)); }

  function overlay(u, d) {
    var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
    function X(t) { return u.valToPos(t, 'x', true); }
    ctx.save();
    ctx.textAlign = 'left'; ctx.textBaseline = 'alphabetic';
    ctx.beginPath(); ctx.rect(u.bbox.left, top, u.bbox.width, h); ctx.clip();
    // Phase bands: alternating tint, label where it fits.
    var i = 0;
    D.phases.forEach(function (p) {
      if (p.port !== 0 && !d.overlay && p.port !== d.port) return;
      var x0 = X(p.start_s), x1 = X(p.end_s);
      if (x1 < u.bbox.left || x0 > u.bbox.left + u.bbox.width) { i++; return; }
      ctx.fillStyle = (i++ % 2) ? 'rgba(120,120,120,0.06)' : 'rgba(120,120,120,0.0)';
      ctx.fillRect(x0, top, x1 - x0, h);
      ctx.strokeStyle = 'rgba(80,80,80,0.5)'; ctx.setLineDash([4, 3]);
      ctx.beginPath(); ctx.moveTo(x0, top); ctx.lineTo(x0, top + h); ctx.stroke(); ctx.setLineDash([]);
      ctx.font = (11 * devicePixelRatio) + 'px sans-serif';
      var lw = ctx.measureText(p.name).width;
      if (x1 - x0 > lw + 8) { ctx.fillStyle = '#444'; ctx.fillText(p.name, Math.max(x0, u.bbox.left) + 4, top + 13 * devicePixelRatio); }
    });
    // DEVSLP pin: outlined purple rectangles, not a fill that could be read as a band.
    ctx.strokeStyle = '#6a3d9a'; ctx.lineWidth = 1.5 * devicePixelRatio; ctx.setLineDash([6, 3]);
    d.pins.forEach(function (p) { var x0 = X(p[0]), x1 = X(p[1]); ctx.strokeRect(x0, top + 1, x1 - x0, h - 2); });
    ctx.setLineDash([]);
    ctx.restore();
  }

  function marksOverlay(u, d) {
    var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
    ctx.save();
    ctx.textAlign = 'left'; ctx.textBaseline = 'alphabetic';
    ctx.beginPath(); ctx.rect(u.bbox.left, top, u.bbox.width, h); ctx.clip();
    ctx.strokeStyle = '#b00'; ctx.fillStyle = '#b00'; ctx.lineWidth = devicePixelRatio;
    ctx.font = (10 * devicePixelRatio) + 'px sans-serif';
    var lastX = -1e9;
    D.marks.forEach(function (m) {
      if (m.port !== 0 && !d.overlay && m.port !== d.port) return;
      var x = u.valToPos(m.t, 'x', true);
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + 30 * devicePixelRatio); ctx.stroke();
      if (x - lastX > ctx.measureText(m.text).width + 6) { ctx.fillText(m.text, x + 3, top + 27 * devicePixelRatio); lastX = x; }
    });
    ctx.restore();
  }

  function drawStrips(u, d, cv) {
    var dpr = devicePixelRatio, W = u.over.clientWidth, left = u.over.offsetLeft;
    var labels = d.overlay ? drives.map(function (x) { return 'I/O p' + x.port; }) : STRIPS;
    cv.width = (left + W) * dpr; cv.height = labels.length * STRIP_H * dpr; cv.style.width = (left + W) + 'px'; cv.style.height = (labels.length * STRIP_H) + 'px';
    var ctx = cv.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, left + W, labels.length * STRIP_H);
    ctx.font = '10px sans-serif'; ctx.fillStyle = '#444';
    labels.forEach(function (s, i) { ctx.fillText(s, Math.max(0, left - 44), i * STRIP_H + 8); });
    function X(t) { return left + (t - view[0]) / (view[1] - view[0]) * W; }
    function clampBar(x0, x1, y, col) {
      x0 = Math.max(x0, left); x1 = Math.min(x1, left + W);
      if (x1 < x0) return;
      ctx.fillStyle = col; ctx.fillRect(x0, y + 1, Math.max(x1 - x0, 1), STRIP_H - 2);
    }
    if (d.overlay) {
      drives.forEach(function (x, r) {
        for (var i = 0; i + 1 < x.busy.length; i += 2) clampBar(X(x.busy[i]), X(x.busy[i + 1]), r * STRIP_H, DRIVE_COL[r % DRIVE_COL.length]);
      });
      return;
    }
    for (var i = 0; i + 1 < d.busy.length; i += 2) clampBar(X(d.busy[i]), X(d.busy[i + 1]), 0, '#222');
    for (var k = 0; k < d.states.length; k++) {
      var a = d.states[k][0], b = k + 1 < d.states.length ? d.states[k + 1][0] : T1;
      if (b < view[0] || a > view[1] || d.states[k][1] === 'gap') continue;
      clampBar(X(a), X(b), STRIP_H, STATE_COL[d.states[k][1]] || '#ccc');
    }
    d.pins.forEach(function (p) { clampBar(X(p[0]), X(p[1]), 2 * STRIP_H, '#6a3d9a'); });
  }

  function makeChart(d, host) {
    var box = document.createElement('div'); box.className = 'drive';
    var h = document.createElement('h3'); h.textContent = 'Port ' + d.port + ': ' + d.name; box.appendChild(h);
    var leg = document.createElement('div'); leg.className = 'legend-extra';
    var parts = ['<span class="swatch" style="background:' + MEAN + '"></span>mean', '<span class="swatch" style="background:' + BAND + '"></span>min–max'];
    if (d.pins.length) parts.push('<span class="swatch" style="border:2px dashed #6a3d9a;background:none"></span>DEVSLP asserted');
    var seen = {};
    d.states.forEach(function (s) { if (s[1] !== 'gap') seen[s[1]] = 1; });
    Object.keys(seen).forEach(function (s) { parts.push('<span class="swatch" style="background:' + (STATE_COL[s] || '#ccc') + '"></span>' + s); });
    leg.innerHTML = parts.join('');
    box.appendChild(leg);
    host.appendChild(box);
    var ser = [{ label: 't (s)', value: function (u, v) { return v == null ? '' : fmtT(v); } },
      { label: 'mean', stroke: MEAN, width: 1.2, spanGaps: false },
      { label: 'min', stroke: 'rgba(31,119,180,0.35)', width: 0.5, points: { show: false } },
      { label: 'max', stroke: 'rgba(31,119,180,0.35)', width: 0.5, points: { show: false } }];
    d.rails.forEach(function (r, i) { ser.push({ label: r.name, stroke: RAIL_COL[i % RAIL_COL.length], width: 1, show: true }); });
    var u = new uPlot({
      width: plotWidth(), height: 260,
      scales: { x: { time: false, min: view[0], max: view[1] }, y: opt.log ? { distr: 3 } : { range: function (u, lo, hi) { return [Math.min(0, lo), hi > 0 ? hi * 1.05 : 1]; } } },
      series: ser,
      bands: [{ series: [3, 2], fill: BAND }],
      axes: [{ label: 'time (s)' }, { label: 'power (' + unit() + ')', size: 70 }],
      cursor: { sync: { key: 'idlewatt' }, drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      hooks: {
        drawClear: [function (u) { overlay(u, d); }],
        draw: [function (u) { marksOverlay(u, d); if (strips) drawStrips(u, d, strips); }],
        setSelect: [function (u) {
          if (u.select.width < 2) return;
          var a = u.posToVal(u.select.left, 'x'), b = u.posToVal(u.select.left + u.select.width, 'x');
          setSelection(a, b, u);
        }],
      },
    }, dataFor(d, plotWidth() - 80), box);
    // The I/O, state and pin strips sit right under the plot, above the legend.
    var strips = document.createElement('canvas'); strips.className = 'strips';
    u.root.insertBefore(strips, u.root.querySelector('.u-legend'));
    wheelAndDblclick(u);
    return { u: u, d: d };
  }

  function wheelAndDblclick(u) {
    u.over.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var f = ev.deltaY > 0 ? 1.25 : 0.8, span = view[1] - view[0];
      if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
        var dx = (ev.shiftKey ? ev.deltaY : ev.deltaX) > 0 ? 0.1 : -0.1;
        zoom(view[0] + dx * span, view[1] + dx * span);
        return;
      }
      var x = u.posToVal(ev.offsetX, 'x');
      zoom(x - (x - view[0]) * f, x + (view[1] - x) * f);
    }, { passive: false });
    u.over.addEventListener('dblclick', function () { zoom(T0, T1); });
  }

  function makeOverlayChart(host) {
    var d = { overlay: true, pins: [], states: [], busy: [] };
    drives.forEach(function (x) { d.pins = d.pins.concat(x.pins); });
    var box = document.createElement('div'); box.className = 'drive';
    var h = document.createElement('h3'); h.textContent = 'All drives'; box.appendChild(h);
    var leg = document.createElement('div'); leg.className = 'legend-extra';
    leg.innerHTML = drives.map(function (x, i) {
      return '<span class="swatch" style="background:' + DRIVE_COL[i % DRIVE_COL.length] + '"></span>port ' + x.port + ' ' + esc(x.name) + ' (band: min–max)';
    }).join('') + (d.pins.length ? '<span class="swatch" style="border:2px dashed #6a3d9a;background:none"></span>DEVSLP asserted' : '');
    box.appendChild(leg);
    host.appendChild(box);
    var ser = [{ label: 't (s)', value: function (u, v) { return v == null ? '' : fmtT(v); } }], bands = [];
    drives.forEach(function (x, i) {
      var c = DRIVE_COL[i % DRIVE_COL.length], base = ser.length;
      ser.push({ label: 'p' + x.port + ' mean', stroke: c, width: 1.2 },
        { label: 'p' + x.port + ' min', stroke: driveBand(i), width: 0.5, points: { show: false } },
        { label: 'p' + x.port + ' max', stroke: driveBand(i), width: 0.5, points: { show: false } });
      bands.push({ series: [base + 2, base + 1], fill: driveBand(i) });
    });
    var strips;
    var u = new uPlot({
      width: plotWidth(), height: 320,
      scales: { x: { time: false, min: view[0], max: view[1] }, y: opt.log ? { distr: 3 } : { range: function (u, lo, hi) { return [Math.min(0, lo), hi > 0 ? hi * 1.05 : 1]; } } },
      series: ser, bands: bands,
      axes: [{ label: 'time (s)' }, { label: 'power (' + unit() + ')', size: 70 }],
      cursor: { sync: { key: 'idlewatt' }, drag: { x: true, y: false, setScale: false } },
      hooks: {
        drawClear: [function (u) { overlay(u, d); }],
        draw: [function (u) { marksOverlay(u, d); if (strips) drawStrips(u, d, strips); }],
        setSelect: [function (u) {
          if (u.select.width < 2) return;
          setSelection(u.posToVal(u.select.left, 'x'), u.posToVal(u.select.left + u.select.width, 'x'), u);
        }],
      },
    }, dataForOverlay(plotWidth() - 80), box);
    strips = document.createElement('canvas'); strips.className = 'strips';
    u.root.insertBefore(strips, u.root.querySelector('.u-legend'));
    wheelAndDblclick(u);
    return { u: u, d: d };
  }

  function redraw() {
    charts.forEach(function (c) {
      var px = Math.round(c.u.bbox.width / devicePixelRatio) || 600;
      syncing = true;
      c.u.batch(function () {
        c.u.setData(dataFor(c.d, px), false);
        c.u.setScale('x', { min: view[0], max: view[1] });
      });
      syncing = false;
    });
    document.getElementById('view').textContent = 'view ' + fmtT(view[0]) + ' – ' + fmtT(view[1]) + ' s (' + fmtT(view[1] - view[0]) + ' s)';
    if (sel) showSelection();
  }

  function zoom(a, b) {
    if (!(b > a)) return;
    var minSpan = DT * 8;
    if (b - a < minSpan) { var m = (a + b) / 2; a = m - minSpan / 2; b = m + minSpan / 2; }
    view = [a, b];
    redraw();
    try { history.replaceState(null, '', '#t=' + a.toPrecision(9) + ',' + b.toPrecision(9)); } catch (e) { /* file: URLs in some browsers */ }
  }

  function setSelection(a, b, from) {
    if (b < a) { var t = a; a = b; b = t; }
    sel = [a, b];
    charts.forEach(function (c) {
      if (c.u === from) return;
      var l = c.u.valToPos(a, 'x'), r = c.u.valToPos(b, 'x');
      c.u.setSelect({ left: l, width: r - l, top: 0, height: c.u.bbox.height / devicePixelRatio }, false);
    });
    showSelection();
    return drives.map(function (d) { return stats(d, a, b); });
  }

  function showSelection() {
    var a = sel[0], b = sel[1];
    var rows = drives.map(function (d) {
      var s = stats(d, a, b);
      var rails = s.rails.map(function (r) { return r.rail + ' ' + r.charge_mah.toPrecision(4) + ' mAh'; }).join(', ');
      var res = Object.keys(s.residency).map(function (k) { return k + ' ' + (100 * s.residency[k]).toFixed(1) + ' %'; }).join(', ');
      return '<tr><td>' + esc(d.name) + '</td><td>' + fmtW(s.mean_w) + '</td><td>' + fmtW(s.min_w) + '</td><td>' + fmtW(s.max_w) +
        '</td><td>' + s.energy_j.toPrecision(6) + '</td><td>' + s.energy_mwh.toPrecision(5) + '</td><td>' + (rails || '–') +
        '</td><td>' + s.io_ops + '</td><td>' + fmtBytes(s.io_bytes) + '</td><td>' + (res || '–') + '</td></tr>';
    });
    document.getElementById('sel-body').innerHTML = '<p>' + fmtT(a) + ' – ' + fmtT(b) + ' s: <b>' + fmtT(b - a) + ' s</b></p>' +
      '<table><tr><th>drive</th><th>mean</th><th>min</th><th>max</th><th>energy (J)</th><th>energy (mWh)</th><th>charge</th><th>I/O ops</th><th>I/O bytes</th><th>state residency</th></tr>' +
      rows.join('') + '</table>';
  }

  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return '&#' + c.charCodeAt(0) + ';'; }); }
  function fmtBytes(b) { return b >= 1 << 20 ? (b / 1048576).toFixed(1) + ' MiB' : b >= 1024 ? (b / 1024).toFixed(1) + ' KiB' : b + ' B'; }

  function rebuild() {
    var host = document.getElementById('charts');
    charts.forEach(function (c) { c.u.destroy(); });
    host.innerHTML = '';
    charts = opt.overlay && drives.length > 1 ? [makeOverlayChart(host)] : drives.map(function (d) { return makeChart(d, host); });
    redraw();
  }

  // ---- tables ----------------------------------------------------------------
  function table(title, head, rows) {
    var h = '<h2>' + esc(title) + '</h2><table><tr>' + head.map(function (x) { return '<th>' + esc(x) + '</th>'; }).join('') + '</tr>';
    rows.forEach(function (r) {
      var attrs = r.zoom ? ' class="link ' + (r.cls || '') + '" data-a="' + r.zoom[0] + '" data-b="' + r.zoom[1] + '"' +
        (r.sel ? ' data-sa="' + r.sel[0] + '" data-sb="' + r.sel[1] + '"' : '') : '';
      h += '<tr' + attrs + '>' + r.cells.map(function (c) { return '<td>' + c + '</td>'; }).join('') + '</tr>';
    });
    return h + '</table>';
  }
  function n4(x) { return (x === undefined || x === null) ? '–' : Number(x).toPrecision(4); }
  function mw(x) { return (x === undefined || x === null) ? '–' : (x * 1000).toPrecision(4); }

  function peakAt(d) {
    var L = d.total.levels[0], best = -Infinity, bj = -1;
    for (var j = 0; j < L.n; j++) if (L.cnt[j] > 0 && L.max[j] > best) { best = L.max[j]; bj = j; }
    return bj < 0 ? T0 : (L.k0 + bj + 0.5) * L.w;
  }

  function tables() {
    var h = '', whole = [T0, T1];
    h += table('Summary', ['drive', 'active idle (W)', 'average (W)', 'min (W)', 'peak (W)', 'p50 (W)', 'p95 (W)', 'p99 (W)', 'energy (J)', 'energy (Wh)', 'measured (s)'],
      R.drives.map(function (d) { return { zoom: whole, sel: whole, cells: [esc(d.name), n4(d.active_idle_w), n4(d.average_w), n4(d.min_w), n4(d.peak_w), n4(d.p50_w), n4(d.p95_w), n4(d.p99_w), n4(d.energy_j), n4(d.energy_wh), n4(d.duration_s)] }; }));
    var ph = [];
    R.drives.forEach(function (d) {
      (d.phases || []).forEach(function (p) {
        var z = [p.start_s, p.start_s + p.duration_s];
        ph.push({ zoom: z, sel: z, cls: 'phase-row', cells: [esc(d.name), esc(p.name), fmtT(p.start_s), n4(p.duration_s), n4(p.active_idle_w), n4(p.average_w), n4(p.peak_w), n4(p.energy_j), String(p.io ? p.io.ops : 0)] });
      });
    });
    if (ph.length) h += table('Phases', ['drive', 'phase', 'start (s)', 'measured (s)', 'active idle (W)', 'average (W)', 'peak (W)', 'energy (J)', 'I/O ops'], ph);
    h += table('Peaks (highest mean over a window)', ['drive', '1 ms (W)', '10 ms (W)', '100 ms (W)', '1 s (W)', 'peak sample (W)'],
      R.drives.map(function (d, i) {
        // Around the peak sample, whose every sample is embedded, or the
        // highest bucket.
        var pt = drives[i].peakT, t = pt || peakAt(drives[i]), span = Math.max(0.05, D.width_s * 200);
        return { zoom: pt ? [pt - 0.02, pt + 0.1] : [t - span / 2, t + span / 2], cls: 'peak-row', cells: [esc(d.name), n4(d.peak_windows['1ms_w']), n4(d.peak_windows['10ms_w']), n4(d.peak_windows['100ms_w']), n4(d.peak_windows['1s_w']), n4(d.peak_w)] };
      }));
    // Every state report.json lists (in its order), so new states show up.
    var keys = [];
    R.drives.forEach(function (d) { Object.keys(d.residency || {}).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
    h += table('Residency (fraction of measured time) and power per state', ['drive'].concat(keys, ['devslp power (mW)']),
      R.drives.map(function (d) {
        var r = d.residency || {}, sp = d.state_power_w || {};
        function c(k) { return r[k] === null || r[k] === undefined ? '–' : (100 * r[k]).toFixed(2) + ' %' + (r[k] > 0 && sp[k] !== undefined ? ' @ ' + n4(sp[k]) + ' W' : ''); }
        return { zoom: whole, cells: [esc(d.name)].concat(keys.map(c), [d.devslp && d.devslp.entered ? mw(d.devslp.power_w) : '–']) };
      }));
    var cyc = [];
    var OUT = { pass: '<span class="pass">PASS</span>', fail: '<span class="fail">FAIL</span>',
      inconclusive: '<span class="inconclusive">INCONCLUSIVE</span>', not_supported: '<span class="inconclusive">NOT SUPPORTED</span>' };
    drives.forEach(function (d) {
      // report.json's judged cycles, in pin order.
      var cr = (d.rep && d.rep.devslp && d.rep.devslp.cycle_results) || [];
      d.pins.forEach(function (p, i) {
        var c = cr[i];
        var hold = p[1] - p[0], pad = Math.max(0.1, hold * 0.25);
        var verdict = c ? (OUT[c.outcome] || esc(c.outcome || '–')) + (c.reasons && c.reasons.length ? ' ' + esc(c.reasons.join('; ')) : '') : '–';
        cyc.push({ zoom: [p[0] - pad, p[1] + pad], sel: [p[0], p[1]], cls: 'cycle-row', cells: [esc(d.name), String(c ? c.cycle : i + 1), fmtT(p[0]), n4(hold),
          c ? mw(c.floor_w) : '–', c ? n4(c.entry_ms) : '–', c ? n4(c.exit_ms) : '–', verdict] });
      });
    });
    h += cyc.length ? table('DevSlp cycles (DEVSLP pin asserted)', ['drive', 'cycle', 'assert (s)', 'held (s)', 'floor (mW)', 'entry (ms)', 'exit (ms)', 'verdict'], cyc)
      : '<h2>DevSlp cycles</h2><p>No DEVSLP pin assertion in this capture.</p>';
    h += table('Data quality', ['drive', 'samples', 'dropped', 'gaps', 'missing (s)', 'late', 'CRC errors (link)'],
      R.drives.map(function (d) { var s = d.samples; return { cells: [esc(d.name), String(s.count), String(s.dropped), String(s.gaps), n4(s.missing_s), String(s.late), String(s.crc_errors)] }; }));
    var al = R.alignment;
    h += '<p>Clock alignment: ' + esc(al.method) + ', ' + al.marks_used + '/' + al.marks + ' marks, drift ' + n4(al.drift_ppm) + ' ppm, residual RMS ' + n4(al.residual_rms_ms) + ' ms. Capture ' + (R.capture.complete ? 'complete' : 'incomplete') + ', ' + R.capture.io_events + ' I/O events.</p>';
    var notes = (R.notes || []).concat(D.page_notes || []);
    drives.forEach(function (d) {
      if (d.statesCut) notes.push(d.name + ': state shading stops early (too many state changes to embed)');
      if (d.busyCut) notes.push(d.name + ': the I/O strip stops early (too many busy intervals to embed)');
    });
    h += '<h2>Notes</h2>' + (notes.length ? '<ul>' + notes.map(function (n) { return '<li>' + esc(n) + '</li>'; }).join('') + '</ul>' : '<p>None.</p>');
    var el = document.getElementById('tables');
    el.innerHTML = h;
    el.addEventListener('click', function (ev) {
      var tr = ev.target.closest('tr.link');
      if (!tr) return;
      zoom(+tr.dataset.a, +tr.dataset.b);
      if (tr.dataset.sa !== undefined) setSelection(+tr.dataset.sa, +tr.dataset.sb);
      document.getElementById('charts').scrollIntoView({ behavior: 'instant', block: 'start' });
    });
  }

  // ---- start -----------------------------------------------------------------
  function depthText() {
    var w = D.width_s, per = D.per_bucket;
    var deep = per === 1 ? 'every sample (' + fmtT(w * 1e3) + ' ms)' : 'buckets of ' + per + ' samples (' + (w * 1e3).toPrecision(3) + ' ms)';
    var nraw = 0;
    drives.forEach(function (d) { nraw += d.raw.length; });
    return 'Embedded data: drive power down to ' + deep + ', each with min, max and energy' +
      (nraw ? '; every sample in ' + nraw + ' full-resolution windows (−20…+120 ms around each DEVSLP pin edge and each drive\'s peak sample)' : '') +
      '; rails in buckets of ' + per * 4 +
      ' samples (' + (D.rail_width_s * 1e3).toPrecision(3) + ' ms). Zoomed deeper, a bucket is drawn as its mean. ' +
      'Sample period ' + (DT * 1e6).toPrecision(4) + ' µs (fitted). Selections integrate the embedded energies, pro-rating the buckets at the edges. ' +
      'Charts drawn by uPlot ' + D.uplot_version + ' (MIT).';
  }

  document.getElementById('meta').textContent = (R.capture.path || '') + ' · ' + (R.capture.meter_kind || '') + ' ' + (R.capture.meter_model || '') +
    ' · ' + R.capture.rate_hz + ' S/s · ' + fmtT(R.capture.duration_s) + ' s · ' + (R.capture.tool || '');
  document.getElementById('depth').textContent = depthText();
  document.getElementById('b-all').onclick = function () { zoom(T0, T1); };
  document.getElementById('b-zoomsel').onclick = function () { if (sel) zoom(sel[0], sel[1]); };
  function pan(f) { var s = view[1] - view[0]; zoom(view[0] + f * s, view[1] + f * s); }
  function scaleBy(f) { var m = (view[0] + view[1]) / 2, s = (view[1] - view[0]) * f / 2; zoom(m - s, m + s); }
  document.getElementById('b-left').onclick = function () { pan(-0.25); };
  document.getElementById('b-right').onclick = function () { pan(0.25); };
  document.getElementById('b-in').onclick = function () { scaleBy(0.5); };
  document.getElementById('b-out').onclick = function () { scaleBy(2); };
  document.addEventListener('keydown', function (ev) {
    if (ev.target.tagName === 'INPUT') return;
    if (ev.key === 'ArrowLeft') pan(-0.25);
    else if (ev.key === 'ArrowRight') pan(0.25);
    else if (ev.key === '+' || ev.key === '=') scaleBy(0.5);
    else if (ev.key === '-') scaleBy(2);
  });
  ['log', 'mw', 'rails', 'overlay'].forEach(function (k) {
    document.getElementById('c-' + k).onchange = function (ev) { opt[k] = ev.target.checked; rebuild(); };
  });
  if (!drives.some(function (d) { return d.rails.length; })) document.getElementById('c-rails').disabled = true;
  if (drives.length < 2) document.getElementById('c-overlay').disabled = true;
  tables();
  var m = /^#t=([-0-9.e+]+),([-0-9.e+]+)$/.exec(location.hash);
  if (m && +m[2] > +m[1]) view = [+m[1], +m[2]];
  rebuild();
  window.addEventListener('resize', function () { charts.forEach(function (c) { c.u.setSize({ width: plotWidth(), height: 260 }); }); redraw(); });

  // For tests and the console: the same functions the controls use.
  window.idlewatt = {
    zoom: function (a, b) { zoom(a, b); return view.slice(); },
    select: setSelection,
    view: function () { return view.slice(); },
    selection: function () { return sel ? sel.slice() : null; },
    stats: function (a, b) { return drives.map(function (d) { return stats(d, a, b); }); },
    range: [T0, T1],
    readyMs: NaN,
  };
  // Ready (and timed) once the first frame with the charts has been drawn.
  requestAnimationFrame(function () {
    setTimeout(function () {
      window.idlewatt.readyMs = performance.now();
      document.body.dataset.ready = '1';
    }, 0);
  });
})();
