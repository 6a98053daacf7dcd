package daemon_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// The progress events of a run against an endpoint with the statistics
// extension carry the server's running queue figure; with
// no_server_statistics they do not.
func TestProgressCarriesServerQueue(t *testing.T) {
	target := e2eSUT(t)
	_, c := e2eService(t, nil)
	// Runs that go their whole length on a loaded machine: no early
	// verdict, a generous bound.
	spec := func(extra string) string {
		return fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server",%s"settings":{"target_qps":200,"min_duration_ms":3000,"min_query_count":1,"target_latency_ms":5000,"early_verdict":false}}`, target, extra)
	}
	id := c.submit(t, spec(""))
	p := c.waitProgress(t, id, 30*time.Second, func(p api.Progress) bool { return p.ServerQueueRunNs != nil })
	if *p.ServerQueueRunNs < 0 || (p.ServerQueueNs != nil && *p.ServerQueueNs < 0) {
		t.Errorf("server queue %v / %v ns", *p.ServerQueueRunNs, p.ServerQueueNs)
	}
	if st := c.waitEnded(t, id, 60*time.Second); st.State != api.StateDone {
		t.Fatalf("run ended %s", st.State)
	}
	code, body := c.do(t, "GET", "/v1/runs/"+id+"/result", "")
	if code != 200 || !strings.Contains(strings.Join(strings.Fields(string(body)), ""), `"statistics":{"offered":true`) {
		t.Errorf("result (%d) has no offered server.statistics: %.300s", code, body)
	}

	id = c.submit(t, spec(`"no_server_statistics":true,`))
	progress, late := 0, 0
	err := c.watch(t, id, 60*time.Second, func(event string, data []byte) bool {
		var p api.Progress
		if event != api.EventProgress || json.Unmarshal(data, &p) != nil {
			return false
		}
		progress++
		if p.ElapsedS > 1.5 {
			late++ // past the first live read had the reads been on
		}
		if p.ServerQueueRunNs != nil || p.ServerQueueNs != nil {
			t.Errorf("progress %+v: a server queue with no_server_statistics", p)
		}
		return false
	})
	if err != nil {
		t.Logf("watch: %v", err) // the stream ends with the run
	}
	t.Logf("%d progress events, %d after 1.5 s", progress, late)
	if st := c.waitEnded(t, id, 60*time.Second); st.State != api.StateDone || late == 0 {
		t.Errorf("run ended %s with %d progress events after 1.5 s: want it done, watched past a live read", st.State, late)
	}
}
