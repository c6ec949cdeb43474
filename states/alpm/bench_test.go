package alpm

import "testing"

func BenchmarkParseHexDump(b *testing.B) {
	in := FormatHexDump(DriveSpec{LogValid: true, DETOms: 30}.LogPage())
	for b.Loop() {
		ParseHexDump(in)
	}
}

func BenchmarkParseIdentify(b *testing.B) {
	in := DriveSpec{Model: "x", HIPM: true}.Words().Format()
	b.ReportAllocs()
	for b.Loop() {
		ParseIdentify(in)
	}
}
