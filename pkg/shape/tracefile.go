package shape

import (
	"errors"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// TraceOptions configure OpenTrace.
type TraceOptions struct {
	// Speed scales time (--trace-speed; 2: twice as fast; 0 means 1).
	Speed float64
	// Start and Duration take a window of the trace (--trace-start,
	// --trace-duration; 0: from the beginning, to the end), in the
	// trace's own time, before Speed.
	Start, Duration time.Duration
	// Mix names the models a trace's "model" field may name (Arrival.Model
	// is the entry's index); nil: a trace naming models is refused unless
	// it names the run's one model.
	Mix *Mix
	// Model is the run's model, when there is no mix.
	Model string
}

// OpenTrace checks a trace file (JSONL in Mooncake's layout, or CSV with a
// header in the Azure LLM inference traces' layout) and returns its shape:
// every request at its timestamp, Arrival.Request its lengths and hash
// ids. Errors wrap ErrShape and name the line.
func OpenTrace(path string, o TraceOptions) (trace.Shape, error) { return nil, errors.ErrUnsupported }
