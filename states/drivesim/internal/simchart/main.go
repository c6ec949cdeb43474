package main

import (
	"flag"
	"fmt"
	"image/color"
	"math/rand/v2"
	"os"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
	"github.com/idlewatt/idlewatt/workload"

	"github.com/idlewatt/idlewatt/internal/outfile"
)

type req struct {
	at   time.Duration // scheduled issue time
	op   workload.Op
	size int
}

// script returns one minute of bursty requests on a fixed schedule (as a
// timing-faithful trace replay issues them), so both drives see the same
// workload.
func script(seed uint64) []req {
	r := rand.New(rand.NewPCG(seed, 17))
	var out []req
	t := 500 * time.Millisecond
	for t < time.Minute {
		end := t + time.Duration(100+r.IntN(1400))*time.Millisecond
		for t < end {
			q := req{at: t, op: workload.OpRead, size: 4096 << r.IntN(5)}
			if r.IntN(10) < 3 {
				q.op, q.size = workload.OpWrite, 16384<<r.IntN(5)
			}
			out = append(out, q)
			t += time.Duration(r.ExpFloat64() * float64(2*time.Millisecond))
		}
		t += time.Duration(1000+r.IntN(5000)) * time.Millisecond
	}
	return out
}

// run plays the script against a fresh model (queue depth 1: a request
// waits for the previous one) and renders a minute at 10 kS/s; it returns
// the mean power (W) of each millisecond.
func run(p drivesim.Profile, policy string, reqs []req) ([]float64, error) {
	m, err := drivesim.New(p, drivesim.Options{Seed: 1, Policy: policy})
	if err != nil {
		return nil, err
	}
	var t time.Duration
	for _, q := range reqs {
		t = max(t, q.at)
		if t >= time.Minute {
			break
		}
		wait := m.IO(t, q.op, q.size)
		rate := p.MaxReadMBps
		if q.op == workload.OpWrite {
			rate = p.MaxWriteMBps
		}
		t += wait + time.Duration(float64(q.size)/rate*1e3) + 60*time.Microsecond
		m.IODone(t, q.op, q.size)
	}
	m.Advance(time.Minute)
	const rate, chunk = 10000, 100 // 10 ms chunks, like the emulator
	v5, v12 := make([]units.Volts, chunk), make([]units.Volts, chunk)
	i5, i12 := make([]units.Amps, chunk), make([]units.Amps, chunk)
	var out []float64
	for k := 0; k < 60*rate; k += chunk {
		m.Render(time.Duration(k)*100*time.Microsecond, rate, v5, i5, v12, i12)
		for j := 0; j < chunk; j += 10 {
			var s float64
			for x := j; x < j+10; x++ {
				s += float64(units.Power(v5[x], i5[x]) + units.Power(v12[x], i12[x]))
			}
			out = append(out, s/10)
		}
	}
	return out, nil
}

func main() {
	out := flag.String("out", "docs/img/drivesim-pcmark-minute.png", "PNG to write")
	overwrite := flag.Bool("overwrite", false, "replace -out if it exists")
	flag.Parse()
	if err := draw2(*out, *overwrite); err != nil {
		fmt.Fprintln(os.Stderr, "simchart:", err)
		os.Exit(1)
	}
}

func draw2(out string, overwrite bool) error {
	reqs := script(7)
	names := []string{"jmf667h-128-a19", "jmf667h-256-a19"}
	colors := []color.Color{color.RGBA{R: 200, G: 40, B: 40, A: 255}, color.RGBA{R: 30, G: 90, B: 200, A: 255}}
	policies := []string{drivesim.PolicyMaxPerformance, drivesim.PolicyMedPowerDIPM}
	plots := make([][]*plot.Plot, len(policies))
	for row, pol := range policies {
		pl := plot.New()
		pl.Title.Text = "Simulated PCMark-7-like minute, ALPM " + pol + " (1 ms means of 10 kS/s)"
		pl.X.Label.Text = "time (s)"
		pl.Y.Label.Text = "power (W)"
		pl.Y.Min, pl.Y.Max = 0, 3.2
		pl.Add(plotter.NewGrid())
		for i, name := range names {
			p, err := drivesim.Lookup(name, nil)
			if err != nil {
				return err
			}
			w, err := run(p, pol, reqs)
			if err != nil {
				return err
			}
			xy := make(plotter.XYs, len(w))
			var sum, peak float64
			for k, v := range w {
				xy[k].X, xy[k].Y = float64(k)/1000, v
				sum += v
				peak = max(peak, v)
			}
			line, err := plotter.NewLine(xy)
			if err != nil {
				return err
			}
			line.Color = colors[i]
			line.Width = vg.Points(0.6)
			pl.Add(line)
			label := fmt.Sprintf("%s: average %.3f W, 1 ms peak %.2f W", name, sum/float64(len(w)), peak)
			pl.Legend.Add(label, line)
			fmt.Printf("%-22s %-20s average %.3f W  peak(1 ms) %.2f W\n", pol, name, sum/float64(len(w)), peak)
		}
		pl.Legend.Top = true
		plots[row] = []*plot.Plot{pl}
	}
	const wd, ht = 30 * vg.Centimeter, 22 * vg.Centimeter
	img := vgimg.New(wd, ht)
	dc := draw.New(img)
	t := draw.Tiles{Rows: len(policies), Cols: 1, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadY: vg.Millimeter * 6, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align(plots, t, dc)
	for r := range plots {
		plots[r][0].Draw(canvases[r][0])
	}
	f, err := outfile.Create(out, outfile.Options{Overwrite: overwrite, Flag: "-overwrite"})
	if err != nil {
		return err
	}
	defer f.Abort() // no-op after Commit
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		return err
	}
	return f.Commit()
}
