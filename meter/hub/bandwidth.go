package hub

// BlockPeriodDivisor sets a hub's block size: a SAMPLES block holds
// rate/BlockPeriodDivisor samples (10 ms worth), at least one, at most what
// fits MaxPayload. The host does not depend on it; it sizes the link budget.
const BlockPeriodDivisor = 100

// LinkHeadroom is the fraction of a link's capacity a stream may use; the
// rest is left for acknowledgements, events and mark echoes.
const LinkHeadroom = 0.9

// BlockSamples returns the samples per SAMPLES block a hub sends at rate
// (Hz) with chans channels.
func BlockSamples(rate, chans int) int {
	n := max(rate/BlockPeriodDivisor, 1)
	if chans < 1 {
		return n
	}
	return min(n, (MaxPayload-samplesHdr)/(chans*bytesPerChanSample))
}

// StreamBytesPerSec returns the link bytes per second of a stream of chans
// channels at rate, framing included.
func StreamBytesPerSec(rate, chans int) float64 {
	s := BlockSamples(rate, chans)
	perBlock := HeaderLen + TrailerLen + samplesHdr + s*chans*bytesPerChanSample
	return float64(rate) / float64(s) * float64(perBlock)
}

// FitsLink reports whether a stream fits a link of linkBytesSec with
// LinkHeadroom to spare.
func FitsLink(rate, chans, linkBytesSec int) bool {
	return StreamBytesPerSec(rate, chans) <= LinkHeadroom*float64(linkBytesSec)
}

// Link capacities in bytes per second.
const (
	LinkUART921600 = 92160   // 921,600 baud, 8N1: 10 bits per byte
	LinkUSBCDC     = 1000000 // USB full-speed CDC-ACM, practical
)
