package daemon_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/internal/testtool"
)

// failedNs is how a failed sample's latency in LoadGen's convention
// (INT64_MAX ns) starts in any unit (ns, ms).
const failedNs = "9223372036854"

// everyTenthFailing is a KServe v2 server of model "identity" (one FP32
// [-1,4] input) over HTTP/1.1 on a raw net.Listener: health and metadata
// answer, and every tenth inference request (over all connections) gets
// exactly failAnswer, the others an answer. It returns its target URL.
func everyTenthFailing(t *testing.T) string {
	t.Helper()
	const (
		failAnswer = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"error\":\"boom\"}"
		okBody     = `{"model_name":"identity","outputs":[{"name":"out","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]}`
		metaBody   = `{"name":"identity","versions":["1"],"platform":"raw","inputs":[{"name":"in","datatype":"FP32","shape":[-1,4]}],"outputs":[{"name":"out","datatype":"FP32","shape":[-1,4]}]}`
	)
	answer := func(status, body string) string {
		return fmt.Sprintf("HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body)
	}
	var infers atomic.Int64
	addr, _ := testtool.RawHTTP(t, func(line string) string {
		switch p := testtool.RequestPath(line); {
		case strings.HasSuffix(p, "/infer") && infers.Add(1)%10 == 0:
			return failAnswer
		case strings.HasSuffix(p, "/infer"):
			return answer("200 OK", okBody)
		case p == "/v2/health/live" || p == "/v2/health/ready" || p == "/v2/models/identity/ready":
			return answer("200 OK", "")
		case p == "/v2":
			return answer("200 OK", `{"name":"raw","version":"1","extensions":[]}`)
		case p == "/v2/models/identity":
			return answer("200 OK", metaBody)
		}
		return answer("404 Not Found", `{"error":"not found"}`)
	})
	return "http://" + addr
}

// TestStatusShowsAnsweredLatencies: runs against a server that fails every
// tenth request, through the real daemon (issue 26 #13). A run's status
// and the run list carry answered_latency_ms (the answered samples'
// percentiles, the failed count beside them), a sweep's trials
// tail_latency_answered_ms, latency_answered_ms and failed_samples; no
// status, list or served report shows a failed sample's INT64_MAX.
func TestStatusShowsAnsweredLatencies(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	target := everyTenthFailing(t)
	_, c := e2eService(t, nil)
	settings := `"settings":{"target_qps":150,"min_duration_ms":300,"min_query_count":30,"target_latency_ms":50,"early_verdict":false}`
	run := c.submit(t, fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server",%s}`, target, settings))
	st := c.waitEnded(t, run, 60*time.Second)
	if st.State != api.StateDone || len(st.Failures) == 0 {
		t.Fatalf("run: state %s, failures %+v: want a finished run with failures", st.State, st.Failures)
	}
	if a := st.AnsweredLatencyMs; a == nil || a.Failed == 0 || a.Count == 0 || a.P99 <= 0 {
		t.Errorf("run status answered_latency_ms %+v: want the answered p99 and the failed count", a)
	}
	sweep := c.submit(t, fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server",%s,"search":{"mode":"sweep","rates":[100,150]}}`,
		target, strings.Replace(settings, `"target_qps":150,`, "", 1)))
	st = c.waitEnded(t, sweep, 60*time.Second)
	if st.State != api.StateDone || len(st.Trials) != 2 {
		t.Fatalf("sweep: state %s, %d trials", st.State, len(st.Trials))
	}
	for _, tr := range st.Trials {
		if tr.FailedSamples == 0 || tr.TailLatencyAnsweredMs == nil || tr.LatencyAnsweredMs == nil || tr.LatencyAnsweredMs.P99 <= 0 {
			t.Errorf("trial %d: failed %d, tail answered %v, latency answered %+v: want them all", tr.Index, tr.FailedSamples,
				tr.TailLatencyAnsweredMs, tr.LatencyAnsweredMs)
		}
	}
	for _, path := range []string{"/v1/runs/" + run, "/v1/runs/" + sweep, "/v1/runs", "/v1/runs/" + run + "/report.html", "/v1/runs/" + sweep + "/report.html"} {
		code, b := c.do(t, http.MethodGet, path, "")
		if code != http.StatusOK {
			t.Errorf("GET %s = %d", path, code)
			continue
		}
		if i := strings.Index(string(b), failedNs); i >= 0 {
			t.Errorf("GET %s shows a failed sample's INT64_MAX: …%s…", path, b[max(i-200, 0):min(i+60, len(b))])
		}
	}
}
