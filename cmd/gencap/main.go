package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report"
)

func main() {
	out := flag.String("out", "synthetic.iwcap", "capture file to write (with -report: the report directory)")
	dur := flag.Duration("duration", 0, "length of the capture (e.g. 5m, 1h)")
	rate := flag.Float64("rate", 10000, "samples per second per channel")
	drift := flag.Float64("drift-ppm", 0, "meter clock drift")
	scan := flag.String("scan", "", "decode every record of this capture and exit")
	reportIn := flag.String("report", "", "analyze this capture and write the report into -out")
	overwrite := flag.Bool("overwrite", false, "with -report: replace report files already in -out")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of -scan or -report to this file (go tool pprof)")
	flag.Parse()
	if *cpuprofile != "" {
		stop, err := startProfile(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gencap:", err)
			os.Exit(2)
		}
		defer stop()
	}
	switch {
	case *scan != "":
		n, err := scanAll(*scan)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gencap:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d channel-samples decoded\n", *scan, n)
		return
	case *reportIn != "":
		r, err := analysis.Analyze(*reportIn, analysis.DefaultOptions())
		if err == nil {
			err = report.WriteFilesWith(r, *out, report.WriteOptions{Out: outfile.Options{Overwrite: *overwrite, Flag: "-overwrite"}})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gencap:", err)
			os.Exit(1)
		}
		return
	}
	if *dur <= 0 || *rate <= 0 {
		fmt.Fprintln(os.Stderr, "gencap: -duration and -rate must be positive")
		os.Exit(2)
	}
	if err := synthcap.Write(*out, synthcap.Review(*dur, *rate, *drift)); err != nil {
		fmt.Fprintln(os.Stderr, "gencap:", err)
		os.Exit(1)
	}
}

func scanAll(path string) (int, error) {
	r, err := capture.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n := 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if rec.Kind == capture.KindSamples {
			n += rec.Block.Len()
		}
	}
}

// startProfile starts a CPU profile into a new file (an existing one is refused);
// the returned func stops it and closes the file.
func startProfile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
