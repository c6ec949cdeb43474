package nvme

import (
	"github.com/idlewatt/idlewatt/states/nvme/pslevel"
	"github.com/idlewatt/idlewatt/units"
)

// Level is one NVMe power state's steady idle draw (package pslevel, the
// model without host control, which analysis imports).
type Level = pslevel.Level

// TableLevels are the levels the power-state table implies: each
// non-operational state at its declared maximum power, and operational
// state i at opIdle[i] when given (the table has no idle power for an
// operational state, only its maximum, so without opIdle it is left out).
// Highest first.
func TableLevels(id *Identify, opIdle []units.Watts) []Level {
	var out []Level
	for i, p := range id.PowerStates {
		l := Level{PS: i, W: p.MaxPower, NonOperational: p.NonOperational,
			EntryLatencyUs: p.EntryLatencyUs, ExitLatencyUs: p.ExitLatencyUs, Source: "table"}
		if !p.NonOperational {
			if i >= len(opIdle) || opIdle[i] <= 0 {
				continue
			}
			l.W = opIdle[i]
		}
		if l.W > 0 {
			out = append(out, l)
		}
	}
	sortLevels(out)
	return out
}

func sortLevels(l []Level) { pslevel.Sort(l) }

// LearnLevels is pslevel.Learn: the table's levels named onto the stable
// levels of a capture's idle samples.
func LearnLevels(table []Level, idle []units.Watts) (levels []Level, unnamed []units.Watts, err error) {
	return pslevel.Learn(table, idle)
}

// ClassifyLevel is pslevel.Classify.
func ClassifyLevel(levels []Level, w units.Watts) int { return pslevel.Classify(levels, w) }

// LevelCeiling is pslevel.Ceiling.
func LevelCeiling(levels []Level, i int) units.Watts { return pslevel.Ceiling(levels, i) }

// LevelOf is pslevel.Of.
func LevelOf(levels []Level, ps int) int { return pslevel.Of(levels, ps) }
