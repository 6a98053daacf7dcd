package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// ErrIssuersClient refuses engine.issuers > 1 on a client that is not an
// event loop.
var ErrIssuersClient = errors.New("issuers: more than one issuer needs the event-loop clients")

// issuerCount is the run's number of issuers (engine.issuers; 0 is one).
func issuerCount(s loadgen.Settings) int { return max(s.Engine.Issuers, 1) }

// share is issuer k of n's part of total (connections): the parts differ
// by at most one and add up to total, each at least one.
func share(total, n, k int) int {
	return max(total/n+boolInt(k < total%n), 1)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// splitConns gives issuer k of n its share of cfg's connections: the HTTP
// loop's cap and the gRPC loop's count. The HTTP loops' budget for the
// answers read at once is shared (sharedBudget), not split.
func splitConns(cfg sut.Config, n, k int) sut.Config {
	if n <= 1 {
		return cfg
	}
	cfg.MaxConns = share(cfg.MaxConns, n, k)
	if cfg.GRPC != nil {
		cfg.GRPCConns = share(cfg.GRPC.Conns(), n, k)
	}
	return cfg
}

// sharedBudget gives the n issuers' HTTP loops one budget for the answers
// they read at once, of the client's limit: unshared, each would hold up to
// the whole of it, n times the bound --max-response-bytes documents.
func sharedBudget(cfg sut.Config, n int) sut.Config {
	if n > 1 && cfg.HTTP != nil {
		cfg.ResponseBudget = httpclient.NewBudget(cfg.HTTP.ResponseBudget().Limit())
	}
	return cfg
}

// openIssuers opens the SUTs of issuers 1 … n−1 of a run whose issuer 0
// sends through first (opened with splitConns(cfg, n, 0)): each its own
// event loop with its share of the connections, polled on its issuer's OS
// thread. Only the event loops are split: the pool and grpc-go send from a
// goroutine per request over one pool whatever issues into them, and a run
// that captures responses (accuracy) or is generative uses those or its own
// readers, so more issuers are refused there rather than quietly adding
// nothing.
func openIssuers(cfg sut.Config, n int, first *sut.Adapter) ([]*sut.Adapter, error) {
	if n <= 1 {
		return nil, nil
	}
	if !first.SendsFromIssuer() {
		why := "the pool (--http-client pool) or grpc-go (--grpc-client grpc, or a grpcs:// target) sends from a goroutine per request over one shared pool"
		if cfg.Options.Capture {
			why = "a run that logs responses (accuracy, sampled accuracy logging) sends with the pool or grpc-go, from a goroutine per request"
		}
		return nil, fmt.Errorf("%w (%d asked): %s, so issuers would split nothing; use 1, or the loop client (Linux, plain-text gRPC)", ErrIssuersClient, n, why)
	}
	more := make([]*sut.Adapter, 0, n-1)
	for k := 1; k < n; k++ {
		a, err := sut.Open(splitConns(cfg, n, k))
		if err == nil && !a.SendsFromIssuer() {
			a.Close()
			err = fmt.Errorf("%w: issuer %d got no event loop", ErrIssuersClient, k)
		}
		if err != nil {
			closeAll(more)
			return nil, fmt.Errorf("issuer %d of %d: %w", k, n, err)
		}
		more = append(more, a)
	}
	return more, nil
}

func closeAll(as []*sut.Adapter) error {
	var errs []error
	for _, a := range as {
		errs = append(errs, a.Close())
	}
	return errors.Join(errs...)
}

// issuerSUTs are the engine SUTs of issuers 1 … n−1 (loadgen.WithIssuerSUTs).
func issuerSUTs(more []*sut.Adapter) []loadgen.SUT {
	out := make([]loadgen.SUT, len(more))
	for i, a := range more {
		out[i] = a.SUT()
	}
	return out
}

// prepareIssuers encodes, before the clock, what each issuer sends: one
// issuer's SUT (single) the whole trace; of N, issuer 0 (owner) its shard,
// then issuers 1 … N−1 theirs, sending owner's one-sample requests
// (sut.Adapter.PrepareShard) rather than encoding their own.
func prepareIssuers(ctx context.Context, tr *trace.Trace, single interface {
	Prepare(ctx context.Context, tr *trace.Trace) error
}, owner *sut.Adapter, more []*sut.Adapter) error {
	if len(more) == 0 {
		return single.Prepare(ctx, tr)
	}
	n := len(more) + 1
	if err := owner.PrepareShard(ctx, tr, sut.Shard{K: 0, N: n}, nil); err != nil {
		return err
	}
	for i, a := range more {
		if err := a.PrepareShard(ctx, tr, sut.Shard{K: i + 1, N: n}, owner); err != nil {
			return fmt.Errorf("issuer %d of %d: %w", i+1, n, err)
		}
	}
	return nil
}

// enoughProcs gives each of n issuers a P of its own, and one more for the
// rest of the process, for the run, when there are several issuers or the
// run scrapes the server's metrics; it returns the restore. An event-loop
// issuer waits for its due time and its answers in raw system calls
// (internal/rawio), which keep the thread's P, its long waits too
// (ownProcs): with fewer Ps than issuers, a woken
// issuer waits until another's wait ends or the runtime preempts it, 10 ms
// later. Two issuers where GOMAXPROCS was 1 (a client pinned to one CPU; a
// container limited to one CPU is the same) had an issue lateness p99 of
// 20.6–20.9 ms at 20,000 QPS against 2.2–3.0 with one (bench/RESULTS.md,
// "Issue 29"). A scraper beside one issuer parsing megabytes held the one
// P the issuer needed to wake (lateness p99 40–260 ms against 7–19 ms
// without scraping, bench/server-metrics.sh). GOMAXPROCS is the process's;
// loadgend runs one run at a time.
func enoughProcs(n int, scraping bool, log *slog.Logger) (restore func()) {
	p := runtime.GOMAXPROCS(0)
	if (n <= 1 && !scraping) || p >= n+1 {
		return func() {}
	}
	runtime.GOMAXPROCS(n + 1)
	log.Info("GOMAXPROCS raised for the run: each issuer waits in a system call that keeps its P", "issuers", n, "scraping", scraping, "from", p, "to", n+1)
	return func() { runtime.GOMAXPROCS(p) }
}

// pOwner is an issuer's SUT, told when its polling goroutine has a P of
// its own (sut.Adapter.GiveOwnP).
type pOwner interface{ GiveOwnP() }

// ownProcs gives a run's issuers (their SUTs, issuer 0's first) a P each
// for the run when there are several, or one beside a scraper
// (enoughProcs), and tells their event loops so: their long waits then
// block raw rather than park on Go's poller, whose wake-up through the
// runtime two threads on one core delay for each other. It returns the
// restore of GOMAXPROCS.
func ownProcs(suts []pOwner, scraping bool, log *slog.Logger) (restore func()) {
	if len(suts) > 1 || scraping {
		for _, s := range suts {
			s.GiveOwnP()
		}
	}
	return enoughProcs(len(suts), scraping, log)
}
