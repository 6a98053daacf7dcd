package main

import (
	"fmt"
	"strings"
)

// headerFlags are --header's values, "Name: value" each, repeatable.
type headerFlags []string

func (h *headerFlags) String() string     { return fmt.Sprintf("%d headers", len(*h)) } // never the values
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

// spec turns the flags into the spec's headers field: a name given twice
// (in any case) is refused, as the JSON object cannot say it either. The
// names and values are checked where the spec's are (api, pkg/runspec).
func (h headerFlags) spec() (map[string]string, error) {
	if len(h) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(h))
	seen := map[string]bool{}
	for _, line := range h {
		name, value, ok := splitHeader(line)
		if !ok {
			return nil, fmt.Errorf("--header: want 'Name: value' (a colon after the name), got a value without one")
		}
		if seen[strings.ToLower(name)] {
			return nil, fmt.Errorf("--header: %s given twice: give each header once", name)
		}
		seen[strings.ToLower(name)] = true
		out[name] = value
	}
	return out, nil
}

// splitHeader splits "Name: value" at the colon after the name (a
// pseudo-header's leading colon is part of its name, so that it is refused
// by name), trimming the spaces around the value.
func splitHeader(line string) (name, value string, ok bool) {
	start := 0
	if strings.HasPrefix(line, ":") {
		start = 1
	}
	i := strings.IndexByte(line[start:], ':')
	if i < 0 {
		return "", "", false
	}
	name = strings.TrimSpace(line[:start+i])
	value = strings.Trim(line[start+i+1:], " \t")
	return name, value, true
}
