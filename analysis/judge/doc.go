// Package judge measures a drive's link-power cycles from its power
// samples and judges them: the DevSlp cycle quantities (floor, entry, power
// rise, hold, exit) and the NVMe APST cycle's (entry, floor, exit) with
// their uncertainty, and the verdicts built on them.
//
// # Estimators
//
// Entry and power rise are change points: a two-segment least-squares step
// fit (FitStep) over the samples around the pin change, its 95 % interval
// from a parametric bootstrap of the fitted step with the measured noise,
// plus the half sample the change may fall inside. The floor is the mean
// of the samples between the two change points, its uncertainty by batch
// means (MeanBatches): the mean is unbiased under dithering noise and ADC
// quantisation, where the median of quantised readings is not.
//
// # Verdicts
//
// Every check compares an interval with a limit: Pass when the interval is
// inside, Fail when it is wholly outside, Inconclusive otherwise, with the
// reason. A drive that does not support DevSlp is NotSupported, and a
// host-side cause (policy not applied, no pin) makes any other non-pass
// Inconclusive. Definitions: docs/analysis.md, "DevSlp quantities".
//
// The quantities carry their unit: a power is a NumW (Num[units.Watts]), a
// latency a NumMs (Num[units.Milliseconds]), absent as NaN (null in JSON);
// the limits (Criteria) are units.Watts and units.Milliseconds, and a check
// (checkAtMost) or a printed x ± u (PM) takes a value, its interval and its
// limit of one quantity, so a floor cannot be judged against a latency.
//
// # Where it sits
//
// The analysis layer (rank 3): it judges the samples it is handed and
// imports only leaves (units, hostclock, internal/stat) and the pure NVMe
// level model (states/nvme/pslevel); analysis, report, app/rig, app/apst
// and cmd/idlewatt import it.
//
// # Files
//
// devslp.go judges one DevSlp cycle (JudgeCycle, Judge); level.go its
// resting levels and their uncertainty; stepfit.go the change points;
// verdict.go pools the cycles into a Verdict (Summarise); outcome.go the
// vocabulary both verdicts share (Num, Outcome, PM); apst.go the APST
// cycle and its verdict.
package judge
