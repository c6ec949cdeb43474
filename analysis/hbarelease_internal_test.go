package analysis

import (
	"slices"
	"testing"

	"github.com/idlewatt/idlewatt/hostclock"
)

// TestHBAReleasesAreThePolicyChangesOutOfMinPower: the HBA asserts DEVSLP
// itself only under min_power and min_power_with_partial; a change from
// one of them to any other policy releases it, for the port's events and
// the host-wide ones (port 0), in time order whatever the record's order.
// A change between the two min_power policies, or into one, is none.
func TestHBAReleasesAreThePolicyChangesOutOfMinPower(t *testing.T) {
	p := &pass1{policies: []policyEvent{
		{t: 500, port: 0, policy: "med_power_with_dipm"},
		{t: 100, port: 0, policy: "max_performance"},
		{t: 200, port: 2, policy: "min_power"},
		{t: 300, port: 2, policy: "min_power_with_partial"},
		{t: 400, port: 3, policy: "max_performance"}, // another port's
		{t: 600, port: 2, policy: "min_power"},
		{t: 700, port: 0, policy: "max_performance"},
	}}
	got := hbaReleases(p, 2)
	want := []hostclock.Time{500, 700}
	if !slices.Equal(got, want) {
		t.Errorf("hbaReleases = %v, want %v", got, want)
	}
	if got := hbaReleases(p, 3); len(got) != 0 {
		t.Errorf("port 3 (never under min_power): %v, want none", got)
	}
}
