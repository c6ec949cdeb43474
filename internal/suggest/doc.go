// Package suggest finds the plausible intended word for a typo ("did you
// mean …?") in error messages for policies, profiles and config keys.
//
// Where it sits: a leaf (rank 0) that imports nothing of the project;
// states/alpm, states/drivesim and cmd/idlewatt import it.
package suggest
