package serverview_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// TestDocsListKnownMetrics: docs/where-the-time-went.md's table of the
// metrics per server is KnownMetrics, row for row: server, name and kind.
func TestDocsListKnownMetrics(t *testing.T) {
	b, err := os.ReadFile("../../docs/where-the-time-went.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| ([^|]+) \\| `([^`]+)` \\| ([a-z_]+) \\|").FindAllStringSubmatch(string(b), -1)
	if len(rows) != len(serverview.KnownMetrics) {
		t.Errorf("the docs list %d metrics, KnownMetrics %d", len(rows), len(serverview.KnownMetrics))
	}
	for i, k := range serverview.KnownMetrics {
		if i >= len(rows) {
			break
		}
		if r := rows[i]; r[1] != k.Server || r[2] != k.Name || r[3] != string(k.Kind) {
			t.Errorf("row %d: %s %s %s, KnownMetrics has %s %s %s", i, r[1], r[2], r[3], k.Server, k.Name, k.Kind)
		}
	}
}
