package runlog

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
)

// SaturationShare defines a saturated endpoint: a Server run that
// completed less than this share of the samples per second it asked for,
// with its latency bound unmet or samples left unanswered (a backlog). The
// rate it did complete is then what the endpoint sustains at most; the
// rate asked is not one it can be judged at.
const SaturationShare = 0.9

// SaturationMinSamples is the fewest answered samples a completion rate is
// judged from: a run its early verdict stopped after a sample or two has a
// rate of about 0 that says nothing of the endpoint.
const SaturationMinSamples = 10

// Saturated reports whether res's endpoint was saturated (SaturationShare).
func Saturated(res *loadgen.Result) bool {
	return res != nil && res.Scenario == "Server" && res.TargetQPS > 0 &&
		res.SamplesCompleted >= SaturationMinSamples &&
		res.CompletedSamplesPerSec < SaturationShare*res.TargetQPS &&
		(!res.PerfConstraintsMet || res.DrainTimedOut || res.Unanswered > 0)
}

// SaturationText is one line saying what a saturated endpoint sustained
// ("completed 3,878 samples/s of 50,000 asked: the endpoint is saturated;
// try --mode find-peak"); "" when it was not saturated.
func SaturationText(res *loadgen.Result) string {
	if !Saturated(res) {
		return ""
	}
	return fmt.Sprintf("completed %s samples/s of %s asked: the endpoint is saturated; try --mode find-peak",
		grouped(res.CompletedSamplesPerSec), grouped(res.TargetQPS))
}

// EarlyVerdictText says that and why a run stopped once its verdict could
// no longer change; "" when it did not.
func EarlyVerdictText(res *loadgen.Result) string {
	v := res.EarlyVerdict
	if v == nil || !v.Stopped {
		return ""
	}
	return fmt.Sprintf("stopped early at %s: the verdict INVALID can no longer change (%s); --no-early-verdict (settings.early_verdict false) runs LoadGen's full length",
		mlperflog.Readable(time.Duration(v.AtNs)), v.Reason)
}

// MinDurationNote goes beside LoadGen's own advice when min duration was
// not met: the flag and field that set what LoadGen's advice talks of, and
// a value from what the run measured; or, for a run its early verdict
// stopped, that the advice does not apply.
func MinDurationNote(res *loadgen.Result) string {
	if res == nil || res.MinDurationMet {
		return ""
	}
	switch res.EndReason {
	case loadgen.StopEarlyVerdict:
		return "the run was stopped by its early verdict, not short of queries: --no-early-verdict runs its full length"
	case loadgen.StopCancelled, loadgen.StopInterrupted, loadgen.StopStalled:
		return ""
	}
	target := res.Effective.TargetQPS
	switch res.Scenario {
	case "Offline":
		note := fmt.Sprintf("the expected rate is --target-qps / settings.target_qps (offline_expected_qps, %s here)", grouped(target))
		if r := res.SamplesPerSecond; r > target {
			note += fmt.Sprintf("; this run did %s samples/s: try --target-qps %s", grouped(r), strconv.FormatFloat(roundUp2(r), 'f', -1, 64))
		}
		return note
	case "Server":
		return fmt.Sprintf("the target rate is --target-qps / settings.target_qps (server_target_qps, %s here)", grouped(target))
	}
	note := "the expected latency is --expected-latency-ns / settings.expected_latency_ns"
	if target > 0 {
		note += fmt.Sprintf(" (%s here)", mlperflog.Readable(time.Duration(1e9/target)))
	}
	if res.QueriesIssued > 0 && res.DurationNs > 0 {
		mean := float64(res.DurationNs) / float64(res.QueriesIssued)
		note += fmt.Sprintf("; this run's queries took %s each on average: try --expected-latency-ns %s",
			mlperflog.Readable(time.Duration(mean)), strconv.FormatFloat(roundDown2(mean), 'f', -1, 64))
	}
	return note
}

// grouped is a rate for a reader: whole and with thousands separators from
// 100 up ("50,000"), three significant digits below.
func grouped(v float64) string {
	if !(v >= 100) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// roundUp2 and roundDown2 round to two significant digits, up or down: a
// suggested setting with the measured figure's margin on the safe side.
func roundUp2(v float64) float64   { return round2(v, math.Ceil) }
func roundDown2(v float64) float64 { return round2(v, math.Floor) }

func round2(v float64, f func(float64) float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return v
	}
	e := math.Floor(math.Log10(v)) - 1
	if e >= 0 {
		p := math.Pow(10, e)
		return f(v/p) * p
	}
	// Divide by a whole power of ten: 56/10 prints as 5.6.
	q := math.Pow(10, -e)
	return f(v*q) / q
}
