package hub_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/sigurn/crc16"
)

// benchStream is 10 s of 4 ports × 2 rails at 10 kS/s (3.2 MB).
func benchStream(b *testing.B) []byte {
	return fast(b, hubemu.Options{Ports: 4, Rate: 10000, Seed: 1}, 10*time.Second)
}

type countSink struct{ n uint64 }

func (s *countSink) Samples(b *meter.Block) error { s.n += uint64(b.Len()); return nil }
func (s *countSink) Gap(meter.Gap) error          { return nil }
func (s *countSink) Mark(meter.MarkEcho) error    { return nil }
func (s *countSink) Event(meter.Event) error      { return nil }

// sigurnTable is github.com/sigurn/crc16's table for the frame CRC; its
// Checksum is the reference throughput the decoder is compared with.
var sigurnTable = crc16.MakeTable(crc16.CRC16_CCITT_FALSE)

func crcBytewise(_ uint16, data []byte, t *crc16.Table) uint16 { return crc16.Checksum(data, t) }

var sinkCRC uint16

// BenchmarkDecodeStream: the full decoder (scan, CRC, convert to volts and
// amps, deliver blocks), in MB/s and samples/s (channel samples).
func BenchmarkDecodeStream(b *testing.B) {
	data := benchStream(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var s countSink
	var frames uint64
	for b.Loop() {
		s.n = 0
		_, st, err := hub.DecodeStream(bytes.NewReader(data), &s)
		if err != nil {
			b.Fatal(err)
		}
		frames = st.Frames
	}
	b.ReportMetric(float64(s.n)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	b.ReportMetric(float64(frames), "frames/op")
}

// BenchmarkScan: framing and CRC only.
func BenchmarkScan(b *testing.B) {
	data := benchStream(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc := hub.NewScanner(bytes.NewReader(data))
		for {
			if _, err := sc.Next(); err == io.EOF {
				break
			}
		}
	}
}

// BenchmarkCRCBytewise: sigurn/crc16.Checksum over the same bytes.
func BenchmarkCRCBytewise(b *testing.B) {
	data := benchStream(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sinkCRC = crcBytewise(0xFFFF, data, sigurnTable)
	}
}

// BenchmarkCRCSlicing8: this package's CRC over the same bytes.
func BenchmarkCRCSlicing8(b *testing.B) {
	data := benchStream(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sinkCRC = hub.CRC16(data)
	}
}

// BenchmarkDecodeVsCRC times the full decoder and the byte-wise CRC over
// the same bytes in one run (sigurn/crc16.Checksum) and reports decode/CRC throughput (goal ≥ 0.8).
func BenchmarkDecodeVsCRC(b *testing.B) {
	data := benchStream(b)
	var dec, crc time.Duration
	var s countSink
	for b.Loop() {
		t0 := time.Now()
		if _, _, err := hub.DecodeStream(bytes.NewReader(data), &s); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		sinkCRC = crcBytewise(0xFFFF, data, sigurnTable)
		crc += time.Since(t1)
		dec += t1.Sub(t0)
	}
	mb := float64(len(data)) * float64(b.N) / 1e6
	b.ReportMetric(mb/dec.Seconds(), "decode-MB/s")
	b.ReportMetric(mb/crc.Seconds(), "crc-MB/s")
	b.ReportMetric(crc.Seconds()/dec.Seconds(), "decode/crc")
}
