// Package registry is where meter kinds are found by name: each built-in
// driver (meter/hub, meter/ppk2, meter/battery, meter/linemeter,
// meter/scpi) registers its kind, aliases, default port, opener and
// replayer in a file of its own here, the way periph.io's i2creg holds the
// I²C buses. Callers — `idlewatt record --meter KIND`, `idlewatt meters`,
// the measurement rig — open a meter by kind with Open and never name a
// driver.
//
// # Settings
//
// A driver's kind-specific options (a PPK2's mode and supply, a line
// meter's column map, an SCPI family, …) arrive as Settings: values by
// config key under meter. ("mode", "supply_mv", "rate_hz"), already typed
// by the caller. Each driver reads only its own keys and checks them; a bad
// one is an *Error of class ErrUsage whose message names the setting the
// way the caller spells it (Settings.Where: "--supply-mv (meter.supply_mv)"
// on the command line).
//
// # Flags
//
// Each driver declares its settings in its entry (Driver.Flags,
// internal/settings.Flag: flag, config key meter.KEY, kind, default,
// help), the way node_exporter's collectors declare theirs. Flags merges
// them (a setting two kinds share is one flag, its help naming both);
// Read resolves them through the caller's settings.Getter into Settings;
// Foreign refuses a flag the kind would ignore; WriteList is `idlewatt
// meters`; OpenFor classes Open's errors for a command line. app/config
// adds the keys to the schema.
//
// # Opening
//
// Open stats the path first: a regular file is a recorded byte stream and
// goes to the kind's Replay (decoded unpaced; a kind without one refuses
// it); anything else (a serial port, a pty, a sysfs root) goes to Open.
// Errors say which class they are: ErrUsage (unknown kind, missing or
// absent port, bad settings), ErrInput (a recorded stream that does not
// decode), anything else a device failure.
//
// # Capabilities
//
// What differs between meters once open is discovered by type assertion
// on the meter.Meter, never by kind: meter.Resolver (stream defaults),
// meter.Reconnector (reopen after a disconnect), meter.Marker,
// meter.DevSlpPin, meter.PortPower.
//
// # Where it sits
//
// The meter floor (rank 1), over every driver (one file each); app/rig and
// cmd/idlewatt open meters through it.
package registry
