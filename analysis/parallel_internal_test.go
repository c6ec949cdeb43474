package analysis

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// callSink is a SampleSink that hashes the calls it gets, in order: the
// drives' (DriveSamples and DriveState, bit for bit) and the rails' apart,
// as they come from different goroutines.
type callSink struct {
	drives, rails hash.Hash64
	nDrive        int
	begun         bool
}

func newCallSink() *callSink { return &callSink{drives: fnv.New64a(), rails: fnv.New64a()} }

func (s *callSink) Begin(c Clock, t0Host float64) { s.begun = true }

func (s *callSink) DriveSamples(port int, t, dt float64, w []float64) {
	if !s.begun {
		panic("DriveSamples before Begin")
	}
	s.nDrive++
	b := binary.LittleEndian.AppendUint64(nil, uint64(port))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(t))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(dt))
	for _, x := range w {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	s.drives.Write(b)
}

func (s *callSink) DriveState(port int, t float64, st State) {
	s.nDrive++
	fmt.Fprintf(s.drives, "state %d %x %d;", port, math.Float64bits(t), st)
}

func (s *callSink) RailBlock(t, dt float64, b *meter.Block) {
	fmt.Fprintf(s.rails, "rail %d %d %x %x %d;", b.Channel, b.Start, math.Float64bits(t), math.Float64bits(dt), len(b.V))
}

// holeySink drops the first sample of every block it writes, so that the
// Writer closes a chunk at every block: the channels' chunks alternate
// every block (1000 samples), and the drives' runs alternate in the sample
// pass as in a capture recorded live (written every 250 ms), not one
// 65,536-sample chunk per channel at a time.
type holeySink struct{ synthcap.Sink }

func (s holeySink) Samples(b *meter.Block) error {
	if len(b.V) < 2 {
		return s.Sink.Samples(b)
	}
	c := *b
	c.Start, c.V, c.I = c.Start+1, c.V[1:], c.I[1:]
	return s.Sink.Samples(&c)
}

// threeDrives is a capture of three drives, one of them with mains hum,
// with I/O bursts, phases, DEVSLP cycles, gaps and a missing sample every
// block (holeySink).
func threeDrives(t *testing.T) string {
	t.Helper()
	s := synthcap.Review(70*time.Second, 4000, 50)
	s.Drives = append(s.Drives, synthcap.Drive{Port: 3, Name: "third (sim)", IdleW: 0.3, BusyW: 1.5, DevSlpW: 0.005, Split5V: 0.5})
	s.Bursts = append(s.Bursts, synthcap.Bursts{Port: 3, First: 3 * time.Second, Every: 1500 * time.Millisecond, Ops: 10, OpDur: 300 * time.Microsecond, Size: 4096})
	s.Gaps = []synthcap.Gap{{Channel: 3, Start: 50000, Count: 700}, {Channel: -1, Start: 150000, Count: 2000}}
	s.NoiseA, s.CurrentLSB = 2e-4, 50e-6
	path := filepath.Join(t.TempDir(), "three.iwcap")
	w, err := capture.Create(path, s.Header(), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := synthcap.Generate(s, holeySink{humSink{Writer: w, ch: 0, rate: s.RateHz}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// outputs is everything of a report its outputs are made of: report.json,
// states.json, the charts' series and the sink's calls.
type outputs struct {
	js, states    []byte
	charts        string
	drives, rails uint64
	nDrive        int
}

func analyzeFor(t *testing.T, path string, serial, withStates bool) outputs {
	t.Helper()
	opts := DefaultOptions()
	if withStates {
		opts.States = &StateOptions{}
	}
	opts.serial = serial
	sink := newCallSink()
	opts.Samples = sink
	r, err := Analyze(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var o outputs
	if o.js, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	if o.states, err = json.Marshal(r.States); err != nil {
		t.Fatal(err)
	}
	o.charts = bitsOf(reflect.ValueOf([]any{r.Traces(), r.Distributions(), r.DevSlpCharts()}))
	o.drives, o.rails, o.nDrive = sink.drives.Sum64(), sink.rails.Sum64(), sink.nDrive
	return o
}

// bitsOf prints v with every float as its bits, following pointers and
// unexported fields: two values print the same only if they are equal to
// the bit.
func bitsOf(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return fmt.Sprintf("%x", math.Float64bits(v.Float()))
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "nil"
		}
		return "&" + bitsOf(v.Elem())
	case reflect.Slice, reflect.Array:
		s := "["
		for i := range v.Len() {
			s += bitsOf(v.Index(i)) + ","
		}
		return s + "]"
	case reflect.Struct:
		s := "{"
		for i := range v.NumField() {
			s += v.Type().Field(i).Name + ":" + bitsOf(v.Field(i)) + ","
		}
		return s + "}"
	case reflect.Map:
		var keys []string
		byKey := map[string]reflect.Value{}
		for it := v.MapRange(); it.Next(); {
			k := bitsOf(it.Key())
			keys = append(keys, k)
			byKey[k] = it.Value()
		}
		slices.Sort(keys)
		s := "map["
		for _, k := range keys {
			s += k + ":" + bitsOf(byKey[k]) + ","
		}
		return s + "]"
	default:
		return fmt.Sprint(v)
	}
}

// TestSamplePassParallel: the reads of the samples with every drive's
// work on workers (learnRuns, drivePool) give what they give with all of
// it on the reading goroutine — report.json, states.json, the charts'
// series and the sink's calls in the same order, to the bit — whether the
// workers are fewer than the drives (several drives on one) or not, with
// state detection (hum and level learning) and without (hum alone).
func TestSamplePassParallel(t *testing.T) {
	path := threeDrives(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, withStates := range []bool{true, false} {
		ref := analyzeFor(t, path, true, withStates)
		if ref.nDrive == 0 {
			t.Fatal("the sink got no drive calls")
		}
		for _, procs := range []int{1, 2, 3, 4} {
			runtime.GOMAXPROCS(procs)
			got := analyzeFor(t, path, false, withStates)
			what := fmt.Sprintf("states %v, %d procs", withStates, procs)
			if string(got.js) != string(ref.js) {
				t.Errorf("%s: report.json differs:\n%s\n%s", what, got.js, ref.js)
			}
			if string(got.states) != string(ref.states) {
				t.Errorf("%s: states.json differs", what)
			}
			if got.charts != ref.charts {
				t.Errorf("%s: the charts' series differ", what)
			}
			if got.drives != ref.drives || got.nDrive != ref.nDrive {
				t.Errorf("%s: the sink's drive calls differ (%d calls, want %d)", what, got.nDrive, ref.nDrive)
			}
			if got.rails != ref.rails {
				t.Errorf("%s: the sink's rail calls differ", what)
			}
		}
	}
}

// TestLearnRunsParallel: the learning read on workers learns, drive by
// drive, what take run by run on the reading goroutine learns, with and
// without hum to subtract (a second read).
func TestLearnRunsParallel(t *testing.T) {
	path := threeDrives(t)
	open := func() (Source, error) { return capture.Open(path) }
	opts := DefaultOptions()
	opts.States = &StateOptions{}
	p1, err := firstPass(open, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := p1.fitter.Fit(p1.hdr.StartHost)
	learn := func(serial bool) (map[int]*humModel, map[int]LevelLearning) {
		o := opts
		o.serial = serial
		sd := newStateDetector()
		hum, _, err := sd.learnHumLevels(open, p1, &clock, o)
		if err != nil {
			t.Fatal(err)
		}
		return hum, sd.learned
	}
	refHum, refLevels := learn(true)
	if len(refHum) != 1 || len(refLevels) != 3 {
		t.Fatalf("the capture should have hum on one drive and levels on three: %d, %d", len(refHum), len(refLevels))
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		hum, levels := learn(false)
		if bitsOf(reflect.ValueOf(hum)) != bitsOf(reflect.ValueOf(refHum)) {
			t.Errorf("%d procs: hum models differ", procs)
		}
		if bitsOf(reflect.ValueOf(levels)) != bitsOf(reflect.ValueOf(refLevels)) {
			t.Errorf("%d procs: levels differ", procs)
		}
	}
}

// panicky is a classifier that panics at its drive's nth sample.
type panicky struct{ n int }

func (p *panicky) Classify(Sample) State {
	if p.n--; p.n == 0 {
		panic("panicky classifier")
	}
	return StateIdle
}

// TestWorkerPanicRaisedOnCaller: a panic in a drive's work on a worker
// reaches the goroutine that called Analyze (where the command's handler
// of internal errors is), once, and does not leave the pass waiting.
func TestWorkerPanicRaisedOnCaller(t *testing.T) {
	path := threeDrives(t)
	opts := DefaultOptions()
	opts.NewClassifier = func(d capture.DriveInfo, _ units.Hertz) StateClassifier {
		if d.Port == 2 {
			return &panicky{n: 30000}
		}
		return nil
	}
	var caught any
	func() {
		defer func() { caught = recover() }()
		_, err := Analyze(path, opts)
		t.Errorf("Analyze returned (%v) instead of panicking", err)
	}()
	if caught != "panicky classifier" {
		t.Errorf("recovered %v, want the classifier's panic", caught)
	}
}
