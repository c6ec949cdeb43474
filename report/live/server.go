package live

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/idlewatt/idlewatt/capture/notes"
	htmlreport "github.com/idlewatt/idlewatt/report/html"
	"github.com/idlewatt/idlewatt/units"
)

var (
	//go:embed assets/live.js
	liveJS string
	//go:embed assets/live.html.tmpl
	liveTmpl string
	//go:embed assets/live.css
	liveCSS string
)

var livePage = template.Must(template.New("live").Parse(liveTmpl))

// ErrNotLoopback: an address beyond this machine without AllowAny.
var ErrNotLoopback = errors.New("not a loopback address")

// Listen opens addr (HOST:PORT; PORT 0 picks a free one) for the view. An
// address without a host is 127.0.0.1 unless any is set (then every
// interface); a host that is not loopback (127.0.0.0/8, ::1, or a name
// that resolves only to those) is refused unless any is set.
func Listen(addr string, any bool) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("view address %q: want HOST:PORT or :PORT: %w", addr, err)
	}
	if host == "" && !any {
		host = "127.0.0.1"
	}
	if host != "" && !any {
		ips, err := net.LookupIP(host)
		if err != nil {
			return nil, fmt.Errorf("view address %q: %w", addr, err)
		}
		for _, ip := range ips {
			if !ip.IsLoopback() {
				return nil, fmt.Errorf("view address %q: %s is %w (the view would be reachable from other machines; --view-any allows it)", addr, ip, ErrNotLoopback)
			}
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("view address %q: %s resolves to nothing", addr, host)
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("view address %s: %w", net.JoinHostPort(host, port), err)
	}
	return l, nil
}

// Serve serves v's page and data on l until stop is called; stop closes
// l and waits for the server to end.
func Serve(l net.Listener, v *View) (stop func()) {
	srv := &http.Server{Handler: v.Handler(), ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	return func() {
		_ = srv.Close()
		<-done
	}
}

// URL is the page's address on l.
func URL(l net.Listener) string {
	a, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return "http://" + l.Addr().String() + "/"
	}
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(a.Port)) + "/"
}

// Handler serves the page (/), its data (/api/data) and, when the view
// knows its capture, annotations (POST /api/note).
func (v *View) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", v.page)
	mux.HandleFunc("GET /api/data", v.data)
	mux.HandleFunc("POST /api/note", v.note)
	return sameHost(mux, v.o.AnyHost)
}

// sameHost refuses requests whose Host is a name other than localhost
// unless anyHost (a DNS-rebinding page cannot read the view), and
// state-changing requests from another origin.
func sameHost(h http.Handler, anyHost bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if ip := net.ParseIP(strings.Trim(host, "[]")); !(anyHost || host == "localhost" || ip != nil) {
			http.Error(w, "unknown host", http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet {
			if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
				http.Error(w, "cross-origin request refused", http.StatusForbidden)
				return
			}
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

func (v *View) page(w http.ResponseWriter, r *http.Request) {
	a := htmlreport.SharedAssets()
	title := v.o.Title
	if title == "" {
		title = "idlewatt live"
	}
	for name, s := range map[string]string{"uPlot": a.UplotJS, "core.js": a.CoreJS, "live.js": liveJS} {
		if strings.Contains(strings.ToLower(s), "</script") {
			http.Error(w, name+" cannot be inlined", http.StatusInternalServerError)
			return
		}
	}
	cfg, _ := json.Marshal(map[string]any{"annotate": v.o.Capture != "", "uplot_version": a.UplotVersion,
		"fine_s": v.o.Fine.Seconds(), "long_s": v.o.Long.Seconds()})
	var b bytes.Buffer
	err := livePage.Execute(&b, map[string]any{"Title": template.HTMLEscapeString(title), "UplotCSS": a.UplotCSS, "AppCSS": a.AppCSS,
		"LiveCSS": liveCSS, "UplotJS": a.UplotJS, "CoreJS": a.CoreJS, "LiveJS": liveJS, "Config": string(cfg)})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'")
	_, _ = w.Write(b.Bytes())
}

// seriesJSON is a run of buckets [k0, k0+n) of a ring, packed as the
// report page packs its buckets: base64 little-endian float32 min, max
// (W; NaN where empty), energy e (J, Σ power · dt), charge q (C, rails),
// and uint32 counts.
type seriesJSON struct {
	K0   int64  `json:"k0"`
	N    int    `json:"n"`
	Min  string `json:"min"`
	Max  string `json:"max"`
	E    string `json:"e"`
	Q    string `json:"q,omitempty"`
	Cnt  string `json:"cnt"`
	Rail string `json:"rail,omitempty"`
}

type driveJSON struct {
	Port        int          `json:"port"`
	Name        string       `json:"name"`
	NVMe        bool         `json:"nvme,omitempty"`
	Total       seriesJSON   `json:"total"`
	Rails       []seriesJSON `json:"rails"`
	CoarseTotal seriesJSON   `json:"coarse_total"`
	CoarseRails []seriesJSON `json:"coarse_rails"`
}

type dataJSON struct {
	Schema  string      `json:"schema"`
	Started bool        `json:"started"`
	Ended   bool        `json:"ended"`
	DtS     float64     `json:"dt_s"`
	FineW   float64     `json:"fine_w_s"`
	CoarseW float64     `json:"coarse_w_s"`
	FineN   int64       `json:"fine_n"`
	CoarseN int64       `json:"coarse_n"`
	Next    int64       `json:"next"`  // ask for fine buckets from here next time
	CNext   int64       `json:"cnext"` // and coarse ones from here
	NewestS float64     `json:"newest_s"`
	Drives  []driveJSON `json:"drives"`
	Events  []liveEvent `json:"events"`
	EvNext  uint64      `json:"ev_next"` // the last event's seq
	EvLost  bool        `json:"ev_lost,omitempty"`
	Skipped uint64      `json:"skipped_samples"` // samples the view skipped (its queue was full)
	SkipEv  uint64      `json:"skipped_events"`
	Missing uint64      `json:"missing_samples"` // samples the meter reported missing
	Tool    string      `json:"tool,omitempty"`
	Meter   string      `json:"meter,omitempty"`
	RateHz  units.Hertz `json:"rate_hz"`
}

// maxSend bounds the fine buckets one response carries per series (the
// page asks again for the rest).
const maxSend = 1 << 17

// data answers /api/data?since=K&csince=K&ev=SEQ&back=S: the complete
// fine buckets from K (or, without since, the last S seconds), the coarse
// ones from csince (or all held), and the events after SEQ.
func (v *View) data(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	num := func(k string, def int64) int64 {
		if s := q.Get(k); s != "" {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n
			}
		}
		return def
	}
	back, _ := strconv.ParseFloat(q.Get("back"), 64)
	v.mu.Lock()
	d := dataJSON{Schema: "idlewatt.live/v1", Started: v.started, Ended: v.ended, Skipped: v.skipped.Load(), SkipEv: v.skipEv.Load(), Missing: v.gaps, Drives: []driveJSON{}}
	if v.started {
		v.flush()
		d.DtS, d.RateHz, d.Tool, d.Meter = v.dt, v.hdr.RateHz, v.hdr.Tool, v.hdr.Meter.Kind
		d.FineW = float64(v.per) * v.dt
		d.CoarseW = d.FineW * coarseFactor
		since, csince := num("since", math.MinInt64), num("csince", math.MinInt64)
		d.Next, d.CNext = math.MaxInt64, math.MaxInt64
		for _, pv := range v.ports {
			d.FineN, d.CoarseN = pv.total.fine.size(), pv.total.coarse.size()
			from := since
			if from == math.MinInt64 {
				from = int64(float64(pv.total.done)/float64(v.per)) - int64(math.Ceil(math.Max(back, 1)/d.FineW))
			}
			dj := driveJSON{Port: pv.port, Name: pv.name, NVMe: pv.nvme, Rails: []seriesJSON{}, CoarseRails: []seriesJSON{}}
			var fn, cn int64
			dj.Total, fn = pack(pv.total.fine, pv.total.done, from, v.dt, false)
			dj.CoarseTotal, cn = pack(pv.total.coarse, pv.total.done, csince, v.dt, false)
			d.Next, d.CNext = min(d.Next, fn), min(d.CNext, cn)
			for k, c := range pv.rails {
				s, fn := pack(c.store.fine, c.store.done, from, v.dt, true)
				s.Rail = pv.railNames[k]
				cs, cn := pack(c.store.coarse, c.store.done, csince, v.dt, true)
				cs.Rail = pv.railNames[k]
				dj.Rails, dj.CoarseRails = append(dj.Rails, s), append(dj.CoarseRails, cs)
				d.Next, d.CNext = min(d.Next, fn), min(d.CNext, cn)
			}
			d.Drives = append(d.Drives, dj)
			d.NewestS = math.Max(d.NewestS, float64(pv.total.done)*v.dt)
		}
		if len(v.ports) == 0 {
			d.Next, d.CNext = 0, 0
		}
		ev := uint64(max(num("ev", 0), 0))
		d.Events, d.EvLost = v.ev.since(ev, 20000)
		d.EvNext = ev
		if n := len(d.Events); n > 0 {
			d.EvNext = d.Events[n-1].Seq
		}
	}
	v.mu.Unlock()
	if d.Events == nil {
		d.Events = []liveEvent{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(d)
}

// pack encodes r's complete buckets from k (those wholly before sample
// done), at most maxSend of them, and returns where the next request
// should start: the first bucket not yet complete (or not sent).
func pack(r *ring, done uint64, k int64, dt float64, rail bool) (seriesJSON, int64) {
	end := int64(done / r.per)
	from, to := r.held(k, end)
	if to-from > maxSend {
		to = from + maxSend
	}
	n := int(to - from)
	mn, mx, e, q := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	cnt := make([]uint32, n)
	for j := range n {
		s := int((from + int64(j)) & r.mask)
		cnt[j] = r.n[s]
		if r.n[s] == 0 {
			mn[j], mx[j] = float32(math.NaN()), float32(math.NaN())
		} else {
			mn[j], mx[j] = r.min[s], r.max[s]
		}
		e[j] = float32(r.sumW[s] * dt)
		q[j] = float32(r.sumI[s] * dt)
	}
	out := seriesJSON{K0: from, N: n, Min: b64f(mn), Max: b64f(mx), E: b64f(e), Cnt: b64u(cnt)}
	if rail {
		out.Q = b64f(q)
	}
	next := to
	if !r.any {
		next = k
	}
	return out, next
}

func b64f(xs []float32) string {
	buf := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(buf)
}

func b64u(xs []uint32) string {
	buf := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		buf = binary.LittleEndian.AppendUint32(buf, x)
	}
	return base64.StdEncoding.EncodeToString(buf)
}

// note answers POST /api/note {"at_s", "to_s", "text"}: the note is added
// to the capture's notes file and shown.
func (v *View) note(w http.ResponseWriter, r *http.Request) {
	if v.o.Capture == "" {
		http.Error(w, "this view has no capture to annotate", http.StatusNotFound)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		http.Error(w, "want Content-Type: application/json", http.StatusUnsupportedMediaType)
		return
	}
	var n notes.Note
	dec := json.NewDecoder(io.LimitReader(r.Body, 16<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		http.Error(w, "annotation: "+err.Error(), http.StatusBadRequest)
		return
	}
	n.Created, n.Source = time.Now().UTC().Format(time.RFC3339), "live view"
	if _, err := notes.Add(v.o.Capture, n); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, notes.ErrFormat) {
			code = http.StatusBadRequest
		}
		http.Error(w, err.Error(), code)
		return
	}
	v.mu.Lock()
	v.noteEvent(n)
	v.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"ok":true}` + "\n"))
}
