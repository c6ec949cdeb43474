package firmware

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter/hub"
)

// needTools skips a test whose toolchain is missing, unless
// IDLEWATT_REQUIRE_FIRMWARE=1 (.ci/run sets it): then it fails, so CI never
// passes a firmware test it did not run.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("IDLEWATT_REQUIRE_FIRMWARE") == "1" {
				t.Fatalf("%s not found (IDLEWATT_REQUIRE_FIRMWARE=1)", tool)
			}
			t.Skipf("%s not found: apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm", tool)
		}
	}
}

// TestRecordFromQEMU: the Cortex-M4 image under qemu-system-arm
// (netduinoplus2, an STM32F405), its UART on a pty: idlewatt's driver
// streams from it with marks and DEVSLP commands, and `idlewatt record`
// records 4 s from it with no CRC error, no gap and every sample.
func TestRecordFromQEMU(t *testing.T) {
	needTools(t, "arm-none-eabi-gcc", "qemu-system-arm")
	dir := build(t, "arm")
	qemu := filepath.Join(dir, "qemu.sh")
	t.Run("driver", func(t *testing.T) {
		driverSession(t, startPty(t, qemu), hub.Options{}, "idlewatt open hub", 1000)
	})
	t.Run("record", func(t *testing.T) {
		r := record(t, startPty(t, qemu), 4*time.Second, "--rate", "1000")
		if r.CRCErrors != 0 || r.Gaps != 0 || r.Lost != 0 || r.Refused != 0 || r.Marks == 0 {
			t.Errorf("record from QEMU: %+v", r)
		}
		// 4 channels at 1 kS/s for the recording's ≈ 4 s less the handshake.
		if r.Channels != 4 || r.Samples < 4*1000*3 {
			t.Errorf("%d samples on %d channels", r.Samples, r.Channels)
		}
	})
}
