package api

import (
	"errors"
	"strings"
	"testing"
)

// TestDistributedFields: the distributed fields are checked on their own,
// each refusal naming its field; the tuning fields are refused without
// workers; defaults apply to the fields left out.
func TestDistributedFields(t *testing.T) {
	const base = `"target":"http://h:1","model":"m"`
	cases := []struct {
		extra, field, msg string
	}{
		{`"workers":3`, "", ""},
		{`"workers":1,"scenario":"SingleStream"`, "", ""},
		{`"workers":2,"workers_wait_ms":0,"max_clock_uncertainty_ms":0.25,"worker_timeout_ms":100`, "", ""},
		{`"workers":2,"workers_wait_ms":3600000,"max_clock_uncertainty_ms":1000,"worker_timeout_ms":600000`, "", ""},
		{`"workers":-1`, "workers", "want 0"},
		{`"workers":1025`, "workers", "1024"},
		{`"workers":2,"scenario":"SingleStream"`, "workers", "one sequence"},
		{`"workers":2,"scenario":"MultiStream"`, "workers", "one sequence"},
		{`"workers_wait_ms":1000`, "workers_wait_ms", "set workers"},
		{`"max_clock_uncertainty_ms":1`, "max_clock_uncertainty_ms", "distributed run only"},
		{`"worker_timeout_ms":3000`, "worker_timeout_ms", "distributed run only"},
		{`"workers":2,"workers_wait_ms":3600001`, "workers_wait_ms", "want 0 to 3600000"},
		{`"workers":2,"max_clock_uncertainty_ms":0`, "max_clock_uncertainty_ms", "more than 0"},
		{`"workers":2,"max_clock_uncertainty_ms":-0.5`, "max_clock_uncertainty_ms", "-0.5"},
		{`"workers":2,"max_clock_uncertainty_ms":1000.5`, "max_clock_uncertainty_ms", "at most 1000"},
		{`"workers":2,"worker_timeout_ms":99`, "worker_timeout_ms", "want 100 to 600000"},
		{`"workers":2,"worker_timeout_ms":600001`, "worker_timeout_ms", "want 100"},
		{`"workers":2,"search":{"mode":"find-peak"}`, "workers", "search"},
	}
	for _, c := range cases {
		body := "{" + base + "," + c.extra + "}"
		_, err := DecodeRunSpec(strings.NewReader(body), Limits{AllowSearch: true})
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: %v", c.extra, err)
			}
			continue
		}
		fe, ok := errors.AsType[*FieldError](err)
		if !ok || fe.Field != c.field || !strings.Contains(fe.Message, c.msg) {
			t.Errorf("%s: got %v, want a FieldError on %s saying %q", c.extra, err, c.field, c.msg)
		}
	}
}

func TestDistributedDefaults(t *testing.T) {
	d := RunSpec{Workers: 2}.Distributed()
	if d != (DistributedDefaults{60000, 1, 3000}) {
		t.Errorf("defaults %+v", d)
	}
	w, u, to := uint64(0), 0.5, uint64(200)
	d = RunSpec{Workers: 2, WorkersWaitMs: &w, MaxClockUncertaintyMs: &u, WorkerTimeoutMs: &to}.Distributed()
	if d != (DistributedDefaults{0, 0.5, 200}) {
		t.Errorf("given %+v", d)
	}
}

// TestKeepSamplesDecodes: keep_samples is a field of the contract, strict
// decoding takes it.
func TestKeepSamplesDecodes(t *testing.T) {
	s, err := DecodeRunSpec(strings.NewReader(`{"target":"http://h:1","model":"m","keep_samples":true}`), Limits{})
	if err != nil || !s.KeepSamples {
		t.Fatalf("keep_samples: %+v, %v", s.KeepSamples, err)
	}
}
