package runner

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// An accuracy run of a generative endpoint logs every answer as LoadGen's
// LLM harnesses do: its output token ids (int32, little-endian) when the
// server gives them, else its text, with token_count and, outside
// Offline, the first token's content as token_data — over HTTP (Triton's
// generate_stream, ids), gRPC (ModelStreamInfer, ids) and OpenAI's
// completions (text).
func TestGenerativeAccuracyLog(t *testing.T) {
	p := startProxy(t, "name=chat,kind=llm,max_seqs=8,step=1ms,per_seq=0us,prefill=1us")
	for _, tc := range []struct {
		name, transport string
		api             genai.API
		ids             bool
	}{
		{"generate-stream", "http", genai.APIGenerateStream, true},
		{"kserve-stream", "grpc", genai.APIKServeStream, true},
		{"openai-completions", "http", genai.APIOpenAICompletions, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prompts, err := genai.NewSynthetic(genai.SyntheticOptions{Total: 12, Input: genai.Fixed(4), Output: genai.Fixed(5)})
			if err != nil {
				t.Fatal(err)
			}
			s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
			s.Scenario, s.ServerTargetQPS, s.UseTokenLatencies = trace.Server, 200, true
			dir := t.TempDir()
			spec := Spec{Target: targetOf(p, tc.transport), Model: "chat", API: tc.api, Settings: s, Prompts: prompts,
				TotalSamples: 12, PerformanceSamples: 12, OutDir: dir}
			out, err := RunAccuracy(t.Context(), spec, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if out.Result.SamplesCompleted != 12 {
				t.Fatalf("accuracy result %+v", out.Result)
			}
			b, err := os.ReadFile(filepath.Join(dir, runlog.AccuracyFile))
			if err != nil {
				t.Fatal(err)
			}
			var entries []struct {
				SeqID      *int   `json:"seq_id"`
				Data       string `json:"data"`
				TokenData  string `json:"token_data"`
				TokenCount *int   `json:"token_count"`
			}
			if err := json.Unmarshal(b, &entries); err != nil || len(entries) != 12 {
				t.Fatalf("%d entries, %v:\n%s", len(entries), err, b)
			}
			var wantData, wantFirst []byte
			var text string
			for i := range 5 {
				if tc.ids {
					wantData = binary.LittleEndian.AppendUint32(wantData, uint32(sim.TokenID(i)))
				}
				text += sim.TokenText(i)
			}
			if tc.ids {
				wantFirst = wantData[:4]
			} else {
				wantData = []byte(text)
			}
			for _, e := range entries {
				if e.TokenCount == nil || *e.TokenCount != 5 || e.Data != strings.ToUpper(hex.EncodeToString(wantData)) {
					t.Fatalf("entry %+v, want data %X, token_count 5", e, wantData)
				}
				if tc.ids && e.TokenData != strings.ToUpper(hex.EncodeToString(wantFirst)) {
					t.Errorf("token_data %s, want the first id %X", e.TokenData, wantFirst)
				}
				if !tc.ids && (e.TokenData == "" || !strings.HasPrefix(text, string(must(hex.DecodeString(e.TokenData))))) {
					t.Errorf("token_data %q is not the answer's first text", e.TokenData)
				}
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
