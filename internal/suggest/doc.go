// Package suggest finds the plausible intended word for a typo ("did you
// mean …?") in error messages for policies, profiles and config keys.
package suggest
