package scrape

import (
	"strings"
	"testing"
)

// A body is cut after its first max series lines, at a line's end;
// buckets, quantiles, a histogram's or summary's _sum, comments and blank
// lines are not series lines: a histogram or summary counts once, by its
// _count, so no series the bound would keep is ever cut.
func TestCutSeries(t *testing.T) {
	body := strings.Join([]string{
		"# HELP a A counter.",
		"# TYPE a counter",
		`a{x="1"} 1`,
		"",
		"# TYPE h histogram",
		`h_bucket{le="0.1"} 1`,
		`h_bucket{le="+Inf"} 2`,
		"h_sum 0.3",
		"h_count 2",
		"# TYPE s summary",
		`s{quantile="0.5"} 1`,
		`s{quantile="0.99"} 2`,
		"s_sum 3",
		"s_count 2",
		`a{x="2"} 2`,
	}, "\n") + "\n"
	// Series lines: a{x="1"}, h_count, s_count, a{x="2"}.
	for _, c := range []struct {
		max      int
		cut      bool
		lastLine string
	}{
		{4, false, `a{x="2"} 2`},
		{100, false, `a{x="2"} 2`},
		{3, true, "s_count 2"},
		{2, true, "s_sum 3"},
		{1, true, "h_sum 0.3"},
		{0, true, "# TYPE a counter"},
	} {
		got, cut := cutSeries([]byte(body), c.max)
		lines := strings.Split(strings.TrimRight(string(got), "\n"), "\n")
		last := lines[len(lines)-1]
		if cut != c.cut || last != c.lastLine {
			t.Errorf("max %d: cut %v, last line %q; want %v, %q", c.max, cut, last, c.cut, c.lastLine)
		}
		if cut && len(got) > 0 && got[len(got)-1] != '\n' {
			t.Errorf("max %d: cut mid-line: %q", c.max, got)
		}
	}
	// A last line with no newline is a line.
	if got, cut := cutSeries([]byte("a 1\nb 2"), 1); !cut || string(got) != "a 1\n" {
		t.Errorf("no final newline: %q, %v", got, cut)
	}
}
