package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"run", "run", 0},
		{"kitten", "sitting", 3}, {"idnetity", "identity", 1}, {"qps", "target-qps", 7},
		{"trget", "target", 1}, {"sceduel", "schedule", 2},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"run", "schedule", "serve", "accuracy", "compliance", "target", "target-qps", "identity", "find-peak", "peak-step"}
	for _, c := range []struct{ typed, want string }{
		{"trget", "target"}, {"idnetity", "identity"}, {"shedule", "schedule"}, {"serv", "serve"},
		{"xyz", ""}, {"qps", "target-qps"}, {"peak", ""}, {"ru", ""}, {"completely-else", ""},
	} {
		if got := Nearest(c.typed, names); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
	if got := Nearest("x", nil); got != "" {
		t.Errorf("no names: %q", got)
	}
}
