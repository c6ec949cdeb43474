package stat

// Scratch keeps a few float64 slices for work that needs one only while
// it runs, across garbage collections: a report's estimators and DevSlp
// judging ran through hundreds of kB of new slices a cycle, collected
// again and again under the report's memory limit, and a sync.Pool is
// emptied by each collection. What it keeps is live heap, so keep few.
type Scratch chan []float64

// NewScratch keeps at most keep slices.
func NewScratch(keep int) Scratch { return make(Scratch, keep) }

// Get is a slice of n values, their contents left over (the caller writes
// each before reading it); give it back with Put.
func (s Scratch) Get(n int) []float64 {
	select {
	case b := <-s:
		if cap(b) >= n {
			return b[:n]
		}
	default:
	}
	return make([]float64, n)
}

// Put gives b back (dropped when the Scratch is full).
func (s Scratch) Put(b []float64) {
	select {
	case s <- b:
	default:
	}
}
