package rig

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/idlewatt/idlewatt/internal/hostclock"
	"github.com/idlewatt/idlewatt/states/alpm"
)

// PolicyWindow is when one policy's idle power was measured.
type PolicyWindow struct {
	Policy     string
	Start, End int64 // host ns: after the settle time, to the end of the phase
}

// IdlePolicies sets each policy in turn, lets the drives settle, and records
// measure of idle. The previous policies come back when the rig closes.
func (r *Rig) IdlePolicies(ctx context.Context, policies []string, settle, measure time.Duration) ([]PolicyWindow, error) {
	var out []PolicyWindow
	for _, p := range policies {
		if err := r.SetPolicy(ctx, p); err != nil {
			return out, err
		}
		r.Phase("idle:" + p)
		if err := r.wait(ctx, settle); err != nil {
			return out, err
		}
		w := PolicyWindow{Policy: p, Start: hostclock.Now()}
		if err := r.wait(ctx, measure); err != nil {
			return out, err
		}
		w.End = hostclock.Now()
		out = append(out, w)
	}
	return out, nil
}

// IdlePower is one drive's idle power under one policy.
type IdlePower struct {
	Port   int     `json:"port"`
	Name   string  `json:"name"`
	Policy string  `json:"policy"`
	MeanW  float64 `json:"mean_w"`
	// StdErrW is the standard error of the mean from batch means (batches
	// of 100 ms, or 10 samples of a slower meter); null with fewer than
	// two batches, where no honest spread can be given.
	StdErrW *float64 `json:"stderr_w"`
	MinW    float64  `json:"min_w"`
	MaxW    float64  `json:"max_w"`
	Samples int      `json:"samples"`
	// SavingW is what the policy saves against the first policy measured.
	SavingW float64 `json:"saving_w"`
	Note    string  `json:"note,omitempty"`
}

// minBatch is the shortest batch-means window for the standard error:
// long against the sensor noise's correlation, short against the
// measurement. A slow meter's batches hold at least 10 of its samples.
const minBatch = 100 * time.Millisecond

// MeasureIdlePower reads the policy windows back from the capture.
func MeasureIdlePower(path string, drives []*Drive, ws []PolicyWindow) ([]IdlePower, error) {
	var wins []Window
	for _, d := range drives {
		for _, w := range ws {
			wins = append(wins, Window{Port: d.Config.Port, Start: w.Start, End: w.End})
		}
	}
	samples, _, err := ReadWindows(path, wins)
	if err != nil {
		return nil, err
	}
	var out []IdlePower
	i := 0
	for _, d := range drives {
		var first float64
		for j, w := range ws {
			s := samples[i]
			i++
			ip := IdlePower{Port: d.Config.Port, Name: d.Config.Name, Policy: w.Policy, Samples: len(s),
				MinW: math.Inf(1), MaxW: math.Inf(-1)}
			if len(s) == 0 {
				ip.MinW, ip.MaxW = 0, 0
				ip.Note = "no samples in the window: lengthen --measure"
				out = append(out, ip)
				continue
			}
			batch := minBatch
			if len(s) > 1 {
				if p := time.Duration(s[len(s)-1].T-s[0].T) / time.Duration(len(s)-1); 10*p > batch {
					batch = 10 * p
				}
			}
			var sum, bsum float64
			var bn int
			var means []float64
			bEnd := s[0].T + int64(batch)
			for _, x := range s {
				if x.T >= bEnd {
					if bn > 0 {
						means = append(means, bsum/float64(bn))
					}
					bsum, bn = 0, 0
					for x.T >= bEnd {
						bEnd += int64(batch)
					}
				}
				sum += x.W
				bsum += x.W
				bn++
				ip.MinW, ip.MaxW = math.Min(ip.MinW, x.W), math.Max(ip.MaxW, x.W)
			}
			if bn > 0 {
				means = append(means, bsum/float64(bn))
			}
			ip.MeanW = sum / float64(len(s))
			if n := len(means); n > 1 {
				var v float64
				for _, m := range means {
					v += (m - ip.MeanW) * (m - ip.MeanW)
				}
				se := math.Sqrt(v/float64(n-1)) / math.Sqrt(float64(n))
				ip.StdErrW = &se
			} else {
				ip.Note = "too few samples for an uncertainty: lengthen --measure"
			}
			if j == 0 {
				first = ip.MeanW
			}
			ip.SavingW = first - ip.MeanW
			out = append(out, ip)
		}
	}
	return out, nil
}

// ParsePolicies checks a list of policy names.
func ParsePolicies(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		p, err := alpm.ParseWritablePolicy(n)
		if err != nil {
			return nil, err
		}
		out = append(out, string(p))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policies given")
	}
	return out, nil
}
