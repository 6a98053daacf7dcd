package runner

import (
	"context"
	"log/slog"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/serverstats"
	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// runStatistics is a run's reads of the server's statistics extension
// (issue 30): before the timed run, every second while it lasts, and after
// its drain, on a client of its own. Nothing it does fails the run.
type runStatistics struct {
	r    *serverstats.Reader
	x    *serverstats.Run
	stop func()
	// offAPI is set when the run's API has no statistics extension: the
	// result says "not offered" without a read.
	offAPI bool
}

// openStatistics prepares a run's statistics reads: nil when the spec
// turns them off (NoServerStatistics) or the client for them cannot be
// built (logged: the run goes on without them).
func openStatistics(spec Spec, ss *session, log *slog.Logger) *runStatistics {
	if spec.NoServerStatistics {
		return nil
	}
	if api := ss.pr.API; api == genai.APIOpenAICompletions || api == genai.APIOpenAIChat {
		// An OpenAI server has no KServe statistics; the generate and
		// kserve-stream APIs are Triton's, which has them.
		return &runStatistics{offAPI: true}
	}
	// The run's own TLS configuration, built as open built it.
	tlsCfg, err := tlsConfig(ss.t, spec.TLS)
	var r *serverstats.Reader
	if err == nil {
		r, err = serverstats.Open(ss.t, spec.Model, spec.ModelVersion, sent(spec.Headers), tlsCfg)
	}
	if err != nil {
		log.Warn("server statistics not read", "error", err)
		return nil
	}
	return &runStatistics{r: r}
}

// option is the engine option that reads the statistics before the clock
// starts and then starts the live reads, which report to live (nil: none).
func (s *runStatistics) option(live func(serverstats.Live)) []loadgen.Option {
	if s == nil || s.r == nil {
		return nil
	}
	return []loadgen.Option{loadgen.WithBeforeStart(func(ctx context.Context) {
		s.x = serverstats.Begin(ctx, s.r)
		// The live reads outlive a cancel of the run's issuing until the
		// run ends: stop ends them.
		s.stop = s.x.Live(context.WithoutCancel(ctx), serverstats.LiveInterval, live)
	})}
}

// finish stops the live reads, reads the statistics after the run and
// puts their summary in res; a run that never started its clock gets
// nothing. scrub takes the run's secrets out of a note that quotes the
// server.
func (s *runStatistics) finish(ctx context.Context, res *loadgen.Result, scrub func(string) string) {
	if s == nil {
		return
	}
	if s.offAPI {
		res.Server = &serverview.Server{Statistics: serverview.NotOfferedStatistics()}
		return
	}
	if s.x == nil {
		return
	}
	s.stop()
	s.x.Scrub = scrub
	st := s.x.End(context.WithoutCancel(ctx), runlog.BreakdownClient(res).MeanLatencyNs)
	res.Server = &serverview.Server{Statistics: st}
}

// close closes the reads' own client.
func (s *runStatistics) close() {
	if s == nil || s.r == nil {
		return
	}
	if s.stop != nil {
		s.stop()
	}
	s.r.Close()
}
