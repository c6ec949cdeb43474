// Package app is the application layer, the top of the data path below
// the command line: meter → capture → analysis → report → app → cmd.
// Its packages run whole sessions by calling everything beneath them;
// nothing beneath imports them.
//
//   - app/rig: a measurement (measure, devslp verify, demo) and the idle
//     runs (per ALPM policy or NVMe setting), on the emulated hub or a
//     real meter;
//   - app/apst: the simulated NVMe host (APST cycles, idle windows);
//   - app/accuracy: the truth-recovery campaign, which runs the rig on
//     random simulated drives and compares with the models' truth;
//   - app/emuhub: the emulated hub with simulated drives behind its
//     ports, the one builder the others and `hub emulate` call;
//   - app/hoststates: link power on a sysfs tree (`idlewatt states`);
//   - app/config: the one settings schema, every config key gathered
//     from the packages that declare them.
//
// # Why a folder of its own, and why "app"
//
// In internal/, beside the leaf helpers (internal/outfile,
// internal/serialport, …) that meter, capture and states import, these
// packages would put the bottom and the top of the import graph in one
// folder, and the folder picture would show arrows running back up. So
// internal/ holds only leaves (internal/layering_test.go checks it) and
// app/ only the layer that orchestrates. "app" says what the layer is
// (the application, as opposed to the library beneath it) in the fewest
// letters; "rig" is already one of its packages and "run" a verb every
// package uses.
//
// This package holds no code; docs/architecture.md has the layers and
// which may import which.
package app
