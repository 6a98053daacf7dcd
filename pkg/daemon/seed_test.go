package daemon

import (
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/runstore"
)

// SeedRuns fills the data directory dataDir, which holds exactly one run
// (a real one, with its files), with n copies of it under new ids, so that
// a list of hundreds of runs reads real result.json and progress.json. The
// daemon must not have the directory open. Exported for the e2e tests of
// package daemon_test.
func SeedRuns(t testing.TB, dataDir string, n int) {
	t.Helper()
	runs := filepath.Join(dataDir, "runs")
	ents, err := os.ReadDir(runs)
	if err != nil || len(ents) != 1 {
		t.Fatalf("SeedRuns: want one run in %s: %d, %v", runs, len(ents), err)
	}
	src := filepath.Join(runs, ents[0].Name())
	var rec map[string]any
	b, err := os.ReadFile(filepath.Join(src, runstore.RecordFile))
	if err != nil || json.Unmarshal(b, &rec) != nil {
		t.Fatalf("SeedRuns: %s: %v", src, err)
	}
	files, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := rec["seq"].(float64)
	at := time.Now().UTC()
	for i := 1; i <= n; i++ {
		var suffix [4]byte
		for j := range suffix {
			suffix[j] = byte(rand.N(256))
		}
		// runstore's id: "<UTC time, µs>-<8 hex digits>".
		id := at.Add(time.Duration(i)*time.Millisecond).Format("20060102T150405.000000Z") + "-" + hex.EncodeToString(suffix[:])
		dst := filepath.Join(runs, id)
		if err := os.Mkdir(dst, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if !f.Type().IsRegular() || f.Name() == runstore.RecordFile {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, f.Name()), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		rec["id"], rec["seq"] = id, seq+float64(i)
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, runstore.RecordFile), append(b, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
