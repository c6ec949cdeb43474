// Package config is the one schema of idlewatt's configuration: every key
// a config file or an IDLEWATT_* variable may set, its kind, and the checks
// and messages that refuse a misspelt key or a junk value before any
// command runs (exit 2, named by its key, never a silent default found out
// after a recording).
//
// The keys are not listed twice. The measurement set-up's are app/rig's
// Config, DriveConfig and Battery, read off their mapstructure tags (a
// field tagged settings:"signed" is a duration of either sign); the
// drivers' are their meter/registry entries' flags; every other command's
// are the settings.Flag declarations of the packages that check them
// (Keys gathers them). docs/config.md lists the same keys, which a test
// holds.
//
// # Where it sits
//
// In the application layer, above app/rig (whose set-up it decodes) and
// below cmd/idlewatt, the only viper user: the command line hands this
// package viper's values (Source) and binds the variables CheckEnv names;
// nothing here imports viper.
package config
