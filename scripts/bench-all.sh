#!/usr/bin/env bash
# bench-all.sh [--readme] [OUT.md] — regenerates, in one run, every figure of README's
# "Measured speed and size" table, each side by side with its peer where it has one, and writes
# that table (stdout and OUT.md, default bench-all.md) headed by the machine, the load at start
# and end, the date and the commit. With --readme it also replaces README.md's block between
# `<!-- bench-all:begin -->` and `<!-- bench-all:end -->` with the same text (a temporary file
# renamed over README.md; nothing else in it changes), unless a row failed.
#
# Two modes; every row says which one made it:
#   QUICK=1  minutes on 2 cores: 5-minute captures, 10-second recordings, a 1-hour long capture,
#            -benchtime 300x, bench-fio.sh's random reads only (its replays take 3 minutes)
#   full     up to ~25 minutes: 1-hour captures, 60 s × 3 record rounds, 30 s size recordings,
#            the 24-hour capture of scripts/scale-24h.sh, -benchtime 200x, all of bench-fio.sh
# CPU seconds (user+sys from /usr/bin/time) are the figures to compare; wall time depends on the
# load. One run each (page cache warm), so a figure's spread is not given.
#
# It calls cmd/gencap, `idlewatt hub emulate --fast` + `record` (the noisy capture),
# scripts/record-cpu.sh, scripts/capture-size.sh, scripts/scale-24h.sh, scripts/release.sh,
# scripts/bench-fio.sh (only when fio is installed), and the benchmarks or browser test named in
# each row. A row that cannot run here (no Chromium, no fio) says so and why.
# env: QUICK=1; DUR (gencap capture length; QUICK 5m, full 1h); NOISY_DUR (5m); HOURS (long
#      capture; QUICK 1, full 24); REC_SECONDS/REC_ROUNDS (record-cpu.sh; QUICK 10/1, full 60/3);
#      SIZE_SECONDS (capture-size.sh; QUICK 10, full 30); BENCHTIME; PEER_BIN (another idlewatt
#      binary recorded beside this tree's by record-cpu.sh); WORK (scratch directory, reused:
#      captures already there are not generated again). Run it under `nice` on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
readme=
if [ "${1:-}" = --readme ]; then readme=1; shift; fi
out=${1:-bench-all.md}
t_start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
if [ -n "${QUICK:-}" ]; then
	mode=QUICK dur=${DUR:-5m} hours=${HOURS:-1} rec_s=${REC_SECONDS:-10} rec_r=${REC_ROUNDS:-1}
	# 300x, not 20x: 20 iterations were mostly warm-up (packed-quiet decode/crc 0.92 at 20x,
	# 1.22 at 1000x on the same idle machine); the decoder benchmarks take seconds either way.
	size_s=${SIZE_SECONDS:-10} benchtime=${BENCHTIME:-300x} chartbt=1x
else
	mode=full dur=${DUR:-1h} hours=${HOURS:-24} rec_s=${REC_SECONDS:-60} rec_r=${REC_ROUNDS:-3}
	size_s=${SIZE_SECONDS:-30} benchtime=${BENCHTIME:-200x} chartbt=3x
fi
noisy_dur=${NOISY_DUR:-5m}
work=${WORK:-$(mktemp -d /tmp/bench-all.XXXX)}
mkdir -p "$work"
rm -f "$work"/rows-*

say() { echo "bench-all: $(($(date +%s) - t_start)) s: $*" >&2; }
say "$mode mode, scratch $work"
go build -o "$work/gencap" ./cmd/gencap
go build -o "$work/idlewatt" ./cmd/idlewatt
iw=$work/idlewatt
cap=$work/synth-$dur.iwc
[ -f "$cap" ] || "$work/gencap" -out "$cap" -duration "$dur" -rate 10000 -drift-ppm 50 >/dev/null
capsz=$(stat -c %s "$cap")
cat "$cap" >/dev/null # warm the page cache

# cpu NAME CMD... : runs CMD under /usr/bin/time; sets cpu_NAME (user+sys s), wall_NAME, rss_NAME (MB)
cpu() {
	local name=$1; shift
	/usr/bin/time -f '%U %S %e %M' -o "$work/time-$name" "$@" >"$work/out-$name" 2>&1 ||
		{ echo "$name failed: $(tail -3 "$work/out-$name")" >&2; return 1; }
	local u s e m
	read -r u s e m <"$work/time-$name"
	printf -v "cpu_$name" '%.2f' "$(echo "$u + $s" | bc -l)"
	printf -v "wall_$name" '%.2f' "$e"
	printf -v "rss_$name" '%d' "$((m / 1024))"
}
ratio() { printf '%.3g' "$(echo "$1 / $2" | bc -l)"; } # 3 significant digits: 11.7, 1.76, 0.00352
mb() { printf '%.1f' "$(echo "$1 / 1000000" | bc -l)"; }
# row WHAT RESULT MODE HOW: one table row (a '|' inside a cell would split it: write '\|')
row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4"; }
# benchfield LINE UNIT: the value before UNIT in a `go test -bench` result line
benchfield() { echo "$1" | awk -v u="$2" '{for (i = 2; i <= NF; i++) if ($i == u) print $(i-1)}'; }

# section NAME FUNC: runs FUNC in a subshell with errexit (its rows go to rows-NAME); a failure
# becomes a FAILED row and is counted, and the other sections still run.
failed=()
section() {
	local name=$1 rc; shift
	say "$name"
	set +e
	(set -e; "$@") >"$work/rows-$name" 2>"$work/err-$name"
	rc=$?
	set -e
	if [ "$rc" -ne 0 ]; then
		failed+=("$name")
		row "$name" "**FAILED** (exit $rc): $(tail -2 "$work/err-$name" | tr '|\n' '/ ')" "$mode" "see $work/err-$name" >"$work/rows-$name"
	fi
	cat "$work/rows-$name" >>"$work/rows-all"
}
: >"$work/rows-all"

# 1. report vs analysis alone, report --no-html and a decode-only scan of the same capture
s_report() {
	cpu scan "$work/gencap" -scan "$cap"
	cpu analysis "$work/gencap" -report "$cap" -out "$work/ana" -overwrite
	cpu report "$iw" report "$cap" --out "$work/rep" --overwrite
	cpu nohtml "$iw" report "$cap" --out "$work/rep-nohtml" --no-html --overwrite
	row "\`report\` of a gencap capture, $dur × 2 drives × 2 rails at 10 kS/s, noise-free ($(mb "$capsz") MB), beside analysis alone (\`gencap -report\`), \`report --no-html\` and a decode-only scan (\`gencap -scan\`) of the same file" \
		"report $cpu_report s CPU ($wall_report s wall, $rss_report MB); --no-html $cpu_nohtml s ($wall_nohtml s, $rss_nohtml MB); analysis alone $cpu_analysis s ($rss_analysis MB); scan $cpu_scan s: **report ÷ scan $(ratio "$cpu_report" "$cpu_scan")×** (goal ≤ 3), analysis ÷ scan $(ratio "$cpu_analysis" "$cpu_scan")×" \
		"$mode: $dur capture" "\`scripts/report-scale.sh $dur\` (wall clock, best of 3)"
}
section report s_report

# 2. report.html of that report: size, and time to interactive in headless Chromium
chromium_path() { # as internal/browsertest.Path finds it
	if [ -n "${IDLEWATT_CHROMIUM:-}" ]; then echo "$IDLEWATT_CHROMIUM"; return; fi
	local p
	for p in /usr/bin/chromium /usr/bin/chromium-browser; do [ -e "$p" ] && { echo "$p"; return; }; done
	for p in chromium chromium-browser google-chrome google-chrome-stable; do command -v "$p" && return; done
	return 0
}
s_html() {
	local html=$work/rep/report.html what chrome
	what="report.html of the $dur capture above: size, time to interactive (navigation → the page's ready flag) in headless Chromium, 3 loads"
	chrome=$(chromium_path)
	if [ -z "$chrome" ]; then
		row "$what" "$(mb "$(stat -c %s "$html")") MB; interactive: skipped, no Chromium (set IDLEWATT_CHROMIUM or apt-get install -y chromium)" "$mode: $dur capture" "\`go test ./report/html -run TestBrowserTiming\`"
		return
	fi
	IDLEWATT_HTML_FILE=$html go test ./report/html -run '^TestBrowserTiming$' -v -count=1 >"$work/out-html" 2>&1 ||
		{ tail -5 "$work/out-html" >&2; return 1; }
	if grep -q -- '--- SKIP' "$work/out-html"; then
		row "$what" "$(mb "$(stat -c %s "$html")") MB; interactive: skipped, $(grep -m1 -A1 -- '--- SKIP' "$work/out-html" | tail -1 | sed 's/^ *//')" "$mode: $dur capture" "\`go test ./report/html -run TestBrowserTiming\`"
		return
	fi
	local ms
	ms=$(sed -n 's/.*interactive \([0-9]*\) ms after navigation.*/\1/p' "$work/out-html" | paste -sd, | sed 's/,/, /g')
	row "$what" "$(mb "$(stat -c %s "$html")") MB, interactive in **$ms ms** ($("$chrome" --version 2>/dev/null | head -1 | sed 's/ built on .*//'))" \
		"$mode: $dur capture" "\`IDLEWATT_HTML_FILE=report.html go test ./report/html -run TestBrowserTiming -v\`"
}
section report.html s_html

# 3. the 1-hour power chart: report/chart's benchmark (decimate 72 M samples + render), beside
# `idlewatt plot` of the gencap capture
s_chart() {
	go test ./report/chart -run '^$' -bench 'PowerChart1h/png' -benchtime "$chartbt" -count 1 >"$work/out-chart" 2>&1 ||
		{ tail -5 "$work/out-chart" >&2; return 1; }
	local bl dec ren
	bl=$(grep -m1 '^BenchmarkPowerChart1h/png' "$work/out-chart")
	dec=$(benchfield "$bl" decimate-s/op) ren=$(benchfield "$bl" render-s/op)
	[ -n "$dec" ] && [ -n "$ren" ] || { echo "no PowerChart1h result in $work/out-chart" >&2; return 1; }
	cpu plot "$iw" plot "$cap" --out "$work/plot.png" --overwrite
	row "1-hour power chart, 2 drives at 10 kS/s (\`BenchmarkPowerChart1h/png\`: decimate 72 M samples, render the PNG), beside \`idlewatt plot\` of the $dur gencap capture" \
		"**$(printf '%.2f' "$(echo "$dec + $ren" | bc -l)") s** (decimate $(printf '%.2f' "$dec") s + render $(printf '%.2f' "$ren") s, wall, -benchtime $chartbt); plot of the $dur capture $cpu_plot s CPU ($wall_plot s wall, $rss_plot MB)" \
		"$mode: $dur capture" "\`go test ./report/chart -run '^\$' -bench PowerChart1h\`"
}
section chart s_chart

# 4. overview chart of a long capture (scripts/scale-24h.sh: gen-capture.go, format 2.1 with its
# index chunk) beside a decode-only scan of the same file
s_overview() {
	local d=$work/long-${hours}h l bytes
	mkdir -p "$d"
	BIN=$iw OVERVIEW_ONLY=1 scripts/scale-24h.sh "$hours" "$d" >"$work/out-overview" 2>&1 ||
		{ tail -5 "$work/out-overview" >&2; return 1; }
	l=$(grep -m1 '^overview chart (plot):' "$work/out-overview")
	bytes=$(stat -c %s "$d/day.iwcap")
	cat "$d/day.iwcap" >/dev/null
	cpu longscan "$work/gencap" -scan "$d/day.iwcap"
	# "overview chart (plot): E s wall, U s user, S s system, M kB max RSS"
	local w u sy kb
	read -r _ _ _ w _ _ u _ _ sy _ _ kb _ <<<"$l"
	[ -n "$kb" ] || { echo "scale-24h.sh printed no plot timing" >&2; return 1; }
	row "overview chart (\`idlewatt plot\`) of a $hours-hour, 2-drive, 10 kS/s capture ($(mb "$bytes") MB, 0.5 mA noise, format 2.1: through its index chunk), beside a decode-only scan of the same file" \
		"**$w s wall, $(printf '%.2f' "$(echo "$u + $sy" | bc -l)") s CPU, $((kb / 1024)) MB**; scan $cpu_longscan s CPU ($wall_longscan s wall)" \
		"$mode: $hours h capture" "\`scripts/scale-24h.sh $hours\`"
}
section overview s_overview

# 5. Parquet export vs CSV export of the same capture: the gencap one, then an emulated noisy one
s_parquet() { # NAME CAPTURE DESCRIPTION MODE
	local name=$1 c=$2 desc=$3 m=$4 csz pqsz csvsz
	csz=$(stat -c %s "$c")
	cpu "pq_$name" "$iw" export "$c" --parquet "$work/pq-$name" --overwrite
	cpu "csv_$name" "$iw" export "$c" --csv "$work/export-$name.csv" --overwrite
	pqsz=$(stat -c %s "$work/pq-$name/samples.parquet")
	csvsz=$(stat -c %s "$work/export-$name.csv")
	rm -f "$work/export-$name.csv"
	local pc=cpu_pq_$name pw=wall_pq_$name pr=rss_pq_$name cc=cpu_csv_$name cw=wall_csv_$name cr=rss_csv_$name
	row "\`export --parquet\` (analysis included) vs \`export --csv\` of $desc, $(mb "$csz") MB" \
		"parquet ${!pc} s CPU (${!pw} s wall, ${!pr} MB), csv ${!cc} s (${!cw} s, ${!cr} MB): **parquet ÷ csv $(ratio "${!pc}" "${!cc}")× CPU**, $(ratio "${!pw}" "${!cw}")× wall (goal ≤ 1); samples.parquet $(mb "$pqsz") MB = **$(ratio "$pqsz" "$csz")× the capture** (goal ≤ 2), CSV $(mb "$csvsz") MB" \
		"$m" "[lab.md](docs/lab.md#parquet-files-and-schema)"
}
s_parquet_noisy() {
	local n=$work/noisy-$noisy_dur.iwcap
	if [ ! -f "$n" ]; then
		"$iw" hub emulate --fast --ports 2 --rate 10000 --duration "$noisy_dur" --profile jmf667h-128-a19,jmf667h-256-a19 \
			--out "$work/noisy-$noisy_dur.bin" --overwrite >/dev/null
		"$iw" record --port "$work/noisy-$noisy_dur.bin" --out "$n.tmp" >/dev/null 2>&1
		mv "$n.tmp" "$n"
		rm -f "$work/noisy-$noisy_dur.bin"
	fi
	s_parquet noisy "$n" "an emulated $noisy_dur capture, 2 drives × 2 rails at 10 kS/s, 0.5 mA σ noise (\`hub emulate --fast --profile jmf667h-128-a19,jmf667h-256-a19\` recorded)" "$mode: $noisy_dur capture (full: the same)"
}
section parquet s_parquet gencap "$cap" "the $dur gencap capture above (noise-free)" "$mode: $dur capture"
section parquet-noisy s_parquet_noisy

# 6. capture size per channel-sample, format 1 vs 2, default and noisy drives (capture-size.sh)
s_size() {
	rm -rf "$work/capsize" # its recordings do not replace files (record without --overwrite)
	BIN=$iw scripts/capture-size.sh "$size_s" "$work/capsize" >"$work/out-capsize" 2>&1 ||
		{ tail -5 "$work/out-capsize" >&2; return 1; }
	# | drive | format | seconds | samples/channel | bytes | B per channel-sample | record CPU | % of a core |
	local r
	r=$(awk -F' *[|] *' '$2 ~ /^(default|noisy3ma)$/ { b[$2 $3] = $7; c[$2 $3] = $9 }
		END { printf "default drives: **%s B per channel-sample** in format 2 (format 1: %s); noisy drives (noise_ma 3): **%s** (format 1: %s); record at %s %% of a core in format 2 (format 1: %s %%) on the default drives",
			b["default2"], b["default1"], b["noisy3ma2"], b["noisy3ma1"], c["default2"], c["default1"] }' "$work/out-capsize")
	[ "$(grep -cE '^[|] (default|noisy3ma) [|] [12] [|]' "$work/out-capsize")" = 4 ] ||
		{ echo "capture-size.sh printed no 4 rows: $(tail -3 "$work/out-capsize")" >&2; return 1; }
	row "capture size, 4 ports × 2 rails at 10 kS/s recorded from the emulated hub, format 2 (meter counts, delta/Rice per chunk) beside format 1, in one run" \
		"$r" "$mode: ${size_s} s recordings" "\`scripts/capture-size.sh $size_s\`"
}
section capture-size s_size

# 7. record's CPU, 4 ports × 2 rails at 10 kS/s (record-cpu.sh; PEER_BIN alternates with it)
s_reccpu() {
	local bins=("$iw") r
	[ -z "${PEER_BIN:-}" ] || bins+=("$PEER_BIN")
	DIR=$work/reccpu scripts/record-cpu.sh "$rec_s" "$rec_r" "${bins[@]}" >"$work/out-reccpu" 2>&1 ||
		{ tail -5 "$work/out-reccpu" >&2; return 1; }
	# | binary | round | user s | system s | wall s | % of a core | samples/channel |
	r=$(awk -F' *[|] *' '$3 ~ /^[0-9]+$/ { printf "%s%s round %s: **%s %%** (%s + %s s in %s s)", sep, $2, $3, $7, $4, $5, $6; sep = "; " }' "$work/out-reccpu")
	[ -n "$r" ] || { echo "record-cpu.sh printed no rows" >&2; return 1; }
	row "\`record\` CPU, 4 ports × 2 rails at 10 kS/s from the emulated hub, % of a core$([ -z "${PEER_BIN:-}" ] || echo ", this tree's binary (idlewatt) alternating with PEER_BIN")" \
		"$r" "$mode: $rec_s s × $rec_r round(s)" "\`scripts/record-cpu.sh $rec_s $rec_r BIN…\`"
}
section record-cpu s_reccpu

# 8. hub decoder vs CRC-16 over the same bytes, and per sample format
s_hub() {
	go test ./meter/hub -run '^$' -bench 'DecodeVsCRC|DecodeFormats|RiceFloor' -benchtime "$benchtime" -count 1 >"$work/out-bench" 2>&1 ||
		{ tail -5 "$work/out-bench" >&2; return 1; }
	local bl f fmts=""
	bl=$(grep -m1 '^BenchmarkDecodeVsCRC' "$work/out-bench")
	[ -n "$bl" ] || { echo "no BenchmarkDecodeVsCRC result" >&2; return 1; }
	for f in 16bit-noisy 20bit-noisy packed-noisy packed-quiet; do
		local fl
		fl=$(grep -m1 "^BenchmarkDecodeFormats/$f" "$work/out-bench")
		fmts+="${fmts:+, }$f $(benchfield "$fl" decode/crc-cpu) ($(benchfield "$fl" B/sample) B a sample)"
	done
	row "hub stream decode ÷ sigurn/crc16 over the same bytes (\`BenchmarkDecodeVsCRC\`: packed 20-bit stream), and per sample format (\`BenchmarkDecodeFormats\`, \`BenchmarkRiceFloor\`)" \
		"packed: **decode/crc $(benchfield "$bl" decode/crc-cpu) by CPU time**, $(benchfield "$bl" decode/crc) by wall (decode $(benchfield "$bl" decode-cpu-MB/s) vs crc $(benchfield "$bl" crc-cpu-MB/s) MB/s of stream by CPU) (goal ≥ 1); decode/crc by CPU per format: $fmts; Rice floor $(benchfield "$(grep -m1 '^BenchmarkRiceFloor' "$work/out-bench")" ns/code) ns a code" \
		"$mode: -benchtime $benchtime" "\`go test ./meter/hub -run '^\$' -bench 'DecodeVsCRC\\|DecodeFormats\\|RiceFloor'\`"
}
section hub-decode s_hub

# 9. stripped release binary
s_release() {
	local rel
	rel=$(scripts/release.sh "$work/dist/idlewatt")
	rel=${rel#release build }
	row "release binary (-trimpath -ldflags '-s -w') beside the unstripped build" "${rel#"$work/dist/"}" "$mode (full: the same)" "\`scripts/release.sh\`"
}
section release s_release

# 10. fio vs idlewatt bench / replay (bench-fio.sh)
s_fio() {
	local what="4 KiB random read, O_DIRECT, 1 GiB file: idlewatt bench ÷ fio (io_uring QD32, psync QD1), same file, same run; replay drift over a 62 s trace with idle gaps beside fio read_iolog"
	if ! command -v fio >/dev/null; then
		row "$what" "skipped: fio is not installed (scripts/bench-fio.sh installs it with apt-get, then bench-all.sh runs it)" "$mode" "\`scripts/bench-fio.sh\`"
		return
	fi
	local m="$mode: RUNTIME=5 ROUNDS=3"
	if [ "$mode" = QUICK ]; then
		RUNTIME=2 ROUNDS=1 RANDREAD_ONLY=1 scripts/bench-fio.sh "$work/fio" >/dev/null
		m="$mode: RUNTIME=2 ROUNDS=1, random reads only"
	else
		RUNTIME=5 ROUNDS=3 scripts/bench-fio.sh "$work/fio" >/dev/null
	fi
	local r
	# | round | QD | engine | fio IOPS | idlewatt IOPS | ratio | fio CPU µs/IO | idlewatt CPU µs/IO |
	# | idlewatt replay | ops | mean | p99 | max | drift ms | drift % |
	r=$(awk -F' *[|] *' '
		$3 ~ /^[0-9]+$/ && $4 ~ /^(io_uring|psync)$/ {
			k = "QD" $3 " " $4; v = $7 + 0
			if (!(k in lo)) { order[++n] = k; lo[k] = v; hi[k] = v }
			if (v < lo[k]) lo[k] = v
			if (v > hi[k]) hi[k] = v
			cpu[k] = cpu[k] sep[k] $9 "/" $8; sep[k] = ", "
		}
		$2 == "idlewatt replay" { drift = $8 } $2 ~ /^fio read_iolog/ { fdrift = $8 }
		END {
			for (i = 1; i <= n; i++) { k = order[i]; s = s t "idlewatt ÷ fio " k " **" (lo[k] == hi[k] ? lo[k] : lo[k] "–" hi[k]) "** IOPS (CPU µs an I/O idlewatt/fio " cpu[k] ")"; t = "; " }
			if (drift != "") s = s "; replay drift **" drift " %** of the trace (fio read_iolog " fdrift " %)"
			else s = s "; replay drift: not run in QUICK mode"
			print s
		}' "$work/fio/results.md")
	row "$what" "$r" "$m" "\`scripts/bench-fio.sh\` (its tables: $work/fio/results.md)"
}
section fio s_fio

t_end=$(date +%s)
{
	echo "- machine: nproc $(nproc); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $(uname -r); $(go version | cut -d' ' -f3)"
	echo "- load average (1, 5, 15 min): $load0 at start, $(cut -d' ' -f1-3 /proc/loadavg) at end"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- . ':!README.md' || echo ' (with uncommitted changes)')"
	echo "- mode: **$mode**$([ "$mode" = QUICK ] && echo ' (`QUICK=1`: short captures and recordings, each row says which)'); the run took $((t_end - t_start)) s wall, builds included; CPU = user+sys from /usr/bin/time, one run each, page cache warm"
	echo
	echo "| what | result | mode | regenerate alone |"
	echo "|---|---|---|---|"
	cat "$work/rows-all"
} >"$work/table.md"
cp "$work/table.md" "$out"
cat "$out"
say "done in $((t_end - t_start)) s; table in $out, scratch in $work"

if [ ${#failed[@]} -gt 0 ]; then
	say "FAILED: ${failed[*]}${readme:+; README.md not changed}"
	exit 1
fi
if [ -n "$readme" ]; then
	tmp=$(mktemp README.md.XXXXXX)
	if awk -v f="$out" '
		$0 == "<!-- bench-all:begin -->" { print; print ""; while ((getline l < f) > 0) print l; print ""; skip = 1; nb++; next }
		$0 == "<!-- bench-all:end -->" { skip = 0; ne++ }
		!skip { print }
		END { if (nb != 1 || ne != 1) exit 3 }' README.md >"$tmp"; then
		chmod --reference=README.md "$tmp"
		mv "$tmp" README.md
		say "README.md's bench-all block replaced"
	else
		rm -f "$tmp"
		say "README.md needs exactly one '<!-- bench-all:begin -->' and one '<!-- bench-all:end -->' line: not changed"
		exit 1
	fi
fi
