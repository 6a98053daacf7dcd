package shape

import "errors"

// MixEntry is one model of --mix: its weight, and optionally its own
// target URL and API (empty: the run's).
type MixEntry struct {
	Model  string
	Weight float64
	Target string
	API    string
}

// Mix is --mix "identity=0.7,resnet50=0.3" (entries MODEL=WEIGHT,
// MODEL=WEIGHT@URL or MODEL=WEIGHT@URL;API): each query's model drawn by
// weight.
type Mix struct {
	Entries []MixEntry
}

// ParseMix reads --mix. Errors wrap ErrShape and name --mix.
func ParseMix(v string) (*Mix, error) { return nil, errors.ErrUnsupported }

// Pick is the index of query's model: a weighted draw seeded by seed and
// the query's index alone, so the same query gets the same model in every
// pass and in every issuer, in any order.
func (m *Mix) Pick(seed uint64, query int) int { return 0 }

// Index is the index of model's entry.
func (m *Mix) Index(model string) (int, bool) {
	for i, e := range m.Entries {
		if e.Model == model {
			return i, true
		}
	}
	return 0, false
}
