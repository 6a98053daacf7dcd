package daemon

import (
	"fmt"
	"maps"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/secret"
)

// literalHeaders are the header values of a spec given literally (not as
// @env: or @file: references): secrets the run store must not hold. nil
// when there are none.
func literalHeaders(hs map[string]string) map[string]string {
	var out map[string]string
	for k, v := range hs {
		if !secret.IsRef(v) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// restoreLiterals puts back into spec, a stored spec about to run, the
// header values given literally, which only this process's memory has,
// and forgets them. A run queued before loadgend restarted has lost them:
// it cannot run as asked.
func (s *Service) restoreLiterals(id string, spec *api.RunSpec) error {
	s.mu.Lock()
	lit := s.literals[id]
	delete(s.literals, id)
	s.mu.Unlock()
	if len(spec.Headers) == 0 {
		return nil
	}
	hs := maps.Clone(spec.Headers)
	for name, v := range hs {
		if v != secret.Redacted {
			continue
		}
		val, ok := lit[name]
		if !ok {
			return fmt.Errorf("headers: %s was given literally, and loadgend keeps a literal value in memory only, never in its data directory: it restarted since the run was queued. Submit the run again, or give the value as @env:VAR (a variable in LOADGEND_SECRET_ENV) or @file:PATH (under LOADGEND_SECRETS_DIR), which survive a restart", name)
		}
		hs[name] = val
	}
	spec.Headers = hs
	return nil
}
