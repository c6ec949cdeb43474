package hub_test

import (
	"bytes"
	"io"
	"math/rand"
	"runtime"
	"sync"
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

// BenchmarkCRCSlicing16: this package's CRC (slicing-by-16) over the same bytes.
func BenchmarkCRCSlicing16(b *testing.B) {
	data := benchStream(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sinkCRC = hub.CRC16(data)
	}
}

// BenchmarkDecodeVsCRC times the full decoder and the byte-wise CRC over
// the same bytes in one run (sigurn/crc16.Checksum), alternating, and
// reports decode/CRC throughput (goal ≥ 1): by wall time, and by the
// thread's CPU time (-cpu metrics), which others' load on a shared
// machine moves far less. The stream is benchStream's: packed 20-bit
// samples of a noiseless emulator, 0.42 B a channel sample, frames
// included (BenchmarkDecodeFormats has other streams).
func BenchmarkDecodeVsCRC(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	data := benchStream(b)
	var dec, crc, decCPU, crcCPU time.Duration
	var s countSink
	for b.Loop() {
		c0, t0 := threadCPU(), time.Now()
		if _, _, err := hub.DecodeStream(bytes.NewReader(data), &s); err != nil {
			b.Fatal(err)
		}
		c1, t1 := threadCPU(), time.Now()
		sinkCRC = crcBytewise(0xFFFF, data, sigurnTable)
		crc += time.Since(t1)
		crcCPU += threadCPU() - c1
		dec += t1.Sub(t0)
		decCPU += c1 - c0
	}
	mb := float64(len(data)) * float64(b.N) / 1e6
	b.ReportMetric(mb/dec.Seconds(), "decode-MB/s")
	b.ReportMetric(mb/crc.Seconds(), "crc-MB/s")
	b.ReportMetric(crc.Seconds()/dec.Seconds(), "decode/crc")
	if decCPU > 0 && crcCPU > 0 {
		b.ReportMetric(mb/decCPU.Seconds(), "decode-cpu-MB/s")
		b.ReportMetric(mb/crcCPU.Seconds(), "crc-cpu-MB/s")
		b.ReportMetric(crcCPU.Seconds()/decCPU.Seconds(), "decode/crc-cpu")
	}
}

// BenchmarkDecodeFormats is BenchmarkDecodeVsCRC over 2 s of 4 ports × 2
// rails at 10 kS/s in each sample format, quiet (hubemu's default drive)
// and noisy (noisyDrive: 0.5 mA σ on each current, a bus count on each
// voltage): what bounds decode/crc is the samples a byte
// holds (B/sample: stream bytes per channel sample, frames included), the
// decoder's work being per sample and the CRC's per byte.
func BenchmarkDecodeFormats(b *testing.B) {
	for _, c := range []struct {
		name   string
		format uint8
		noisy  bool
	}{
		{"packed-quiet", hub.FormatPacked, false},
		{"packed-noisy", hub.FormatPacked, true},
		{"20bit-noisy", hub.Format20, true},
		{"16bit-noisy", hub.Format16, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			o := hubemu.Options{Ports: 4, Rate: 10000, Seed: 1, Format: c.format}
			if c.noisy {
				o.Drives = make([]meter.SimDrive, 4)
				for p := range o.Drives {
					o.Drives[p] = noisyDrive{i5: 0.080, i12: 0.300, sigmaA: 0.5e-3, mu: new(sync.Mutex), rng: rand.New(rand.NewSource(int64(p)))}
				}
			}
			data := fast(b, o, 2*time.Second)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var dec, crc time.Duration
			var s countSink
			for b.Loop() {
				s.n = 0
				c0 := threadCPU()
				if _, _, err := hub.DecodeStream(bytes.NewReader(data), &s); err != nil {
					b.Fatal(err)
				}
				c1 := threadCPU()
				sinkCRC = crcBytewise(0xFFFF, data, sigurnTable)
				crc += threadCPU() - c1
				dec += c1 - c0
			}
			if dec <= 0 {
				b.Skip("no thread CPU clock here")
			}
			n := float64(b.N)
			b.ReportMetric(float64(len(data))/float64(s.n), "B/sample")
			b.ReportMetric(float64(dec.Nanoseconds())/n/float64(s.n), "cpu-ns/sample")
			b.ReportMetric(float64(len(data))*n/1e6/dec.Seconds(), "decode-cpu-MB/s")
			b.ReportMetric(float64(len(data))*n/1e6/crc.Seconds(), "crc-cpu-MB/s")
			b.ReportMetric(crc.Seconds()/dec.Seconds(), "decode/crc-cpu")
		})
	}
}
