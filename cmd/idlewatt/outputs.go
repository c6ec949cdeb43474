package main

import (
	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/outfile"
)

// Every output goes through internal/outfile (docs/cli.md, "Files and
// outputs"): an existing file is replaced only with --overwrite, never
// through a symbolic link, never over one of the command's inputs, and
// always through a temporary file renamed into place. A refusal exits 2
// (exitCode checks outfile.ErrRefused).

// outOptions are the output rules for cmd: --overwrite (or its config
// key, where one exists) and the files the command reads, the config file
// among them for every command (record --config c.yaml --out c.yaml
// --overwrite replaced the config it had read).
func outOptions(cmd *cobra.Command, inputs ...string) outfile.Options {
	if c := configPath(cmd); c != "" {
		inputs = append(inputs[:len(inputs):len(inputs)], c)
	}
	return outfile.Options{Overwrite: get(cmd).Bool("overwrite"), Inputs: inputs}
}

// configPath is the config file this command read, if any (an input no
// output may be).
func configPath(cmd *cobra.Command) string {
	if f := cliOf(cmd).cfg.ConfigFileUsed(); f != "" {
		return f
	}
	p, _ := cmd.Flags().GetString("config")
	return p
}
