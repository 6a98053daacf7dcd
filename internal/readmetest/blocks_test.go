package readmetest_test

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// block is one fenced code block of a Markdown file.
type block struct {
	file   string // the Markdown file, from the repository's root
	line   int    // line of the opening fence, 1-based
	lang   string // first word of the info string
	tested bool   // the info string says "tested": the README test runs it
	needs  []string
	body   string
	prose  string // the text since the previous block
	after  string // the text up to the next block
}

// testedMarker is the info-string word that makes a shell block part of the
// README test. GitHub highlights by the first word only ("sh"), so the
// marker does not show.
const testedMarker = "tested"

var shellLangs = []string{"sh", "bash", "shell", "console"}

func (b block) shell() bool { return slices.Contains(shellLangs, b.lang) }

// parseBlocks splits Markdown into its fenced blocks (``` at the start of a
// line; the README indents none). An info string may carry "tested" and
// "needs=prog,prog" after the language.
func parseBlocks(md string) ([]block, error) {
	var (
		blocks []block
		cur    *block
		body   strings.Builder
		prose  strings.Builder
	)
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fence := strings.HasPrefix(line, "```")
		switch {
		case cur == nil && fence:
			f := strings.Fields(strings.TrimPrefix(line, "```"))
			cur = &block{line: n, prose: prose.String()}
			prose.Reset()
			if len(f) > 0 {
				cur.lang = f[0]
			}
			for _, a := range f[min(1, len(f)):] {
				switch {
				case a == testedMarker:
					cur.tested = true
				case strings.HasPrefix(a, "needs="):
					cur.needs = strings.Split(strings.TrimPrefix(a, "needs="), ",")
				default:
					return nil, fmt.Errorf("line %d: unknown word %q in the info string", n, a)
				}
			}
		case cur != nil && fence:
			if strings.TrimSpace(line) != "```" {
				return nil, fmt.Errorf("line %d: a fence inside the block opened at line %d", n, cur.line)
			}
			cur.body = body.String()
			body.Reset()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		default:
			prose.WriteString(line)
			prose.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: block never closed", cur.line)
	}
	for i := range blocks {
		if i+1 < len(blocks) {
			blocks[i].after = blocks[i+1].prose
		} else {
			blocks[i].after = prose.String()
		}
	}
	return blocks, nil
}

var (
	// A tested block runs against servers on ports the test picks: it must
	// reach them through $API, $SUT and $SUT_GRPC, never a fixed address.
	fixedAddr = regexp.MustCompile(`(127\.0\.0\.1|localhost|\[::1\]):[0-9]`)
	// An untested shell block must say why, in the text before or after it.
	untestedReason = regexp.MustCompile(`(?i)not\s+run\s+by\s+the\s+tests`)
)

// checkBlocks applies the README's rules to its blocks: every shell block is
// tested or explained, tested ones are shell and use no fixed address.
func checkBlocks(blocks []block) []error {
	var errs []error
	for _, b := range blocks {
		switch {
		case b.tested && !b.shell():
			errs = append(errs, fmt.Errorf("line %d: %q block marked %s: only shell blocks run", b.line, b.lang, testedMarker))
		case b.tested && fixedAddr.MatchString(b.body):
			errs = append(errs, fmt.Errorf("line %d: tested block uses a fixed address %q: use $API, $SUT or $SUT_GRPC",
				b.line, fixedAddr.FindString(b.body)))
		case !b.tested && len(b.needs) > 0:
			errs = append(errs, fmt.Errorf("line %d: needs= on a block not marked %s", b.line, testedMarker))
		case !b.tested && b.shell() && !untestedReason.MatchString(b.prose) && !untestedReason.MatchString(b.after):
			errs = append(errs, fmt.Errorf("line %d: shell block neither marked %q nor explained (%q in the text around it)",
				b.line, testedMarker, untestedReason.String()))
		}
	}
	return errs
}
