package rig

import (
	"unsafe"

	"github.com/idlewatt/idlewatt/units"
)

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func unitsMW(mw float64) units.Watts { return units.Watts(mw / 1e3) }
