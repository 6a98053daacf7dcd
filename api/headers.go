package api

import (
	"strings"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/secret"
)

// checkHeaders checks RunSpec.Headers as given: names (kserve.CheckHeaderName),
// no name twice in different cases, and literal values; a reference's
// value is checked once read (pkg/runspec). No error quotes a value.
func checkHeaders(hs map[string]string) error {
	seen := map[string]string{}
	for name, v := range hs {
		if err := kserve.CheckHeaderName(name); err != nil {
			return fieldErr("headers", "%v", err)
		}
		lower := strings.ToLower(name)
		if other, ok := seen[lower]; ok {
			return fieldErr("headers", "%s and %s name the same header (names are case-insensitive): give one", other, name)
		}
		seen[lower] = name
		switch {
		case secret.IsRef(v):
		case v == secret.Redacted:
			return fieldErr("headers", "%s: %s is what a hidden value is shown as, not a value: give the value, or a reference (@env:VAR, @file:PATH)", name, secret.Redacted)
		default:
			if err := kserve.CheckHeaderValue(v); err != nil {
				return fieldErr("headers", "%s: %v", name, err)
			}
		}
	}
	return nil
}

// ShownHeaders is hs as it may be shown and stored: each reference as
// itself, each literal value, a secret, as <redacted> (secret.Shown).
func ShownHeaders(hs map[string]string) map[string]string {
	if hs == nil {
		return nil
	}
	out := make(map[string]string, len(hs))
	for k, v := range hs {
		out[k] = secret.Shown(v)
	}
	return out
}
