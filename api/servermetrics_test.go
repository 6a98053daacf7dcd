package api

import (
	"errors"
	"strings"
	"testing"
)

// Each bad server metrics setting is refused naming its field, and a URL
// is never quoted (it may hold a credential).
func TestServerMetricsFields(t *testing.T) {
	for _, c := range []struct {
		body, field string
	}{
		{`"server_metrics": ["ftp://h/metrics"]`, "server_metrics"},
		{`"server_metrics": ["http://user:hunter22@h/metrics"]`, "server_metrics"},
		{`"server_metrics": ["http://h/metrics?token=hunter22"]`, "server_metrics"},
		{`"server_metrics": ["http://h/m"], "no_server_metrics": true`, "no_server_metrics"},
		{`"server_metrics_interval_ms": 50`, "server_metrics_interval_ms"},
		{`"server_metrics_max_series": -1`, "server_metrics_max_series"},
		{`"server_metrics_max_bytes": 2000000000`, "server_metrics_max_bytes"},
	} {
		body := `{"target": "http://127.0.0.1:8000", "model": "m", ` + c.body + `}`
		_, err := DecodeRunSpec(strings.NewReader(body), Limits{})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a field error on %s", c.body, err, c.field)
		}
		if err != nil && strings.Contains(err.Error(), "hunter22") {
			t.Errorf("%s: the error quotes a secret: %v", c.body, err)
		}
	}
	ok := `{"target": "http://127.0.0.1:8000", "model": "m", "server_metrics": ["http://h:8002/metrics", "https://g/metrics"], "server_metrics_interval_ms": 250}`
	s, err := DecodeRunSpec(strings.NewReader(ok), Limits{})
	if err != nil || len(s.ServerMetrics) != 2 || s.ServerMetricsIntervalMs != 250 {
		t.Fatalf("a good spec: %+v, %v", s.ServerMetrics, err)
	}
}
