// compare.html: several runs' power over one time axis, and the deltas
// against the baseline run. The numbers in the table come from Go
// (analysis.CompareDeltas, formatted as compare.md shows them); this script
// only draws.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('idlewatt-data').textContent);
  function f32(b64) {
    var s = atob(b64), u = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    return new Float32Array(u.buffer);
  }
  function u32(b64) {
    var s = atob(b64), u = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    return new Uint32Array(u.buffer);
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]; });
  }
  var COLORS = ['#1f5f9f', '#c62828', '#2e7d32', '#6a1b9a', '#ef6c00', '#00838f', '#5d4037', '#ad1457'];
  var series = D.series.map(function (s) {
    var t = s.total;
    return { label: s.run + ': ' + s.drive, dt: s.dt_s, w: s.width_s, k0: t.k0, n: t.n, e: f32(t.e), cnt: u32(t.cnt) };
  });
  var T0 = Infinity, T1 = -Infinity;
  series.forEach(function (s) { T0 = Math.min(T0, s.k0 * s.w); T1 = Math.max(T1, (s.k0 + s.n) * s.w); });
  if (!(T1 > T0)) { T0 = 0; T1 = 1; }
  var view = [T0, T1];
  var COLS = 1200;

  // Mean power of each series per column of [a, b): Σ energy / (Σ count · dt);
  // null where a column holds no sample.
  function columns(a, b) {
    var cw = (b - a) / COLS, xs = new Float64Array(COLS), out = [xs];
    for (var c = 0; c < COLS; c++) xs[c] = a + (c + 0.5) * cw;
    series.forEach(function (s) {
      var e = new Float64Array(COLS), n = new Float64Array(COLS), ys = new Array(COLS);
      var j0 = Math.max(0, Math.floor(a / s.w) - s.k0), j1 = Math.min(s.n, Math.ceil(b / s.w) - s.k0);
      for (var j = j0; j < j1; j++) {
        if (!s.cnt[j]) continue;
        var c = Math.floor(((s.k0 + j + 0.5) * s.w - a) / cw);
        if (c < 0 || c >= COLS) continue;
        e[c] += s.e[j]; n[c] += s.cnt[j];
      }
      for (var c2 = 0; c2 < COLS; c2++) ys[c2] = n[c2] > 0 ? e[c2] / (n[c2] * s.dt) : null;
      out.push(ys);
    });
    return out;
  }
  var mw = false, logAxis = false, u = null;
  function scaled(data) {
    if (!mw) return data;
    return data.map(function (ys, i) { return i === 0 ? ys : ys.map(function (y) { return y === null ? null : y * 1e3; }); });
  }
  function width() { return Math.max(400, Math.min(1400, document.body.clientWidth - 40)); }
  function build() {
    if (u) u.destroy();
    var opts = {
      width: width(), height: 360,
      scales: { x: { time: false }, y: { distr: logAxis ? 3 : 1 } },
      axes: [{ label: 'Time from each run\'s start (s)' }, { label: 'Power (' + (mw ? 'mW' : 'W') + ')' }],
      series: [{ label: 't (s)' }].concat(series.map(function (s, i) { return { label: s.label, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: false }; })),
      cursor: { drag: { x: true, y: false } },
      hooks: { setSelect: [function (uu) {
        if (uu.select.width < 2) return;
        var a = uu.posToVal(uu.select.left, 'x'), b = uu.posToVal(uu.select.left + uu.select.width, 'x');
        uu.setSelect({ left: 0, width: 0 }, false);
        zoom(a, b);
      }] },
    };
    var el = document.getElementById('charts');
    el.innerHTML = '';
    u = new uPlot(opts, scaled(columns(view[0], view[1])), el);
    u.over.addEventListener('dblclick', function () { zoom(T0, T1); });
  }
  function zoom(a, b) {
    if (!(b > a)) return;
    view = [Math.max(T0, a), Math.min(T1, b)];
    u.setData(scaled(columns(view[0], view[1])), false);
    u.setScale('x', { min: view[0], max: view[1] });
  }
  function table() {
    var h = '<h2>Deltas against ' + esc(D.baseline_run) + '</h2>';
    h += '<p class="hint">Each figure minus the baseline drive\'s, ± √(u² + u_base²) where both reports state a 95 % interval, and relative to the baseline; — where either side did not measure it. The same numbers as compare.md, compare.csv and compare.json.</p>';
    h += '<table id="deltas"><thead><tr><th>Run</th><th>Drive</th><th>Baseline drive</th>';
    D.columns.forEach(function (c) { h += '<th>' + esc(c) + '</th>'; });
    h += '</tr></thead><tbody>';
    D.deltas.forEach(function (r) {
      h += '<tr><td>' + esc(r.run) + '</td><td>' + esc(r.drive) + '</td><td>' + esc(r.baseline_drive) + '</td>';
      r.cells.forEach(function (c) { h += '<td>' + esc(c) + '</td>'; });
      h += '</tr>';
    });
    h += '</tbody></table>';
    if (D.notes.length) {
      h += '<h2>Notes</h2><ul>' + D.notes.map(function (n) { return '<li>' + esc(n) + '</li>'; }).join('') + '</ul>';
    }
    document.getElementById('tables').innerHTML = h;
  }
  document.getElementById('meta').textContent = series.length + ' drives over ' + D.series.map(function (s) { return s.run; }).filter(function (r, i, a) { return a.indexOf(r) === i; }).length + ' runs; uPlot ' + D.uplot_version;
  document.getElementById('b-all').addEventListener('click', function () { zoom(T0, T1); });
  document.getElementById('c-log').addEventListener('change', function (e) { logAxis = e.target.checked; build(); });
  document.getElementById('c-mw').addEventListener('change', function (e) { mw = e.target.checked; build(); });
  table();
  build();
  window.idlewatt = {
    zoom: function (a, b) { zoom(a, b); return view.slice(); },
    view: function () { return view.slice(); },
    series: series.map(function (s) { return s.label; }),
    // Mean power of series i over [a, b), from the same buckets the lines
    // are drawn from (whole buckets whose centre lies inside).
    mean: function (i, a, b) {
      var s = series[i], e = 0, n = 0;
      for (var j = 0; j < s.n; j++) {
        var c = (s.k0 + j + 0.5) * s.w;
        if (c >= a && c < b) { e += s.e[j]; n += s.cnt[j]; }
      }
      return n ? e / (n * s.dt) : null;
    },
    range: [T0, T1],
    readyMs: NaN,
  };
  requestAnimationFrame(function () {
    setTimeout(function () {
      window.idlewatt.readyMs = performance.now();
      document.body.dataset.ready = '1';
    }, 0);
  });
})();
