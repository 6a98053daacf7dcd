package readmetest_test

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// The pages whose blocks the session runs, named from the repository's
// root: the README first, then the pages of docs/ in the order the index
// links them, so that a block may use what an earlier page's made.
const (
	readmeFile = "README.md"
	indexFile  = "docs/README.md"
)

// page is one Markdown file of the session and its blocks.
type page struct {
	file   string
	blocks []block
}

// sessionPages reads the README and the pages docs/README.md links, in
// that order, and fails when a page of docs/ is not in the index: its
// blocks would never run.
func sessionPages(t *testing.T) []page {
	t.Helper()
	order := []string{readmeFile}
	index := readRepoFile(t, indexFile)
	listed := map[string]bool{readmeFile: true, indexFile: true}
	for _, l := range mdLinks(index) {
		target, _, _ := strings.Cut(l.dest, "#")
		name := path.Join(path.Dir(indexFile), target)
		if externalURL.MatchString(l.dest) || !strings.HasPrefix(name, "docs/") || !strings.HasSuffix(name, ".md") || listed[name] {
			continue
		}
		listed[name] = true
		order = append(order, name)
	}
	for _, name := range docsPages(t) {
		if !listed[name] {
			t.Errorf("%s is not linked from %s: its blocks would never run; add it to the index", name, indexFile)
		}
	}
	pages := make([]page, 0, len(order))
	for _, name := range order {
		blocks, err := parseBlocks(readRepoFile(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range blocks {
			blocks[i].file = name
		}
		pages = append(pages, page{file: name, blocks: blocks})
	}
	return pages
}

// sessionBlocks is every block of the session's pages, in order.
func sessionBlocks(t *testing.T) []block {
	t.Helper()
	var blocks []block
	for _, p := range sessionPages(t) {
		blocks = append(blocks, p.blocks...)
	}
	return blocks
}

// docsPages lists the Markdown files under docs/, slash-separated from the
// repository's root.
func docsPages(t *testing.T) []string {
	t.Helper()
	var names []string
	err := fs.WalkDir(os.DirFS(repoRoot), "docs", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(name, ".md") {
			names = append(names, name)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The README and the docs pages: every shell block is run by TestReadme or
// says why it cannot be, and the newcomer's path (the curl session, the CLI)
// is tested.
func TestReadmeBlocksAreTestedOrExplained(t *testing.T) {
	var tested strings.Builder
	for _, p := range sessionPages(t) {
		for _, err := range checkBlocks(p.blocks) {
			t.Errorf("%s %v", p.file, err)
		}
		for _, b := range p.blocks {
			if b.tested {
				tested.WriteString(b.body)
			}
		}
	}
	for _, want := range []string{"/v1/probe", "/v1/runs", "/events", "mlperf_log_summary.txt", "/cancel", "/metrics",
		"bin/loadgend run", "--mode find-peak", "--mode accuracy", "bin/loadgend compliance", "bin/loadgend schedule", "bin/sutproxy"} {
		if !strings.Contains(tested.String(), want) {
			t.Errorf("no tested block of the README or docs/ contains %q", want)
		}
	}
}

// The README's tour stays the newcomer's path: the CLI run, the curl
// session and the LLM run are tested on the README itself.
func TestReadmeTourIsTested(t *testing.T) {
	var tested strings.Builder
	for _, b := range sessionPages(t)[0].blocks {
		if b.tested {
			tested.WriteString(b.body)
		}
	}
	for _, want := range []string{"bin/loadgend run --target \"$SUT\"", "/v1/probe", "/v1/runs", "/events",
		"mlperf_log_summary.txt", "--api openai-chat", "bin/loadgend report"} {
		if !strings.Contains(tested.String(), want) {
			t.Errorf("no tested block of %s contains %q", readmeFile, want)
		}
	}
	if n := strings.Count(readRepoFile(t, readmeFile), "\n"); n > 300 {
		t.Errorf("%s has %d lines; the front door holds at most 300: move the rest to docs/", readmeFile, n)
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
