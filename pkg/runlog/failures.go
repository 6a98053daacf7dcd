package runlog

import (
	"fmt"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// FailureLines are a result's failures by kind, one line each as the
// summary prints them: "190 failed: error HTTP 500 (e.g. server: HTTP 500: boom)".
func FailureLines(fs []loadgen.Failure) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%d failed: %s (e.g. %s)", f.Count, failureKind(f), oneLine(f.Example)))
	}
	return out
}

// failureKind is the outcome and status: "error HTTP 500", "unanswered".
func failureKind(f loadgen.Failure) string {
	return strings.TrimSpace(f.Outcome + " " + f.Status)
}

// oneLine folds a message's whitespace: a server's text may hold newlines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// lineKinds is how many failure kinds SummaryLine names.
const lineKinds = 3

// failureKinds names the most frequent kinds for SummaryLine:
// " (190 error HTTP 500, 3 timeout)"; "" without failures.
func failureKinds(fs []loadgen.Failure) string {
	if len(fs) == 0 {
		return ""
	}
	var parts []string
	for i, f := range fs {
		if i == lineKinds {
			parts = append(parts, fmt.Sprintf("%d more kinds", len(fs)-lineKinds))
			break
		}
		parts = append(parts, fmt.Sprintf("%d %s", f.Count, failureKind(f)))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
