package compliance

import (
	"fmt"
	"math"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// Figure is the speed figure of one performance run.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// HigherIsFaster: a throughput; otherwise a latency.
	HigherIsFaster bool `json:"higher_is_faster"`
}

func (f Figure) String() string {
	if f.Unit == "ns" {
		return fmt.Sprintf("%s %.3f ms", f.Name, f.Value/1e6)
	}
	return fmt.Sprintf("%s %.2f %s", f.Name, f.Value, f.Unit)
}

// FigureOf is a run's speed figure: Offline's samples per second, the mean
// query latency for MultiStream, the mean sample latency otherwise.
func FigureOf(res *loadgen.Result) Figure {
	switch res.Scenario {
	case "Offline":
		return Figure{Name: "samples per second", Value: res.SamplesPerSecond, Unit: "samples/s", HigherIsFaster: true}
	case "MultiStream":
		return Figure{Name: "mean query latency", Value: float64(res.QueryLatency.MeanNs), Unit: "ns"}
	}
	return Figure{Name: "mean sample latency", Value: float64(res.SampleLatency.MeanNs), Unit: "ns"}
}

// Comparison is an audited run's figure against the reference run's.
type Comparison struct {
	Reference Figure `json:"reference"`
	Audit     Figure `json:"audit"`
	// Faster is how much faster the audited run was, as a fraction of the
	// reference speed (negative: slower): for a throughput audit/ref − 1,
	// for a latency ref/audit − 1.
	Faster float64 `json:"faster"`
	// Difference is |audit − ref| / ref of the figures.
	Difference float64 `json:"difference"`
	Threshold  float64 `json:"threshold"`
}

func compare(ref, audit Figure, threshold float64) Comparison {
	c := Comparison{Reference: ref, Audit: audit, Threshold: threshold}
	switch {
	case ref.Value <= 0 || audit.Value <= 0:
		c.Faster, c.Difference = math.NaN(), math.NaN()
	case ref.HigherIsFaster:
		c.Faster = audit.Value/ref.Value - 1
	default:
		c.Faster = ref.Value/audit.Value - 1
	}
	if ref.Value > 0 {
		c.Difference = math.Abs(audit.Value-ref.Value) / ref.Value
	}
	return c
}
