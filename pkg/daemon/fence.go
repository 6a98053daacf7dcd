package daemon

import (
	"context"
	"fmt"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/shape"
)

// fenceRefusal is why a spec would send a request outside
// LOADGEND_ALLOWED_TARGETS: the field at fault, the run's failure reason
// and the message.
type fenceRefusal struct {
	field, reason, msg string
}

// outsideFence checks every host spec sends requests to against
// LOADGEND_ALLOWED_TARGETS: its target, its server_metrics endpoints and
// the URLs its mix entries name (each a target of its own, issue 31). The
// handler refuses at submission and the worker again at the start (the
// list, or what a name resolves to, may have changed): one list of checks
// for both, so a new URL field cannot be fenced in one place only. Nil
// when every host is allowed.
func (s *Service) outsideFence(ctx context.Context, spec api.RunSpec) *fenceRefusal {
	if !s.allow.Allows(ctx, hostOf(spec.Target)) {
		return &fenceRefusal{"target", "target not allowed",
			fmt.Sprintf("target %s is outside LOADGEND_ALLOWED_TARGETS", spec.Target)}
	}
	if u := s.disallowedMetrics(ctx, spec); u != "" {
		return &fenceRefusal{"server_metrics", "server metrics not allowed",
			fmt.Sprintf("server_metrics %s is outside LOADGEND_ALLOWED_TARGETS", u)}
	}
	return s.disallowedMix(ctx, spec)
}

// disallowedMix is the refusal of the first mix entry whose own URL's
// host is outside LOADGEND_ALLOWED_TARGETS, nil when none is (an entry
// without a URL goes to the run's target, checked already).
func (s *Service) disallowedMix(ctx context.Context, spec api.RunSpec) *fenceRefusal {
	if spec.Mix == "" {
		return nil
	}
	m, err := shape.ParseMix(spec.Mix)
	if err != nil {
		// Decoding refused it already; what cannot be read is not let out.
		return &fenceRefusal{"mix", "mix target not allowed", "the mix does not parse: " + err.Error()}
	}
	for i, e := range m.Entries {
		if e.Target != "" && !s.allow.Allows(ctx, hostOf(e.Target)) {
			return &fenceRefusal{"mix", "mix target not allowed",
				fmt.Sprintf("mix entry %d (%s): target %s is outside LOADGEND_ALLOWED_TARGETS", i+1, e.Model, e.Target)}
		}
	}
	return nil
}
