package runspec

import (
	"errors"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// TestDistributedRunKeepsNoAccuracyLog: a spec with workers whose settings
// ask for an accuracy log is refused naming workers; the same spec without
// the log builds.
func TestDistributedRunKeepsNoAccuracyLog(t *testing.T) {
	base := `{"target": "http://h:1", "model": "m", "scenario": "Server", "workers": 2, "settings": {"target_qps": 100}`
	// Under loadgen6 only an mlperf.conf sets accuracy_log_probability.
	for _, conf := range []string{
		`"mlperf_conf": "*.Server.accuracy_log_probability = 0.1"`,
		`"user_conf": "*.Server.accuracy_log_sampling_target = 64"`,
	} {
		// Decode admits the spec as the daemon does, which builds it:
		// the refusal may come from either.
		spec, err := Decode(strings.NewReader(base+`, `+conf+`}`), api.Limits{})
		if err == nil {
			_, err = Build(spec, Env{})
		}
		var fe *api.FieldError
		if !errors.As(err, &fe) || fe.Field != "workers" || !strings.Contains(err.Error(), "accuracy log") {
			t.Errorf("workers 2 with %s: %v, want a refusal naming workers and the accuracy log", conf, err)
		}
	}
	spec, err := Decode(strings.NewReader(base+`}`), api.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(spec, Env{}); err != nil {
		t.Errorf("workers 2, performance only: %v", err)
	}
}
