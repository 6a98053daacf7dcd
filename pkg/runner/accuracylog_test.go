package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// mlperf_log_accuracy.json carries token_count (Offline) or token_data and
// token_count (Server) exactly when the settings use token latencies.
func TestAccuracyLogTokenFields(t *testing.T) {
	entries := []loadgen.AccuracyEntry{{SeqID: 0, QSLIndex: 5, Data: []byte("hi"), TokenCount: 2, TokenData: []byte("h")}}
	for _, c := range []struct {
		sc   trace.Scenario
		use  bool
		want string
	}{
		{trace.Server, true, "[\n{ \"seq_id\" : 0, \"qsl_idx\" : 5, \"data\" : \"6869\", \"token_data\" : \"68\", \"token_count\" : 2 }\n]\n"},
		{trace.Offline, true, "[\n{ \"seq_id\" : 0, \"qsl_idx\" : 5, \"data\" : \"6869\", \"token_count\" : 2 }\n]\n"},
		{trace.Server, false, "[\n{ \"seq_id\" : 0, \"qsl_idx\" : 5, \"data\" : \"6869\" }\n]\n"},
	} {
		s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
		s.Scenario, s.UseTokenLatencies = c.sc, c.use
		dir := t.TempDir()
		if err := WriteAccuracyLog(dir, entries, nil, accuracyTokens(s)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, runlog.AccuracyFile))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s, use_token_latencies %v: %q, want %q", c.sc, c.use, b, c.want)
		}
	}
}
