package report_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// A shaped run without an SLO whose shape ended early is INVALID, not N/A
// (loadgen's verdict): the report says so and why.
func TestReportShapeEndedEarly(t *testing.T) {
	dir := shapedRunDir(t, "")
	path := filepath.Join(dir, "result.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	res["result_validity"], res["valid"] = "INVALID", false
	res["invalid_reasons"] = []string{"load shape ended early: the trace file changed"}
	if b, err = json.Marshal(res); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	page := render(t, dir)
	if !strings.Contains(page, "INVALID: load shape ended early: the trace file changed") || strings.Contains(page, loadgen.NAReason) {
		t.Error("the report of a shape that ended early does not say INVALID and why, or says N/A")
	}
}
