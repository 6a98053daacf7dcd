package runspec

import (
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// no_server_statistics reaches the run, and its absence leaves the reads on.
func TestNoServerStatisticsReachesTheRun(t *testing.T) {
	for _, off := range []bool{false, true} {
		r, err := Build(api.RunSpec{Target: "http://h:1", Model: "m", NoServerStatistics: off}, Env{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Spec.NoServerStatistics != off {
			t.Errorf("no_server_statistics %v built a run with NoServerStatistics %v", off, r.Spec.NoServerStatistics)
		}
	}
	s, err := api.DecodeRunSpec(strings.NewReader(`{"target": "http://h:1", "model": "m", "no_server_statistics": true}`), api.Limits{})
	if err != nil || !s.NoServerStatistics {
		t.Errorf("decoding no_server_statistics: %v, %v", err, s.NoServerStatistics)
	}
}
