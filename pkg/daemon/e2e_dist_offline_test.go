package daemon_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// TestDistributedOffline: an Offline run's one query split over two
// workers (its samples k mod 2) is one run, every sample answered, each
// worker counting its half (the identity model answers too fast for
// the min duration: INVALID, as on one host).
func TestDistributedOffline(t *testing.T) {
	sut := e2eSUT(t)
	svc, c := distService(t, time.Second)
	startWorker(t, c.base, "w-a")
	startWorker(t, c.base, "w-b")
	waitIdle(t, svc, "w-a", "w-b")
	id := c.submit(t, fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Offline","workers":2,
		"settings":{"offline_expected_qps":500,"min_duration_ms":300,"min_query_count":1}}`, sut))
	st := c.waitEnded(t, id, 60*time.Second)
	if st.State != api.StateDone {
		t.Fatalf("state %s: %s", st.State, st.Error)
	}
	res := distResult(t, c, id)
	if res.SamplesIssued == 0 || res.SamplesCompleted != res.SamplesIssued || len(res.Workers) != 2 ||
		res.Workers[0].SamplesIssued+res.Workers[1].SamplesIssued != res.SamplesIssued {
		t.Errorf("validity %s (%v), issued %d, completed %d, workers %+v", res.Validity, res.InvalidReasons, res.SamplesIssued, res.SamplesCompleted, res.Workers)
	}
}
