package loadgen

import "fmt"

// WithIssuerSUTs gives issuers 1 … N−1 of a run with Engine.Issuers N their
// own SUTs; issuer 0 issues through the SUT given to NewRun. Each SUT is one
// client with its share of the connections, polled on its issuer's own OS
// thread: issuers share nothing on the way to the socket but the record.
func WithIssuerSUTs(suts ...SUT) Option { return func(r *Run) { r.issuerSUTs = suts } }

// checkIssuerSUTs: a run of N issuers has a SUT for each.
func (r *Run) checkIssuerSUTs() error {
	n := max(r.settings.Engine.Issuers, 1)
	if len(r.issuerSUTs) != n-1 {
		return fmt.Errorf("issuers: %d issuers need %d SUTs besides the run's, got %d", n, n-1, len(r.issuerSUTs))
	}
	for i, s := range r.issuerSUTs {
		if s == nil {
			return fmt.Errorf("issuers: issuer %d has no SUT", i+1)
		}
	}
	return nil
}
