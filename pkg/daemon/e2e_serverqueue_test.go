package daemon_test

import (
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
	id := c.submit(t, serverSpec(target, 200, 3000))
	p := c.waitProgress(t, id, 30*time.Second, func(p api.Progress) bool { return p.ServerQueueRunNs != nil })
	if *p.ServerQueueRunNs < 0 || (p.ServerQueueNs != nil && *p.ServerQueueNs < 0) {
		t.Errorf("server queue %v / %v ns", *p.ServerQueueRunNs, p.ServerQueueNs)
	}
	if st := c.waitEnded(t, id, 60*time.Second); st.State != api.StateDone {
		t.Fatalf("run ended %s", st.State)
	}
	code, body := c.do(t, "GET", "/v1/runs/"+id+"/result", "")
	if code != 200 || !strings.Contains(strings.Join(strings.Fields(string(body)), ""), `"statistics":{"offered":true`) {
		t.Errorf("result.json (%d) has no offered server.statistics: %.300s", code, body)
	}

	spec := strings.Replace(serverSpec(target, 200, 2500), `"scenario"`, `"no_server_statistics":true,"scenario"`, 1)
	id = c.submit(t, spec)
	p = c.waitProgress(t, id, 30*time.Second, func(p api.Progress) bool { return p.ElapsedS >= 2 || p.ServerQueueRunNs != nil })
	if p.ServerQueueRunNs != nil || p.ServerQueueNs != nil {
		t.Errorf("progress %+v: a server queue with no_server_statistics", p)
	}
	c.waitEnded(t, id, 60*time.Second)
}
