//go:build ignore

// signal-latency measures how long each long-running idlewatt command takes
// to exit after SIGINT or SIGTERM (issue 26 item 1: ≤ 1 s, exit 1, nothing
// left under a final name), and the peak RSS of the uninterrupted runs on
// the documented maxima (item 2: ≤ 1 GB). It builds the binary, writes the
// captures with analysis/synthcap (a 300 s 4-drive capture at 10 kS/s, a
// 128-drive (256-channel) 30 s capture and a 2048-drive (4096-channel)
// 50-sample one), then for every command sends each signal at several
// moments and times the exit with the wall clock. A run that ended before
// its signal is counted as such, not as a latency.
//
//	go run scripts/signal-latency.go [-dir DIR] [-at 0.3s,1s,2s,4s]
//
// It prints one row per command: runs interrupted, worst and median exit
// latency, exit codes seen, leftovers, and peak RSS of the full run (from
// getrusage of the child). Figures depend on the machine and its load: the
// script prints both.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
)

// sigCase is one command to interrupt: its name and its arguments for an
// output directory.
type sigCase struct {
	name string
	args func(out string) []string
}

func main() {
	dir := flag.String("dir", "", "work directory (default: a new temporary one)")
	atFlag := flag.String("at", "300ms,1s,2s,4s,8s", "moments to signal, after the start")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "signal-latency-")
		check(err)
		*dir = d
	}
	var ats []time.Duration
	for _, s := range strings.Split(*atFlag, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		check(err)
		ats = append(ats, d)
	}
	bin := filepath.Join(*dir, "idlewatt")
	run("go", "build", "-o", bin, "./cmd/idlewatt")
	cases := casesIn(*dir)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("machine: %s/%s, %d CPUs, %s; load %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load)
	fmt.Printf("%-26s %5s %8s %10s %10s %-10s %-9s %s\n", "command", "full", "RSS MB", "worst ms", "median ms", "exits", "left", "interrupted/runs")
	for _, c := range cases {
		measure(bin, *dir, c, ats)
	}
}

// casesIn writes the captures into dir unless they are there, and returns
// the commands to interrupt.
func casesIn(dir string) []sigCase {
	four := filepath.Join(dir, "c4x300s.iwcap")
	wide := filepath.Join(dir, "c256.iwcap")
	widest := filepath.Join(dir, "c4096.iwcap")
	if _, err := os.Stat(four); err != nil {
		fmt.Fprintln(os.Stderr, "writing captures …")
		write(four, 4, 300*time.Second, 10000)
		write(wide, 128, 30*time.Second, 1000)
		write(widest, 2048, 50*time.Millisecond, 1000)
	}
	return []sigCase{
		{"report 4×300 s", func(o string) []string { return []string{"report", four, "--out", filepath.Join(o, "r")} }},
		{"plot 4×300 s", func(o string) []string { return []string{"plot", four, "--out", filepath.Join(o, "p.png")} }},
		{"export --parquet 4×300 s", func(o string) []string { return []string{"export", four, "--parquet", filepath.Join(o, "pq")} }},
		{"export --csv 4×300 s", func(o string) []string { return []string{"export", four, "--csv", filepath.Join(o, "x.csv")} }},
		{"report 256 ch", func(o string) []string { return []string{"report", wide, "--out", filepath.Join(o, "r")} }},
		{"export --parquet 256 ch", func(o string) []string { return []string{"export", wide, "--parquet", filepath.Join(o, "pq")} }},
		{"report 4096 ch", func(o string) []string { return []string{"report", widest, "--out", filepath.Join(o, "r")} }},
		{"plot 4096 ch", func(o string) []string { return []string{"plot", widest, "--out", filepath.Join(o, "p.png")} }},
		{"demo", func(o string) []string { return []string{"demo", "--out", filepath.Join(o, "d")} }},
		{"accuracy --short", func(o string) []string {
			return []string{"accuracy", "--drives", "8", "--short", "--out", filepath.Join(o, "a")}
		}},
	}
}

// measure runs c once in full (its time and peak RSS), then once per
// moment in ats that comes before the full run's end, signalled then
// (SIGINT and SIGTERM in turn), and prints its row.
func measure(bin, dir string, c sigCase, ats []time.Duration) {
	full, wall, rss := fullRun(bin, dir, c)
	var lat []float64
	exits := map[int]bool{}
	left, runs, hit := 0, 0, 0
	for i, at := range ats {
		if at >= wall {
			continue // the command is over by then
		}
		sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[i%2]
		runs++
		code, d, n, ok := signalRun(bin, dir, c, at, sig)
		if !ok {
			continue
		}
		hit++
		exits[code] = true
		lat = append(lat, float64(d.Microseconds())/1000)
		left += n
	}
	sort.Float64s(lat)
	worst, med := "-", "-"
	if len(lat) > 0 {
		worst, med = fmt.Sprintf("%.0f", lat[len(lat)-1]), fmt.Sprintf("%.0f", lat[len(lat)/2])
	}
	var ex []string
	for k := range exits {
		ex = append(ex, fmt.Sprint(k))
	}
	sort.Strings(ex)
	fmt.Printf("%-26s %5s %8.0f %10s %10s %-10s %-9d %d/%d (full run %.1f s)\n", c.name, full, rss, worst, med, strings.Join(ex, ","), left, hit, runs, wall.Seconds())
}

// fullRun runs c without a signal: "ok" or its exit, its wall time and its
// peak RSS (MB).
func fullRun(bin, dir string, c sigCase) (full string, wall time.Duration, rss float64) {
	out, err := os.MkdirTemp(dir, "full-")
	check(err)
	start := time.Now()
	cmd := exec.Command(bin, c.args(out)...)
	var eb bytes.Buffer
	cmd.Stderr = &eb
	full = "ok"
	if err := cmd.Run(); err != nil {
		full = "exit " + fmt.Sprint(cmd.ProcessState.ExitCode())
		fmt.Fprintf(os.Stderr, "%s: %s\n", c.name, lastLine(eb.String()))
	}
	wall = time.Since(start)
	rss = float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
	os.RemoveAll(out)
	return full, wall, rss
}

// signalRun starts c, sends sig at at and times its exit: the exit code,
// the latency and the files left in its output directory. ok is false
// when it ended before the signal or finished as it came (exit 0).
func signalRun(bin, dir string, c sigCase, at time.Duration, sig syscall.Signal) (code int, d time.Duration, left int, ok bool) {
	out, err := os.MkdirTemp(dir, "sig-")
	check(err)
	defer os.RemoveAll(out)
	cmd := exec.Command(bin, c.args(out)...)
	var eb bytes.Buffer
	cmd.Stderr = &eb
	check(cmd.Start())
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return 0, 0, 0, false
	case <-time.After(at):
	}
	sent := time.Now()
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	d = time.Since(sent)
	code = cmd.ProcessState.ExitCode()
	if code == 0 {
		return 0, 0, 0, false // it finished as the signal came
	}
	if left = count(out); left > 0 {
		fmt.Fprintf(os.Stderr, "%s, %v at %v: %d files left\n", c.name, sig, at, left)
	}
	return code, d, left, true
}

func write(path string, drives int, d time.Duration, rate float64) {
	s := synthcap.Scenario{RateHz: rate, Duration: d, Seed: 3, CurrentLSB: 1e-4, VoltLSB: 1.25e-3, NoiseA: 1e-4, BlockLen: 250,
		MarkEvery: time.Second, RTTMin: time.Millisecond, Jitter: 100 * time.Microsecond}
	for i := 1; i <= drives; i++ {
		s.Drives = append(s.Drives, synthcap.Drive{Port: i, Name: fmt.Sprintf("SSD %d", i), IdleW: 0.4, BusyW: 2, DevSlpW: 0.005, Split5V: 0.7})
		if d >= 10*time.Second {
			s.Bursts = append(s.Bursts, synthcap.Bursts{Port: i, First: time.Second, Every: 3 * time.Second, Ops: 20, OpDur: 2 * time.Millisecond, Size: 4096})
			s.Pins = append(s.Pins, synthcap.Pin{Port: i, From: d / 2, To: d/2 + 500*time.Millisecond})
		}
	}
	check(synthcap.Write(path, s))
}

func count(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			n++
		}
		return nil
	})
	return n
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func run(name string, args ...string) {
	c := exec.Command(name, args...)
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	check(c.Run())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "signal-latency:", err)
		os.Exit(1)
	}
}
