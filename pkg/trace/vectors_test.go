package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Official mlperf.conf seeds, used by the reference vectors.
const (
	officialQSLSeed      = 2085463073848966840
	officialSampleSeed   = 2747215439041700203
	officialScheduleSeed = 16159082839903944936
)

func officialSettings(s Scenario) Requested {
	req := DefaultSettings()
	req.Scenario = s
	req.QSLRNGSeed = officialQSLSeed
	req.SampleIndexRNGSeed = officialSampleSeed
	req.ScheduleRNGSeed = officialScheduleSeed
	return req
}

// vectorCases are the settings each file in testdata was produced with by
// the C++ LoadGen 6.0.17 (FORMAT.md in the shared test data).
func vectorCases() map[string]Requested {
	server := officialSettings(Server)
	server.ServerTargetQPS = 1000

	single := officialSettings(SingleStream)
	single.MinQueryCount = 1024

	multi := officialSettings(MultiStream)
	multi.MultiStreamSamplesPerQuery = 8
	multi.MinQueryCount = 662

	offline := officialSettings(Offline)
	offline.OfflineExpectedQPS = 100
	offline.MinQueryCount = 24576

	unique := officialSettings(Server)
	unique.ServerTargetQPS = 300
	unique.MinDurationMs = 5000
	unique.PerformanceIssueUnique = true

	return map[string]Requested{
		"server_qps1000_10s_official.txt": server,
		"singlestream_official.txt":       single,
		"multistream_spq8_official.txt":   multi,
		"offline_qps100_official.txt":     offline,
		"server_qps300_issue_unique.txt":  unique,
	}
}

var vectorQSL = QSL{TotalSampleCount: 1024, PerformanceSampleCount: 1024}

func TestVectorsByteForByte(t *testing.T) {
	cases := vectorCases()
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(cases) {
		t.Fatalf("testdata has %d vector files, the test knows %d: every file must be covered", len(files), len(cases))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			req, ok := cases[name]
			if !ok {
				t.Fatalf("no settings for %s", name)
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := New(req, vectorQSL)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := Write(&got, tr); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("output differs from %s: %s", name, firstDiff(got.String(), string(want)))
			}
		})
	}
}

// firstDiff describes the first differing line, to keep failures readable.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return "line " + itoa(i+1) + ":\n got: " + clip(g[i]) + "\nwant: " + clip(w[i])
		}
	}
	return "line counts differ: got " + itoa(len(g)) + ", want " + itoa(len(w))
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func itoa(i int) string { return strconv.Itoa(i) }
