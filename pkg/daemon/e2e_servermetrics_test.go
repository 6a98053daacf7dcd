package daemon_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// The progress events carry the latest scrape's known metrics while the
// run goes: sutproxy's queue depth, scraped from its own /metrics.
func TestProgressCarriesServerMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	p := sutproxytest.Start(t, "name=m,fn=echo,dtype=FP32,dims=16,max_batch=0,latency=constant:1ms,instances=2")
	_, c := e2eService(t, nil)
	spec := fmt.Sprintf(`{"target":%q,"model":"m","scenario":"Server","server_metrics_interval_ms":100,"settings":{"target_qps":200,"min_duration_ms":3000,"min_query_count":1,"target_latency_ms":100,"latency_percentile":0.99}}`,
		sutproxytest.Target(p, "http"))
	id := c.submit(t, spec)
	got := c.waitProgress(t, id, 30*time.Second, func(p api.Progress) bool {
		for _, v := range p.ServerMetrics {
			if v.Name == "sutproxy_queue_depth" && v.Labels["model"] == "m" {
				return true
			}
		}
		return false
	})
	for _, v := range got.ServerMetrics {
		if v.Endpoint != sutproxytest.Target(p, "http")+"/metrics" {
			t.Errorf("live value %+v: want the target's own /metrics", v)
		}
	}
	if code, b := c.do(t, "POST", "/v1/runs/"+id+"/cancel", ""); code != 202 {
		t.Fatalf("cancel: %d %s", code, b)
	}
	c.waitEnded(t, id, 30*time.Second)
}
