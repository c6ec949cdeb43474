package nvmehost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// Control writes the NVMe and ASPM settings that decide idle power: a
// controller's latency tolerance (which the kernel turns into the APST
// table, 0 turning APST off), nvme_core's default_ps_max_latency_us, and
// pcie_aspm's policy. Every write goes through a Guard, which remembers
// the value it replaced and puts it back (Restore, RestoreOnExit).
type Control struct {
	Root string
	fs   alpm.FS
}

// NewControl controls the tree at root.
func NewControl(root string) *Control { return &Control{Root: root, fs: alpm.DirFS(root)} }

// NewControlFS controls any alpm.FS (fakes in tests); root names it.
func NewControlFS(root string, fsys alpm.FS) *Control { return &Control{Root: root, fs: fsys} }

// Errors a write maps to (errors.Is), beside the errno itself.
var (
	ErrPermission   = errors.New("permission denied: writing needs root")
	ErrASPMDisabled = errors.New("the kernel does not control ASPM (booted with pcie_aspm=off, or the firmware did not grant the OS ASPM control through FADT/_OSC)")
	ErrRejected     = errors.New("the kernel rejected the value")
	ErrHidden       = errors.New("no such file: for pm_qos_latency_tolerance_us the kernel hides it when it did not enable APST (APSTA clear or a NO_APST quirk); for a module parameter, nvme_core or pcie_aspm is not loaded")
)

// WriteError is a failed write of one file.
type WriteError struct {
	File  string // relative to the root
	Value string
	Err   error
}

func (e *WriteError) Error() string {
	if s := writeSentinel(e.File, e.Err); s != nil {
		return fmt.Sprintf("%s: write %q: %v (%v)", e.File, e.Value, errnoOf(e.Err), s)
	}
	return fmt.Sprintf("%s: write %q: %v", e.File, e.Value, e.Err)
}

func (e *WriteError) Unwrap() []error {
	if s := writeSentinel(e.File, e.Err); s != nil {
		return []error{s, e.Err}
	}
	return []error{e.Err}
}

func errnoOf(err error) error {
	var n syscall.Errno
	if errors.As(err, &n) {
		return n
	}
	return err
}

func writeSentinel(file string, err error) error {
	switch {
	case errors.Is(err, syscall.EPERM) && file == nvme.ASPMPolicyFile:
		return ErrASPMDisabled
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return ErrPermission
	case errors.Is(err, syscall.EINVAL):
		return ErrRejected
	case isNotExist(err):
		return ErrHidden
	}
	return nil
}

// Change is one write: what the file held, what was asked, what it reads
// after.
type Change struct {
	File      string `json:"file"`
	Previous  string `json:"previous"`
	Requested string `json:"requested"`
	ReadBack  string `json:"read_back,omitempty"`
	Err       error  `json:"-"`
	Error     string `json:"error,omitempty"`
}

// OK reports a write whose read-back matches the request.
func (c Change) OK() bool { return c.Err == nil }

func (c *Change) fail(err error) { c.Err, c.Error = err, err.Error() }

// ToleranceFile is a controller's latency tolerance file.
func ToleranceFile(ctrl string) string { return path.Join(nvme.ClassNVMe, ctrl, nvme.FileTolerance) }

// DefaultLatencyFile is nvme_core's default_ps_max_latency_us.
const DefaultLatencyFile = nvme.DirNVMeCore + "/default_ps_max_latency_us"

func checkCtrl(name string) error {
	if len(name) < 5 || !strings.HasPrefix(name, "nvme") {
		return fmt.Errorf("%q is not an NVMe controller name (like nvme0)", name)
	}
	if _, err := strconv.ParseUint(name[4:], 10, 16); err != nil {
		return fmt.Errorf("%q is not an NVMe controller name (like nvme0)", name)
	}
	return nil
}

// Guard applies changes and remembers what each file held before its
// first change, to put it back. The zero Guard is not usable; get one from
// Control.Guard.
type Guard struct {
	c      *Control
	mu     sync.Mutex
	order  []string          // files in first-change order
	saved  map[string]string // file → value to restore
	closed bool              // Restore or Keep ran: no more changes

	once     sync.Once
	restored chan struct{}
	results  []Change
}

// Guard starts a set of changes to restore together.
func (c *Control) Guard() *Guard {
	return &Guard{c: c, saved: map[string]string{}, restored: make(chan struct{})}
}

// readValue reads a file as the value to write back: the bracketed name
// for the ASPM policy, the trimmed content otherwise.
func (c *Control) readValue(file string) (string, error) {
	b, err := c.fs.ReadFile(file)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if file == nvme.ASPMPolicyFile {
		p, err := nvme.ParseASPMPolicy(s)
		if err != nil {
			return "", err
		}
		return p.Current, nil
	}
	return s, nil
}

// set writes value to file and reads it back, saving the previous value
// the first time the guard touches the file. A write that fails leaves the
// file as it was (checked by reading it again); if it does not, the saved
// value still restores it.
func (g *Guard) set(file, value string) Change {
	ch := Change{File: file, Requested: value}
	// The lock is held for the whole write, so a Restore (on a signal)
	// either sees this change saved or runs first and makes it refuse.
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		ch.fail(fmt.Errorf("%s: not written: the guard already restored (interrupted)", file))
		return ch
	}
	prev, err := g.c.readValue(file)
	if err != nil {
		ch.fail(&WriteError{File: file, Value: value, Err: err})
		return ch
	}
	ch.Previous = prev
	_, had := g.saved[file]
	if !had {
		g.saved[file] = prev
		g.order = append(g.order, file)
	}
	// sysfs store functions take one buffer; a trailing newline, as echo
	// writes, is accepted by kstrto* and sysfs_match_string.
	if err := g.c.fs.WriteFile(file, []byte(value+"\n")); err != nil {
		ch.fail(&WriteError{File: file, Value: value, Err: err})
		if now, rerr := g.c.readValue(file); rerr == nil && now == prev && !had {
			g.forget(file)
		}
		return ch
	}
	got, err := g.c.readValue(file)
	if err != nil {
		ch.fail(&WriteError{File: file, Value: value, Err: fmt.Errorf("read back: %w", err)})
		return ch
	}
	ch.ReadBack = got
	if got != value {
		ch.fail(fmt.Errorf("%s: reads %q after writing %q", file, got, value))
	}
	return ch
}

// forget drops a file set never changed (g.mu held).
func (g *Guard) forget(file string) {
	delete(g.saved, file)
	for i, f := range g.order {
		if f == file {
			g.order = append(g.order[:i], g.order[i+1:]...)
			break
		}
	}
}

// SetLatencyTolerance writes a controller's tolerance: microseconds, "auto"
// or "any" (no limit). The kernel rebuilds the APST table at once
// (nvme_set_latency_tolerance); 0 turns APST off.
func (g *Guard) SetLatencyTolerance(ctrl, value string) (Change, error) {
	if err := checkCtrl(ctrl); err != nil {
		return Change{}, err
	}
	if _, err := nvme.ParseTolerance(value); err != nil {
		return Change{}, fmt.Errorf("latency tolerance %w", err)
	}
	return g.set(ToleranceFile(ctrl), value), nil
}

// SetDefaultLatency writes nvme_core.default_ps_max_latency_us. The kernel
// reads it only when a controller is enumerated: controllers already
// present keep their own tolerance (set that with SetLatencyTolerance).
func (g *Guard) SetDefaultLatency(us uint64) Change {
	return g.set(DefaultLatencyFile, strconv.FormatUint(us, 10))
}

// SetAPST turns APST off (tolerance 0) or on: back to the tolerance the
// guard saved if it was not 0, else nvme_core's default_ps_max_latency_us
// (else the kernel's 100000).
func (g *Guard) SetAPST(ctrl string, on bool) (Change, error) {
	if !on {
		return g.SetLatencyTolerance(ctrl, "0")
	}
	if err := checkCtrl(ctrl); err != nil {
		return Change{}, err
	}
	v := ""
	g.mu.Lock()
	if s, ok := g.saved[ToleranceFile(ctrl)]; ok && s != "0" {
		v = s
	}
	g.mu.Unlock()
	if v == "" {
		if cur, err := g.c.readValue(ToleranceFile(ctrl)); err == nil && cur != "0" {
			v = cur
		}
	}
	if v == "" {
		v = strconv.Itoa(nvme.DefaultPSMaxLatencyUs)
		if d, err := g.c.readValue(DefaultLatencyFile); err == nil && d != "0" {
			if n, err := strconv.ParseUint(d, 10, 64); err == nil {
				v = strconv.FormatUint(min(n, 1<<31-1), 10)
			}
		}
	}
	return g.SetLatencyTolerance(ctrl, v)
}

// SetASPMPolicy writes pcie_aspm's policy (one of ASPMPolicies). EPERM
// means the kernel does not control ASPM (ErrASPMDisabled).
func (g *Guard) SetASPMPolicy(p string) (Change, error) {
	name, err := nvme.ParseASPMPolicyName(p)
	if err != nil {
		return Change{}, err
	}
	return g.set(nvme.ASPMPolicyFile, name), nil
}

// Saved returns the value saved for file ("" and false if untouched).
func (g *Guard) Saved(file string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.saved[file]
	return v, ok
}

// Restore writes every saved value back, last change first, once; later
// calls return the first call's results.
func (g *Guard) Restore() []Change {
	if g == nil || g.c == nil {
		return nil
	}
	g.once.Do(func() {
		g.mu.Lock()
		g.closed = true
		order := append([]string(nil), g.order...)
		g.mu.Unlock()
		for i := len(order) - 1; i >= 0; i-- {
			f := order[i]
			ch := Change{File: f, Requested: g.saved[f]}
			if prev, err := g.c.readValue(f); err == nil {
				ch.Previous = prev
			}
			if err := g.c.fs.WriteFile(f, []byte(g.saved[f]+"\n")); err != nil {
				ch.fail(&WriteError{File: f, Value: g.saved[f], Err: err})
			} else if got, err := g.c.readValue(f); err != nil {
				ch.fail(&WriteError{File: f, Value: g.saved[f], Err: fmt.Errorf("read back: %w", err)})
			} else {
				ch.ReadBack = got
				if got != g.saved[f] {
					ch.fail(fmt.Errorf("%s: reads %q after restoring %q", f, got, g.saved[f]))
				}
			}
			g.results = append(g.results, ch)
		}
		close(g.restored)
	})
	return g.results
}

// Keep makes the guard restore nothing: the caller decided the changes
// stay (a one-shot setting command). Call it before releasing.
func (g *Guard) Keep() {
	g.once.Do(func() {
		g.mu.Lock()
		g.closed = true
		g.mu.Unlock()
		close(g.restored)
	})
}

// Restored is closed once Restore has finished.
func (g *Guard) Restored() <-chan struct{} { return g.restored }

// RestoreOnExit restores when ctx is done or the process receives SIGINT,
// SIGTERM or SIGHUP, and returns a release function that stops watching,
// restores (if not done yet) and returns the results: defer it. After
// restoring on a signal it sends the signal again with its handler
// removed, as alpm.Guard does, so the program still ends as it would have.
func (g *Guard) RestoreOnExit(ctx context.Context) (release func() []Change) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			signal.Stop(sigs)
			g.Restore()
		case sig := <-sigs:
			signal.Stop(sigs)
			g.Restore()
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				_ = p.Signal(sig)
			}
		case <-stop:
			signal.Stop(sigs)
		}
	}()
	var once sync.Once
	return func() []Change {
		once.Do(func() { close(stop) })
		<-done
		return g.Restore()
	}
}

// Failed reports whether any change failed.
func Failed(ch []Change) bool {
	for _, c := range ch {
		if c.Err != nil {
			return true
		}
	}
	return false
}
