package replay

import "github.com/idlewatt/idlewatt/internal/hostclock"

// monoNow is the host monotonic clock (vDSO-fast; see internal/hostclock).
func monoNow() int64 { return hostclock.Now() }
