package runner

import (
	"log/slog"
	"runtime"
	"testing"

	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/sut"
)

// The issuers' shares of the connections add up to the whole (each at
// least one) and differ by at most one.
func TestShareSplitsTheConnections(t *testing.T) {
	for _, tc := range []struct{ total, n int }{{32, 1}, {32, 2}, {32, 3}, {7, 4}, {1024, 256}, {300, 7}} {
		sum, lo, hi := 0, tc.total, 0
		for k := range tc.n {
			s := share(tc.total, tc.n, k)
			sum, lo, hi = sum+s, min(lo, s), max(hi, s)
		}
		if sum != tc.total || hi-lo > 1 || lo < 1 {
			t.Errorf("%d split %d ways: sum %d, shares %d…%d", tc.total, tc.n, sum, lo, hi)
		}
	}
	// Fewer connections than issuers: one each.
	if s := share(2, 4, 3); s != 1 {
		t.Errorf("2 connections, issuer 3 of 4: %d, want 1", s)
	}
}

func TestSplitConnsGivesEachIssuerItsShare(t *testing.T) {
	gc, err := grpcclient.New("127.0.0.1:1", grpcclient.WithConns(5))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	cfg := sut.Config{GRPC: gc, MaxConns: 10}
	if got := splitConns(cfg, 1, 0); got.MaxConns != 10 || got.GRPCConns != 0 {
		t.Errorf("one issuer: MaxConns %d, GRPCConns %d; want 10 and the client's (0)", got.MaxConns, got.GRPCConns)
	}
	a, b := splitConns(cfg, 2, 0), splitConns(cfg, 2, 1)
	if a.MaxConns+b.MaxConns != 10 || a.GRPCConns+b.GRPCConns != 5 || a.GRPCConns != 3 {
		t.Errorf("two issuers: MaxConns %d+%d, GRPCConns %d+%d", a.MaxConns, b.MaxConns, a.GRPCConns, b.GRPCConns)
	}
}

type fakePOwner struct{ given bool }

func (f *fakePOwner) GiveOwnP() { f.given = true }

// Several issuers, or one beside a scraper, each have a P of their own for
// the run (enoughProcs), and their loops are told so: their long waits may
// block raw. One issuer alone is told nothing.
func TestOwnProcsTellsTheIssuers(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(was)
	log := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		issuers  int
		scraping bool
		want     bool
	}{{1, false, false}, {1, true, true}, {2, false, true}, {3, true, true}} {
		owners := make([]*fakePOwner, c.issuers)
		suts := make([]pOwner, c.issuers)
		for i := range owners {
			owners[i] = &fakePOwner{}
			suts[i] = owners[i]
		}
		restore := ownProcs(suts, c.scraping, log)
		if p := runtime.GOMAXPROCS(0); c.want && p < c.issuers+1 {
			t.Errorf("%d issuers, scraping %v: GOMAXPROCS %d, want at least %d", c.issuers, c.scraping, p, c.issuers+1)
		}
		restore()
		for i, o := range owners {
			if o.given != c.want {
				t.Errorf("%d issuers, scraping %v: issuer %d told %v, want %v", c.issuers, c.scraping, i, o.given, c.want)
			}
		}
	}
}

// The HTTP loops of several issuers read their answers within one budget
// of the client's limit, not one each.
func TestIssuersShareOneResponseBudget(t *testing.T) {
	hc, err := httpclient.New("http://127.0.0.1:1", httpclient.MaxResponseBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	cfg := sut.Config{HTTP: hc, MaxConns: 8}
	if one := sharedBudget(cfg, 1); one.ResponseBudget != nil {
		t.Error("one issuer: a budget besides the loop's own")
	}
	two := sharedBudget(cfg, 2)
	a, b := splitConns(two, 2, 0), splitConns(two, 2, 1)
	if a.ResponseBudget == nil || a.ResponseBudget != b.ResponseBudget || a.ResponseBudget.Limit() != hc.ResponseBudget().Limit() {
		t.Errorf("two issuers: budgets %p and %p, want one of the client's limit %d", a.ResponseBudget, b.ResponseBudget, hc.ResponseBudget().Limit())
	}
}
