// Package linemeter reads meters that print one reading per text line over
// a serial port: DIY INA219/INA226 sketches ("millis,loadV,current_mA",
// "BusV,ShuntV_mV,LoadV,Current_mA" at 115200 baud) and LowPowerLab's
// CurrentRanger (one float, amperes, per line after `u` turns logging on,
// ~600–800 lines/s). There is no standard, so a column map says which field
// is time, voltage and current, in which unit, with which separator.
//
// # Column map
//
// ParseColumns takes a header-like spec ("millis,loadV,current_mA"); units
// come from name suffixes (_mA, _uA, _A, _mV, _V, _ms, _us, _s). A shunt
// voltage column is never taken for the DUT voltage. Without a voltage
// column, Options.Voltage is used. "currentranger" is the one-float map.
//
// # Bad lines
//
// A line that is not a reading (banner, header, "nan", too few fields, a
// value beyond ±MaxAmps or ±MaxVolts, over 4 KiB) is skipped and counted:
// Bad() gives the count and the first MaxBadLines with line number and
// byte offset; Stats() has BadLines, FirstBadLine, FirstBadByte and
// BytesDiscarded, which reach the capture's stats record. After the first
// reading every bad line keeps its place as a one-sample gap with reason
// "bad-line" (a run of them is one gap), so the samples after it are not
// shifted in time; bad lines before it are a preamble and are not gaps.
// Empty lines are neither samples nor gaps. Parsing never panics
// (FuzzParse, which also checks that samples and gaps tile the timeline).
//
// # Timing
//
// Lines are numbered as they arrive; a MarkEcho (Synthetic) about once a
// second ties the count to the host clock. A time column is parsed but the
// index stays the line count. New takes any io.Reader.
//
// # Serial port
//
// Open uses internal/serialport (go.bug.st/serial, raw 8N1, Options.Baud)
// without modem-status ioctls, so a pty works too. The port has *os.File's
// deadline semantics (never the (0, nil) read that bufio would turn into
// io.ErrNoProgress), which Stream uses to stop on ctx.
//
// # Where it sits
//
// The meter floor (rank 1): a driver, opened by kind through
// meter/registry.
package linemeter
