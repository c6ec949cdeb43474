package replay

import "github.com/idlewatt/idlewatt/hostclock"

// monoNow is the host monotonic clock (vDSO-fast; see hostclock).
func monoNow() int64 { return hostclock.Now() }
