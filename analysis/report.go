package analysis

import (
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/analysis/series"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/units"
)

// Schema is the value of Report.Schema.
const Schema = "idlewatt.report/v1"

// Report is everything Analyze found. Its JSON form is report.json; every key
// is documented in docs/report-format.md. Times are seconds from the first
// sample (aligned host time) unless a key says otherwise.
type Report struct {
	Schema    string          `json:"schema"`
	Capture   CaptureInfo     `json:"capture"`
	Alignment AlignmentReport `json:"alignment"`
	Settings  Settings        `json:"settings"`
	Drives    []DriveReport   `json:"drives"`
	Notes     []string        `json:"notes,omitempty"`
	// Interval is set when the report covers only part of the capture
	// (Options.Window, `idlewatt report --from --to`): every figure is of
	// that interval.
	Interval *IntervalReport `json:"interval,omitempty"`
	// Annotations are the capture's notes (capture/notes, beside the
	// capture), in time order, as they were when the report was written:
	// the user's text, not analysis. Set by whoever writes the report.
	Annotations []notes.Note `json:"annotations,omitempty"`
	// States is the interface-state detection (states.json), when
	// Options.States asked for it.
	States []StateReport `json:"-"`

	account      *capture.Account      // the reader's, until finish
	dataNotes    []string              // the notes about the data, for plot
	traces       []series.Trace        // series for charts, not serialised
	dists        []series.Distribution // power distributions for charts, not serialised
	drivesProc   []*driveProc          // accumulators, until finish
	devslpCharts []namedDevSlpChart    // DevSlp cycle charts, not serialised
}

// IntervalReport is the part of the capture a report covers.
type IntervalReport struct {
	FromS units.Seconds `json:"from_s"` // s on the report's timeline (meter sample 0 = 0 s)
	ToS   units.Seconds `json:"to_s"`
}

// CaptureInfo describes the input.
type CaptureInfo struct {
	Path         string        `json:"path,omitempty"`
	Created      string        `json:"created,omitempty"`
	Tool         string        `json:"tool,omitempty"`
	MeterKind    string        `json:"meter_kind"`
	MeterModel   string        `json:"meter_model,omitempty"`
	RateHz       units.Hertz   `json:"rate_hz"`
	Channels     int           `json:"channels"`
	Complete     bool          `json:"complete"`            // the end chunk was read
	EndError     string        `json:"end_error,omitempty"` // why reading stopped early
	EndOffset    int64         `json:"end_offset_bytes"`    // byte offset of the last good chunk
	StartS       units.Seconds `json:"start_s"`             // first sample, s after meter index 0
	DurationS    units.Seconds `json:"duration_s"`          // first to last sample, aligned
	IOEvents     uint64        `json:"io_events"`           // I/O events in the capture
	Unattributed uint64        `json:"io_unattributed"`     // I/O events on port 0 with several drives
	Marks        int           `json:"marks"`               // mark echoes
	StateEvents  int           `json:"state_events"`        // host state events
	MeterEvents  int           `json:"meter_events"`        // meter events
	CRCErrors    uint64        `json:"crc_errors"`          // link-wide, from the last stats record
	Resyncs      uint64        `json:"resyncs"`             // link-wide
	// Recovered and Refused are the link's retransmission counters (hub
	// protocol v2): samples re-sent on request that filled a hole, frames
	// with a good CRC the driver could not use. nil (null) when the
	// capture does not record them: older than them, or a link without
	// retransmission.
	Recovered   *uint64           `json:"samples_recovered"`
	Refused     *uint64           `json:"frames_refused"`
	Overruns    uint64            `json:"overrun_samples"`                 // samples the meter reported lost to overruns
	Disconnects int               `json:"disconnects"`                     // link losses the meter driver reported
	GapReasons  map[string]uint64 `json:"gap_samples_by_reason,omitempty"` // missing samples per gap reason, summed over channels
	Integrity   Integrity         `json:"integrity"`                       // damage, rejected indices, invalid values, trailing bytes

	invalid uint64 // rail samples with invalid values, until finish
}

// Integrity is what reading the capture found wrong with its bytes and
// sample indices (capture.Account), and the samples analysis left out for
// invalid values. All zero for a clean capture.
type Integrity struct {
	DamagedRegions int    `json:"damaged_regions"` // stretches of the file skipped to resynchronise
	DamagedBytes   int64  `json:"damaged_bytes"`
	ChunksLost     uint64 `json:"chunks_lost"`
	// SamplesLost is rail samples lost to damage: exact when SamplesLostExact
	// (the end chunk's count), else as far as later sample indices tell.
	SamplesLost      uint64 `json:"samples_lost"`
	SamplesLostExact bool   `json:"samples_lost_exact"`
	CorrectedBits    int    `json:"corrected_bits"` // single flipped bits mended from a chunk's CRC
	InvalidChunks    int    `json:"invalid_chunks"` // intact chunks with impossible content, skipped
	// RejectedSamples counts rail samples not placed on the timeline, by
	// reason ("overlap", "backward", "restart").
	RejectedSamples map[string]uint64 `json:"rejected_samples,omitempty"`
	InvalidSamples  uint64            `json:"invalid_samples"` // rail samples with NaN, ±Inf or |V·I| > 1 MW, treated as missing
	TrailingBytes   int64             `json:"trailing_bytes"`  // bytes after the end chunk, not read
	TrailingCapture bool              `json:"trailing_capture"`
	// KeptFraction is the rail samples delivered ÷ the rail samples the
	// capture held (written per the end chunk, else read plus lost).
	KeptFraction float64 `json:"kept_fraction"`
}

// AlignmentReport says how meter time was put on the host clock.
type AlignmentReport struct {
	Method        string             `json:"method"` // "marks" or "header" (no usable marks)
	Marks         int                `json:"marks"`
	MarksUsed     int                `json:"marks_used"`
	Synthetic     bool               `json:"synthetic_marks"`
	DriftPPM      float64            `json:"drift_ppm"`
	ResidualRMSMS units.Milliseconds `json:"residual_rms_ms"`
	ResidualMaxMS units.Milliseconds `json:"residual_max_ms"`
	MinRTTMS      units.Milliseconds `json:"min_rtt_ms"`
	MedianRTTMS   units.Milliseconds `json:"median_rtt_ms"`
	// ClockU95MS is how well a host time maps onto the meter's (95 %):
	// half the median round trip plus the largest residual beyond its own
	// half round trip (Clock.U95MS). DevSlp exit latencies carry it.
	ClockU95MS units.Milliseconds `json:"clock_u95_ms"`
	// Outliers: selected marks rejected for lying further from the robust
	// fit than their round trip allows; NegativeRTT: echoes "received"
	// before they were sent, ignored.
	Outliers    int `json:"marks_rejected"`
	NegativeRTT int `json:"marks_negative_rtt"`
	// DriftRefusedPPM is the drift the marks implied when it was beyond
	// MaxDriftPPM (then drift_ppm is 0: the nominal rate was used).
	DriftRefusedPPM float64 `json:"drift_refused_ppm"`
	MaxDriftPPM     float64 `json:"max_drift_ppm"`
}

// Settings are the options the report was computed with.
type Settings struct {
	SettleMS        units.Milliseconds `json:"settle_ms"`
	MergeGapMS      units.Milliseconds `json:"merge_gap_ms"`
	IdleFloor       string             `json:"idle_floor"` // how active idle is found (activeIdleMethod)
	Classifier      bool               `json:"state_classifier"`
	HistogramRelErr float64            `json:"percentile_rel_error"`
}

// DriveReport holds one drive's metrics. The first keys are the stable
// contract from DESIGN.md. A power, energy or quantile with nothing behind it
// (no samples, no quiet time) is NaN here and null in JSON (nullable.go).
type DriveReport struct {
	Name        string        `json:"name"`
	Port        int           `json:"port"`
	ActiveIdleW units.Watts   `json:"active_idle_w"`
	AverageW    units.Watts   `json:"average_w"`
	PeakW       units.Watts   `json:"peak_w"`
	EnergyJ     units.Joules  `json:"energy_j"`
	DurationS   units.Seconds `json:"duration_s"`
	Residency   Residency     `json:"residency"`
	DevSlp      DevSlp        `json:"devslp"`
	Samples     SampleInfo    `json:"samples"`

	// 95 % expanded uncertainties of the headline figures (see
	// Uncertainty for the method); nil (null) when they cannot be estimated.
	ActiveIdleU95W *units.Watts  `json:"active_idle_u95_w"`
	AverageU95W    *units.Watts  `json:"average_u95_w"`
	EnergyU95J     *units.Joules `json:"energy_u95_j"`
	// PeakCI95W is the 95 % interval [lo, hi] of the true power at the
	// peak sample (analysis/estimate.go peakCI95: asymmetric, the peak is
	// the highest of many noisy readings); null without a noise estimate.
	PeakCI95W   *[2]units.Watts `json:"peak_ci95_w"`
	Uncertainty Uncertainty     `json:"uncertainty"`
	Bursts      Bursts          `json:"bursts"`
	Quiet       QuietPower      `json:"quiet"`

	Profile string `json:"profile,omitempty"`
	// Hum is the mains hum found in the drive's readings and removed from
	// its power before any figure (docs/analysis.md, "Mains hum"); nil
	// (absent) when there is none.
	Hum         *HumFit     `json:"hum,omitempty"`
	Interface   string      `json:"interface,omitempty"` // "nvme", or "" for SATA (capture.DriveInfo.Interface)
	Rails       []string    `json:"rails"`
	EnergyWh    float64     `json:"energy_wh"`
	MinW        units.Watts `json:"min_w"`
	P50W        units.Watts `json:"p50_w"`
	P95W        units.Watts `json:"p95_w"`
	P99W        units.Watts `json:"p99_w"`
	PeakWindows PeakWindows `json:"peak_windows"`
	Idle        IdleInfo    `json:"idle"`
	Segments    Segments    `json:"segments"`
	StatePowerW StatePower  `json:"state_power_w"`
	// ResidencyU95 and StatePowerU95W are the 95 % half-widths of residency
	// and state_power_w by state, with state detection (docs/analysis.md,
	// "States"); a state missing from StatePowerU95W had fewer than two
	// intervals.
	ResidencyU95   map[string]float64     `json:"residency_u95,omitempty"`
	StatePowerU95W map[string]units.Watts `json:"state_power_u95_w,omitempty"`
	IO             IOTotals               `json:"io"`
	Phases         []Phase                `json:"phases,omitempty"`
	// Declared are the figures the user declared for the drive
	// (drives[].expect, recorded in the capture), each beside the measured
	// one; none is read by an estimator.
	Declared []DeclaredFigure `json:"declared,omitempty"`
}

// Uncertainty says how the *_u95_* figures were found.
type Uncertainty struct {
	Method string  `json:"method"`
	Level  float64 `json:"level"` // coverage probability, 0.95
	// NoiseBlocks independent means of NoiseBlockMS of quiet samples each
	// (batch means) give the noise; null σ when there were too few.
	NoiseBlocks  int                `json:"noise_blocks"`
	NoiseBlockMS units.Milliseconds `json:"noise_block_ms"`
	// NoiseSigmaW is one sample's noise σ (its standard deviation, robust
	// to level steps: what a single reading scatters by), W.
	NoiseSigmaW *units.Watts `json:"noise_sigma_w"`
	// NoisePeakSigmaW is the noise of the one reading that made the peak
	// (peak_ci95_w): the larger of noise_sigma_w and the largest noise of
	// one reading over the lags measured (mains hum and 1/f included,
	// which noise_sigma_w, the semivariance's first plateau, leaves out), W.
	NoisePeakSigmaW *units.Watts `json:"noise_peak_sigma_w"`
	// NoiseLongRunSigmaW is one sample's noise as it averages out (the
	// variance of a mean of N samples is its square over N: larger than
	// noise_sigma_w when neighbouring samples are correlated), and
	// NoiseCorrMS the time over which they are.
	NoiseLongRunSigmaW *units.Watts        `json:"noise_long_run_sigma_w"`
	NoiseCorrMS        *units.Milliseconds `json:"noise_corr_ms"`
	// ResolutionUW is the standard uncertainty of one reading from the
	// channels' LSBs; null when the capture header states none.
	ResolutionUW *units.Watts `json:"resolution_u_w"`
	// CalibrationUW is the standard uncertainty of the active-idle level
	// from the channels' stated calibration limits (gain, offset), which
	// no averaging removes; null when the header states none.
	CalibrationUW *units.Watts `json:"calibration_u_w"`
	// SensorTimeConstantMS is the meter's first-order response learned
	// from the drive's own steps (SensorSteps of them), with its 95 %
	// half-width; peak_w is read through its inverse. Null when no
	// response is resolved from zero (or too few clean steps).
	SensorTimeConstantMS    *units.Milliseconds `json:"sensor_time_constant_ms,omitempty"`
	SensorTimeConstantU95MS *units.Milliseconds `json:"sensor_time_constant_u95_ms,omitempty"`
	SensorSteps             int                 `json:"sensor_steps,omitempty"`
	Note                    string              `json:"note,omitempty"`
}

// QuietPower is the level over quiet time in every link state (no I/O
// outstanding, past the settle tail, DEVSLP not asserted), found as
// active_idle_w is: what the drive rests at under the ALPM policy in force,
// Slumber and the HBA's own DevSlp included. It is idle power per policy
// (idlewatt idle). Without a state classifier it is active_idle_w.
type QuietPower struct {
	W      units.Watts  `json:"w"` // NaN (null) without quiet time
	U95W   *units.Watts `json:"u95_w"`
	Bursts Bursts       `json:"bursts"`
}

func (q QuietPower) MarshalJSON() ([]byte, error) {
	type plain QuietPower
	return marshalNulls(plain(q))
}

func (q *QuietPower) UnmarshalJSON(b []byte) error {
	type plain QuietPower
	return unmarshalNulls(b, (*plain)(q))
}

// Bursts is background activity found in quiet time (no I/O outstanding,
// past the settle tail): blocks well above the active-idle level. They are
// left out of active_idle_w and reported here.
type Bursts struct {
	QuietS   units.Seconds `json:"quiet_s"` // quiet time searched
	Count    int           `json:"count"`   // separate bursts
	S        units.Seconds `json:"s"`
	Share    float64       `json:"share"`           // of quiet time
	MeanW    units.Watts   `json:"mean_w"`          // NaN/null without bursts
	EnergyJ  units.Joules  `json:"energy_j"`        // energy drawn during the bursts
	ExcessJ  units.Joules  `json:"excess_energy_j"` // of it, above the active-idle level
	DipShare float64       `json:"dip_share"`       // quiet time well below the level, also left out
}

func (b Bursts) MarshalJSON() ([]byte, error) {
	type plain Bursts
	return marshalNulls(plain(b))
}

func (b *Bursts) UnmarshalJSON(j []byte) error {
	type plain Bursts
	return unmarshalNulls(j, (*plain)(b))
}

// Residency is the fraction of measured time in each state; the values sum
// to 1 (when the drive has samples).
type Residency struct {
	Active     float64 `json:"active"`     // I/O outstanding
	Background float64 `json:"background"` // above idle with no I/O outstanding (GC, wake spikes)
	Idle       float64 `json:"idle"`
	Partial    float64 `json:"partial"`
	Slumber    float64 `json:"slumber"`
	DevSlp     float64 `json:"devslp"`
	Off        float64 `json:"off"` // below the off level (only when the levels define one, e.g. an HDD's standby)
}

// StatePower is the mean power in each state, W (0 when never in it).
type StatePower struct {
	Active     units.Watts `json:"active"`
	Background units.Watts `json:"background"`
	Idle       units.Watts `json:"idle"`
	Partial    units.Watts `json:"partial"`
	Slumber    units.Watts `json:"slumber"`
	DevSlp     units.Watts `json:"devslp"`
}

// DevSlp is the drive's DevSlp verification: the pooled quantities of its
// DEVSLP pin cycles with 95 % half-widths (analysis/judge; definitions in
// docs/analysis.md, "DevSlp quantities"), the outcome, and each cycle.
// Absent values are null.
type DevSlp struct {
	Entered       bool            `json:"entered"`           // some cycle's power fell to a floor (or samples were classified DevSlp)
	PowerW        judge.NumW      `json:"power_w"`           // = floor_w (null without judged pin cycles: the DevSlp intervals' mean is state_power_w.devslp)
	Outcome       judge.Outcome   `json:"outcome,omitempty"` // pass | fail | inconclusive | not_supported; empty without cycles
	Reason        string          `json:"reason,omitempty"`
	Support       string          `json:"support,omitempty"`    // yes | no … | unknown
	HostCause     string          `json:"host_cause,omitempty"` // host-side problem that makes a non-pass inconclusive
	PreCycleW     judge.NumW      `json:"pre_cycle_w"`          // resting power before assertion (Slumber under a DIPM policy)
	PreCycleU95W  judge.NumW      `json:"pre_cycle_u95_w"`      // its 95 % half-width
	FloorW        judge.NumW      `json:"floor_w"`
	FloorU95W     judge.NumW      `json:"floor_u95_w"`
	EntryMs       judge.NumMs     `json:"entry_ms"` // pin assertion → power at the floor (change point)
	EntryU95Ms    judge.NumMs     `json:"entry_u95_ms"`
	RiseMs        judge.NumMs     `json:"rise_ms"` // pin release → power leaves the floor (change point)
	RiseU95Ms     judge.NumMs     `json:"rise_u95_ms"`
	ExitMs        judge.NumMs     `json:"exit_ms"` // pin release → first read completed
	ExitU95Ms     judge.NumMs     `json:"exit_u95_ms"`
	Cycles        int             `json:"cycles"`               // pin assertions seen
	CyclesEntered int             `json:"cycles_entered"`       // judged cycles with a fitted entry
	PinAssertedS  units.Seconds   `json:"pin_asserted_s"`       // time with the pin asserted
	PinSource     string          `json:"pin_source,omitempty"` // "meter" (events) or "host" (requests)
	Criteria      *judge.Criteria `json:"criteria,omitempty"`
	CycleResults  []judge.Cycle   `json:"cycle_results,omitempty"`
	// Verdict is the same result as measure.json's devslp entry.
	Verdict judge.Verdict `json:"-"`
}

// SampleInfo is data quality for the drive's samples.
type SampleInfo struct {
	Count     uint64        `json:"count"`      // drive samples with every rail present
	Dropped   uint64        `json:"dropped"`    // sample indices with a rail missing (gaps, link loss)
	CRCErrors uint64        `json:"crc_errors"` // link-wide frames dropped for a bad CRC
	Gaps      int           `json:"gaps"`       // runs of missing samples
	MissingS  units.Seconds `json:"missing_s"`  // time of the missing samples
	Late      uint64        `json:"late"`       // rail samples arriving after their index was given up; ignored
	// Rejected is rail samples the capture holds for indices already covered
	// (overlapping, backward or restarted chunks): not placed, not in any
	// figure; RejectedJ is their energy at the fitted period.
	Rejected  uint64       `json:"rejected"`
	RejectedJ units.Joules `json:"rejected_energy_j"`
	Invalid   uint64       `json:"invalid"` // rail samples with invalid values (NaN, ±Inf, > 1 MW), treated as missing
}

// PeakWindows is the highest mean power over any window of each length.
type PeakWindows struct {
	W1ms   units.Watts `json:"1ms_w"`
	W10ms  units.Watts `json:"10ms_w"`
	W100ms units.Watts `json:"100ms_w"`
	W1s    units.Watts `json:"1s_w"`
}

// IdleInfo describes the idle floor.
type IdleInfo struct {
	Samples uint64        `json:"samples"`
	S       units.Seconds `json:"s"`
	MeanW   units.Watts   `json:"mean_w"`
	P5W     units.Watts   `json:"p5_w"`
	P95W    units.Watts   `json:"p95_w"`
}

// Segments is time by I/O activity.
type Segments struct {
	BusyS     units.Seconds `json:"busy_s"`
	SettleS   units.Seconds `json:"settle_s"`
	IdleS     units.Seconds `json:"idle_s"`
	BusyW     units.Watts   `json:"busy_w"`   // mean power while busy; NaN (null) without busy time
	SettleW   units.Watts   `json:"settle_w"` // mean power in settle tails
	IdleW     units.Watts   `json:"idle_w"`   // mean power while idle
	BusyCount int           `json:"busy_intervals"`
}

// IOTotals counts I/O by type and relates it to power.
type IOTotals struct {
	Ops            uint64             `json:"ops"`
	Bytes          uint64             `json:"bytes"`
	Errors         uint64             `json:"errors"`
	ByOp           map[string]OpTotal `json:"by_op,omitempty"`
	BusyS          units.Seconds      `json:"busy_s"`
	MBPerSPerWBusy float64            `json:"mb_per_s_per_w_busy"` // (MB/s over busy time) ÷ mean busy power
	IOPSPerWBusy   float64            `json:"iops_per_w_busy"`
	MBPerSPerW     float64            `json:"mb_per_s_per_w"` // (MB/s over measured time) ÷ average power
	IOPSPerW       float64            `json:"iops_per_w"`
}

// OpTotal counts one I/O type.
type OpTotal struct {
	Ops   uint64 `json:"ops"`
	Bytes uint64 `json:"bytes"`
}

// Phase is the metrics of one named phase (StatePhase events), aggregated
// over every span the phase name covers.
type Phase struct {
	Name        string        `json:"name"`
	StartS      units.Seconds `json:"start_s"` // first start
	DurationS   units.Seconds `json:"duration_s"`
	ActiveIdleW units.Watts   `json:"active_idle_w"`
	AverageW    units.Watts   `json:"average_w"`
	PeakW       units.Watts   `json:"peak_w"`
	EnergyJ     units.Joules  `json:"energy_j"`
	MinW        units.Watts   `json:"min_w"`
	P50W        units.Watts   `json:"p50_w"`
	P95W        units.Watts   `json:"p95_w"`
	P99W        units.Watts   `json:"p99_w"`
	PeakWindows PeakWindows   `json:"peak_windows"`
	Segments    Segments      `json:"segments"`
	IO          IOTotals      `json:"io"`
	Samples     uint64        `json:"samples"`

	ActiveIdleU95W *units.Watts  `json:"active_idle_u95_w"`
	AverageU95W    *units.Watts  `json:"average_u95_w"`
	EnergyU95J     *units.Joules `json:"energy_u95_j"`
	Bursts         Bursts        `json:"bursts"`
	Quiet          QuietPower    `json:"quiet"`
}
