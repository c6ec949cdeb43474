//go:build linux

package nvmehost

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

func TestPassthruLayout(t *testing.T) {
	// include/uapi/linux/nvme_ioctl.h: 72 bytes, NVME_IOCTL_ADMIN_CMD
	// 0xC0484E41 (the value nvme-cli and strace show).
	if s := unsafe.Sizeof(passthruCmd{}); s != 72 {
		t.Errorf("size %d", s)
	}
	if nvmeIoctlAdminCmd != 0xC0484E41 {
		t.Errorf("ioctl %#x", nvmeIoctlAdminCmd)
	}
	if o := unsafe.Offsetof(passthruCmd{}.Addr); o != 24 {
		t.Errorf("addr at %d", o)
	}
	if o := unsafe.Offsetof(passthruCmd{}.CDW10); o != 40 {
		t.Errorf("cdw10 at %d", o)
	}
	if o := unsafe.Offsetof(passthruCmd{}.Result); o != 68 {
		t.Errorf("result at %d", o)
	}
}

func TestIoctlErrors(t *testing.T) {
	_, err := OpenDevice("/dev/idlewatt-no-such-nvme")
	if !errors.Is(err, syscall.ENOENT) || !strings.Contains(err.Error(), "no such device node") {
		t.Errorf("open: %v", err)
	}
	// /dev/null is a character device without the NVMe ioctl: ENOTTY.
	d, err := OpenDevice("/dev/null")
	if err != nil {
		t.Skip(err)
	}
	defer d.Close()
	_, err = d.Identify()
	if !errors.Is(err, syscall.ENOTTY) || !strings.Contains(err.Error(), "not an NVMe controller character device") {
		t.Errorf("identify on /dev/null: %v", err)
	}
	e := &IoctlError{Path: "/dev/nvme0", Op: "get features 0x0c", Status: 0x0002}
	if !strings.Contains(e.Error(), "Invalid Field in Command") {
		t.Error(e)
	}
	if m := ErrnoMeaning("get features 0x0c", syscall.EACCES); !strings.Contains(m, "CAP_SYS_ADMIN") {
		t.Error(m)
	}
}
