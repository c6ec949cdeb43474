// idlewatt viewer core, shared by report.html (app.js) and compare.html
// (compare.js): decoding the embedded buckets, the min/max/energy pyramid,
// per-column aggregation, a selection's integrals, and the time axis's
// controls (zoom, pan, selection, linked table rows). Both pages compute a
// selection with these functions, so the same interval of the same run gives
// the same figures on either page. The data functions are pure; the controls
// keep no state (each page passes its view in). No network access.
var IW = (function () {
  'use strict';
  function bytes(b64) {
    // Uint8Array.fromBase64 where the browser has it (Chromium 140+,
    // Firefox 133+, Safari 18.2+): several times faster on a long run.
    if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(b64).buffer;
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
    return seriesOf(L0, s.rail || 'total');
  }
  // The pyramid over a decoded base level L0 ({k0, n, w, min, max, e, cnt,
  // q}); the live view builds its L0 from its rings.
  function seriesOf(L0, name) {
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
    return { levels: levels, name: name };
  }

  // One drive of the page data (page.go driveData), decoded.
  function drive(d, width, railWidth) {
    var st = [];
    for (var i = 0; i < (d.state_t || []).length; i++) st.push([d.state_t[i], d.state_s[i]]);
    return { port: d.port, name: d.name, total: series(d.total, width),
      rails: (d.rails || []).map(function (r) { return series(r, railWidth); }),
      states: st, statesCut: d.states_cut, busy: d.busy || [], busyCut: d.busy_cut, pins: d.pins || [],
      raw: (d.raw || []).map(function (r) { return { t: r.t_s, w: f32(r.w) }; }), peakT: d.peak_t_s,
      ioK: d.io_k || [], ioOps: d.io_ops || [], ioBytes: d.io_bytes || [] };
  }

  // The time covered by a drive's buckets, [from, to), or null.
  function span(d) {
    var L = d.total.levels[0];
    return L.n === 0 ? null : [L.k0 * L.w, (L.k0 + L.n) * L.w];
  }

  // The coarsest level of s whose buckets are no wider than c.
  function levelFor(s, c) {
    var ls = s.levels, best = ls[0];
    for (var i = 1; i < ls.length; i++) if (ls[i].w <= c) best = ls[i];
    return best;
  }

  // Cells over [a, b): px pixel columns, or base buckets of width w0 when
  // zoomed deeper than them.
  function grid(a, b, px, w0) {
    var c = (b - a) / Math.max(px, 1);
    if (c < w0) {
      var k = Math.floor(a / w0), kz = Math.ceil(b / w0), xs = [];
      for (; k < kz; k++) xs.push({ lo: k * w0, hi: (k + 1) * w0 });
      return xs;
    }
    var out = [];
    for (var i = 0; i < px; i++) out.push({ lo: a + i * c, hi: a + (i + 1) * c });
    return out;
  }

  // Deeper than the base buckets, full-resolution segments (raw, every
  // sample dt apart) replace the cells they cover: one cell per sample, or
  // per column when samples are denser than pixels.
  function withRaw(raw, cells, a, b, px, dt) {
    if (!raw.length || !cells.length) return cells;
    var spans = [], out = [];
    raw.forEach(function (s) {
      var n = s.w.length, end = s.t + n * dt;
      if (end < a || s.t > b) return;
      spans.push([s.t, end]);
      var j0 = Math.max(0, Math.floor((a - s.t) / dt)), j1 = Math.min(n, Math.ceil((b - s.t) / dt) + 1);
      var col = (b - a) / Math.max(px, 1), cur = null;
      for (var j = j0; j < j1; j++) {
        var t = s.t + j * dt, v = s.w[j];
        if (dt >= col) { out.push({ lo: t - dt / 2, hi: t + dt / 2, raw: [v, v, v] }); continue; }
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

  // Per cell [min, max, mean] arrays of series s (null where a cell holds
  // no sample), from the coarsest level no wider than the cells; a cell
  // narrower than that takes the bucket holding its middle. dt is the
  // sample period (mean = energy ÷ (count · dt)).
  function aggregate(s, cells, dt) {
    var n = cells.length, mn = new Array(n), mx = new Array(n), me = new Array(n);
    if (n === 0) return [mn, mx, me];
    var c = cells[0].hi - cells[0].lo;
    var L = levelFor(s, c);
    for (var i = 0; i < n; i++) {
      var lo = cells[i].lo, hi = cells[i].hi, jmin, jmax;
      if (L.w > c) {
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
      mn[i] = lo_; mx[i] = hi_; me[i] = e / (cnt * dt);
    }
    return [mn, mx, me];
  }

  // The [min, max, mean] arrays of cells made by withRaw (undefined where a
  // cell is not full-resolution).
  function aggregateRaw(cells) {
    var n = cells.length, mn = new Array(n), mx = new Array(n), me = new Array(n);
    for (var r = 0; r < n; r++) {
      var x = cells[r].raw;
      if (x) { mn[r] = x[0]; mx[r] = x[1]; me[r] = x[2]; } else { mn[r] = mx[r] = me[r] = undefined; }
    }
    return [mn, mx, me];
  }

  // Overwrite agg ([min, max, mean] per cell, cells of one fixed width)
  // with the full-resolution samples of raw where they cover a cell's
  // middle: the cell's samples' min, max and mean, or, for a cell narrower
  // than the sample period, the sample it falls in.
  function rawInto(raw, cells, dt, agg) {
    if (!raw.length || !cells.length) return;
    var a = cells[0].lo, b = cells[cells.length - 1].hi;
    raw.forEach(function (s) {
      var n = s.w.length, end = s.t + n * dt;
      if (end <= a || s.t >= b) return;
      for (var i = 0; i < cells.length; i++) {
        var lo = cells[i].lo, hi = cells[i].hi, m = (lo + hi) / 2;
        if (m < s.t || m >= end) continue;
        var j0 = Math.max(0, Math.ceil((lo - s.t) / dt - 1e-9)), j1 = Math.min(n - 1, Math.ceil((hi - s.t) / dt - 1e-9) - 1);
        if (j1 < j0) { j0 = j1 = Math.min(n - 1, Math.max(0, Math.floor((m - s.t) / dt))); }
        var mn = Infinity, mx = -Infinity, sum = 0;
        for (var j = j0; j <= j1; j++) { var v = s.w[j]; mn = Math.min(mn, v); mx = Math.max(mx, v); sum += v; }
        agg[0][i] = mn; agg[1][i] = mx; agg[2][i] = sum / (j1 - j0 + 1);
      }
    });
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

  // Everything a selection shows for drive d over [a, b) of its own
  // timeline. o: dt (sample period), width (base bucket width, the I/O
  // counts' grid), t0 and t1 (the run's sampled time, for residency).
  function stats(d, a, b, o) {
    var DT = o.dt, L = d.total.levels[0];
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
      var t = d.ioK[i] * o.width;
      if (t >= a && t < b) { ops += d.ioOps[i]; by += d.ioBytes[i]; }
    }
    var res = {}, tot = 0, ca = Math.max(a, o.t0), cb = Math.min(b, o.t1);
    for (var k = 0; k < d.states.length; k++) {
      var s0 = Math.max(d.states[k][0], ca), s1 = Math.min(k + 1 < d.states.length ? d.states[k + 1][0] : o.t1, cb);
      if (s1 > s0 && d.states[k][1] !== 'gap') { res[d.states[k][1]] = (res[d.states[k][1]] || 0) + (s1 - s0); tot += s1 - s0; }
    }
    for (var key in res) res[key] /= tot;
    return { port: d.port, name: d.name, from_s: a, to_s: b, duration_s: b - a, measured_s: n * DT, samples: n,
      energy_j: e, energy_mwh: e / 3.6, mean_w: n > 0 ? e / (n * DT) : NaN,
      min_w: isFinite(mn) ? mn : NaN, max_w: isFinite(mx) ? mx : NaN, rails: rails,
      io_ops: ops, io_bytes: by, residency: res };
  }

  // CSV of the base buckets overlapping [a, b): one row per bucket that
  // holds a sample, t_start_s and t_end_s, then per drive (list: {port, L:
  // its base level, rails: [{name, L}]}) pN_samples, pN_mean_w, pN_min_w,
  // pN_max_w, pN_energy_j, and per rail on the same grid pN_RAIL_mean_w,
  // pN_RAIL_charge_mah. dt is the sample period. Whole buckets: the two
  // edge rows may reach past [a, b).
  function csv(list, a, b, dt) {
    var w = list.length ? list[0].L.w : 1;
    var head = ['t_start_s', 't_end_s'];
    function num(x) { return String(+Number(x).toPrecision(9)); }
    list.forEach(function (d) {
      var p = 'p' + d.port;
      head.push(p + '_samples', p + '_mean_w', p + '_min_w', p + '_max_w', p + '_energy_j');
      d.rails.forEach(function (r) { if (r.L.w === w) head.push(p + '_' + r.name + '_mean_w', p + '_' + r.name + '_charge_mah'); });
    });
    var out = [head.join(',')];
    var k0 = Math.floor(a / w), k1 = Math.ceil(b / w);
    for (var k = k0; k < k1; k++) {
      var row = [num(k * w), num((k + 1) * w)], any = false;
      list.forEach(function (d) {
        var L = d.L, j = k - L.k0;
        if (j >= 0 && j < L.n && L.cnt[j] > 0) {
          any = true;
          row.push(String(L.cnt[j]), num(L.e[j] / (L.cnt[j] * dt)), num(L.min[j]), num(L.max[j]), num(L.e[j]));
        } else row.push('', '', '', '', '');
        d.rails.forEach(function (r) {
          if (r.L.w !== w) return;
          var R = r.L, i = k - R.k0;
          if (i >= 0 && i < R.n && R.cnt[i] > 0) row.push(num(R.e[i] / (R.cnt[i] * dt)), num(R.q[i] / 3.6));
          else row.push('', '');
        });
      });
      if (any) out.push(row.join(','));
    }
    return out.join('\n') + '\n';
  }

  // Offer text as a file download (built in the page: no request).
  function download(name, text, type) {
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([text], { type: type || 'text/csv' }));
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 0);
  }

  // The selection panel's content: cursors A and B, Δt, and per drive
  // (list: IW.stats results, with .nameHTML optional) mean, min, max,
  // energy, charge per rail, I/O and residency. fmtW formats watts.
  function selectionHTML(list, a, b, fmtW) {
    var blocks = list.map(function (s) {
      var rails = s.rails.map(function (r) { return esc(r.rail) + ' ' + r.charge_mah.toPrecision(4) + ' mAh (' + fmtW(r.mean_w) + ')'; }).join('<br>');
      var res = Object.keys(s.residency).map(function (k) { return esc(k) + ' ' + (100 * s.residency[k]).toFixed(1) + ' %'; }).join(', ');
      function row(k, v, cls) { return '<tr' + (cls ? ' class="' + cls + '"' : '') + '><th>' + k + '</th><td>' + v + '</td></tr>'; }
      return '<div class="sel-drive" data-port="' + s.port + '"><h3>' + esc(s.name) + '</h3><table class="sel-table">' +
        row('mean', fmtW(s.mean_w), 'sel-mean') + row('min / max', fmtW(s.min_w) + ' / ' + fmtW(s.max_w)) +
        row('energy', s.energy_j.toPrecision(6) + ' J (' + s.energy_mwh.toPrecision(5) + ' mWh)', 'sel-energy') +
        row('charge per rail', rails || '–', 'sel-charge') + row('measured', fmtT(s.measured_s) + ' s, ' + s.samples.toFixed(0) + ' samples') +
        row('I/O', s.io_ops + ' ops, ' + fmtBytes(s.io_bytes)) + row('state residency', res || '–') + '</table></div>';
    });
    return '<p class="cursors"><span class="cur-a">A ' + fmtT(a) + ' s</span> <span class="cur-b">B ' + fmtT(b) + ' s</span> ' +
      '<b class="dt">Δt ' + fmtT(b - a) + ' s</b></p>' + blocks.join('');
  }

  // Cursors A and B as vertical lines over a chart (uPlot draw hook).
  function drawCursors(u, a, b) {
    if (a === null || a === undefined) return;
    var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height, dpr = devicePixelRatio;
    ctx.save();
    ctx.beginPath(); ctx.rect(u.bbox.left, top, u.bbox.width, h); ctx.clip();
    ctx.font = (11 * dpr) + 'px sans-serif'; ctx.lineWidth = 1.5 * dpr; ctx.textAlign = 'left'; ctx.textBaseline = 'alphabetic';
    [[a, 'A', '#c2185b'], [b, 'B', '#00838f']].forEach(function (c) {
      if (c[0] === null || c[0] === undefined) return;
      var x = u.valToPos(c[0], 'x', true);
      ctx.strokeStyle = c[2]; ctx.fillStyle = c[2];
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + h); ctx.stroke();
      ctx.fillText(c[1], x + 3 * dpr, top + h - 4 * dpr);
    });
    ctx.restore();
  }

  // Annotations (notes: {at_s, to_s?, text}) over a chart: a dashed green
  // line, or a tinted interval, labelled with the text where it fits.
  function drawNotes(u, ns) {
    if (!ns || !ns.length) return;
    var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height, dpr = devicePixelRatio, lastX = -1e9;
    ctx.save();
    ctx.beginPath(); ctx.rect(u.bbox.left, top, u.bbox.width, h); ctx.clip();
    ctx.font = (11 * dpr) + 'px sans-serif'; ctx.textBaseline = 'alphabetic'; ctx.textAlign = 'left';
    ns.forEach(function (n) {
      var x0 = u.valToPos(n.at_s, 'x', true);
      if (n.to_s !== undefined && n.to_s !== null) {
        var x1 = u.valToPos(n.to_s, 'x', true);
        ctx.fillStyle = 'rgba(46,125,50,0.10)'; ctx.fillRect(x0, top, x1 - x0, h);
      }
      ctx.strokeStyle = '#2e7d32'; ctx.setLineDash([5, 3]); ctx.lineWidth = dpr;
      ctx.beginPath(); ctx.moveTo(x0, top); ctx.lineTo(x0, top + h); ctx.stroke(); ctx.setLineDash([]);
      var label = n.text.length > 40 ? n.text.slice(0, 39) + '…' : n.text;
      if (x0 - lastX > ctx.measureText(label).width + 8) {
        ctx.fillStyle = '#2e7d32'; ctx.fillText(label, x0 + 3 * dpr, top + 42 * dpr); lastX = x0;
      }
    });
    ctx.restore();
  }

  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return '&#' + c.charCodeAt(0) + ';'; }); }
  function fmtBytes(b) { return b >= 1 << 20 ? (b / 1048576).toFixed(1) + ' MiB' : b >= 1024 ? (b / 1024).toFixed(1) + ' KiB' : b + ' B'; }
  function fmtT(t) { return Math.abs(t) < 1e-9 ? '0' : Math.abs(t) >= 100 ? t.toFixed(2) : t.toPrecision(5); }

  var STATE_COL = { active: '#e4572e', background: '#f4a582', idle: '#9aa5b1', partial: '#f2c14e', slumber: '#4f9d69', devslp: '#6a3d9a', off: '#222', unknown: '#ddd' };

  // Rows of a table with class "link" act on Enter and Space as on a click
  // (they are focusable: tabindex 0).
  function keyboardRows(el) {
    el.addEventListener('keydown', function (ev) {
      if (ev.key !== 'Enter' && ev.key !== ' ') return;
      var tr = ev.target.closest && ev.target.closest('tr.link');
      if (!tr || tr !== ev.target) return;
      ev.preventDefault();
      tr.click();
    });
  }


  // ---- the time axis's controls, the same on both pages ----------------------
  // Stateless: each page keeps its view and selection and passes getters
  // (view(), selection()) and its own zoom(a, b) and home() in.

  // The widest a chart may be, CSS px.
  // (the #charts column's, beside the selection panel where there is one).
  function plotWidth() {
    var c = document.getElementById('charts'), w = c && c.clientWidth ? c.clientWidth : document.documentElement.clientWidth - 60;
    return Math.max(300, Math.min(w - 10, 1600));
  }

  // uPlot's y range on a linear axis: from 0 (or below, if a value is), 5 %
  // headroom.
  function yRange(u, lo, hi) { return [Math.min(0, lo), hi > 0 ? hi * 1.05 : 1]; }

  // [a, b] widened about its middle to at least min.
  function widen(a, b, min) {
    if (b - a < min) { var m = (a + b) / 2; a = m - min / 2; b = m + min / 2; }
    return [a, b];
  }

  // The view in the page's URL (#t=a,b), so a reload or a link keeps it.
  function saveView(a, b) {
    try { history.replaceState(null, '', '#t=' + a.toPrecision(9) + ',' + b.toPrecision(9)); } catch (e) { /* file: URLs in some browsers */ }
  }
  function hashView() {
    var m = /^#t=([-0-9.e+]+),([-0-9.e+]+)$/.exec(location.hash);
    return m && +m[2] > +m[1] ? [+m[1], +m[2]] : null;
  }

  // The #view line, and [a, b] marked on every chart but from (the one
  // whose drag made the selection); charts are { u: uPlot }.
  function showView(v) {
    document.getElementById('view').textContent = 'view ' + fmtT(v[0]) + ' – ' + fmtT(v[1]) + ' s (' + fmtT(v[1] - v[0]) + ' s)';
  }
  function selectOn(charts, a, b, from) {
    charts.forEach(function (c) {
      if (c.u === from) return;
      var l = c.u.valToPos(a, 'x'), r = c.u.valToPos(b, 'x');
      c.u.setSelect({ left: l, width: r - l, top: 0, height: c.u.bbox.height / devicePixelRatio }, false);
    });
  }

  // The wheel zooms about the cursor (shift or a sideways wheel pans); a
  // double click shows everything.
  function wheelZoom(u, view, zoom, home) {
    u.over.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var v = view(), f = ev.deltaY > 0 ? 1.25 : 0.8, span = v[1] - v[0];
      if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
        var dx = (ev.shiftKey ? ev.deltaY : ev.deltaX) > 0 ? 0.1 : -0.1;
        zoom(v[0] + dx * span, v[1] + dx * span);
        return;
      }
      var x = u.posToVal(ev.offsetX, 'x');
      zoom(x - (x - v[0]) * f, x + (v[1] - x) * f);
    }, { passive: false });
    u.over.addEventListener('dblclick', function () { home(); });
  }

  // The buttons (#b-all, #b-zoomsel, #b-left, #b-right, #b-in, #b-out) and
  // the keys (arrows pan, + and - zoom, Home shows everything).
  function navControls(view, selection, zoom, home) {
    function pan(f) { var v = view(), s = v[1] - v[0]; zoom(v[0] + f * s, v[1] + f * s); }
    function scaleBy(f) { var v = view(), m = (v[0] + v[1]) / 2, s = (v[1] - v[0]) * f / 2; zoom(m - s, m + s); }
    document.getElementById('b-all').onclick = function () { home(); };
    document.getElementById('b-zoomsel').onclick = function () { var s = selection(); if (s) zoom(s[0], s[1]); };
    document.getElementById('b-left').onclick = function () { pan(-0.25); };
    document.getElementById('b-right').onclick = function () { pan(0.25); };
    document.getElementById('b-in').onclick = function () { scaleBy(0.5); };
    document.getElementById('b-out').onclick = function () { scaleBy(2); };
    document.addEventListener('keydown', function (ev) {
      if (ev.target.tagName === 'INPUT' || ev.target.tagName === 'SELECT' || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      if (ev.key === 'ArrowLeft') pan(-0.25);
      else if (ev.key === 'ArrowRight') pan(0.25);
      else if (ev.key === '+' || ev.key === '=') scaleBy(0.5);
      else if (ev.key === '-') scaleBy(2);
      else if (ev.key === 'Home') home();
    });
  }

  // Rows of el's tables with class "link" zoom the charts to [data-a,
  // data-b] and select [data-sa, data-sb] where given, on a click or on
  // Enter and Space.
  function linkRows(el, zoom, select) {
    keyboardRows(el);
    el.addEventListener('click', function (ev) {
      var tr = ev.target.closest('tr.link');
      if (!tr) return;
      zoom(+tr.dataset.a, +tr.dataset.b);
      if (tr.dataset.sa !== undefined) select(+tr.dataset.sa, +tr.dataset.sb);
      document.getElementById('charts').scrollIntoView({ behavior: 'instant', block: 'start' });
    });
  }

  // A table row (r: cells, and zoom, sel, cls for a linked row) in the
  // form linkRows reads; where follows "show a–b s" in its tooltip.
  function rowHTML(r, where) {
    var attrs = r.zoom ? ' class="link ' + (r.cls || '') + '" tabindex="0" title="show ' + fmtT(r.zoom[0]) + '–' + fmtT(r.zoom[1]) + ' s' + where + '" data-a="' + r.zoom[0] + '" data-b="' + r.zoom[1] + '"' +
      (r.sel ? ' data-sa="' + r.sel[0] + '" data-sb="' + r.sel[1] + '"' : '') : '';
    return '<tr' + attrs + '>' + r.cells.map(function (x) { return '<td>' + x + '</td>'; }).join('') + '</tr>';
  }

  // A log axis cannot show 0 or noise below it: the floor to clamp at is
  // half the lowest positive mean of aggs ([min, max, mean] arrays each).
  function logFloor(aggs) {
    var lo = Infinity;
    aggs.forEach(function (t) { t[2].forEach(function (v) { if (v !== null && v > 0) lo = Math.min(lo, v); }); });
    return isFinite(lo) ? lo / 2 : 1e-6;
  }
  // arr clamped at floor and times k, null where it has no value.
  function scaled(arr, floor, k) { return arr.map(function (v) { return v === null || v === undefined ? null : Math.max(v, floor) * k; }); }

  // Table cells: 4 significant digits, W as mW, a DevSlp cycle's verdict.
  function n4(x) { return (x === undefined || x === null) ? '–' : Number(x).toPrecision(4); }
  function mw(x) { return (x === undefined || x === null) ? '–' : (x * 1000).toPrecision(4); }
  var OUTCOME = { pass: '<span class="pass">PASS</span>', fail: '<span class="fail">FAIL</span>',
    inconclusive: '<span class="inconclusive">INCONCLUSIVE</span>', not_supported: '<span class="inconclusive">NOT SUPPORTED</span>' };
  function verdict(c) {
    return c ? (OUTCOME[c.outcome] || esc(c.outcome || '–')) + (c.reasons && c.reasons.length ? ' ' + esc(c.reasons.join('; ')) : '') : '–';
  }

  // window.idlewatt (for tests and the console), ready and timed once the
  // first frame with the charts has been drawn.
  function publish(api) {
    api.readyMs = NaN;
    window.idlewatt = api;
    requestAnimationFrame(function () {
      setTimeout(function () {
        window.idlewatt.readyMs = performance.now();
        document.body.dataset.ready = '1';
      }, 0);
    });
  }

  return { f32: f32, u32: u32, series: series, seriesOf: seriesOf, drive: drive, span: span, levelFor: levelFor, grid: grid,
    withRaw: withRaw, aggregate: aggregate, aggregateRaw: aggregateRaw, rawInto: rawInto, integrate: integrate,
    stats: stats, csv: csv, download: download, selectionHTML: selectionHTML, drawCursors: drawCursors, drawNotes: drawNotes, esc: esc, fmtBytes: fmtBytes, fmtT: fmtT, STATE_COL: STATE_COL, keyboardRows: keyboardRows,
    plotWidth: plotWidth, yRange: yRange, widen: widen, saveView: saveView, hashView: hashView, showView: showView,
    selectOn: selectOn, wheelZoom: wheelZoom, navControls: navControls, linkRows: linkRows, rowHTML: rowHTML, logFloor: logFloor,
    scaled: scaled, n4: n4, mw: mw, verdict: verdict, publish: publish };
})();
