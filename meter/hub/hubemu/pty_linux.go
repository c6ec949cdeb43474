package hubemu

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/idlewatt/idlewatt/meter/hub"
)

// openPTY opens a pseudo-terminal pair. The master is non-blocking and
// registered with Go's poller (so Close unblocks its reads and writes honour
// deadlines); the slave is put in raw mode so no line discipline touches the
// bytes even before a client configures it, and stays open in the emulator
// so clients can come and go without the master seeing a hang-up.
func openPTY() (master, slave *os.File, path string, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, "", fmt.Errorf("open /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(fd)
		return nil, nil, "", fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(fd)
		return nil, nil, "", fmt.Errorf("pty number: %w", err)
	}
	path = fmt.Sprintf("/dev/pts/%d", n)
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	slave, err = os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		return nil, nil, "", fmt.Errorf("open %s: %w", path, err)
	}
	if err := hub.MakeRaw(slave); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, "", fmt.Errorf("raw mode on %s: %w", path, err)
	}
	return master, slave, path, nil
}
