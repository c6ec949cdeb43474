// Package settings is the vocabulary every configurable package speaks,
// so that a setting is declared once, beside the code that checks it,
// and the command line only iterates the declarations (node_exporter's
// collector pattern: each collector declares its own flags).
//
//   - A Flag declares one setting: its command-line flag, its config key
//     (file and IDLEWATT_* variable; "" for a flag only), its Kind, default
//     and help. The meter drivers declare theirs in their meter/registry
//     entry; the hub emulator, replay, the generators and the rest beside
//     their options.
//   - A Getter is how such a package reads its settings back, by flag
//     name: the command line resolves each (flag if given, else config
//     key, else IDLEWATT_<KEY>, else the default) and names its source in
//     messages (Where). Nothing here imports viper or cobra: cmd/idlewatt
//     is the Getter.
//   - Declare adds the declarations to a command's flag set (pflag),
//     each flag annotated with its key; Fixed is a Getter of fixed values
//     for tests and callers without a command line.
//   - Usagef and Input mark bad usage or input (ErrUsage; exit 2 on the
//     command line), wherever the check runs.
//   - One grammar for every duration (ParseDuration: a unit is required, a
//     bare number other than 0 is refused with both readings spelled out)
//     and for byte sizes (ParseBytes); Check tells whether a config value
//     has its key's Kind.
//
// It is a leaf (internal/): the standard library and pflag (Declare) only. app/config holds
// the schema built from these declarations; docs/config.md lists the keys.
package settings
