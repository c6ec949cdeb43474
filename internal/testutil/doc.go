// Package testutil holds the helpers the tests share, for the tests alone
// (nothing but _test.go files imports it). A leaf: standard library only.
//
//   - Update is the one flag that rewrites golden files and fixtures,
//     -update, in every package (go test ./states/alpm -update); defining
//     it here means a package cannot give it another name, and one that
//     tried to define its own -update beside it would panic at start.
//   - Golden compares output with a golden file, or rewrites it with
//     -update; FirstDiff shows the first line two texts differ on,
//     FirstByteDiff the first byte of binary files.
//   - Near and WithinRel compare a float with a relative tolerance.
//   - Extract unpacks a fixture archive into a fresh test directory.
//   - WaitFor polls a condition under a hang guard (never a timing check).
//   - SeedFiles adds fixture files to a fuzz target's seed corpus.
package testutil
