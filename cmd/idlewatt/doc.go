// Command idlewatt measures the power storage drives draw and proves whether
// they reach their idle states. See README.md and docs/.
//
// Where it sits: the top (rank 7): flags and config in, a call into the
// application layer, report or analysis, output and exit codes out
// (docs/architecture.md); it may import every package and nothing imports
// it.
package main
