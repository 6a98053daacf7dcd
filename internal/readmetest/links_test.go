package readmetest_test

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

// mdLink is one inline link or image of a Markdown file, outside code.
type mdLink struct {
	line int    // 1-based
	dest string // as written, title left out
}

var (
	// An inline link or image: [text](dest) or [text](dest "title"). Code
	// spans are blanked before matching, so a link's text may have held
	// one (`[`x`](y)` is seen as `[](y)`).
	inlineLink = regexp.MustCompile(`\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// A link's text within a heading: GitHub's anchor keeps the text only.
	headingLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	externalURL = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// proseLines calls fn for every line outside fenced code blocks (``` or
// ~~~ at the start of a line), with its 1-based number.
func proseLines(md string, fn func(n int, line string)) {
	fence := ""
	for i, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		case fence != "" && strings.HasPrefix(trimmed, fence):
			fence = ""
		case fence == "":
			fn(i+1, line)
		}
	}
}

// mdLinks lists the inline links and images of md outside code.
func mdLinks(md string) []mdLink {
	var links []mdLink
	proseLines(md, func(n int, line string) {
		line = codeSpan.ReplaceAllString(line, "``")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			links = append(links, mdLink{line: n, dest: m[1]})
		}
	})
	return links
}

// githubSlug is the anchor GitHub gives a heading, before duplicates are
// numbered: its text (code spans and links reduced to their text)
// lowercased, every character but letters, marks, digits, '_', '-' and
// spaces dropped, and each space a '-'.
func githubSlug(heading string) string {
	text := headingLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// mdAnchors is the set of anchors a Markdown file offers: its headings'
// slugs, a repeated slug numbered -1, -2, ... as GitHub numbers them, and
// explicit <a id="..."> or <a name="...">.
func mdAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	proseLines(md, func(_ int, line string) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		slug := githubSlug(m[1])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	})
	return anchors
}

// checkLinks checks every relative link of the Markdown files named (paths
// in fsys, slash-separated): its file or directory exists in fsys, and an
// #anchor is one the target Markdown file offers. External links (a
// scheme) are not fetched.
func checkLinks(fsys fs.FS, files []string) []error {
	var errs []error
	anchorsOf := map[string]map[string]bool{}
	anchors := func(name string) (map[string]bool, error) {
		if a, ok := anchorsOf[name]; ok {
			return a, nil
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		anchorsOf[name] = mdAnchors(string(b))
		return anchorsOf[name], nil
	}
	for _, file := range files {
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", file, err))
			continue
		}
		for _, l := range mdLinks(string(b)) {
			if externalURL.MatchString(l.dest) {
				continue
			}
			if err := checkLink(fsys, file, l.dest, anchors); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: link %q %w", file, l.line, l.dest, err))
			}
		}
	}
	return errs
}

// checkLink checks one relative link of file.
func checkLink(fsys fs.FS, file, dest string, anchors func(string) (map[string]bool, error)) error {
	target, frag, _ := strings.Cut(dest, "#")
	if target == "" {
		target = file
	} else {
		target = path.Join(path.Dir(file), target)
		if !fs.ValidPath(target) {
			return fmt.Errorf("leaves the repository")
		}
		if _, err := fs.Stat(fsys, target); err != nil {
			return fmt.Errorf("points to %s, which does not exist", target)
		}
	}
	if frag == "" {
		return nil
	}
	if !strings.HasSuffix(target, ".md") {
		return fmt.Errorf("has an anchor into %s, not a Markdown file: its anchors cannot be checked", target)
	}
	a, err := anchors(target)
	if err != nil {
		return fmt.Errorf("points to %s: %w", target, err)
	}
	if !a[frag] {
		return fmt.Errorf("points to #%s, which no heading of %s makes", frag, target)
	}
	return nil
}

// TestDocLinks: no link of the README or of docs/ points nowhere, neither
// to a missing file nor to a heading that is not there.
func TestDocLinks(t *testing.T) {
	files := append([]string{readmeFile}, docsPages(t)...)
	for _, err := range checkLinks(os.DirFS(repoRoot), files) {
		t.Error(err)
	}
}

func TestCheckLinks(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md": {Data: []byte("# Top\n\nSee [the CLI](docs/cli.md#loadgend-run), [flags](docs/cli.md#flags-1),\n" +
			"[a dir](pkg/), [`code`](docs/cli.md#peak-search-loadgend-run---mode-find-peak), [web](https://example.com/x#y),\n" +
			"![plot](docs/img/p.png) and [here](#top).\n\n```sh\n[not a link](nowhere.md)\n```\n" +
			"`[nor this](nowhere.md)`\n")},
		"docs/cli.md": {Data: []byte("# CLI\n\n## loadgend run\n\n### Flags\n\n## Peak search: `loadgend run --mode find-peak`\n\n" +
			"### Flags\n\n```sh\n# Not a heading\n```\n\n## Über — “quoted” & co.\n\n<a id=\"explicit\"></a>\n")},
		"docs/img/p.png": {Data: []byte("png")},
		"pkg/x.go":       {Data: []byte("package x")},
	}
	if errs := checkLinks(fsys, []string{"README.md"}); len(errs) != 0 {
		t.Fatalf("good links reported: %v", errs)
	}
	anchors := mdAnchors(string(fsys["docs/cli.md"].Data))
	for _, want := range []string{"cli", "loadgend-run", "flags", "flags-1", "peak-search-loadgend-run---mode-find-peak", "über--quoted--co", "explicit"} {
		if !anchors[want] {
			t.Errorf("no anchor %q in %v", want, anchors)
		}
	}
	if anchors["not-a-heading"] {
		t.Error("a comment in a code block made an anchor")
	}

	tests := []struct {
		name, md, want string
	}{
		{"missing file", "[x](docs/gone.md)", `README.md:1: link "docs/gone.md" points to docs/gone.md, which does not exist`},
		{"missing anchor", "a\n[x](docs/cli.md#loadgend-runs)", `README.md:2: link "docs/cli.md#loadgend-runs" points to #loadgend-runs, which no heading of docs/cli.md makes`},
		{"missing anchor here", "# Top\n[x](#bottom)", `link "#bottom" points to #bottom, which no heading of README.md makes`},
		{"missing image", "![p](docs/img/q.png)", "points to docs/img/q.png, which does not exist"},
		{"out of the tree", "[x](../elsewhere.md)", `link "../elsewhere.md" leaves the repository`},
		{"anchor into code", "[x](pkg/x.go#L1)", "not a Markdown file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := maps.Clone(fsys)
			fsys["README.md"] = &fstest.MapFile{Data: []byte(tt.md)}
			errs := checkLinks(fsys, []string{"README.md"})
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.want) {
				t.Errorf("errors %v, want one containing %q", errs, tt.want)
			}
		})
	}
}

func TestGithubSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Peak search: `loadgend run --mode find-peak`":                      "peak-search-loadgend-run---mode-find-peak",
		"Over HTTP: Triton's generate extension and OpenAI-compatible APIs": "over-http-tritons-generate-extension-and-openai-compatible-apis",
		"Simulated LLMs (`llm`, `kind=llm`)":                                "simulated-llms-llm-kindllm",
		"How the results map to MLPerf's":                                   "how-the-results-map-to-mlperfs",
		"See [the docs](docs/README.md) now":                                "see-the-docs-now",
		"p99 ≤ 15 ms":                                                       "p99--15-ms",
		"snake_case_name":                                                   "snake_case_name",
	} {
		if got := githubSlug(in); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", in, got, want)
		}
	}
}
