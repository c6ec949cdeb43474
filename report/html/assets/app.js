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

  // ---- data (core.js: decoding, pyramid, aggregation, selection) ----------
  var drives = D.drives.map(function (d) {
    var x = IW.drive(d, D.width_s, D.rail_width_s);
    x.rep = R.drives.filter(function (r) { return r.port === d.port; })[0];
    x.nvme = !!(x.rep && x.rep.interface === 'nvme');
    return x;
  });

  // Time range covered by samples.
  var T0 = Infinity, T1 = -Infinity;
  drives.forEach(function (d) {
    var s = IW.span(d);
    if (s) { T0 = Math.min(T0, s[0]); T1 = Math.max(T1, s[1]); }
  });
  if (!isFinite(T0)) { T0 = 0; T1 = 1; }

  function grid(a, b, px) { return IW.grid(a, b, px, D.width_s); }
  function withRaw(d, cells, a, b, px) { return IW.withRaw(d.raw, cells, a, b, px, DT); }
  function aggregate(s, cells) { return s === 'raw' ? IW.aggregateRaw(cells) : IW.aggregate(s, cells, DT); }
  function stats(d, a, b) { return IW.stats(d, a, b, { dt: DT, width: D.width_s, t0: T0, t1: T1 }); }

  // ---- drawing ---------------------------------------------------------------
  var STATE_COL = IW.STATE_COL;
  var RAIL_COL = ['#1b9e77', '#d95f02', '#7570b3', '#e7298a'];
  var BAND = 'rgba(31,119,180,0.25)', MEAN = '#1f5f9f';
  var opt = { log: false, mw: false, rails: false, overlay: false };
  var view = [T0, T1], sel = null, curA = null, curB = null, charts = [], syncing = false;
  var STRIP_H = 12, STRIPS = ['I/O', 'state', 'DEVSLP'], NVME_STRIPS = ['I/O', 'state', 'APST'];
  var notesAll = (R.annotations || []).slice();

  function scaleW() { return opt.mw ? 1000 : 1; }
  function unit() { return opt.mw ? 'mW' : 'W'; }
  function fmtW(w) { return isNaN(w) ? '–' : (opt.mw ? (w * 1000).toPrecision(4) + ' mW' : w.toPrecision(4) + ' W'); }
  var fmtT = IW.fmtT;

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
    var aggs = drives.map(function (d) { return aggregate(d.total, cells); });
    var k = scaleW(), floor = opt.log ? IW.logFloor(aggs) : -Infinity;
    function sc(arr) { return IW.scaled(arr, floor, k); }
    aggs.forEach(function (t) { out.push(sc(t[2]), sc(t[0]), sc(t[1])); });
    return out;
  }

  function dataFor(d, px) {
    if (d.overlay) return dataForOverlay(px);
    var cells = grid(view[0], view[1], px);
    var deep = (view[1] - view[0]) / Math.max(px, 1) < D.width_s;
    if (deep) cells = withRaw(d, cells, view[0], view[1], px);
    var xs = cells.map(function (c) { return (c.lo + c.hi) / 2; });
    var t = aggregate(d.total, cells);
    if (deep) {
      // Cells from full-resolution segments carry their own values.
      var r = aggregate('raw', cells);
      for (var i = 0; i < cells.length; i++) if (cells[i].raw) { t[0][i] = r[0][i]; t[1][i] = r[1][i]; t[2][i] = r[2][i]; }
    }
    var k = scaleW(), floor = opt.log ? IW.logFloor([t]) : -Infinity;
    function sc(arr) { return IW.scaled(arr, floor, k); }
    var out = [xs, sc(t[2]), sc(t[0]), sc(t[1])];
    // Rails are always computed: the cursor readout shows each rail's
    // power; their lines are drawn only with per-rail.
    d.rails.forEach(function (r) { out.push(sc(aggregate(r, cells)[2])); });
    return out;
  }

  var plotWidth = IW.plotWidth;
  // The cursor readout: time in s, power in the chart's unit.
  function readT(u, v) { return v == null ? '–' : fmtT(v) + ' s'; }
  function readW(u, v) { return v == null ? '–' : (+v).toPrecision(4) + ' ' + unit(); }

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
    var labels = d.overlay ? drives.map(function (x) { return 'I/O p' + x.port; }) : (d.nvme ? NVME_STRIPS : STRIPS);
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
    if (d.nvme) {
      // The APST/ASPM setting in force (idle's NVMe mode names it in its
      // phases): the host's setting, not a measured power state.
      apstRuns(d).forEach(function (r) {
        clampBar(X(r[0]), X(r[1]), 2 * STRIP_H, '#1b9e77');
        var x0 = Math.max(X(r[0]), left), x1 = Math.min(X(r[1]), left + W), lab = r[2].replace(/^(settle|idle):/, '');
        if (x1 - x0 > ctx.measureText(lab).width + 6) { ctx.fillStyle = '#fff'; ctx.fillText(lab, x0 + 3, 2 * STRIP_H + 9); }
      });
      return;
    }
    d.pins.forEach(function (p) { clampBar(X(p[0]), X(p[1]), 2 * STRIP_H, '#6a3d9a'); });
  }

  // A drive's phases that name an NVMe setting, as [start, end, name].
  function apstRuns(d) {
    return D.phases.filter(function (p) { return (p.port === 0 || p.port === d.port) && /nvme_latency_us=|aspm=/.test(p.name); })
      .map(function (p) { return [p.start_s, p.end_s, p.name]; });
  }

  function makeChart(d, host) {
    var box = document.createElement('div'); box.className = 'drive';
    var h = document.createElement('h3'); h.textContent = 'Port ' + d.port + ': ' + d.name; box.appendChild(h);
    box.setAttribute('role', 'figure');
    box.setAttribute('aria-label', 'Power over time of port ' + d.port + ', ' + d.name + ', with its I/O, state and DEVSLP strips; the tables below hold the figures');
    var leg = document.createElement('div'); leg.className = 'legend-extra';
    var parts = ['<span class="swatch" style="background:' + MEAN + '"></span>mean (all rails)', '<span class="swatch" style="background:' + BAND + '"></span>min–max'];
    d.rails.forEach(function (r, i) {
      parts.push('<span class="swatch rail-swatch" style="background:' + RAIL_COL[i % RAIL_COL.length] + '"></span>' + esc(r.name) + ' rail' + (opt.rails ? '' : ' (line: per-rail)'));
    });
    if (d.pins.length) parts.push('<span class="swatch" style="border:2px dashed #6a3d9a;background:none"></span>DEVSLP asserted');
    if (notesAll.length) parts.push('<span class="swatch" style="border:2px dashed #2e7d32;background:none"></span>note');
    if (d.nvme) parts.push('<span class="swatch" style="background:#1b9e77"></span>APST setting');
    var seen = {};
    d.states.forEach(function (s) { if (s[1] !== 'gap') seen[s[1]] = 1; });
    Object.keys(seen).forEach(function (s) { parts.push('<span class="swatch" style="background:' + (STATE_COL[s] || '#ccc') + '"></span>' + s); });
    leg.innerHTML = parts.join('');
    box.appendChild(leg);
    host.appendChild(box);
    var ser = [{ label: 't', value: readT },
      { label: 'mean', stroke: MEAN, width: 1.2, spanGaps: false, value: readW },
      { label: 'min', stroke: 'rgba(31,119,180,0.35)', width: 0.5, points: { show: false }, value: readW },
      { label: 'max', stroke: 'rgba(31,119,180,0.35)', width: 0.5, points: { show: false }, value: readW }];
    d.rails.forEach(function (r, i) {
      // Without per-rail the line is not drawn (no stroke) but the readout
      // still gives the rail's power.
      ser.push({ label: r.name, stroke: opt.rails ? RAIL_COL[i % RAIL_COL.length] : 'rgba(0,0,0,0)', width: opt.rails ? 1 : 0, points: { show: false }, value: readW });
    });
    var u = new uPlot({
      width: plotWidth(), height: 260,
      scales: { x: { time: false, min: view[0], max: view[1] }, y: opt.log ? { distr: 3 } : { range: IW.yRange } },
      series: ser,
      bands: [{ series: [3, 2], fill: BAND }],
      axes: [{ label: 'time (s)' }, { label: 'power (' + unit() + ')', size: 70 }],
      cursor: { sync: { key: 'idlewatt' }, drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      hooks: {
        drawClear: [function (u) { overlay(u, d); }],
        draw: [function (u) { marksOverlay(u, d); IW.drawNotes(u, notesAll); IW.drawCursors(u, curA, curB); if (strips) drawStrips(u, d, strips); }],
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
    IW.wheelZoom(u, function () { return view; }, zoom, home);
    clickCursors(u);
    return { u: u, d: d };
  }

  // A click (not a drag) on a chart sets cursor A, shift+click cursor B.
  function clickCursors(u) {
    u.over.addEventListener('click', function (ev) {
      if (u.select.width >= 2) return;
      var t = u.posToVal(ev.offsetX, 'x');
      if (ev.shiftKey) curB = t; else curA = t;
      cursorsChanged();
    });
  }

  function makeOverlayChart(host) {
    var d = { overlay: true, pins: [], states: [], busy: [] };
    drives.forEach(function (x) { d.pins = d.pins.concat(x.pins); });
    var box = document.createElement('div'); box.className = 'drive';
    var h = document.createElement('h3'); h.textContent = 'All drives'; box.appendChild(h);
    box.setAttribute('role', 'figure');
    box.setAttribute('aria-label', 'Power over time of every drive on one chart; the tables below hold the figures');
    var leg = document.createElement('div'); leg.className = 'legend-extra';
    leg.innerHTML = drives.map(function (x, i) {
      return '<span class="swatch" style="background:' + DRIVE_COL[i % DRIVE_COL.length] + '"></span>port ' + x.port + ' ' + esc(x.name) + ' (band: min–max)';
    }).join('') + (d.pins.length ? '<span class="swatch" style="border:2px dashed #6a3d9a;background:none"></span>DEVSLP asserted' : '');
    box.appendChild(leg);
    host.appendChild(box);
    var ser = [{ label: 't', value: readT }], bands = [];
    drives.forEach(function (x, i) {
      var c = DRIVE_COL[i % DRIVE_COL.length], base = ser.length;
      ser.push({ label: 'p' + x.port + ' mean', stroke: c, width: 1.2, value: readW },
        { label: 'p' + x.port + ' min', stroke: driveBand(i), width: 0.5, points: { show: false }, value: readW },
        { label: 'p' + x.port + ' max', stroke: driveBand(i), width: 0.5, points: { show: false }, value: readW });
      bands.push({ series: [base + 2, base + 1], fill: driveBand(i) });
    });
    var strips;
    var u = new uPlot({
      width: plotWidth(), height: 320,
      scales: { x: { time: false, min: view[0], max: view[1] }, y: opt.log ? { distr: 3 } : { range: IW.yRange } },
      series: ser, bands: bands,
      axes: [{ label: 'time (s)' }, { label: 'power (' + unit() + ')', size: 70 }],
      cursor: { sync: { key: 'idlewatt' }, drag: { x: true, y: false, setScale: false } },
      hooks: {
        drawClear: [function (u) { overlay(u, d); }],
        draw: [function (u) { marksOverlay(u, d); IW.drawNotes(u, notesAll); IW.drawCursors(u, curA, curB); if (strips) drawStrips(u, d, strips); }],
        setSelect: [function (u) {
          if (u.select.width < 2) return;
          setSelection(u.posToVal(u.select.left, 'x'), u.posToVal(u.select.left + u.select.width, 'x'), u);
        }],
      },
    }, dataForOverlay(plotWidth() - 80), box);
    strips = document.createElement('canvas'); strips.className = 'strips';
    u.root.insertBefore(strips, u.root.querySelector('.u-legend'));
    IW.wheelZoom(u, function () { return view; }, zoom, home);
    clickCursors(u);
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
    IW.showView(view);
    if (sel) showSelection();
  }

  function zoom(a, b) {
    if (!(b > a)) return;
    view = IW.widen(a, b, DT * 8);
    redraw();
    IW.saveView(view[0], view[1]);
  }
  function home() { zoom(T0, T1); }

  // keep: the cursors stay as they are (they made this selection).
  function setSelection(a, b, from, keep) {
    if (b < a) { var t = a; a = b; b = t; }
    sel = [a, b];
    if (!keep) { curA = a; curB = b; }
    IW.selectOn(charts, a, b, from);
    cursorInputs();
    showSelection();
    charts.forEach(function (c) { c.u.redraw(false, false); });
    return drives.map(function (d) { return stats(d, a, b); });
  }

  // Cursors A and B (click, shift+click, or typed): both set make the
  // selection.
  function cursorsChanged() {
    if (curA !== null && curB !== null && curA !== curB) {
      setSelection(Math.min(curA, curB), Math.max(curA, curB), null, true);
      return;
    }
    cursorInputs();
    charts.forEach(function (c) { c.u.redraw(false, false); });
  }
  function cursorInputs() {
    document.getElementById('cur-a').value = curA === null ? '' : +curA.toPrecision(9);
    document.getElementById('cur-b').value = curB === null ? '' : +curB.toPrecision(9);
    document.getElementById('b-csv').disabled = !sel;
  }

  // The selection's buckets as CSV (IW.csv): drive power at the base
  // buckets (rails are at 4 × that width, so not in it).
  function csvOf(a, b) {
    return IW.csv(drives.map(function (d) {
      return { port: d.port, L: d.total.levels[0], rails: d.rails.map(function (r) { return { name: r.name, L: r.levels[0] }; }) };
    }), a, b, DT);
  }

  function showSelection() {
    var a = sel[0], b = sel[1];
    document.getElementById('sel-body').innerHTML = IW.selectionHTML(drives.map(function (d) { return stats(d, a, b); }), a, b, fmtW) + windowCommands(a, b);
  }

  // The commands that give the selected window at full resolution: the
  // page holds buckets, the capture every sample (export's CSV or Parquet,
  // report's every figure of the interval). Times on the report's
  // timeline, to 0.1 ms.
  function windowCommands(a, b) {
    var cap = shq((R.capture && R.capture.path) || 'CAPTURE');
    var iv = ' --from ' + a.toFixed(4) + 's --to ' + b.toFixed(4) + 's';
    return '<p class="sel-cmd">This window at full resolution: <code>idlewatt export ' + esc(cap) + ' --csv window.csv' + esc(iv) +
      '</code> (or <code>--parquet DIR</code>); every figure of it: <code>idlewatt report ' + esc(cap) + esc(iv) + ' --out window</code></p>';
  }
  // shq quotes a path for a POSIX shell where it needs it.
  function shq(p) { return /^[A-Za-z0-9_.\/+:=@%-]+$/.test(p) ? p : "'" + p.replace(/'/g, "'\\''") + "'"; }

  var esc = IW.esc, fmtBytes = IW.fmtBytes;

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
    rows.forEach(function (r) { h += IW.rowHTML(r, ''); });
    return h + '</table>';
  }
  var n4 = IW.n4, mw = IW.mw;

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
    // "@ W" is the mean power over the state's intervals (state_power_w);
    // the DevSlp floor (the judged cycles', devslp.floor_w) is another
    // quantity and has its own name.
    h += table('Residency (fraction of measured time) @ mean power in the state\'s intervals', ['drive'].concat(keys, ['DevSlp floor (mW)']),
      R.drives.map(function (d) {
        var r = d.residency || {}, sp = d.state_power_w || {};
        function c(k) { return r[k] === null || r[k] === undefined ? '–' : (100 * r[k]).toFixed(2) + ' %' + (r[k] > 0 && sp[k] !== undefined ? ' @ ' + n4(sp[k]) + ' W' : ''); }
        return { zoom: whole, cells: [esc(d.name)].concat(keys.map(c), [d.devslp && d.devslp.floor_w !== null && d.devslp.floor_w !== undefined ? mw(d.devslp.floor_w) : '–']) };
      }));
    var cyc = [];
    drives.forEach(function (d) {
      // report.json's judged cycles, in pin order.
      var cr = (d.rep && d.rep.devslp && d.rep.devslp.cycle_results) || [];
      d.pins.forEach(function (p, i) {
        var c = cr[i];
        var hold = p[1] - p[0], pad = Math.max(0.1, hold * 0.25);
        var verdict = IW.verdict(c);
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
    if (notesAll.length) {
      h += table('Annotations (the capture\'s notes file)', ['at (s)', 'to (s)', 'note', 'source'], notesAll.map(function (n) {
        var hasTo = n.to_s !== undefined && n.to_s !== null, z = hasTo ? [n.at_s, n.to_s] : [n.at_s - 1, n.at_s + 1];
        var pad = hasTo ? Math.max(0.1, 0.25 * (n.to_s - n.at_s)) : 0;
        return { zoom: [z[0] - pad, z[1] + pad], sel: hasTo ? [n.at_s, n.to_s] : null, cls: 'note-row',
          cells: [fmtT(n.at_s), hasTo ? fmtT(n.to_s) : '–', esc(n.text), esc(n.source || '')] };
      }));
    }
    var notes = (R.notes || []).concat(D.page_notes || []);
    drives.forEach(function (d) {
      if (d.statesCut) notes.push(d.name + ': state shading stops early (too many state changes to embed)');
      if (d.busyCut) notes.push(d.name + ': the I/O strip stops early (too many busy intervals to embed)');
    });
    h += '<h2>Notes</h2>' + (notes.length ? '<ul>' + notes.map(function (n) { return '<li>' + esc(n) + '</li>'; }).join('') + '</ul>' : '<p>None.</p>');
    document.getElementById('tables').innerHTML = h;
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
  if (R.interval) {
    var iv = document.createElement('p'); iv.className = 'interval';
    iv.innerHTML = '<b>This report covers only ' + fmtT(R.interval.from_s) + ' – ' + fmtT(R.interval.to_s) + ' s of the capture</b> (report --from/--to): every figure is of that interval.';
    document.getElementById('meta').after(iv);
  }
  IW.navControls(function () { return view; }, function () { return sel; }, zoom, home);
  ['log', 'mw', 'rails', 'overlay'].forEach(function (k) {
    document.getElementById('c-' + k).onchange = function (ev) { opt[k] = ev.target.checked; rebuild(); };
  });
  if (!drives.some(function (d) { return d.rails.length; })) document.getElementById('c-rails').disabled = true;
  if (drives.length < 2) document.getElementById('c-overlay').disabled = true;
  IW.linkRows(document.getElementById('tables'), zoom, setSelection);
  ['cur-a', 'cur-b'].forEach(function (id) {
    document.getElementById(id).onchange = function (ev) {
      var v = ev.target.value === '' ? null : +ev.target.value;
      if (id === 'cur-a') curA = v; else curB = v;
      cursorsChanged();
    };
  });
  document.getElementById('b-csv').onclick = function () {
    if (sel) IW.download('idlewatt-' + fmtT(sel[0]) + '-' + fmtT(sel[1]) + 's.csv', csvOf(sel[0], sel[1]));
  };
  tables();
  view = IW.hashView() || view;
  rebuild();
  window.addEventListener('resize', function () { charts.forEach(function (c) { c.u.setSize({ width: plotWidth(), height: 260 }); }); redraw(); });

  // For tests and the console: the same functions the controls use.
  IW.publish({
    zoom: function (a, b) { zoom(a, b); return view.slice(); },
    select: setSelection,
    view: function () { return view.slice(); },
    selection: function () { return sel ? sel.slice() : null; },
    stats: function (a, b) { return drives.map(function (d) { return stats(d, a, b); }); },
    csv: csvOf,
    cursors: function () { return [curA, curB]; },
    notes: function () { return notesAll.slice(); },
    range: [T0, T1],
  });
})();
