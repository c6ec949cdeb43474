// compare.html: several runs' power on one time axis, overlaid or stacked,
// each drive with its mean line and min–max envelope (from the same pyramid
// of buckets report.html embeds, decoded and aggregated by core.js), its
// I/O, state and DEVSLP strips, a selection that measures every run over
// the same seconds of its own timeline, and tables linked to the axis. The
// delta table's cells come from Go (analysis.CompareDeltas, formatted as
// compare.md shows them); selections integrate the buckets with core.js,
// as report.html does. No network access.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('idlewatt-data').textContent);
  var esc = IW.esc, fmtT = IW.fmtT, STATE_COL = IW.STATE_COL;
  var COLORS = ['#1f5f9f', '#c62828', '#2e7d32', '#6a1b9a', '#ef6c00', '#00838f', '#5d4037', '#ad1457'];
  function rgba(c, a) { return 'rgba(' + parseInt(c.slice(1, 3), 16) + ',' + parseInt(c.slice(3, 5), 16) + ',' + parseInt(c.slice(5, 7), 16) + ',' + a + ')'; }

  // ---- data ------------------------------------------------------------------
  var runs = D.runs.map(function (r, i) {
    return { i: i, label: r.label, rep: r.report, dt: r.dt_s || 1, w: r.width_s, rw: r.rail_width_s, per: r.per_bucket,
      phases: r.phases || [], marks: r.marks || [], notes: r.page_notes || [], t0: Infinity, t1: -Infinity, off: 0 };
  });
  var S = D.series.map(function (s, i) {
    var run = runs[s.run], d = IW.drive(s.drive, run.w, run.rw);
    d.i = i; d.run = run; d.base = s.base; d.color = COLORS[i % COLORS.length]; d.band = rgba(d.color, 0.18);
    d.label = run.label + ': ' + d.name;
    d.rep = run.rep.drives.filter(function (x) { return x.port === d.port; })[0];
    var sp = IW.span(d);
    if (sp) { run.t0 = Math.min(run.t0, sp[0]); run.t1 = Math.max(run.t1, sp[1]); }
    return d;
  });
  runs.forEach(function (r) { if (!isFinite(r.t0)) { r.t0 = 0; r.t1 = Math.max(r.rep.capture.duration_s || 0, 1e-3); } });

  // Phase names every run has: the axis can start each run at one of them.
  var alignNames = (function () {
    var names = null;
    runs.forEach(function (r) {
      var here = {};
      r.rep.drives.forEach(function (d) { (d.phases || []).forEach(function (p) { here[p.name] = 1; }); });
      names = names === null ? Object.keys(here) : names.filter(function (n) { return here[n]; });
    });
    return names || [];
  })();
  function phaseStart(r, name) {
    var t = Infinity;
    r.rep.drives.forEach(function (d) { (d.phases || []).forEach(function (p) { if (p.name === name) t = Math.min(t, p.start_s); }); });
    return isFinite(t) ? t : 0;
  }

  var opt = { log: false, mw: false, stack: false, align: '' };
  var T0 = 0, T1 = 1, view = [0, 1], sel = null, charts = [];
  function setAlign(name) {
    opt.align = name;
    runs.forEach(function (r) { r.off = name ? phaseStart(r, name) : 0; });
    T0 = Infinity; T1 = -Infinity;
    runs.forEach(function (r) { T0 = Math.min(T0, r.t0 - r.off); T1 = Math.max(T1, r.t1 - r.off); });
    if (!(T1 > T0)) { T0 = 0; T1 = 1; }
    view = [T0, T1]; sel = null;
  }
  setAlign('');

  // Every figure of series s over [a, b) of the axis: its run's [a+off, b+off).
  function stats(s, a, b) {
    var r = s.run, x = IW.stats(s, a + r.off, b + r.off, { dt: r.dt, width: r.w, t0: r.t0, t1: r.t1 });
    x.series = s.i; x.run = r.label;
    return x;
  }

  // Per pixel column of the view: [min, max, mean] of series s, from the
  // finest level no wider than the column, or every sample where a
  // full-resolution window covers the column and the column is narrower
  // than a bucket.
  function columns(s, px) {
    var a = view[0], b = view[1], c = (b - a) / px, off = s.run.off, cells = [];
    for (var i = 0; i < px; i++) cells.push({ lo: a + i * c + off, hi: a + (i + 1) * c + off });
    var agg = IW.aggregate(s.total, cells, s.run.dt);
    if (c < s.run.w) IW.rawInto(s.raw, cells, s.run.dt, agg);
    return agg;
  }
  function chartData(list, px) {
    var c = (view[1] - view[0]) / px, xs = new Array(px);
    for (var i = 0; i < px; i++) xs[i] = view[0] + (i + 0.5) * c;
    var aggs = list.map(function (s) { return columns(s, px); });
    var k = opt.mw ? 1000 : 1, floor = opt.log ? IW.logFloor(aggs) : -Infinity;
    function sc(arr) { return IW.scaled(arr, floor, k); }
    var out = [xs];
    aggs.forEach(function (t) { out.push(sc(t[2]), sc(t[0]), sc(t[1])); });
    return out;
  }

  // ---- drawing ---------------------------------------------------------------
  var ROW = 15;
  var plotWidth = IW.plotWidth;
  function columnsOf(u) { return Math.max(50, Math.round(u.bbox.width / devicePixelRatio) || 600); }

  // Phase bands and marks (stacked charts: one run) and DEVSLP pin outlines.
  // Each run's annotations (report.json's annotations) on the axis, once
  // per run whose series the chart shows.
  function drawRunNotes(u, list) {
    var seen = {}, ns = [];
    list.forEach(function (s) {
      if (seen[s.run.i]) return;
      seen[s.run.i] = 1;
      (s.run.rep.annotations || []).forEach(function (n) {
        ns.push({ at_s: n.at_s - s.run.off, to_s: n.to_s === undefined ? null : n.to_s - s.run.off, text: (runs.length > 1 ? s.run.label + ': ' : '') + n.text });
      });
    });
    IW.drawNotes(u, ns);
  }

  function underlay(u, list) {
    var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height, dpr = devicePixelRatio;
    function X(t) { return u.valToPos(t, 'x', true); }
    ctx.save();
    ctx.beginPath(); ctx.rect(u.bbox.left, top, u.bbox.width, h); ctx.clip();
    if (list.length === 1) {
      var s = list[0], r = s.run, i = 0;
      r.phases.forEach(function (p) {
        if (p.port !== 0 && p.port !== s.port) return;
        var x0 = X(p.start_s - r.off), x1 = X(p.end_s - r.off);
        ctx.fillStyle = (i++ % 2) ? 'rgba(120,120,120,0.06)' : 'rgba(120,120,120,0.0)';
        ctx.fillRect(x0, top, x1 - x0, h);
        ctx.strokeStyle = 'rgba(80,80,80,0.5)'; ctx.setLineDash([4, 3]); ctx.lineWidth = dpr;
        ctx.beginPath(); ctx.moveTo(x0, top); ctx.lineTo(x0, top + h); ctx.stroke(); ctx.setLineDash([]);
        ctx.font = (11 * dpr) + 'px sans-serif'; ctx.textBaseline = 'alphabetic';
        if (x1 - x0 > ctx.measureText(p.name).width + 8) { ctx.fillStyle = '#444'; ctx.fillText(p.name, Math.max(x0, u.bbox.left) + 4, top + 13 * dpr); }
      });
    }
    if (list.length === 1) {
      // Marks (policy changes, notes, port power, meter events) as in report.html.
      var s1 = list[0], lastX = -1e9;
      ctx.strokeStyle = '#b00'; ctx.fillStyle = '#b00'; ctx.lineWidth = dpr; ctx.font = (10 * dpr) + 'px sans-serif';
      s1.run.marks.forEach(function (m) {
        if (m.port !== 0 && m.port !== s1.port) return;
        var x = X(m.t - s1.run.off);
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + 30 * dpr); ctx.stroke();
        if (x - lastX > ctx.measureText(m.text).width + 6) { ctx.fillText(m.text, x + 3, top + 27 * dpr); lastX = x; }
      });
    }
    ctx.lineWidth = 1.5 * dpr; ctx.setLineDash([6, 3]);
    list.forEach(function (s) {
      ctx.strokeStyle = list.length === 1 ? '#6a3d9a' : s.color;
      s.pins.forEach(function (p) { var x0 = X(p[0] - s.run.off), x1 = X(p[1] - s.run.off); ctx.strokeRect(x0, top + 1, x1 - x0, h - 2); });
    });
    ctx.restore();
  }

  // Under each chart, per series one row: I/O busy (top), state (middle),
  // DEVSLP pin asserted (bottom), on the chart's time axis.
  function drawStrips(u, list, cv) {
    var dpr = devicePixelRatio, W = u.over.clientWidth, left = u.over.offsetLeft, H = list.length * ROW;
    cv.width = (left + W) * dpr; cv.height = H * dpr; cv.style.width = (left + W) + 'px'; cv.style.height = H + 'px';
    var ctx = cv.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, left + W, H);
    ctx.font = '10px sans-serif';
    function X(t) { return left + (t - view[0]) / (view[1] - view[0]) * W; }
    function bar(x0, x1, y, h, col) {
      x0 = Math.max(x0, left); x1 = Math.min(x1, left + W);
      if (x1 < x0) return;
      ctx.fillStyle = col; ctx.fillRect(x0, y, Math.max(x1 - x0, 1), h);
    }
    list.forEach(function (s, r) {
      var y = r * ROW, off = s.run.off;
      ctx.fillStyle = s.color; ctx.fillRect(Math.max(0, left - 50), y + 3, 9, 9);
      ctx.fillStyle = '#444'; ctx.fillText('#' + (s.i + 1), Math.max(0, left - 38), y + 11);
      for (var i = 0; i + 1 < s.busy.length; i += 2) bar(X(s.busy[i] - off), X(s.busy[i + 1] - off), y, 3, '#222');
      for (var k = 0; k < s.states.length; k++) {
        var a = s.states[k][0] - off, b = (k + 1 < s.states.length ? s.states[k + 1][0] : s.run.t1) - off;
        if (b < view[0] || a > view[1] || s.states[k][1] === 'gap') continue;
        bar(X(a), X(b), y + 4, 7, STATE_COL[s.states[k][1]] || '#ccc');
      }
      s.pins.forEach(function (p) { bar(X(p[0] - off), X(p[1] - off), y + 12, 2, '#6a3d9a'); });
    });
  }

  function legendHTML(list) {
    var parts = list.map(function (s) {
      return '<span class="swatch" style="background:' + s.color + '"></span>#' + (s.i + 1) + ' ' + esc(s.label) +
        (s.run.i === D.baseline ? ' (baseline)' : '');
    });
    parts.push('<span class="swatch" style="background:' + rgba('#1f5f9f', 0.18) + '"></span>min–max band (each line\'s colour, light)');
    if (list.some(function (s) { return s.pins.length; })) parts.push('<span class="swatch" style="border:2px dashed #6a3d9a;background:none"></span>DEVSLP asserted');
    var seen = {};
    list.forEach(function (s) { s.states.forEach(function (x) { if (x[1] !== 'gap') seen[x[1]] = 1; }); });
    Object.keys(seen).forEach(function (k) { parts.push('<span class="swatch" style="background:' + (STATE_COL[k] || '#ccc') + '"></span>' + esc(k)); });
    return parts.join('');
  }

  function makeChart(list, title, host, height) {
    var box = document.createElement('div'); box.className = 'drive';
    box.setAttribute('role', 'figure');
    box.setAttribute('aria-label', 'Power over time of ' + list.map(function (s) { return s.label; }).join(', ') +
      ', with I/O, state and DEVSLP strips; the selection panel and tables below hold the figures');
    var h = document.createElement('h3'); h.textContent = title; box.appendChild(h);
    var leg = document.createElement('div'); leg.className = 'legend-extra'; leg.innerHTML = legendHTML(list);
    box.appendChild(leg);
    host.appendChild(box);
    var ser = [{ label: 't (s)', value: function (u, v) { return v == null ? '' : fmtT(v); } }], bands = [];
    list.forEach(function (s) {
      var n = ser.length;
      ser.push({ label: '#' + (s.i + 1) + ' mean', stroke: s.color, width: 1.3, spanGaps: false },
        { label: '#' + (s.i + 1) + ' min', stroke: s.band, width: 0.5, points: { show: false }, spanGaps: false },
        { label: '#' + (s.i + 1) + ' max', stroke: s.band, width: 0.5, points: { show: false }, spanGaps: false });
      bands.push({ series: [n + 2, n + 1], fill: s.band });
    });
    var strips, px = columnsOf({ bbox: { width: (plotWidth() - 80) * devicePixelRatio } });
    var u = new uPlot({
      width: plotWidth(), height: height,
      scales: { x: { time: false, min: view[0], max: view[1] }, y: opt.log ? { distr: 3 } : { range: IW.yRange } },
      series: ser, bands: bands,
      axes: [{ label: opt.align ? 'time from each run\'s ' + opt.align + ' (s)' : 'time from each run\'s start (s)' }, { label: 'power (' + (opt.mw ? 'mW' : 'W') + ')', size: 70 }],
      cursor: { sync: { key: 'idlewatt-compare' }, drag: { x: true, y: false, setScale: false } },
      hooks: {
        drawClear: [function (u) { underlay(u, list); }],
        draw: [function (u) { drawRunNotes(u, list); if (strips) drawStrips(u, list, strips); }],
        setSelect: [function (u) {
          if (u.select.width < 2) return;
          setSelection(u.posToVal(u.select.left, 'x'), u.posToVal(u.select.left + u.select.width, 'x'), u);
        }],
      },
    }, chartData(list, px), box);
    // The legend keeps each line's mean (live values under the cursor);
    // the band's min and max series are drawn only.
    u.root.querySelectorAll('.u-legend .u-series').forEach(function (el, i) { if (i > 0 && (i - 1) % 3 !== 0) el.style.display = 'none'; });
    strips = document.createElement('canvas'); strips.className = 'strips';
    strips.setAttribute('aria-hidden', 'true');
    u.root.insertBefore(strips, u.root.querySelector('.u-legend'));
    IW.wheelZoom(u, function () { return view; }, zoom, home);
    return { u: u, list: list };
  }

  function rebuild() {
    var host = document.getElementById('charts');
    charts.forEach(function (c) { c.u.destroy(); });
    host.innerHTML = '';
    charts = opt.stack ? S.map(function (s) { return makeChart([s], '#' + (s.i + 1) + ' ' + s.label, host, 200); })
      : [makeChart(S, 'All runs', host, 340)];
    redraw();
  }

  function redraw() {
    charts.forEach(function (c) {
      c.u.batch(function () {
        c.u.setData(chartData(c.list, columnsOf(c.u)), false);
        c.u.setScale('x', { min: view[0], max: view[1] });
      });
    });
    IW.showView(view);
    if (sel) showSelection();
  }

  function zoom(a, b) {
    if (!(b > a)) return;
    var minSpan = 8 * Math.min.apply(null, runs.map(function (r) { return r.dt; }));
    view = IW.widen(a, b, minSpan);
    redraw();
    IW.saveView(view[0], view[1]);
  }
  function home() { zoom(T0, T1); }

  // ---- selection ---------------------------------------------------------------
  function setSelection(a, b, from) {
    if (b < a) { var t = a; a = b; b = t; }
    sel = [a, b];
    IW.selectOn(charts, a, b, from);
    showSelection();
    return S.map(function (s) { return stats(s, a, b); });
  }

  function fmtW(w) { return isNaN(w) ? '–' : (opt.mw ? (w * 1000).toPrecision(4) + ' mW' : w.toPrecision(4) + ' W'); }
  function fmtDelta(x, base, digits, unit) {
    if (isNaN(x) || isNaN(base)) return '–';
    var d = x - base, rel = base !== 0 ? ' (' + (d >= 0 ? '+' : '') + (100 * d / base).toFixed(1) + ' %)' : '';
    return (d >= 0 ? '+' : '') + d.toPrecision(digits) + unit + rel;
  }

  function showSelection() {
    var a = sel[0], b = sel[1], all = S.map(function (s) { return stats(s, a, b); });
    var rows = S.map(function (s, i) {
      var x = all[i], bs = s.base >= 0 ? all[s.base] : null, k = opt.mw ? 1000 : 1, u = opt.mw ? ' mW' : ' W';
      var rails = x.rails.map(function (r) { return esc(r.rail) + ' ' + r.charge_mah.toPrecision(4) + ' mAh'; }).join(', ');
      var res = Object.keys(x.residency).map(function (key) { return esc(key) + ' ' + (100 * x.residency[key]).toFixed(1) + ' %'; }).join(', ');
      return '<tr data-series="' + i + '"><td><span class="swatch" style="background:' + s.color + '"></span>#' + (i + 1) + '</td><td>' + esc(s.run.label) + '</td><td>' + esc(s.name) +
        '</td><td>' + fmtT(a + s.run.off) + ' – ' + fmtT(b + s.run.off) + '</td><td>' + fmtT(x.measured_s) + '</td><td>' + fmtW(x.mean_w) + '</td><td>' + fmtW(x.min_w) + '</td><td>' + fmtW(x.max_w) +
        '</td><td>' + x.energy_j.toPrecision(6) + '</td><td>' + x.energy_mwh.toPrecision(5) +
        '</td><td>' + (bs ? fmtDelta(x.mean_w * k, bs.mean_w * k, 4, u) : '–') + '</td><td>' + (bs ? fmtDelta(x.energy_j, bs.energy_j, 4, ' J') : '–') +
        '</td><td>' + (rails || '–') + '</td><td>' + x.io_ops + '</td><td>' + IW.fmtBytes(x.io_bytes) + '</td><td>' + (res || '–') + '</td></tr>';
    });
    document.getElementById('sel-body').innerHTML = '<p>' + fmtT(a) + ' – ' + fmtT(b) + ' s on the axis: <b>' + fmtT(b - a) + ' s</b>; each run over the same interval of its own timeline (column "run time"). Δ against the baseline run\'s drive over the same interval.</p>' +
      '<table id="sel-table"><thead><tr><th scope="col">#</th><th scope="col">run</th><th scope="col">drive</th><th scope="col">run time (s)</th><th scope="col">measured (s)</th><th scope="col">mean</th><th scope="col">min</th><th scope="col">max</th>' +
      '<th scope="col">energy (J)</th><th scope="col">energy (mWh)</th><th scope="col">Δ mean</th><th scope="col">Δ energy</th><th scope="col">charge</th><th scope="col">I/O ops</th><th scope="col">I/O bytes</th><th scope="col">state residency</th></tr></thead><tbody>' +
      rows.join('') + '</tbody></table>';
  }

  // ---- tables ------------------------------------------------------------------
  function table(title, id, head, rows) {
    var h = '<h2>' + esc(title) + '</h2><table' + (id ? ' id="' + id + '"' : '') + '><thead><tr>' +
      head.map(function (x) { return '<th scope="col">' + esc(x) + '</th>'; }).join('') + '</tr></thead><tbody>';
    rows.forEach(function (r) { h += IW.rowHTML(r, ' on the axis'); });
    return h + '</tbody></table>';
  }
  var n4 = IW.n4, mw = IW.mw;
  function runSpan(r) { return [r.t0 - r.off, r.t1 - r.off]; }
  function tag(s) { return '<span class="swatch" style="background:' + s.color + '"></span>#' + (s.i + 1); }

  function tables() {
    var h = '';
    h += table('Runs', 'runs', ['#', 'run', 'drive', 'measured (s)', 'active idle (W)', 'average (W)', 'peak (W)', 'energy (J)', 'samples'],
      S.map(function (s) {
        var d = s.rep || {}, z = runSpan(s.run);
        return { zoom: z, sel: z, cls: 'run-row', cells: [tag(s), esc(s.run.label) + (s.run.i === D.baseline ? ' (baseline)' : ''), esc(s.name), n4(d.duration_s), n4(d.active_idle_w), n4(d.average_w), n4(d.peak_w), n4(d.energy_j), String(d.samples ? d.samples.count : 0)] };
      }));
    h += '<h2>Deltas against ' + esc(runs[D.baseline].label) + '</h2>';
    h += '<p class="hint">Each figure minus the baseline drive\'s, ± √(u² + u_base²) where both reports state a 95 % interval, and relative to the baseline; — where either side did not measure it. The same numbers as compare.md, compare.csv and compare.json. A row shows both runs on the axis.</p>';
    h += table('', 'deltas', ['Run', 'Drive', 'Baseline drive'].concat(D.columns), D.deltas.map(function (r) {
      var row = { cells: [esc(r.run), esc(r.drive), esc(r.baseline_drive)].concat(r.cells.map(esc)) };
      if (r.series >= 0) {
        var s = S[r.series], z = runSpan(s.run);
        if (s.base >= 0) { var zb = runSpan(S[s.base].run); z = [Math.min(z[0], zb[0]), Math.max(z[1], zb[1])]; }
        row.zoom = z; row.cls = 'delta-row';
      }
      return row;
    })).replace('<h2></h2>', '');
    var ph = [];
    S.forEach(function (s) {
      var ps = (s.rep && s.rep.phases) || [];
      ps.forEach(function (p, k) {
        // A phase runs until the drive's next phase starts (its duration_s
        // is measured time, short of that by any gap); the last to the end.
        var end = k + 1 < ps.length ? ps[k + 1].start_s : s.run.t1, z = [p.start_s - s.run.off, end - s.run.off];
        ph.push({ zoom: z, sel: z, cls: 'phase-row', cells: [tag(s), esc(s.run.label), esc(s.name), esc(p.name), fmtT(p.start_s), n4(p.duration_s), n4(p.average_w), n4(p.energy_j), String(p.io ? p.io.ops : 0)] });
      });
    });
    if (ph.length) h += table('Phases', 'phases', ['#', 'run', 'drive', 'phase', 'start (s, run time)', 'measured (s)', 'average (W)', 'energy (J)', 'I/O ops'], ph);
    var cyc = [];
    S.forEach(function (s) {
      var cr = (s.rep && s.rep.devslp && s.rep.devslp.cycle_results) || [], off = s.run.off;
      s.pins.forEach(function (p, i) {
        var c = cr[i], hold = p[1] - p[0], pad = Math.max(0.1, hold * 0.25);
        var verdict = IW.verdict(c);
        cyc.push({ zoom: [p[0] - pad - off, p[1] + pad - off], sel: [p[0] - off, p[1] - off], cls: 'cycle-row', cells: [tag(s), esc(s.run.label), esc(s.name), String(c ? c.cycle : i + 1), fmtT(p[0]), n4(hold),
          c ? mw(c.floor_w) : '–', c ? n4(c.entry_ms) : '–', c ? n4(c.exit_ms) : '–', verdict] });
      });
    });
    h += cyc.length ? table('DevSlp cycles (DEVSLP pin asserted)', 'cycles', ['#', 'run', 'drive', 'cycle', 'assert (s, run time)', 'held (s)', 'floor (mW)', 'entry (ms)', 'exit (ms)', 'verdict'], cyc)
      : '<h2>DevSlp cycles</h2><p>No DEVSLP pin assertion in these runs.</p>';
    var ann = [];
    runs.forEach(function (r) {
      (r.rep.annotations || []).forEach(function (n) {
        var hasTo = n.to_s !== undefined && n.to_s !== null, a = n.at_s - r.off, z = hasTo ? n.to_s - r.off : a;
        var pad = Math.max(1, 0.25 * (z - a));
        ann.push({ zoom: [a - pad, z + pad], sel: hasTo ? [a, z] : null, cls: 'note-row', cells: [esc(r.label), fmtT(n.at_s), hasTo ? fmtT(n.to_s) : '–', esc(n.text)] });
      });
    });
    if (ann.length) h += table('Annotations (each run\'s notes file)', 'annotations', ['run', 'at (s, run time)', 'to (s)', 'note'], ann);
    var notes = D.notes.slice();
    runs.forEach(function (r) {
      (r.rep.notes || []).forEach(function (n) { notes.push(r.label + ': ' + n); });
      r.notes.forEach(function (n) { notes.push(r.label + ': ' + n); });
    });
    S.forEach(function (s) {
      if (s.statesCut) notes.push(s.label + ': state strip stops early (too many state changes to embed)');
      if (s.busyCut) notes.push(s.label + ': the I/O strip stops early (too many busy intervals to embed)');
    });
    h += '<h2>Notes</h2>' + (notes.length ? '<ul>' + notes.map(function (n) { return '<li>' + esc(n) + '</li>'; }).join('') + '</ul>' : '<p>None.</p>');
    document.getElementById('tables').innerHTML = h;
  }

  // ---- start -------------------------------------------------------------------
  function depthText() {
    return 'Embedded data per run: ' + runs.map(function (r) {
      var nraw = 0;
      S.forEach(function (s) { if (s.run === r) nraw += s.raw.length; });
      var deep = r.per === 1 ? 'every sample' : 'buckets of ' + r.per + ' samples (' + (r.w * 1e3).toPrecision(3) + ' ms)';
      return r.label + ': drive power down to ' + deep + ', each with min, max and energy' +
        (nraw ? ', every sample in ' + nraw + ' full-resolution windows (−20…+120 ms around each DEVSLP pin edge and each drive\'s peak sample)' : '') +
        ', rails in buckets of ' + r.per * 4 + ' samples, sample period ' + (r.dt * 1e6).toPrecision(4) + ' µs';
    }).join('; ') + '. The runs share one report\'s size budget. Zoomed deeper than a bucket, a bucket is drawn as its mean. ' +
      'Selections integrate the embedded energies, pro-rating the buckets at the edges, as report.html does. Charts drawn by uPlot ' + D.uplot_version + ' (MIT).';
  }

  var alignSel = document.getElementById('s-align');
  alignNames.forEach(function (n) { var o = document.createElement('option'); o.value = n; o.textContent = 'each run\'s ' + n; alignSel.appendChild(o); });
  if (!alignNames.length) alignSel.disabled = true;
  alignSel.onchange = function () { setAlign(alignSel.value); tables(); rebuild(); document.getElementById('sel-body').textContent = 'Drag across a chart to measure an interval in every run.'; };
  document.getElementById('meta').textContent = S.length + ' drives over ' + runs.length + ' runs; baseline ' + runs[D.baseline].label;
  document.getElementById('depth').textContent = depthText();
  IW.navControls(function () { return view; }, function () { return sel; }, zoom, home);
  ['log', 'mw', 'stack'].forEach(function (k) {
    document.getElementById('c-' + k).onchange = function (ev) { opt[k] = ev.target.checked; rebuild(); };
  });
  IW.linkRows(document.getElementById('tables'), zoom, setSelection);
  tables();
  view = IW.hashView() || view;
  rebuild();
  window.addEventListener('resize', function () { charts.forEach(function (c) { c.u.setSize({ width: plotWidth(), height: c.u.height }); }); redraw(); });

  // For tests and the console: the same functions the controls use.
  IW.publish({
    zoom: function (a, b) { zoom(a, b); return view.slice(); },
    select: setSelection,
    view: function () { return view.slice(); },
    selection: function () { return sel ? sel.slice() : null; },
    stats: function (a, b) { return S.map(function (s) { return stats(s, a, b); }); },
    series: S.map(function (s) { return s.label; }),
    // Series i's envelope and mean per pixel column of the view, W, as the
    // chart draws them: [min[], max[], mean[]].
    columns: function (i, px) { return columns(S[i], px || 1000); },
    align: function (name) { alignSel.value = name; alignSel.onchange(); return runs.map(function (r) { return r.off; }); },
    alignNames: alignNames,
    range: function () { return [T0, T1]; },
  });
})();
