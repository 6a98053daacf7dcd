package compliance

import (
	"strings"
	"testing"
)

// ReadAccuracyLog reads a token run's entries too: token_data and
// token_count beside the data; a plain entry has neither.
func TestReadAccuracyLogTokens(t *testing.T) {
	log := `[
{ "seq_id" : 3, "qsl_idx" : 9, "data" : "0A0B", "token_data" : "0A", "token_count" : 2 },
{ "seq_id" : 4, "qsl_idx" : 1, "data" : "FF" }
]
`
	es, err := ReadAccuracyLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].TokenCount != 2 || string(es[0].TokenData) != "\x0a" || string(es[0].Data) != "\x0a\x0b" ||
		es[1].TokenCount != 0 || es[1].TokenData != nil {
		t.Errorf("entries %+v", es)
	}
	if _, err := ReadAccuracyLog(strings.NewReader(`[{ "seq_id" : 0, "qsl_idx" : 0, "data" : "", "token_data" : "zz" }]`)); err == nil ||
		!strings.Contains(err.Error(), "token_data") {
		t.Errorf("bad token_data: %v", err)
	}
}
