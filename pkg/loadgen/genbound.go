package loadgen

import (
	"fmt"
	"time"
)

// GeneratorBoundShare is the rule for "the generator may be the
// bottleneck": Server issue lateness at p99 over this share of the latency
// bound. Lateness is charged to the SUT (a Server latency runs from the
// scheduled time), so a load generator that issues late eats into the bound
// itself; at a tenth of it, an INVALID verdict may say more about the
// machine that issued the queries than about the SUT, and a VALID one had
// less margin than it shows. The one place the rule is defined.
const GeneratorBoundShare = 0.10

// GeneratorBound is result.json's generator_bound: present when the rule
// above holds.
type GeneratorBound struct {
	// LatenessP99Ns is the issue lateness at p99; BoundNs the Server
	// latency bound; Share their ratio.
	LatenessP99Ns int64   `json:"lateness_p99_ns"`
	BoundNs       int64   `json:"bound_ns"`
	Share         float64 `json:"share"`
}

// generatorBound applies the rule to a Server run's issue lateness and
// bound; nil when it does not hold (or outside Server, which has no bound).
func generatorBound(lateness LatencyStats, bound time.Duration) *GeneratorBound {
	if bound <= 0 || lateness.Count == 0 {
		return nil
	}
	p99, ok := lateness.At(0.99)
	if !ok || float64(p99) <= GeneratorBoundShare*float64(bound) {
		return nil
	}
	return &GeneratorBound{LatenessP99Ns: int64(p99), BoundNs: int64(bound), Share: float64(p99) / float64(bound)}
}

// Warning is the generator_bound's line among result.json's warnings.
func (g *GeneratorBound) Warning() string {
	return fmt.Sprintf("generator bound: issue lateness p99 %.3f ms is %.0f%% of the %.3f ms latency bound (over %.0f%%); the load generator may be the bottleneck (a busy machine, too few cores): latencies include its lateness",
		float64(g.LatenessP99Ns)/1e6, 100*g.Share, float64(g.BoundNs)/1e6, 100*GeneratorBoundShare)
}
