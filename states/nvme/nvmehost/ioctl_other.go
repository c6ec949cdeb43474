//go:build !linux

package nvmehost

import "errors"

// Device is an NVMe controller character device; admin passthrough exists
// only on Linux.
type Device struct{ Path string }

var errNotLinux = errors.New("NVMe admin passthrough needs Linux")

func OpenDevice(path string) (*Device, error) {
	return nil, &IoctlError{Path: path, Op: "open", Err: errNotLinux}
}
func (d *Device) Close() error              { return nil }
func (d *Device) Identify() ([]byte, error) { return nil, errNotLinux }
func (d *Device) GetFeature(fid uint8, dataLen int) (uint32, []byte, error) {
	return 0, nil, errNotLinux
}
