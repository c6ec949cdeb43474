package replay

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"unsafe"

	"golang.org/x/sys/unix"
)

// buffer is page-aligned memory outside the Go heap (so the kernel can DMA
// into it while the GC runs, and O_DIRECT accepts it), filled with random
// bytes so written data does not compress.
type buffer struct {
	mem []byte
}

func (b *buffer) ensure(n int, rng *rand.Rand) error {
	if n < 0 {
		return fmt.Errorf("buffer of %d bytes", n)
	}
	if b.mem != nil && len(b.mem) >= n {
		return nil // never nil after ensure, so addr always has a byte to point at
	}
	size := max(n, 128<<10)
	size = (size + 4095) &^ 4095
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return err
	}
	b.free()
	for i := 0; i+8 <= len(mem); i += 8 {
		binary.LittleEndian.PutUint64(mem[i:], rng.Uint64())
	}
	b.mem = mem
	return nil
}

// addr is the buffer's address for the kernel; valid after ensure.
func (b *buffer) addr() uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b.mem)))) }

func (b *buffer) free() {
	if b.mem != nil {
		unix.Munmap(b.mem)
		b.mem = nil
	}
}

// stamp writes each 512-byte sector's absolute offset into its first 8
// bytes, so a test (or a curious user) can check where data landed.
func (b *buffer) stamp(off int64, size int) {
	size = min(size, len(b.mem))
	first := (off + 511) &^ 511
	for s := first; s+8 <= off+int64(size); s += 512 {
		binary.LittleEndian.PutUint64(b.mem[s-off:], uint64(s))
	}
}
