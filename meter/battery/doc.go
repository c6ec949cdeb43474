// Package battery reads a laptop's battery fuel gauge (Linux sysfs,
// power_supply class) as a slow meter: the laptop's whole draw, ~1 S/s.
//
// # Methods
//
// Each poll prefers power_now, then |current_now|×voltage_now, then
// energy_now deltas (or charge_now×voltage_now deltas). Energy deltas give
// power only between two real steps of the gauge: the first reading is not
// a step, so the stream starts with "warmup" gaps.
//
// # Validity
//
// Only a discharging battery measures the laptop's draw: Open and Stream
// fail with ErrNotDischarging (naming the status) otherwise. A gauge value
// unchanged for longer than Options.StaleAfter (default 2 min) is stale:
// those polls are gaps with Reason "stale", never repeated values.
//
// # Uncertainty
//
// Gauges update every few seconds to a minute, so use long windows.
// Estimator states one standard uncertainty: for power readings, the spread
// of the distinct gauge values over √(updates); for energy deltas, between
// the first and last observed steps, the poll interval at each end and the
// smallest energy step. The gauge's calibration error (1–5 % is common) is
// not included.
//
// # RAPL
//
// Options.RAPL adds a second channel (port 0) with the CPU package energy
// from powercap intel-rapl:0, across counter wraparound at
// max_energy_range_uj. It is the CPU package, never drive power. energy_uj
// is root-only since Linux 5.10; the error says so. Power-only channels
// carry V = 1 and I = watts (battery channel: V = voltage_now, I = P/V).
//
// # Where it sits
//
// The meter floor (rank 1): a driver, opened by kind through
// meter/registry.
package battery
