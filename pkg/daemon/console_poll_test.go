package daemon_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
)

// listGate makes the browser (tab.gateLists) answer every GET /v1/runs?... list
// request with 503 while *refusing is true (the Fetch domain: the page
// sees the answer as from the network), and records the URLs asked.
type listGate struct {
	mu       sync.Mutex
	refusing bool
	urls     []string
}

func (g *listGate) set(refusing bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refusing = refusing
}

func (g *listGate) asked() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.urls)
}

func (tb *tab) gateLists(g *listGate) {
	tb.t.Helper()
	chromedp.ListenTarget(tb.ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		g.mu.Lock()
		refusing := g.refusing
		g.urls = append(g.urls, e.Request.URL)
		g.mu.Unlock()
		go func() {
			ctx := cdp.WithExecutor(tb.ctx, chromedp.FromContext(tb.ctx).Target)
			var err error
			if refusing {
				body := `{"error":{"code":"unavailable","message":"test: the list is refused"}}`
				err = fetch.FulfillRequest(e.RequestID, http.StatusServiceUnavailable).
					WithResponseHeaders([]*fetch.HeaderEntry{{Name: "Content-Type", Value: "application/json"}}).
					WithBody(base64.StdEncoding.EncodeToString([]byte(body))).Do(ctx)
			} else {
				err = fetch.ContinueRequest(e.RequestID).Do(ctx)
			}
			if err != nil && tb.ctx.Err() == nil {
				tb.t.Logf("fetch interception: %v", err)
			}
		}()
	})
	tb.run(fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*/v1/runs?*"}}))
}

// The runs page polls while a run goes; polls that fail (503) keep the
// tables and say so, and once the list answers again the page updates
// again by itself. Its queue is asked one state at a time.
func TestConsoleRunsPollRecovers(t *testing.T) {
	env := startConsole(t, nil)
	id := env.api.submit(t, consoleSpec(env.target, 20, 60000))
	tb := newTab(t, 0)
	tb.allow(http.StatusServiceUnavailable, "/v1/runs") // the refused polls
	gate := &listGate{}
	tb.gateLists(gate)
	row := `#runs tr[data-run-id="` + id + `"]`
	var loads string
	tb.run(chromedp.Navigate(env.base+"/ui/"), chromedp.WaitVisible(row, chromedp.ByQuery),
		chromedp.AttributeValue("#history", "data-loads", &loads, nil, chromedp.ByQuery))
	gate.set(true)
	// Two failed polls in a row: the notice, the table still there.
	tb.run(chromedp.Poll(`document.getElementById('runs-status').dataset.failures === '2'`, nil, chromedp.WithPollingTimeout(20*time.Second)))
	var notice string
	var rows int
	tb.run(chromedp.Text("#poll-notice", &notice, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('`+row+`').length`, &rows))
	tb.shot("runs-poll-failed")
	if !strings.Contains(notice, "trying again") || rows != 1 {
		t.Errorf("after failed polls: notice %q, %d rows of the run; want the notice and the table kept", notice, rows)
	}
	var before int
	tb.run(chromedp.Evaluate(`Number(document.getElementById('history').dataset.loads)`, &before))
	gate.set(false)
	tb.run(chromedp.Poll(`Number(document.getElementById('history').dataset.loads) > `+strconv.Itoa(before)+
		` && !document.getElementById('poll-notice')`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	for _, u := range gate.asked() {
		if q, _ := url.Parse(u); q != nil && strings.Contains(q.Query().Get("state"), ",") {
			t.Errorf("the runs page asked %s: a list of states (one state per query wanted)", u)
		}
	}
	var running, queued bool
	for _, u := range gate.asked() {
		running = running || strings.Contains(u, "state=running")
		queued = queued || strings.Contains(u, "state=queued")
	}
	if !running || !queued {
		t.Errorf("the runs page's queue asked running %v, queued %v; want both (asked: %v)", running, queued, gate.asked())
	}
	env.api.do(t, http.MethodPost, "/v1/runs/"+id+"/cancel", "{}") // the run was only there to be polled
	env.api.waitEnded(t, id, 30*time.Second)
}
