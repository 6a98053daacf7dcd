package daemon

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runstore"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// runSummary is what a run's status shows beyond its record: the spec, the
// last saved progress, the verdict and a search's trials and state. A
// summary is never changed once stored; a change stores a new one, so a
// reader may use it without a lock.
type runSummary struct {
	spec     api.RunSpec
	progress *api.Progress
	validity string // from result.json
	// invalidReasons and warnings are result.json's too.
	invalidReasons, warnings []string
	failures                 []api.Failure
	tokenLatencies           *api.TokenLatencies
	answered                 *api.AnsweredLatency
	achieved                 *float64
	trials                   []api.Trial
	search                   *api.SearchStatus
}

// summaries keeps every run's summary in memory, read from the run's files
// once (at start, or at the first status of a run created since) and
// replaced when the run changes: its progress is saved, a search trial
// ends, it ends. A status, and a list of 500, then reads no file and parses
// no JSON but a queued run's spec once (issue 17 #5).
type summaries struct {
	store   *runstore.Store
	mu      sync.RWMutex
	m       map[string]*runSummary
	entries map[string][]byte // finished runs' list entries (listEntry)
}

func newSummaries(store *runstore.Store) *summaries {
	return &summaries{store: store, m: map[string]*runSummary{}, entries: map[string][]byte{}}
}

// loadAll reads the summary of every run in the store.
func (c *summaries) loadAll() {
	token := ""
	for {
		recs, next, err := c.store.List("", 500, token)
		if err != nil {
			return
		}
		for _, rec := range recs {
			c.get(rec)
		}
		if next == "" {
			return
		}
		token = next
	}
}

// get returns run rec's summary, reading its files if it has none yet.
func (c *summaries) get(rec runstore.Record) *runSummary {
	c.mu.RLock()
	sum := c.m[rec.ID]
	c.mu.RUnlock()
	if sum != nil {
		return sum
	}
	sum = c.read(rec)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[rec.ID]; old != nil {
		return old // stored meanwhile by an update, which is newer
	}
	c.m[rec.ID] = sum
	return sum
}

// read builds run rec's summary from its files, opened through the store
// (regular files inside the run's directory only).
func (c *summaries) read(rec runstore.Record) *runSummary {
	sum := &runSummary{}
	if rec.Spec == nil { // from ListBrief
		if full, err := c.store.Get(rec.ID); err == nil {
			rec = full
		}
	}
	_ = json.Unmarshal(rec.Spec, &sum.spec)
	if f, err := c.store.OpenFile(rec.ID, runstore.ProgressFile); err == nil {
		var p api.Progress
		if json.NewDecoder(f).Decode(&p) == nil {
			sum.progress = &p
		}
		f.Close()
	}
	if f, err := c.store.OpenFile(rec.ID, runstore.SearchFile); err == nil {
		if res, err := search.Decode(f); err == nil {
			sum.trials, sum.search = searchStatus(res, rec.ID)
		}
		f.Close()
	}
	if f, err := c.store.OpenFile(rec.ID, runstore.ResultFile); err == nil {
		if res, err := runlog.Decode(f); err == nil {
			sum.validity = res.Validity
			sum.invalidReasons, sum.warnings = res.InvalidReasons, res.Warnings
			sum.failures = api.FailuresOf(res.Failures)
			sum.tokenLatencies = api.TokenLatenciesOf(res.TokenLatencies)
			sum.answered = api.AnsweredLatencyOf(res.SampleLatencyAnswered)
			sum.achieved = api.AchievedQPSOf(res)
		}
		f.Close()
	}
	return sum
}

// reload reads run id's summary from its files again: when it ends, after
// its last files are written and before its state says so, so that a
// status of the finished run shows its verdict.
func (c *summaries) reload(id string) {
	rec, err := c.store.Get(id)
	if err != nil {
		return
	}
	sum := c.read(rec)
	c.mu.Lock()
	c.m[id] = sum
	delete(c.entries, id)
	c.mu.Unlock()
}

// update stores a copy of run id's summary changed by change.
func (c *summaries) update(id string, change func(*runSummary)) {
	rec, err := c.store.Get(id)
	if err != nil {
		return
	}
	old := c.get(rec)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.m[id]; cur != nil {
		old = cur
	}
	sum := *old
	change(&sum)
	c.m[id] = &sum
	delete(c.entries, id)
}

func (c *summaries) setProgress(id string, p api.Progress) {
	c.update(id, func(s *runSummary) { s.progress = &p })
}

func (c *summaries) setSearch(id string, res *search.Result) {
	trials, st := searchStatus(res, id)
	c.update(id, func(s *runSummary) { s.trials, s.search = trials, st })
}

// setSearchStage marks the stage of the search trial starting now on the
// search's status (a status copied, as summaries are never changed); the
// trial's end replaces the status with search.json's, which has none. No
// status yet (the first trial): the progress's search_trial says it.
func (c *summaries) setSearchStage(id, stage string) {
	c.update(id, func(s *runSummary) {
		if s.search == nil || s.search.Stage == stage {
			return
		}
		st := *s.search
		st.Stage = stage
		s.search = &st
	})
}

// listIndent is the indent of a run's status in writeJSON's answer to GET
// /v1/runs: an element of the "runs" array, two levels down.
const listIndent = "    "

// listEntry is run rec's status in a list, encoded as writeJSON would
// encode it there. A finished run's entry is kept: neither its record nor
// its summary changes again, so a list of finished runs copies bytes.
func (s *Service) listEntry(rec runstore.Record) []byte {
	sum := s.sums.get(rec)
	if rec.State.Terminal() {
		if b := s.sums.entry(rec.ID, sum); b != nil {
			return b
		}
	}
	b, err := json.MarshalIndent(s.status(rec, false), listIndent, "  ")
	if err != nil {
		b = []byte("{}")
	}
	if rec.State.Terminal() {
		s.sums.setEntry(rec.ID, sum, b)
	}
	return b
}

// entry is run id's kept list entry, if it was encoded from sum.
func (c *summaries) entry(id string, sum *runSummary) []byte {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.m[id] != sum {
		return nil
	}
	return c.entries[id]
}

// setEntry keeps b as run id's list entry unless its summary changed since
// sum, from which b was encoded.
func (c *summaries) setEntry(id string, sum *runSummary, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[id] == sum {
		c.entries[id] = b
	}
}

// writeRunList writes an api.RunList of the encoded runs, byte for byte
// what writeJSON writes for it (TestRunListIsWriteJSONs).
func writeRunList(w http.ResponseWriter, runs [][]byte, next string) {
	n := 64 + len(next)
	for _, r := range runs {
		n += len(r) + len(listIndent) + 2
	}
	bp, _ := listBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := slices.Grow((*bp)[:0], n)
	b = append(b, "{\n  \"runs\": ["...)
	for i, r := range runs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n"+listIndent...)
		b = append(b, r...)
	}
	if len(runs) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, ']')
	if next != "" {
		tok, _ := json.Marshal(next)
		b = append(b, ",\n  \"next_page_token\": "...)
		b = append(b, tok...)
	}
	b = append(b, "\n}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	if cap(b) <= maxPooledList {
		*bp = b
		listBufs.Put(bp)
	}
}

// listBufs are writeRunList's buffers: a list of 500 runs is most of a
// megabyte, which a busy API would otherwise allocate for every request.
var listBufs sync.Pool

const maxPooledList = 4 << 20
