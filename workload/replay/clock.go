package replay

import "github.com/idlewatt/idlewatt/hostclock"

// monoNow is the host monotonic clock (vDSO-fast; see hostclock) as int64
// ns: the engines' scheduling arithmetic stays in plain integers, and the
// IOEvents they report carry hostclock.Time (run.event).
func monoNow() int64 { return int64(hostclock.Now()) }
