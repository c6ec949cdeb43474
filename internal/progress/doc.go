// Package progress is the progress line of the commands that read a whole
// capture (report, plot, export, repair): once a step has run After it
// says on its writer what the command is doing, then again every Every,
// so a long step on a big capture is never silent (issue 26: a
// 4096-channel report ran 12 minutes without a word). Recording has its
// own line (capture/record.ReportProgress).
//
// A leaf (internal/): the standard library and internal/textsafe only.
// Its clock and its ticks are the caller's to drive, so tests need no
// waiting; Start runs the ticker in a goroutine the caller starts (the
// command line's panic guard).
package progress
