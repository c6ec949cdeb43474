package rig

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/alpm"
)

// PolicyWindow is when one policy's idle power was measured.
type PolicyWindow struct {
	Policy     string
	Start, End hostclock.Time // after the settle time, to the end of the phase
}

// IdlePolicies sets each policy in turn, lets the drives settle (phase
// "settle:POLICY"), and records measure of idle (phase "idle:POLICY", which
// analysis measures). The previous policies come back when the rig closes.
func (r *Rig) IdlePolicies(ctx context.Context, policies []string, settle, measure time.Duration) ([]PolicyWindow, error) {
	var out []PolicyWindow
	for _, p := range policies {
		if err := r.SetPolicy(ctx, p); err != nil {
			return out, err
		}
		r.Phase("settle:" + p)
		if err := r.wait(ctx, settle); err != nil {
			return out, err
		}
		r.Phase(IdlePhase(p))
		w := PolicyWindow{Policy: p, Start: hostclock.Now()}
		err := r.wait(ctx, measure)
		w.End = hostclock.Now()
		r.Phase("end")
		if err != nil {
			return out, err
		}
		out = append(out, w)
	}
	return out, nil
}

// IdlePhase is the name of the phase in which policy's idle power is
// measured.
func IdlePhase(policy string) string { return "idle:" + policy }

// IdlePower is one drive's idle power under one policy, as analysis found
// it in the policy's phase: the phase's quiet level (report.json
// phases[].quiet: background bursts left out, and reported on their own),
// like active_idle_w but over every link state the policy allows.
type IdlePower struct {
	Port   int     `json:"port"`
	Name   string  `json:"name"`
	Policy string  `json:"policy"`
	MeanW  float64 `json:"mean_w"` // the phase's quiet.w: quiet samples, bursts left out
	// U95W is MeanW's 95 % expanded uncertainty (the phase's quiet.u95_w);
	// null when it cannot be estimated (Note says why).
	U95W *float64 `json:"u95_w"`
	// AllMeanW is the plain mean over the phase, bursts included.
	AllMeanW     float64 `json:"all_mean_w"`
	MinW         float64 `json:"min_w"`
	MaxW         float64 `json:"max_w"`
	Samples      uint64  `json:"samples"`
	Bursts       int     `json:"bursts"`         // background bursts found
	BurstShare   float64 `json:"burst_share"`    // of the quiet time
	BurstEnergyJ float64 `json:"burst_energy_j"` // energy above the quiet level during them
	// SavingW is what the policy saves against the first policy measured.
	SavingW float64 `json:"saving_w"`
	Note    string  `json:"note,omitempty"`
}

// MeasureIdlePower reads each drive's policy phases from the report of the
// capture (analysis computes the numbers; this only picks them). A policy
// whose phase has no samples gets a note.
func MeasureIdlePower(rep *analysis.Report, ws []PolicyWindow) []IdlePower {
	var out []IdlePower
	for _, d := range rep.Drives {
		phases := map[string]analysis.Phase{}
		for _, ph := range d.Phases {
			phases[ph.Name] = ph
		}
		first := math.NaN()
		for j, w := range ws {
			ip := IdlePower{Port: d.Port, Name: d.Name, Policy: w.Policy, MeanW: math.NaN(), AllMeanW: math.NaN(), MinW: math.NaN(), MaxW: math.NaN(), SavingW: math.NaN()}
			ph, ok := phases[IdlePhase(w.Policy)]
			if !ok || ph.Samples == 0 {
				ip.Note = "no samples in the window: lengthen --measure"
				out = append(out, ip)
				continue
			}
			ip.MeanW, ip.U95W, ip.AllMeanW = ph.Quiet.W, ph.Quiet.U95W, ph.AverageW
			ip.MinW, ip.MaxW, ip.Samples = ph.MinW, ph.PeakW, ph.Samples
			ip.Bursts, ip.BurstShare, ip.BurstEnergyJ = ph.Quiet.Bursts.Count, ph.Quiet.Bursts.Share, ph.Quiet.Bursts.ExcessJ
			if ip.U95W == nil {
				ip.Note = "too little quiet time for an uncertainty: lengthen --measure"
			}
			if j == 0 {
				first = ip.MeanW
			}
			ip.SavingW = first - ip.MeanW
			out = append(out, ip)
		}
	}
	return out
}

// MarshalJSON writes values not measured (NaN) as null.
func (ip IdlePower) MarshalJSON() ([]byte, error) {
	type plain IdlePower
	return analysis.MarshalNulls(plain(ip))
}

// UnmarshalJSON reads null as NaN.
func (ip *IdlePower) UnmarshalJSON(b []byte) error {
	type plain IdlePower
	return analysis.UnmarshalNulls(b, (*plain)(ip))
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
