// Package buildinfo says which build of idlewatt is running, from what
// the go command stamped into the binary (module version, VCS revision,
// commit time, a modified tree) or a version set at link time. A leaf
// (internal/): the standard library only; cmd/idlewatt prints it.
package buildinfo
