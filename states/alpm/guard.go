package alpm

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Guard remembers hosts' policies so a measurement run can put them back,
// however it ends. The zero Guard restores nothing.
type Guard struct {
	s     *Sysfs
	hosts []string
	saved map[string]Policy

	once     sync.Once
	restored chan struct{}
	results  []HostResult
}

// Save captures the current policy of each host (all hosts with a policy
// file when none are named). Hosts whose policy cannot be read are reported
// and left out of the guard.
func (s *Sysfs) Save(hosts []string) (*Guard, []HostResult, error) {
	if len(hosts) == 0 {
		var err error
		if hosts, err = s.PolicyHosts(); err != nil {
			return nil, nil, err
		}
	}
	g := &Guard{s: s, saved: map[string]Policy{}, restored: make(chan struct{})}
	var failed []HostResult
	for _, h := range hosts {
		p, err := s.ReadPolicy(h)
		if err != nil {
			r := HostResult{Host: h}
			r.fail(err)
			failed = append(failed, r)
			continue
		}
		g.hosts = append(g.hosts, h)
		g.saved[h] = p
	}
	return g, failed, nil
}

// Saved returns the policy captured for host ("" if none).
func (g *Guard) Saved(host string) Policy { return g.saved[host] }

// forget drops a host the caller never changed, so Restore does not write it.
func (g *Guard) forget(host string) {
	delete(g.saved, host)
	for i, h := range g.hosts {
		if h == host {
			g.hosts = append(g.hosts[:i], g.hosts[i+1:]...)
			break
		}
	}
}

// ApplyPolicy saves the current policies of hosts under root (all hosts with
// a policy file when none are named), then writes policy to them. The Guard
// restores only hosts whose write succeeded. The error is for refusals
// before any I/O (an unknown name, keep_firmware_settings, no sysfs tree).
//
//	g, res, err := alpm.ApplyPolicy("/sys", nil, "min_power")
//	if err != nil { return err }
//	defer g.RestoreOnExit(ctx)()
func ApplyPolicy(root string, hosts []string, policy string) (*Guard, []HostResult, error) {
	return Open(root).ApplyPolicy(hosts, policy)
}

// ApplyPolicy is the package-level ApplyPolicy on s.
func (s *Sysfs) ApplyPolicy(hosts []string, policy string) (*Guard, []HostResult, error) {
	p, err := ParseWritablePolicy(policy)
	if err != nil {
		return nil, nil, err
	}
	g, _, err := s.Save(hosts)
	if err != nil {
		return nil, nil, err
	}
	if len(hosts) == 0 {
		hosts = append([]string(nil), g.hosts...)
	}
	res, err := s.SetPolicy(hosts, p)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range res {
		if !r.OK() {
			g.forget(r.Host)
		}
	}
	return g, res, nil
}

// Restore writes every saved policy back, once; later calls return the
// first call's results. A saved keep_firmware_settings cannot be written
// back (the kernel rejects it): that host reports ErrNotWritable and stays
// at its current policy until reboot.
func (g *Guard) Restore() []HostResult {
	if g == nil || g.s == nil {
		return nil
	}
	g.once.Do(func() {
		for _, h := range g.hosts {
			p := g.saved[h]
			r := HostResult{Host: h, Requested: p}
			if !p.Writable() {
				r.fail(&HostError{Host: h, Op: "restore", Err: ErrNotWritable})
			} else {
				g.s.write(&r, p)
			}
			g.results = append(g.results, r)
		}
		close(g.restored)
	})
	return g.results
}

// Restored is closed once Restore has finished.
func (g *Guard) Restored() <-chan struct{} { return g.restored }

// RestoreOnExit restores the saved policies when ctx is done or the process
// receives SIGINT, SIGTERM or SIGHUP, and returns a release function that
// stops watching, restores (if not done yet) and returns the results: defer
// it so a normal return restores too. After restoring on a signal it sends
// the signal again with its own handler removed, so a program that does
// not handle the signal itself still ends as it would have; one that does
// (cmd/idlewatt cancels its context) just sees it twice.
func (g *Guard) RestoreOnExit(ctx context.Context) (release func() []HostResult) {
	if g == nil {
		return func() []HostResult { return nil }
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	stop := make(chan struct{})
	done := make(chan struct{})
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
	return func() []HostResult {
		once.Do(func() { close(stop) })
		<-done
		return g.Restore()
	}
}
