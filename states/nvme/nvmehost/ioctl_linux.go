//go:build linux

package nvmehost

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/idlewatt/idlewatt/states/nvme"
	"golang.org/x/sys/unix"
)

// passthruCmd is struct nvme_passthru_cmd (= struct nvme_admin_cmd) from
// include/uapi/linux/nvme_ioctl.h: 72 bytes.
type passthruCmd struct {
	Opcode      uint8
	Flags       uint8
	Rsvd1       uint16
	NSID        uint32
	CDW2, CDW3  uint32
	Metadata    uint64
	Addr        uint64
	MetadataLen uint32
	DataLen     uint32
	CDW10       uint32
	CDW11       uint32
	CDW12       uint32
	CDW13       uint32
	CDW14       uint32
	CDW15       uint32
	TimeoutMs   uint32
	Result      uint32
}

// nvmeIoctlAdminCmd is _IOWR('N', 0x41, struct nvme_admin_cmd).
const nvmeIoctlAdminCmd = 3<<30 | uint32(unsafe.Sizeof(passthruCmd{}))<<16 | 'N'<<8 | 0x41

const (
	opIdentify    = 0x06
	opGetFeatures = 0x0a
	cnsController = 0x01
)

// Device is an open NVMe controller character device (/dev/nvmeN).
type Device struct {
	Path string
	f    *os.File
}

// OpenDevice opens path read-only (admin passthrough needs no write
// access; unprivileged users may send Identify on Linux 6.2+).
func OpenDevice(path string) (*Device, error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, &IoctlError{Path: path, Op: "open", Err: unwrapErrno(err)}
	}
	return &Device{Path: path, f: f}, nil
}

// Close closes the device.
func (d *Device) Close() error { return d.f.Close() }

// admin sends one admin command; buf (may be nil) receives the data.
func (d *Device) admin(op string, c *passthruCmd, buf []byte) (uint32, error) {
	if len(buf) > 0 {
		c.Addr = uint64(uintptr(unsafe.Pointer(&buf[0])))
		c.DataLen = uint32(len(buf))
	}
	c.TimeoutMs = 5000
	r, _, e := unix.Syscall(unix.SYS_IOCTL, d.f.Fd(), uintptr(nvmeIoctlAdminCmd), uintptr(unsafe.Pointer(c)))
	runtime.KeepAlive(buf) // the kernel wrote through c.Addr
	if e != 0 {
		return 0, &IoctlError{Path: d.Path, Op: op, Err: e}
	}
	if r != 0 {
		// A positive return is the NVMe status field of the completion.
		return 0, &IoctlError{Path: d.Path, Op: op, Status: uint16(r)}
	}
	return c.Result, nil
}

// Identify reads Identify Controller (CNS 01h).
func (d *Device) Identify() ([]byte, error) {
	buf := make([]byte, nvme.IdentifySize)
	_, err := d.admin("identify controller", &passthruCmd{Opcode: opIdentify, CDW10: cnsController}, buf)
	return buf, err
}

// GetFeature reads the current value (SEL 0) of feature fid; dataLen is
// the size of its data structure (256 for APST, 0 for power management).
func (d *Device) GetFeature(fid uint8, dataLen int) (uint32, []byte, error) {
	var buf []byte
	if dataLen > 0 {
		buf = make([]byte, dataLen)
	}
	dw0, err := d.admin(fmt.Sprintf("get features 0x%02x", fid), &passthruCmd{Opcode: opGetFeatures, CDW10: uint32(fid)}, buf)
	return dw0, buf, err
}

func unwrapErrno(err error) error {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return err
}
