package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// scheduleShape is what schedule prints of a load shape (issue 31)
// beside the shape runspec builds: the mix, for its header.
type scheduleShape struct {
	parsedMix *shape.Mix
}

// shaped says whether a load shape is asked for.
func (f *scheduleFlags) shaped() bool {
	return f.set["stages"] || f.set["arrivals"] || f.set["mix"] || f.set["trace"]
}

// shapeOf is the shape of the flags as a run builds it (runspec.Schedule:
// the arrival times from the schedule seed, the run's schedule_rng_seed,
// and the models from the same seed, which Mix.Pick salts). schedule
// prints stages: a trace file's schedule is its own timestamps.
func (f *scheduleFlags) shapeOf(ls loadgen.Settings) (trace.Shape, error) {
	if f.set["trace"] {
		return nil, fmt.Errorf("--trace: schedule prints the schedule of --stages; a trace file's is its timestamps")
	}
	if !f.set["stages"] {
		return nil, fmt.Errorf("--arrivals and --mix shape the schedule of --stages: give --stages too (e.g. --stages 60s:100)")
	}
	if ls.Shape == nil {
		// Nothing was built: the stages are empty, which ParseStages says.
		if _, err := shape.ParseStages(f.spec.Stages); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("--stages: no stages")
	}
	if f.set["mix"] {
		m, err := shape.ParseMix(f.spec.Mix)
		if err != nil {
			return nil, err
		}
		f.shape.parsedMix = m
	}
	return ls.Shape, nil
}

// printShaped prints the shaped schedule: a header (the shape, its seed,
// the count and the length), then one line a query: its index, its offset
// in nanoseconds, its stage (from 0) and, with --mix, its model. Two
// passes over the shape, so nothing is held whatever the length.
func (f *scheduleFlags) printShaped(ls loadgen.Settings, stdout, stderr io.Writer) int {
	s, err := f.shapeOf(ls)
	if err != nil {
		fmt.Fprintf(stderr, "loadgend schedule: %v\n", err)
		return 2
	}
	n, err := countShape(s)
	if err != nil {
		fmt.Fprintf(stderr, "loadgend schedule: %v\n", err)
		return 1
	}
	if err := writeShape(stdout, s, f.shape, ls.ScheduleRNGSeed, n); err != nil {
		fmt.Fprintf(stderr, "loadgend schedule: writing the schedule: %v\n", err)
		return 1
	}
	return 0
}

// countShape counts one pass's arrivals, refusing more than a trace holds.
func countShape(s trace.Shape) (int, error) {
	a, err := s.Arrivals()
	if err != nil {
		return 0, err
	}
	defer a.Close()
	n := 0
	for _, ok := a.Next(); ok; _, ok = a.Next() {
		if n++; n > trace.MaxSamples {
			return 0, fmt.Errorf("%w: the load shape has more than %d arrivals", trace.ErrTooLarge, trace.MaxSamples)
		}
	}
	return n, a.Err()
}

func writeShape(w io.Writer, s trace.Shape, fl scheduleShape, seed uint64, n int) error {
	x, ok := s.(interface {
		Stages() []shape.Stage
		Models() []string
		Process() shape.Process
	})
	if !ok {
		return fmt.Errorf("the shape %T does not say its stages", s)
	}
	models := x.Models()
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "# stages %s arrivals %s schedule_rng_seed %d\n", shape.FormatStages(x.Stages()), x.Process(), seed)
	if models != nil {
		fmt.Fprintf(bw, "# mix %s\n", fl.parsedMix)
	}
	fmt.Fprintf(bw, "# generated_query_count %d generated_query_duration %d\n", n, int64(s.End()))
	if models != nil {
		bw.WriteString("# query_idx scheduled_delta_ns stage model\n")
	} else {
		bw.WriteString("# query_idx scheduled_delta_ns stage\n")
	}
	a, err := s.Arrivals()
	if err != nil {
		return err
	}
	defer a.Close()
	buf := make([]byte, 0, 128)
	for i := 0; ; i++ {
		q, ok := a.Next()
		if !ok {
			break
		}
		buf = strconv.AppendInt(buf[:0], int64(i), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(q.At), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(q.Stage), 10)
		if models != nil {
			buf = append(buf, ' ')
			buf = append(buf, models[q.Model]...)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	if err := a.Err(); err != nil {
		return err
	}
	return bw.Flush()
}
