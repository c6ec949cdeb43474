package nvmehost

import (
	"errors"
	"fmt"
	"syscall"
)

// IoctlError is a refused or failed admin command: an errno from open or
// ioctl, or an NVMe status the controller returned.
type IoctlError struct {
	Path   string
	Op     string
	Err    error  // errno (syscall.Errno), nil when Status is set
	Status uint16 // NVMe status field (SCT bits 10:8, SC bits 7:0)
}

func (e *IoctlError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%s: %s: the controller returned status %#x (%s)", e.Path, e.Op, e.Status, statusMeaning(e.Status))
	}
	return fmt.Sprintf("%s: %s: %v (%s)", e.Path, e.Op, e.Err, ErrnoMeaning(e.Op, e.Err))
}

func (e *IoctlError) Unwrap() error { return e.Err }

// ErrnoMeaning says what an errno from opening /dev/nvmeN or from
// NVME_IOCTL_ADMIN_CMD usually means (drivers/nvme/host/ioctl.c
// nvme_cmd_allowed, core.c nvme_dev_open).
func ErrnoMeaning(op string, err error) string {
	open := op == "open"
	switch {
	case errors.Is(err, syscall.ENOENT):
		return "no such device node: no NVMe controller by that name, or /dev not populated"
	case errors.Is(err, syscall.EACCES) && open:
		return "the device node is root-only (mode 0600): run as root, or pass nvme-cli output with --nvme-id-ctrl/--nvme-apst"
	case errors.Is(err, syscall.EACCES):
		return "the kernel refuses this admin command without CAP_SYS_ADMIN (since Linux 6.2 only Identify is allowed unprivileged): run as root"
	case errors.Is(err, syscall.EPERM):
		return "not permitted: admin passthrough needs CAP_SYS_ADMIN on this kernel"
	case errors.Is(err, syscall.ENOTTY):
		return "not an NVMe controller character device (the ioctl is unknown to its driver)"
	case errors.Is(err, syscall.EWOULDBLOCK):
		return "the controller is not live (resetting, or being removed)"
	case errors.Is(err, syscall.EINTR):
		return "interrupted while waiting for the controller"
	case errors.Is(err, syscall.EINVAL):
		return "the kernel rejected the command's fields"
	case errors.Is(err, syscall.EIO), errors.Is(err, syscall.ENODEV), errors.Is(err, syscall.ENXIO):
		return "the controller did not answer (dead, or removed)"
	}
	return "unexpected error"
}

// statusMeaning names the common generic NVMe status codes (NVMe Base 2.0
// figure 102).
func statusMeaning(s uint16) string {
	sct, sc := s>>8&7, s&0xff
	if sct == 0 {
		switch sc {
		case 0x01:
			return "Invalid Command Opcode"
		case 0x02:
			return "Invalid Field in Command: the controller does not support this feature"
		case 0x06:
			return "Internal Error"
		}
	}
	return fmt.Sprintf("status code type %d, status code %#02x", sct, sc)
}
