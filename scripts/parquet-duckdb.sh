#!/usr/bin/env bash
# parquet-duckdb.sh DIR [DIR2] — reads an `idlewatt export --parquet` directory back with DuckDB
# (npm's @duckdb/node-api, installed on first use into $DUCKDB_DIR, default ~/.cache/idlewatt-duckdb),
# an implementation independent of the writer: per drive, avg(power_w) and count(power_w) of
# samples.parquet against summary.parquet's average_w (within 2^-24 relative: power_w is a FLOAT,
# each value its double rounded once) and samples_count, and every column's count and sum; the
# channels' LSBs from the footer's key-value metadata and, per channel with one, how far its
# readings ÷ LSB are from whole counts. With DIR2 (another export of the same capture, e.g. by an
# earlier binary), whether the two samples.parquet hold the same rows (EXCEPT ALL both ways empty),
# readings compared as FLOAT: an export from before FLOAT readings (DOUBLE) rounds to this one's,
# and each rail's watts are compared too: the stored rail*_w of an export from before schema
# idlewatt.samples/v2, otherwise rail*_v * rail*_a (DuckDB's FLOAT product, the value v1 stored).
# Prints the figures; exits 1 on a mismatch.
set -euo pipefail
dir=$1
dir2=${2:-}
duck=${DUCKDB_DIR:-$HOME/.cache/idlewatt-duckdb}
if [ ! -d "$duck/node_modules/@duckdb/node-api" ]; then
	mkdir -p "$duck"
	(cd "$duck" && npm init -y >/dev/null && npm install --silent @duckdb/node-api@1.5.6-r.1 >/dev/null)
fi
cat >"$duck/check.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
const [dir, dir2] = process.argv.slice(2);
const con = await (await DuckDBInstance.create(':memory:')).connect();
const rows = async (q) => (await con.runAndReadAll(q)).getRowObjectsJson();
const smp = `'${dir}/samples.parquet'`, sum = `'${dir}/summary.parquet'`;
let bad = 0;
const version = (await rows('SELECT version() AS v'))[0].v;
console.log(`DuckDB ${version} reads ${dir}`);
const drives = await rows(`SELECT s.port, s.drive, s.average_w, s.samples_count, p.w, p.n
  FROM ${sum} s JOIN (SELECT port, avg(power_w) AS w, count(power_w) AS n FROM ${smp} GROUP BY port) p USING (port)
  ORDER BY s.port`);
for (const d of drives) {
  const rel = Math.abs(d.w - d.average_w) / Math.max(Math.abs(d.average_w), 1e-300);
  // 2^-24: each power_w value is within that of its double, so their mean
  // is too (power is positive); 1e-12 for the sums' own rounding.
  const ok = rel <= 2 ** -24 + 1e-12 && String(d.n) === String(d.samples_count);
  bad += ok ? 0 : 1;
  console.log(`port ${d.port} (${d.drive}): avg(power_w) ${d.w} W, summary ${d.average_w} W (${rel.toExponential(1)} relative); ` +
    `${d.n} power samples, summary ${d.samples_count}${ok ? '' : '  MISMATCH'}`);
}
if (drives.length === 0) { console.log('no drive in both tables  MISMATCH'); bad++; }
const cols = ['time_s', 'sample_index', 'port', 'gap_samples', 'rail5_v', 'rail5_a', 'rail12_v', 'rail12_a',
  'rail3v3_v', 'rail3v3_a', 'power_w'];
const schema = await rows(`SELECT decode(value) AS v FROM parquet_kv_metadata(${smp}) WHERE decode(key) = 'idlewatt.schema'`);
console.log(`schema ${schema.length ? schema[0].v : '(none: idlewatt.samples/v1, with rail*_w)'}`);
const figs = (await rows(`SELECT count(*) AS rows, ${cols.map(c => `count(${c}) AS "n_${c}", sum(${c}) AS "s_${c}"`).join(', ')} FROM ${smp}`))[0];
console.log(`${figs.rows} rows; ` + cols.map(c => `${c}: ${figs['n_' + c]} values, Σ ${figs['s_' + c]}`).join('; '));
const kv = await rows(`SELECT decode(value) AS v FROM parquet_kv_metadata(${smp}) WHERE decode(key) = 'idlewatt.channels'`);
if (kv.length === 0) {
  console.log('no idlewatt.channels in the key-value metadata (an export from before it)');
} else {
  for (const ch of JSON.parse(kv[0].v)) {
    const dist = [];
    for (const [q, lsb] of [['v', ch.volt_lsb_v], ['a', ch.current_lsb_a]]) {
      if (!(lsb > 0) || ch.rail === 'other') continue;
      const c = `${ch.rail}_${q}`;
      const r = (await rows(`SELECT max(abs(${c} / ${lsb} - round(${c} / ${lsb}))) AS d, count(${c}) AS n FROM ${smp} WHERE port = ${ch.port}`))[0];
      dist.push(`${c} ${r.n} values within ${Number(r.d).toExponential(1)} count of a whole count`);
    }
    console.log(`channel port ${ch.port} ${ch.rail}: LSB ${ch.volt_lsb_v} V, ${ch.current_lsb_a} A${dist.length ? '; ' + dist.join(', ') : ''}`);
  }
}
if (dir2) {
  const readings = cols.slice(4);
  const rails = ['rail5', 'rail12', 'rail3v3'];
  // A rail's watts: the stored column (v1) or the FLOAT product of the rail's V and A (v2).
  const watts = async (f) => {
    const names = new Set((await rows(`SELECT name FROM parquet_schema(${f})`)).map(r => r.name));
    return rails.map(r => names.has(`${r}_w`) ? `CAST(${r}_w AS FLOAT) AS ${r}_w` : `CAST(${r}_v AS FLOAT) * CAST(${r}_a AS FLOAT) AS ${r}_w`);
  };
  const other = `'${dir2}/samples.parquet'`;
  const w1 = await watts(smp), w2 = await watts(other);
  console.log(`rail watts: ${dir} ${w1[0].includes('*') ? 'from V × A' : 'stored'}, ${dir2} ${w2[0].includes('*') ? 'from V × A' : 'stored'}`);
  const asFloat = (f, w) => `SELECT run_id, time_s, sample_index, port, gap_samples, ${readings.map(c => `CAST(${c} AS FLOAT) AS ${c}`).join(', ')}, ${w.join(', ')} FROM ${f}`;
  const diff = (await rows(`SELECT (SELECT count(*) FROM (${asFloat(smp, w1)} EXCEPT ALL ${asFloat(other, w2)})) AS a,
    (SELECT count(*) FROM (${asFloat(other, w2)} EXCEPT ALL ${asFloat(smp, w1)})) AS b`))[0];
  const ok = String(diff.a) === '0' && String(diff.b) === '0';
  bad += ok ? 0 : 1;
  console.log(`against ${dir2}: ${diff.a} rows only in ${dir}, ${diff.b} only in ${dir2}${ok ? '' : '  MISMATCH'}`);
}
process.exit(bad ? 1 : 0);
JS
node "$duck/check.mjs" "$(realpath "$dir")" ${dir2:+"$(realpath "$dir2")"}
