package livemetrics

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// Metrics holds one recording's live metrics. Its methods are safe for
// concurrent use.
type Metrics struct {
	reg     *prometheus.Registry
	chans   []meter.Channel
	rate    float64
	drive   map[int]string
	power   *prometheus.GaugeVec
	energy  *prometheus.CounterVec
	samples *prometheus.CounterVec
	missing *prometheus.CounterVec
	gaps    *prometheus.CounterVec
	state   *prometheus.GaugeVec
	cycles  *prometheus.CounterVec
	verdict *prometheus.CounterVec
	crc     prometheus.Counter
	frames  prometheus.Counter

	mu      sync.Mutex
	chMean  []float64 // per channel, mean power of its last block
	chSeen  []bool
	last    meter.Stats
	states  map[int]map[string]bool
	portStr map[int]string
}

// New makes the metrics of a recording with header h.
func New(h capture.Header) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), chans: h.Channels, rate: float64(h.RateHz), drive: map[int]string{},
		chMean: make([]float64, len(h.Channels)), chSeen: make([]bool, len(h.Channels)),
		states: map[int]map[string]bool{}, portStr: map[int]string{}}
	for _, d := range h.Drives {
		m.drive[d.Port] = d.Name
	}
	for _, c := range h.Channels {
		m.portStr[c.Port] = strconv.Itoa(c.Port)
		if m.drive[c.Port] == "" {
			m.drive[c.Port] = fmt.Sprintf("port %d", c.Port)
		}
	}
	pd := []string{"port", "drive"}
	m.power = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "idlewatt_power_watts", Help: "Mean power of the port's rails over the last block, W."}, pd)
	m.energy = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "idlewatt_energy_joules_total", Help: "Energy recorded on the port, J (sum of V*I/rate_hz)."}, pd)
	m.samples = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "idlewatt_samples_total", Help: "Rail samples recorded."}, []string{"port", "drive", "rail"})
	m.missing = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "idlewatt_missing_samples_total", Help: "Samples in gaps, per channel, by gap reason."}, []string{"reason"})
	m.gaps = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "idlewatt_gaps_total", Help: "Gap records, by reason."}, []string{"reason"})
	m.state = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "idlewatt_state", Help: "1 for the port's current state or phase."}, []string{"port", "drive", "state"})
	m.cycles = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "idlewatt_devslp_cycles_total", Help: "DevSlp cycles run."}, pd)
	m.verdict = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "idlewatt_devslp_verdicts_total", Help: "DevSlp verdicts, pass or fail."}, []string{"port", "drive", "verdict"})
	m.crc = prometheus.NewCounter(prometheus.CounterOpts{Name: "idlewatt_link_crc_errors_total", Help: "Meter link frames dropped for a bad CRC."})
	m.frames = prometheus.NewCounter(prometheus.CounterOpts{Name: "idlewatt_link_frames_total", Help: "Meter link good frames."})
	m.reg.MustRegister(m.power, m.energy, m.samples, m.missing, m.gaps, m.state, m.cycles, m.verdict, m.crc, m.frames)
	for _, ch := range h.Channels { // every series present from the start
		m.samples.WithLabelValues(m.portStr[ch.Port], m.drive[ch.Port], ch.Rail.String())
		m.energy.WithLabelValues(m.portStr[ch.Port], m.drive[ch.Port])
	}
	return m
}

// Registry is the metrics' registry (a prometheus.Gatherer).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Samples counts a block: energy, samples and the port's power gauge.
func (m *Metrics) Samples(b *meter.Block) {
	if b.Channel < 0 || b.Channel >= len(m.chans) || len(b.V) == 0 {
		return
	}
	sum := b.PowerSum()
	n := min(len(b.V), len(b.I))
	ch := m.chans[b.Channel]
	port, name := m.portStr[ch.Port], m.drive[ch.Port]
	if m.rate > 0 {
		m.energy.WithLabelValues(port, name).Add(sum / m.rate)
	}
	m.samples.WithLabelValues(port, name, ch.Rail.String()).Add(float64(n))
	m.mu.Lock()
	m.chMean[b.Channel], m.chSeen[b.Channel] = sum/float64(n), true
	var p float64
	for c, cc := range m.chans {
		if cc.Port == ch.Port && m.chSeen[c] {
			p += m.chMean[c]
		}
	}
	m.mu.Unlock()
	m.power.WithLabelValues(port, name).Set(p)
}

// Gap counts a gap: its samples once per channel it covers.
func (m *Metrics) Gap(g meter.Gap) {
	n := float64(g.Count)
	if g.Channel == -1 {
		n *= float64(len(m.chans))
	}
	m.missing.WithLabelValues(g.Reason).Add(n)
	m.gaps.WithLabelValues(g.Reason).Inc()
}

// Stats takes the meter link's cumulative counters.
func (m *Metrics) Stats(st meter.Stats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st.CRCErrors >= m.last.CRCErrors {
		m.crc.Add(float64(st.CRCErrors - m.last.CRCErrors))
	}
	if st.Frames >= m.last.Frames {
		m.frames.Add(float64(st.Frames - m.last.Frames))
	}
	m.last = st
}

// LastStats returns the link counters last given to Stats.
func (m *Metrics) LastStats() meter.Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// State sets port's current state (a phase such as "idle" or
// "devslp-cycle:3", or a detected interface state); port 0 sets every port.
func (m *Metrics) State(port int, state string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, ps := range m.portStr {
		if port != 0 && p != port {
			continue
		}
		seen := m.states[p]
		if seen == nil {
			seen = map[string]bool{}
			m.states[p] = seen
		}
		for s := range seen {
			m.state.WithLabelValues(ps, m.drive[p], s).Set(0)
		}
		seen[state] = true
		m.state.WithLabelValues(ps, m.drive[p], state).Set(1)
	}
}

// DevSlpCycle counts a DevSlp cycle run on port.
func (m *Metrics) DevSlpCycle(port int) {
	m.cycles.WithLabelValues(strconv.Itoa(port), m.drive[port]).Inc()
}

// DevSlpVerdict counts a verdict on port: pass, fail, inconclusive or
// not_supported.
func (m *Metrics) DevSlpVerdict(port int, outcome string) {
	m.verdict.WithLabelValues(strconv.Itoa(port), m.drive[port], outcome).Inc()
}

// Listen opens addr for the metrics endpoint: HOST:PORT, or :PORT for
// 127.0.0.1 (loopback unless the user names another host). An address in
// use is an error here, before recording starts.
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address %q: want HOST:PORT or :PORT: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		if errors.Is(err, errAddrInUse) {
			return nil, fmt.Errorf("metrics address %s is in use (another idlewatt or exporter?): %w", net.JoinHostPort(host, port), err)
		}
		return nil, fmt.Errorf("metrics address %s: %w", net.JoinHostPort(host, port), err)
	}
	return l, nil
}

// Serve serves /metrics on l until stop is called.
func (m *Metrics) Serve(l net.Listener) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
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

// WriteTextfile writes the metrics in node_exporter's textfile format to
// path, through a temporary file renamed into place (what the textfile
// collector needs to never read half a file).
func (m *Metrics) WriteTextfile(path string) error {
	return prometheus.WriteToTextfile(path, m.reg)
}
