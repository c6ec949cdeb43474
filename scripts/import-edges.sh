#!/bin/sh
# import-edges.sh lists the module's import edges that do not point down the
# data path (DESIGN.md): meter → capture → analysis → report → app (rig, apst, hoststates → config, accuracy) → cmd, with
# workload and states feeding events in beside the meter, and leaf utilities
# (units, hostclock, internal/outfile, …) below everything.
#
# Each package gets a rank; an edge A → B is
#   down     rank(A) > rank(B), or both in the same room (top folder, so a
#            driver importing its parent package is fine);
#   sideways same rank, different rooms (e.g. states/drivesim → meter);
#   up       rank(A) < rank(B) (e.g. workload/trace → capture).
# Test-only imports are not counted.
#
# Usage: scripts/import-edges.sh [-a]   (-a: also print the down edges)
# Prints one line per edge "up|sideways|down  A -> B" and a count per kind.
set -eu
cd "$(dirname "$0")/.."
mod=$(go list -m)
go list -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}' ./... |
	awk -v mod="$mod/" -v all="${1:-}" '
function strip(p) { return substr(p, length(mod) + 1) }
# rank and room of a package path inside the module (longest prefix first)
function rank(p) {
	if (p ~ /^(units|hostclock|internal)(\/|$)/) return 0
	if (p ~ /^report(\/|$)/) return 4
	# the simulated drives answer workload ops with meter samples: above both
	if (p ~ /^states\/(drivesim|nvme\/sim)(\/|$)/) return 1.5
	# states/nvme (model, decoding), its pure level model nvme/pslevel and its
	# host side nvme/nvmehost (sysfs walk, ioctl, writes) share the floor
	if (p ~ /^states\/nvme(\/(pslevel|nvmehost))?$/) return 1
	if (p ~ /^(meter|workload|states)(\/|$)/) return 1
	if (p ~ /^capture(\/|$)/) return 2
	if (p ~ /^analysis(\/|$)/) return 3
	# the application layer: the rig, and app/apst (the simulated NVMe host:
	# sim drive, hub, analysis); the accuracy campaign runs the rig
	# app/emuhub joins the hub emulator and the simulated drives, below the rest
	if (p ~ /^app\/emuhub(\/|$)/) return 4.5
	if (p ~ /^app\/(rig|apst|hoststates)(\/|$)/) return 5
	# app/config: the settings schema, read off the rig set-up and the
	# declarations of everything below it
	if (p ~ /^app\/config(\/|$)/) return 5.5
	if (p ~ /^app\/accuracy(\/|$)/) return 6
	if (p ~ /^cmd(\/|$)/) return 7
	return -1
}
function room(p,    seg) {
	if (rank(p) == 0) return "util"
	if (p ~ /^(internal|app)\//) { split(p, seg, "/"); return seg[1] "/" seg[2] }
	split(p, seg, "/"); return seg[1]
}
{
	if (index($1, mod) != 1) next
	a = strip($1)
	for (i = 2; i <= NF; i++) {
		if (index($i, mod) != 1) continue
		b = strip($i)
		ra = rank(a); rb = rank(b)
		if (ra < 0 || rb < 0) { kind = "unranked" }
		else if (room(a) == room(b) || ra > rb) { kind = "down" }
		else if (ra == rb) { kind = "sideways" }
		else { kind = "up" }
		n[kind]++
		if (kind != "down" || all == "-a") printf "%-8s %s -> %s\n", kind, a, b
	}
}
END { printf "edges: %d down, %d sideways, %d up, %d unranked\n", n["down"], n["sideways"], n["up"], n["unranked"] }'
