package daemon

import (
	"fmt"

	"github.com/netloadgen/netloadgen/api"
)

// checkWorkers decides whether this daemon takes a spec's workers: 0 is a
// run on the daemon itself, always taken. A distributed run is refused for
// now, with a 400 naming workers, at submission and again when a stored
// run is admitted: the one place to replace once the daemon drives
// workers (issue 29's second phase).
func (s *Service) checkWorkers(spec api.RunSpec) error {
	if spec.Workers == 0 {
		return nil
	}
	return &api.FieldError{Field: "workers", Err: ErrNoWorkers, Message: fmt.Sprintf(
		"%d: a distributed run needs registered workers (loadgend worker --coordinator URL), and this daemon runs none yet: leave workers out to run on the daemon itself",
		spec.Workers)}
}
