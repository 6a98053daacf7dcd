package daemon_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// A cancel of a run against a server far over capacity ends it within the
// drain timeout + 1 s (issue 18 #1: it stayed running while the server
// worked through its backlog), cancelled, what never answered failed.
func TestCancelOverCapacityEndsWithinDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	const drain = 500 * time.Millisecond
	// 50 queries a second of capacity, asked for 5000.
	p := sutproxytest.Start(t, "name=m,fn=echo,dtype=FP32,dims=16,max_batch=0,latency=constant:20ms,instances=1")
	_, c := e2eService(t, func(cfg *daemon.Config) { cfg.DrainTimeout = drain })
	spec := fmt.Sprintf(`{"target":%q,"model":"m","scenario":"Server","settings":{"target_qps":5000,"min_duration_ms":3000,"min_query_count":1,"target_latency_ms":100,"latency_percentile":0.99}}`,
		sutproxytest.Target(p, "http"))
	id := c.submit(t, spec)
	c.waitProgress(t, id, 30*time.Second, func(p api.Progress) bool { return p.InFlight >= 200 })
	sent := time.Now()
	if code, b := c.do(t, "POST", "/v1/runs/"+id+"/cancel", ""); code != 202 {
		t.Fatalf("cancel: %d %s", code, b)
	}
	st := c.waitEnded(t, id, drain+10*time.Second)
	took := time.Since(sent)
	t.Logf("ended %v after the cancel", took)
	if took > drain+time.Second {
		t.Errorf("the run ended %v after the cancel; want at most the drain timeout %v + 1s", took, drain)
	}
	if st.State != api.StateCancelled || st.Validity != "INVALID" {
		t.Errorf("state %s (%q), %s; want a cancelled, INVALID run", st.State, st.EndReason, st.Validity)
	}
}
