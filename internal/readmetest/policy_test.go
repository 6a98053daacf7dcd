package readmetest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const readmePath = "../../README.md"

func readmeBlocks(t *testing.T) []block {
	t.Helper()
	md, err := os.ReadFile(filepath.FromSlash(readmePath))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(string(md))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	return blocks
}

// The README itself: every shell block is run by TestReadme or says why it
// cannot be, and the newcomer's path (the curl session, the CLI) is tested.
func TestReadmeBlocksAreTestedOrExplained(t *testing.T) {
	blocks := readmeBlocks(t)
	for _, err := range checkBlocks(blocks) {
		t.Errorf("README.md %v", err)
	}
	var tested strings.Builder
	for _, b := range blocks {
		if b.tested {
			tested.WriteString(b.body)
		}
	}
	for _, want := range []string{"/v1/probe", "/v1/runs", "/events", "mlperf_log_summary.txt", "/cancel", "/metrics",
		"bin/loadgend run", "--mode find-peak", "--mode accuracy", "bin/loadgend compliance", "bin/loadgend schedule", "bin/sutproxy"} {
		if !strings.Contains(tested.String(), want) {
			t.Errorf("no tested README block contains %q", want)
		}
	}
}

func TestParseAndCheckBlocks(t *testing.T) {
	tests := []struct {
		name    string
		md      string
		blocks  int
		tested  int
		parse   string // substring of the parse error, "" for none
		violate []string
	}{
		{name: "tested and explained",
			md:     "intro\n```sh tested\ncurl \"$API/healthz\"\n```\nDocker is not run by the tests.\n```sh\ndocker run x\n```\n```yaml\na: 1\n```\n",
			blocks: 3, tested: 1},
		{name: "needs",
			md:     "```sh tested needs=grpcurl,jq\ngrpcurl x\n```\n",
			blocks: 1, tested: 1},
		{name: "unexplained shell block",
			md:      "run this:\n```sh\nbin/loadgend run\n```\n",
			blocks:  1,
			violate: []string{"line 2: shell block neither marked"}},
		{name: "reason after the block, across a line break",
			md:     "```sh\nmake demo\n```\nThis is not\nrun by the tests.\n",
			blocks: 1},
		{name: "reason belongs to the neighbouring blocks only",
			md:     "Not run by the tests:\n```sh\ndocker x\n```\n```bash\nkubectl y\n```\n```sh tested\ncurl \"$API\"\n```\n",
			blocks: 3, tested: 1,
			violate: []string{"line 5: shell block"}},
		{name: "fixed address in a tested block",
			md:     "```sh tested\ncurl -s localhost:8080/healthz\n```\n",
			blocks: 1, tested: 1,
			violate: []string{`fixed address "localhost:8"`}},
		{name: "tested yaml",
			md:     "```yaml tested\na: 1\n```\n",
			blocks: 1, tested: 1,
			violate: []string{`"yaml" block marked tested`}},
		{name: "needs without tested",
			md:      "not run by the tests\n```sh needs=docker\ndocker x\n```\n",
			blocks:  1,
			violate: []string{"needs= on a block not marked"}},
		{name: "unknown word", md: "```sh testd\nx\n```\n", parse: `unknown word "testd"`},
		{name: "unclosed", md: "```sh tested\nx\n", parse: "line 1: block never closed"},
		{name: "fence with info inside a block", md: "```sh\nx\n```sh\n```\n", parse: "line 3: a fence inside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks, err := parseBlocks(tt.md)
			if tt.parse != "" {
				if err == nil || !strings.Contains(err.Error(), tt.parse) {
					t.Fatalf("parse error %v, want one containing %q", err, tt.parse)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tested := 0
			for _, b := range blocks {
				if b.tested {
					tested++
				}
			}
			if len(blocks) != tt.blocks || tested != tt.tested {
				t.Errorf("%d blocks, %d tested; want %d, %d", len(blocks), tested, tt.blocks, tt.tested)
			}
			errs := checkBlocks(blocks)
			if len(errs) != len(tt.violate) {
				t.Fatalf("violations %v, want %d like %q", errs, len(tt.violate), tt.violate)
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tt.violate[i]) {
					t.Errorf("violation %q, want it to contain %q", e, tt.violate[i])
				}
			}
		})
	}
}
