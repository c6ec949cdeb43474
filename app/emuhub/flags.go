package emuhub

// `idlewatt hub emulate`'s settings (config keys under emulate.), declared
// once, read and checked here into the emulator's options and the
// simulated drives behind its ports: the limits live beside the options
// they guard.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/states/nvme"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
	"github.com/idlewatt/idlewatt/units"
)

// Flags are `hub emulate`'s settings.
var Flags = []settings.Flag{
	{Name: "ports", Key: "emulate.ports", Kind: settings.Int, Default: 2, Help: "drive ports (1–8), each with a 5 V and a 12 V rail"},
	{Name: "rate", Key: "emulate.rate", Kind: settings.Float, Default: float64(hub.DefaultRate), Help: "sample rate for --fast, Hz"},
	{Name: "seed", Key: "emulate.seed", Kind: settings.Int64, Default: int64(1), Help: "seed for faults and calibration trims"},
	{Name: "link", Key: "emulate.link", Kind: settings.String, Default: "usb", Help: "link to emulate for bandwidth checks: usb (1 MB/s) or uart (921600 baud)"},
	{Name: "corrupt-rate", Key: "emulate.corrupt_rate", Kind: settings.Float, Help: "probability per byte sent of corruption"},
	{Name: "drop-rate", Key: "emulate.drop_rate", Kind: settings.Float, Help: "probability per byte sent of being dropped"},
	{Name: "truncate-rate", Key: "emulate.truncate_rate", Kind: settings.Float, Help: "probability per frame of being cut short"},
	{Name: "stall-every", Key: "emulate.stall_every", Kind: settings.Duration, Help: "stall the output every D …"},
	{Name: "stall-for", Key: "emulate.stall_for", Kind: settings.Duration, Help: "… for this long (samples buffered, then overrun)"},
	{Name: "disconnect-every", Key: "emulate.disconnect_every", Kind: settings.Duration, Help: "drop the link every D …"},
	{Name: "disconnect-for", Key: "emulate.disconnect_for", Kind: settings.Duration, Help: "… for this long (nothing sent or answered; the sample index keeps counting)"},
	{Name: "reenumerate", Key: "emulate.reenumerate", Kind: settings.Bool, Help: "make disconnects real: close the pty and remove the path, then reappear at the same path"},
	{Name: "symlink", Key: "emulate.symlink", Kind: settings.String, Help: "keep the pty's path as a symlink here (default: a new temporary directory)"},
	{Name: "accuracy", Key: "emulate.accuracy", Kind: settings.String, Help: "GAIN_PCT,OFFSET_UA: the accuracy the hub states of every channel (READ_ACCURACY), e.g. 0.1,10 for ±0.1 % and ±10 µA (default: it states none)"},
	{Name: "buffer", Key: "emulate.buffer_bytes", Kind: settings.Int, Help: "hub output buffer in bytes (default 1 MiB); blocks that do not fit are lost with an OVERRUN"},
	{Name: "protocol", Key: "emulate.protocol", Kind: settings.Int, Default: 2, Help: "hub protocol version to speak: 2 (LINK, split frames, RESEND ring, 20-bit samples), 3 (2 with a 3.3 V rail; the default with --rail-3v3 or --nvme) or 1"},
	{Name: "rail-3v3", Key: "emulate.rail_3v3", Kind: settings.Bool, Help: "give every port a 3.3 V rail (an M.2 interposer's supply; protocol 3, at most 5 ports)"},
	{Name: "nvme", Key: "emulate.nvme", Kind: settings.String, Help: "simulated NVMe drives on M.2 interposers: PORT=PROFILE[,PORT=PROFILE…] (980pro-1tb, 660p-1tb); implies --rail-3v3"},
	{Name: "nvme-latency-us", Key: "emulate.nvme_latency_us", Kind: settings.String, Default: "100000", Help: "latency tolerance the simulated NVMe drives' APST tables are planned for (µs, auto or any)"},
	{Name: "ring", Key: "emulate.ring_bytes", Kind: settings.Int, Default: 1 << 20, Help: "protocol 2: ring buffer of recent samples RESEND reads from, bytes (0 = none)"},
	{Name: "max-frame", Key: "emulate.max_frame", Kind: settings.Int, Default: 4096, Help: "protocol 2: largest frame the hub sends or takes, bytes (64–4096)"},
	{Name: "drift-ppm", Key: "emulate.drift_ppm", Kind: settings.Float, Help: "emulator clock drift against the host, ppm"},
	{Name: "offset", Key: "emulate.offset", Kind: settings.SignedDuration, Help: "emulator clock offset against the host"},
	{Name: "fast", Key: "emulate.fast", Kind: settings.Bool, Help: "write the byte stream unpaced to --out and exit"},
	{Name: "duration", Key: "emulate.duration", Kind: settings.Duration, Default: 10 * time.Second, Help: "streaming time for --fast"},
	{Name: "out", Key: "emulate.out", Kind: settings.String, Help: "output file for --fast"},
	outfile.Flag("the --out file, truth files and an old --symlink link", ""),
	// The simulated drives behind the ports (docs/drive-profiles.md).
	{Name: "profile", Key: "emulate.profile", Kind: settings.String, Help: "simulated drive profile per port, NAME[,NAME…] (one name = every port); see idlewatt profiles"},
	{Name: "policy", Key: "emulate.policy", Kind: settings.String, Default: drivesim.PolicyMaxPerformance, Help: "initial ALPM policy of the simulated drives (" + strings.Join(drivesim.Policies, ", ") + ")"},
	{Name: "truth-dir", Key: "emulate.truth_dir", Kind: settings.String, Help: "write each simulated drive's true timeline to DIR/truth-pN.jsonl"},
}

// ReadOptions is what Read needs besides the settings: the user's drive
// profiles (asked only when a profile is named) and the output rules of
// the truth files.
type ReadOptions struct {
	Profiles func() (map[string]drivesim.Profile, error)
	Out      outfile.Options
}

// Read reads and checks Flags into the emulator's options, with the
// simulated drives behind its ports (--profile's, --nvme's, or hubemu's
// constant drive), and their truth files when --truth-dir asks: Finish
// them when the emulator is done.
func Read(g settings.Getter, ro ReadOptions) (hubemu.Options, *Truth, error) {
	o, seed, err := readNumbers(g)
	if err != nil {
		return o, nil, err
	}
	o.Faults.Reenumerate = g.Bool("reenumerate")
	o.Symlink = g.String("symlink")
	if spec := g.String("accuracy"); spec != "" {
		if o.Accuracy, err = ParseAccuracy(spec, o.Ports, o.Rail3V3 || g.Bool("rail-3v3") || g.String("nvme") != ""); err != nil {
			return o, nil, settings.Usagef("%s: %v", g.Where("accuracy"), err)
		}
	}
	if o.BufferBytes < 0 {
		return o, nil, settings.Usagef("%s: %d bytes is negative", g.Where("buffer"), o.BufferBytes)
	}
	nvmeSpec := g.String("nvme")
	o.Rail3V3 = g.Bool("rail-3v3") || strings.TrimSpace(nvmeSpec) != ""
	if o.Rail3V3 && !g.Changed("protocol") {
		o.Protocol = 3
	}
	if err := checkOptions(g, &o); err != nil {
		return o, nil, err
	}
	t := &Truth{}
	ports, err := portDrives(g, ro, o.Ports, nvmeSpec, seed, t)
	if err != nil {
		t.Close()
		return o, nil, err
	}
	return Options(o, ports), t, nil
}

// readNumbers reads the numeric settings, in order, the first that does
// not parse failing.
func readNumbers(g settings.Getter) (hubemu.Options, int64, error) {
	var o hubemu.Options
	var err error
	geti := func(flag string, dst *int) {
		if err == nil {
			*dst, err = g.Int(flag)
		}
	}
	getf := func(flag string, dst *float64) {
		if err == nil {
			*dst, err = g.Float(flag)
		}
	}
	getd := func(flag string, dst *time.Duration) {
		if err == nil {
			*dst, err = g.Duration(flag)
		}
	}
	var rate float64
	var seed int
	geti("ports", &o.Ports)
	getf("rate", &rate)
	geti("seed", &seed)
	getf("corrupt-rate", &o.Faults.CorruptRate)
	getf("drop-rate", &o.Faults.DropRate)
	getf("truncate-rate", &o.Faults.TruncateRate)
	getd("stall-every", &o.Faults.StallEvery)
	getd("stall-for", &o.Faults.StallFor)
	getd("disconnect-every", &o.Faults.DisconnectEvery)
	getd("disconnect-for", &o.Faults.DisconnectFor)
	geti("buffer", &o.BufferBytes)
	geti("protocol", &o.Protocol)
	geti("ring", &o.RingBytes)
	geti("max-frame", &o.MaxFrame)
	getf("drift-ppm", &o.DriftPPM)
	getd("offset", &o.ClockOffset)
	o.Rate, o.Seed = units.Hertz(rate), int64(seed)
	return o, int64(seed), err
}

// checkOptions checks the protocol, its ring and frame size, the clock,
// the ports, the link and the faults.
func checkOptions(g settings.Getter, o *hubemu.Options) error {
	if o.Protocol < 1 || o.Protocol > 3 {
		return settings.Usagef("%s: %d (1, 2 or 3)", g.Where("protocol"), o.Protocol)
	}
	if o.Rail3V3 && (o.Protocol != 3 || o.Ports > 5) {
		return settings.Usagef("--rail-3v3/--nvme: a 3.3 V rail needs --protocol 3 and at most 5 ports (have %d, %d ports)", o.Protocol, o.Ports)
	}
	if o.Protocol == 1 { // a version 1 hub has neither: the setting would do nothing
		for _, f := range []string{"ring", "max-frame"} {
			if g.Set(f) {
				return settings.Usagef("%s: a protocol 2 and 3 setting; %s is 1 (no RESEND ring, no LINK frame size)", g.Where(f), g.Where("protocol"))
			}
		}
	}
	switch {
	case o.RingBytes < 0:
		return settings.Usagef("%s: %d bytes is negative", g.Where("ring"), o.RingBytes)
	case o.RingBytes == 0:
		o.RingBytes = -1 // no ring: IDENTITY says 0, RESEND is refused
	}
	if o.MaxFrame < hub.MinMaxFrame || o.MaxFrame > hub.MaxFrame {
		return settings.Usagef("%s: %d bytes (%d–%d)", g.Where("max-frame"), o.MaxFrame, hub.MinMaxFrame, hub.MaxFrame)
	}
	if o.DriftPPM < -1e5 || o.DriftPPM > 1e5 {
		return settings.Usagef("%s: %g ppm is not a plausible clock drift (±100000 at most)", g.Where("drift-ppm"), o.DriftPPM)
	}
	if o.Ports < 1 || o.Ports > 8 {
		return settings.Usagef("%s: %d ports (1–8 allowed)", g.Where("ports"), o.Ports)
	}
	switch link := g.String("link"); link {
	case "usb":
		o.Link = hub.LinkUSBCDC
	case "uart":
		o.Link = hub.LinkUART921600
	default:
		return settings.Usagef("%s: %q (want usb or uart)", g.Where("link"), link)
	}
	if (o.Faults.StallEvery > 0) != (o.Faults.StallFor > 0) {
		return settings.Usagef("--stall-every and --stall-for go together")
	}
	if (o.Faults.DisconnectEvery > 0) != (o.Faults.DisconnectFor > 0) {
		return settings.Usagef("--disconnect-every and --disconnect-for go together")
	}
	return nil
}

// portDrives is the simulated drive behind each of n ports: --profile's,
// or without it hubemu's constant 5 V 80 mA / 12 V 0 mA drive, and
// --nvme's NVMe drives on the ports it names.
func portDrives(g settings.Getter, ro ReadOptions, n int, nvmeSpec string, seed int64, t *Truth) ([]meter.SimDrive, error) {
	d, err := profileDrives(g, ro, n, seed, t)
	if err != nil {
		return nil, err
	}
	ports := make([]meter.SimDrive, n)
	for i := range ports {
		ports[i] = hubemu.DefaultDrive
		if d != nil {
			ports[i] = d[i]
		}
	}
	if err := nvmeDrives(g, ports, nvmeSpec, seed); err != nil {
		return nil, err
	}
	return ports, nil
}

// nvmeDrives puts the simulated NVMe drives of --nvme behind their ports
// (states/nvme/sim.HubDrive on the 3.3 V rail); the other ports keep what
// --profile gave them.
func nvmeDrives(g settings.Getter, ports []meter.SimDrive, spec string, seed int64) error {
	if strings.TrimSpace(spec) == "" {
		return nil
	}
	if g.String("truth-dir") != "" {
		// A --profile drive the NVMe drive replaced would still write its
		// truth file, for a drive no port renders.
		return settings.Usagef("%s with %s: the simulated NVMe drives write no truth file; drop one", g.Where("nvme"), g.Where("truth-dir"))
	}
	tol, err := nvme.ParseTolerance(g.String("nvme-latency-us"))
	if err != nil {
		return settings.Usagef("%s: %v", g.Where("nvme-latency-us"), err)
	}
	seen := map[int]bool{}
	for _, item := range strings.Split(spec, ",") {
		ps, name, ok := strings.Cut(strings.TrimSpace(item), "=")
		port, perr := strconv.Atoi(ps)
		if !ok || perr != nil || port < 1 || port > len(ports) || seen[port] {
			return settings.Usagef("%s: %q: want PORT=PROFILE with a port 1–%d, each once", g.Where("nvme"), item, len(ports))
		}
		p, ok := nvmesim.ProfileByName(name)
		if !ok {
			var names []string
			for _, q := range nvmesim.Profiles() {
				names = append(names, q.Name)
			}
			return settings.Usagef("%s: no simulated NVMe profile %q (have %s)", g.Where("nvme"), name, strings.Join(names, ", "))
		}
		seen[port] = true
		ports[port-1] = NVMeDrive(p, tol.Us, uint64(seed)+uint64(port))
	}
	return nil
}

// profileDrives is nil (constant drives) unless --profile (config
// emulate.profile) names profiles: then one drivesim.Model per port (one
// name for every port, or one per port), port N's seeded with seed+N so
// ports differ but runs repeat.
func profileDrives(g settings.Getter, ro ReadOptions, ports int, seed int64, t *Truth) ([]meter.SimDrive, error) {
	spec := g.String("profile")
	if strings.TrimSpace(spec) == "" {
		if g.String("truth-dir") != "" {
			// Constant drives have no timeline: the flag used to be
			// ignored, exit 0, no file written.
			return nil, settings.Usagef("%s: the constant drives have no true timeline; give --profile (emulate.profile) to simulate drives", g.Where("truth-dir"))
		}
		return nil, nil
	}
	var names []string
	for _, n := range strings.Split(spec, ",") {
		names = append(names, strings.TrimSpace(n))
	}
	s, err := g.Int("seed")
	if err != nil {
		return nil, err
	}
	seed = int64(s)
	if len(names) != 1 && len(names) != ports {
		return nil, settings.Usagef("%s: %d profiles for %d ports (give one for all, or one per port)", g.Where("profile"), len(names), ports)
	}
	user, err := ro.Profiles()
	if err != nil {
		return nil, err
	}
	policy, dir := g.String("policy"), g.String("truth-dir")
	drives := make([]meter.SimDrive, ports)
	for i := range ports {
		name := names[0]
		if len(names) > 1 {
			name = names[i]
		}
		p, err := drivesim.Lookup(name, user)
		if err != nil {
			return nil, settings.Usagef("%s: %v", g.Where("profile"), err)
		}
		opt := drivesim.Options{Seed: seed + int64(i+1), Policy: policy, Port: i + 1}
		var f *os.File
		if dir != "" {
			// Written in place while the emulator runs (it is stopped by a
			// signal), like a capture.
			if f, err = outfile.CreateInPlace(filepath.Join(dir, fmt.Sprintf("truth-p%d.jsonl", i+1)), ro.Out); err != nil {
				return nil, settings.Usagef("--truth-dir: %w", err)
			}
			opt.TruthOut = f
		}
		m, err := drivesim.New(p, opt)
		if err != nil {
			if f != nil {
				f.Close()
			}
			return nil, settings.Usagef("port %d: %v", i+1, err)
		}
		if f != nil {
			t.files = append(t.files, truthFile{m, f})
		}
		drives[i] = m
	}
	return drives, nil
}

// Truth is the open truth files of the simulated drives (--truth-dir).
type Truth struct{ files []truthFile }

type truthFile struct {
	m *drivesim.Model
	f *os.File
}

// Finish writes the open segment of every drive and closes the files; the
// first failure is returned.
func (t *Truth) Finish() error {
	var first error
	for _, tf := range t.files {
		at := tf.m.Now()
		if err := tf.m.Finish(at); err != nil && first == nil {
			first = fmt.Errorf("truth %s: %v", tf.f.Name(), err)
		}
		if err := tf.f.Close(); err != nil && first == nil {
			first = fmt.Errorf("truth %s: %v", tf.f.Name(), err)
		}
	}
	t.files = nil
	return first
}

// Close closes the files without a last segment (an emulator that never
// started).
func (t *Truth) Close() {
	for _, tf := range t.files {
		tf.f.Close()
	}
	t.files = nil
}

// ParseAccuracy reads GAIN_PCT,OFFSET_UA (--accuracy) into the
// READ_ACCURACY entries of every channel of ports hub ports (a 3.3 V rail
// with rail3v3).
func ParseAccuracy(spec string, ports int, rail3v3 bool) ([]hub.AccEntry, error) {
	g, o, ok := strings.Cut(spec, ",")
	gain, err1 := strconv.ParseFloat(strings.TrimSpace(g), 64)
	off, err2 := strconv.ParseFloat(strings.TrimSpace(o), 64)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return nil, fmt.Errorf("%q: want GAIN_PCT,OFFSET_UA (e.g. 0.1,10)", spec)
	case !(gain >= 0 && gain <= 5):
		return nil, fmt.Errorf("gain %g %%: 0–5 %%", gain)
	case !(off >= 0 && off <= 1e6):
		return nil, fmt.Errorf("offset %g µA: 0–1 000 000 µA", off)
	}
	rails := []meter.Rail{meter.Rail5V, meter.Rail12V}
	if rail3v3 {
		rails = append(rails, meter.Rail3V3)
	}
	var out []hub.AccEntry
	for p := 1; p <= ports; p++ {
		for _, r := range rails {
			ppm := uint16(math.Round(gain * 1e4))
			out = append(out, hub.AccEntry{Port: uint8(p), Rail: r, VoltGainPPM: ppm, CurrentGainPPM: ppm, CurrentOffsetNA: uint32(math.Round(off * 1e3))})
		}
	}
	return out, nil
}

// WriteFast writes the exact byte stream the hub of o would send over the
// duration --duration asks (--fast) to out under oo, unpaced, stopping
// when ctx is done; an output refused or a stream that cannot be made is
// bad usage.
func WriteFast(ctx context.Context, g settings.Getter, o hubemu.Options, out string, oo outfile.Options) error {
	d, err := g.Duration("duration")
	if err != nil {
		return err
	}
	if out == "" {
		return settings.Usagef("--fast needs --out FILE")
	}
	f, err := outfile.Create(out, oo)
	if err != nil {
		return settings.Usagef("hub emulate: --out %w", err)
	}
	defer f.Abort() // no-op after Commit
	if err := hubemu.WriteFast(ctxio.Writer{Ctx: ctx, W: f}, o, d); err != nil {
		return settings.Usagef("hub emulate --fast: %w", err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("hub emulate --fast: %w", err)
	}
	return nil
}

// CheckSymlink refuses a --symlink path the emulator may not take: the pty
// link is its output, so a file there is never replaced, an old link only
// with overwrite.
func CheckSymlink(path string, overwrite bool) error {
	fi, err := os.Lstat(path)
	if path == "" || err != nil {
		return nil
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		return settings.Usagef("hub emulate: --symlink %s exists and is not a symbolic link; refusing to replace it", path)
	}
	if !overwrite {
		return settings.Usagef("hub emulate: --symlink %s exists (a link left by another emulator?); refusing to replace it (use --overwrite to replace the link)", path)
	}
	return nil
}
