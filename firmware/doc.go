// Package firmware holds the Go tests of the reference hub firmware, the C
// sources beside them (core/, hal/, sim/, host/, arm/; docs/firmware.md):
//
//   - golden_test.go: for the same sample counts, the firmware's protocol
//     core (host/hubsim --script) and idlewatt's emulator
//     (meter/hub/hubemu.WriteFast) send the same bytes, frame for frame;
//   - hubsim_test.go: `idlewatt record` records from the host build's
//     pseudo-terminal, with and without injected byte errors;
//   - qemu_test.go: `idlewatt record` records from the Cortex-M build running
//     under qemu-system-arm.
//
// The tests build the firmware with make (gcc; arm-none-eabi-gcc and
// qemu-system-arm for the last), as .ci/run installs them.
//
// Where it sits: beside the data path, not in it: Go tests that build the C
// firmware and compare it with meter/hub/hubemu and the hub driver; nothing
// imports it.
package firmware
