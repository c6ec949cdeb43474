package html

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"text/template"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
)

// FileName is the viewer's name in a report directory.
const FileName = "report.html"

// UplotVersion is the vendored uPlot's version (assets/VERSIONS).
const UplotVersion = "1.6.32"

// Options control Write.
type Options struct {
	// Capture is the capture the report was computed from; its events
	// (I/O, DEVSLP pin, phases, notes) are on the page: from the records
	// the analysis' first pass handed the pyramid, else read again from
	// Capture (a regular file only).
	Capture string
	// Title heads the page (default: the capture's drives).
	Title string
	// Out says what the output may replace.
	Out outfile.Options
	// Stop, if set, is asked before the events are put on the page and,
	// when they are read again, at every record; its error (a signal)
	// ends it and is returned.
	Stop func() error
}

var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/core.js
	coreJS string
	//go:embed assets/app.js
	appJS string
	//go:embed assets/app.css
	appCSS string
	//go:embed assets/page.html.tmpl
	pageTmpl string
)

// The page's template in two, before and after its data: the data
// (megabytes of base64 in JSON) goes between them straight from
// json.Marshal's buffer, where text/template's {{.Data}} printed it with
// fmt.Fprint, copying it once more into a buffer grown by doubling. The
// halves hold no action across the cut, so the page is the same bytes.
var pageHead, pageTail = splitPage(pageTmpl)

// pageDataAction is where the data goes in page.html.tmpl.
const pageDataAction = "{{.Data}}"

// splitPage parses the halves of page around its one pageDataAction.
func splitPage(page string) (head, tail *template.Template) {
	h, t, ok := strings.Cut(page, pageDataAction)
	if !ok || strings.Contains(t, pageDataAction) {
		panic("html: page.html.tmpl must hold " + pageDataAction + " once")
	}
	return template.Must(template.New("page").Parse(h)), template.Must(template.New("page-tail").Parse(t))
}

// pageData is the JSON the page's script reads. Arrays of numbers are
// little-endian binary, base64: float32 for power (W), energy (J) and
// charge (C) per bucket, uint32 for sample counts.
type pageData struct {
	Schema string           `json:"schema"`
	Uplot  string           `json:"uplot_version"`
	Report *analysis.Report `json:"report"`
	DtS    float64          `json:"dt_s"`       // fitted sample period
	WidthS float64          `json:"width_s"`    // base bucket width of drive power
	PerBkt uint64           `json:"per_bucket"` // samples per base bucket
	RailW  float64          `json:"rail_width_s"`
	Drives []driveData      `json:"drives"` // never null
	Phases []phaseJSON      `json:"phases"`
	Marks  []mark           `json:"marks"`
	Notes  []string         `json:"page_notes,omitempty"`
}

type seriesData struct {
	K0   int64  `json:"k0"` // index of the first bucket: it starts at k0·width
	N    int    `json:"n"`
	Min  string `json:"min"`
	Max  string `json:"max"`
	E    string `json:"e"`           // energy per bucket, J (Σ power · dt)
	Q    string `json:"q,omitempty"` // charge per bucket, C (Σ current · dt), rails only
	Cnt  string `json:"cnt"`
	Rail string `json:"rail,omitempty"`
}

type driveData struct {
	Port      int          `json:"port"`
	Name      string       `json:"name"`
	Total     seriesData   `json:"total"`
	Rails     []seriesData `json:"rails"`
	StateT    []float64    `json:"state_t"`
	StateS    []string     `json:"state_s"`
	StatesCut bool         `json:"states_cut,omitempty"`
	IOK       []int64      `json:"io_k"`
	IOOps     []uint64     `json:"io_ops"`
	IOBytes   []uint64     `json:"io_bytes"`
	Busy      []float64    `json:"busy"` // start, end, start, end, …
	BusyCut   bool         `json:"busy_cut,omitempty"`
	Pins      [][2]float64 `json:"pins"`
	// Raw are full-resolution segments (every sample, W) around DEVSLP
	// pin edges: the first sample at t_s, then every dt_s.
	Raw []rawJSON `json:"raw"`
	// PeakT is the time of the drive's highest sample (s; 0 = none); its
	// full-resolution window is one of Raw.
	PeakT float64 `json:"peak_t_s,omitempty"`
}

type rawJSON struct {
	T float64 `json:"t_s"`
	W string  `json:"w"`
}

type phaseJSON struct {
	Port  int     `json:"port"`
	Name  string  `json:"name"`
	Start float64 `json:"start_s"`
	End   float64 `json:"end_s"`
}

// Write writes the viewer for rep to path. p must have been
// analysis.Options.Samples of the Analyze call that produced rep.
func Write(path string, rep *analysis.Report, p *Pyramid, o Options) error {
	b, err := Render(rep, p, o)
	if err != nil {
		return err
	}
	return outfile.WriteFile(path, b, o.Out)
}

// Render builds the viewer for rep in memory (Write writes it), with the
// capture's events when o.Capture is set (Options.Capture).
func Render(rep *analysis.Report, p *Pyramid, o Options) ([]byte, error) {
	if rep == nil || p == nil {
		return nil, errors.New("html: no report or no pyramid")
	}
	if !p.seen && p.dt == 0 {
		return nil, errors.New("html: the pyramid was not analysis.Options.Samples of the analysis (no Begin)")
	}
	p.finish()
	var ports []int
	for _, d := range rep.Drives {
		ports = append(ports, d.Port)
	}
	var tl *timeline
	if o.Capture != "" {
		var err error
		if tl, err = p.timeline(o.Capture, ports, o.Stop); err != nil {
			return nil, fmt.Errorf("html: reading events: %w", err)
		}
	} else {
		tl = emptyTimeline()
	}
	return build(rep, p, tl, o)
}

// build renders the page.
func build(rep *analysis.Report, p *Pyramid, tl *timeline, o Options) ([]byte, error) {
	d := pageData{Schema: "idlewatt.html/v1", Uplot: UplotVersion, Report: rep, Drives: []driveData{}, DtS: p.dt, WidthS: p.width(),
		PerBkt: uint64(1) << p.shift, RailW: p.width() * railFactor, Marks: tl.marks}
	if d.Marks == nil {
		d.Marks = []mark{}
	}
	d.Notes = pageNotes(p, tl)
	d.Drives = driveDatas(rep, p, tl)
	d.Phases = phaseDatas(tl)
	js, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("html: encoding the page data: %w", err)
	}
	title := o.Title
	if title == "" {
		var names []string
		for _, dr := range rep.Drives {
			names = append(names, dr.Name)
		}
		title = "idlewatt report: " + strings.Join(names, ", ")
	}
	for name, s := range map[string]string{"uPlot.iife.min.js": uplotJS, "core.js": coreJS, "app.js": appJS} {
		if strings.Contains(strings.ToLower(s), "</script") {
			return nil, fmt.Errorf("html: %s contains </script and cannot be inlined", name)
		}
	}
	var out bytes.Buffer
	// The page is its data and its assets, inlined: room for them at once,
	// not grown by doubling through megabytes.
	out.Grow(len(pageTmpl) + len(title) + len(uplotCSS) + len(appCSS) + len(uplotJS) + len(coreJS) + len(appJS) + len(js))
	vars := map[string]any{
		"Title": template.HTMLEscapeString(title), "UplotCSS": uplotCSS, "AppCSS": appCSS,
		"UplotJS": uplotJS, "CoreJS": coreJS, "AppJS": appJS,
	}
	if err := pageHead.Execute(&out, vars); err != nil {
		return nil, fmt.Errorf("html: rendering: %w", err)
	}
	out.Write(js)
	if err := pageTail.Execute(&out, vars); err != nil {
		return nil, fmt.Errorf("html: rendering: %w", err)
	}
	return out.Bytes(), nil
}

type railChan struct {
	ch   int
	rail string
}

// railChannels lists each drive's rail channels that the pyramid holds.
func railChannels(chans []meter.Channel, p *Pyramid) map[int][]railChan {
	out := map[int][]railChan{}
	for ch, c := range chans {
		if _, ok := p.rails[ch]; ok {
			out[c.Port] = append(out[c.Port], railChan{ch, c.Rail.String()})
		}
	}
	return out
}

// encode packs a level for the page.
func encode(l *level, dt float64, rail bool) seriesData {
	n := len(l.n)
	mn, mx, e := make([]float32, n), make([]float32, n), make([]float32, n)
	for j := range n {
		if l.n[j] == 0 {
			mn[j], mx[j] = float32(math.NaN()), float32(math.NaN())
		} else {
			mn[j], mx[j] = l.min[j], l.max[j]
		}
		e[j] = float32(l.sumW[j] * dt)
	}
	s := seriesData{K0: l.k0, N: n, Min: b64(mn), Max: b64(mx), E: b64(e), Cnt: b64(l.n)}
	if rail {
		q := make([]float32, n)
		for j := range n {
			q[j] = float32(l.sumI[j] * dt)
		}
		s.Q = b64(q)
	}
	return s
}

func b64[T float32 | uint32](xs []T) string {
	buf := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		switch v := any(x).(type) {
		case float32:
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		case uint32:
			buf = binary.LittleEndian.AppendUint32(buf, v)
		}
	}
	return base64.StdEncoding.EncodeToString(buf)
}

// pageNotes says what the page leaves out of p and tl.
func pageNotes(p *Pyramid, tl *timeline) []string {
	var notes []string
	if p.rawDropped > 0 {
		notes = append(notes, fmt.Sprintf("%d DEVSLP pin edges have no full-resolution window: the size budget allows %d samples", p.rawDropped, p.rawN))
	}
	if tl.unattributed > 0 {
		notes = append(notes, fmt.Sprintf("%d I/O events name no port: not shown", tl.unattributed))
	}
	return notes
}

// phaseDatas lists tl's phase bands for the page (never null).
func phaseDatas(tl *timeline) []phaseJSON {
	out := []phaseJSON{}
	for _, ph := range tl.phases {
		out = append(out, phaseJSON{ph.Port, ph.Name, ph.Start, ph.End})
	}
	return out
}

// driveDatas packs every drive of rep: its buckets from p, its states,
// and its I/O and pins from tl.
func driveDatas(rep *analysis.Report, p *Pyramid, tl *timeline) []driveData {
	out := []driveData{}
	chans := railChannels(tl.channels, p)
	for _, dr := range rep.Drives {
		dd := driveData{Port: dr.Port, Name: dr.Name, StatesCut: p.cut[dr.Port], Pins: tl.pins[dr.Port],
			Rails: []seriesData{}, StateT: []float64{}, StateS: []string{}, IOK: []int64{}, IOOps: []uint64{}, IOBytes: []uint64{}, Busy: []float64{}}
		if dd.Pins == nil {
			dd.Pins = [][2]float64{}
		}
		dd.Raw = []rawJSON{}
		for _, w := range p.raw[dr.Port] {
			for _, sg := range w.segs {
				dd.Raw = append(dd.Raw, rawJSON{sg.T, b64(sg.W)})
			}
		}
		if pk := p.peaks[dr.Port]; pk != nil && len(pk.seg.W) > 0 {
			dd.Raw = append(dd.Raw, rawJSON{pk.seg.T, b64(pk.seg.W)})
			dd.PeakT = pk.seg.T // replaced below by the peak sample's time
			for i, x := range pk.seg.W {
				if float64(x) == float64(float32(pk.max)) {
					dd.PeakT = pk.seg.T + p.dt*float64(i)
					break
				}
			}
		}
		if l := p.drives[dr.Port]; l != nil {
			dd.Total = encode(l, p.dt, false)
		}
		for _, rc := range chans[dr.Port] {
			s := encode(p.rails[rc.ch], p.dt, true)
			s.Rail = rc.rail
			dd.Rails = append(dd.Rails, s)
		}
		for _, s := range p.states[dr.Port] {
			dd.StateT = append(dd.StateT, s.T)
			if s.Gap {
				dd.StateS = append(dd.StateS, "gap")
			} else {
				dd.StateS = append(dd.StateS, s.S.String())
			}
		}
		if b := tl.io[dr.Port]; b != nil && len(b.k) > 0 {
			dd.IOK, dd.IOOps, dd.IOBytes, dd.BusyCut = b.k, b.ops, b.bytes, b.maxBusyCut
			for _, s := range b.busy {
				dd.Busy = append(dd.Busy, s[0], s[1])
			}
		}
		out = append(out, dd)
	}
	return out
}

// emptyTimeline is the timeline of a run whose capture is not read again.
func emptyTimeline() *timeline {
	return &timeline{io: map[int]*ioBuckets{}, pins: map[int][][2]float64{}}
}
