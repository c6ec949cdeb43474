// Package conntest is a two-way record/playback fake for the serial
// meter drivers (hub, PPK2, SCPI), after periph's conntest: Record wraps
// a live link (an emulator's pty) and keeps both directions of the
// conversation as a Script; Playback replays a Script to a driver without
// the emulator, checking every byte the driver writes against it and
// handing the device's bytes out only once the host has written what
// preceded them. Verify fails on unexpected, missing or leftover traffic
// in either direction, so a test that plays a recorded session proves the
// driver still says exactly what it said, and reads everything it was
// sent.
//
// Where it sits: a leaf helper for tests under meter/; it imports nothing
// of the project.
package conntest
