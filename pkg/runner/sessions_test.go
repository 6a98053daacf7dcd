package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// chatRequest is what an OpenAI chat request sent: its messages.
type chatRequest struct {
	Messages  []genai.Message `json:"messages"`
	MaxTokens int             `json:"max_tokens"`
}

// chatAnswer is the text of an OpenAI chat event stream: its deltas'
// contents, in order.
func chatAnswer(t *testing.T, body []byte) string {
	t.Helper()
	var out strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ev struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		for _, c := range ev.Choices {
			out.WriteString(c.Delta.Content)
		}
	}
	return out.String()
}

// sessionSample is a line of a run with sessions' samples.jsonl.
type sessionSample struct {
	Sample, Session, Turn int
	Status                string
}

// runSessions runs sessions of turns turns against sutproxy's LLM through
// a recording proxy, over the chat API, and returns the record by request
// id, the samples and the result.
func runSessions(t *testing.T, o shape.SessionsOptions, conv *genai.Conversations) (map[string]sutproxytest.Exchange, []sessionSample, func(uint64) string, *loadgen.Result) {
	return runSessionsOn(t, tinyLLM, o, conv)
}

// runSessionsOn is runSessions against the simulated model of flag model.
func runSessionsOn(t *testing.T, model string, o shape.SessionsOptions, conv *genai.Conversations) (map[string]sutproxytest.Exchange, []sessionSample, func(uint64) string, *loadgen.Result) {
	t.Helper()
	p := sutproxytest.Start(t, model)
	url, rec, closeRec := sutproxytest.RecordHTTP(t, sutproxytest.Target(p, "http"))
	sess, err := shape.NewSessions(o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Shape, s.Sessions, s.ServerTargetLatencyNs = sess, sess, 10e9
	prompts, err := genai.NewSynthetic(genai.SyntheticOptions{Total: 64, Input: genai.Fixed(6), Output: genai.Fixed(5), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var idOf func(uint64) string
	spec := Spec{Target: url, Model: "llm", API: genai.APIOpenAIChat, Settings: s, Prompts: prompts, Conversations: conv,
		TotalSamples: 64, PerformanceSamples: 64,
		wrapGen: func(c genai.Client) genai.Client {
			idOf = c.(interface{ RequestID(uint64) string }).RequestID
			return c
		}}
	var run *loadgen.Run
	out, err := Run(t.Context(), spec, Options{Started: func(r *loadgen.Run) { run = r }})
	if err != nil {
		t.Fatal(err)
	}
	closeRec()
	byID := map[string]sutproxytest.Exchange{}
	for _, x := range rec.All() {
		if x.ID != "" {
			byID[x.ID] = x
		}
	}
	var buf bytes.Buffer
	if err := run.WriteSamples(&buf); err != nil {
		t.Fatal(err)
	}
	var samples []sessionSample
	for dec := json.NewDecoder(&buf); dec.More(); {
		var x sessionSample
		if err := dec.Decode(&x); err != nil {
			t.Fatal(err)
		}
		samples = append(samples, x)
	}
	return byID, samples, idOf, out.Result
}

// Turn k's request holds every earlier turn's user message and the
// server's actual answer to it, in order, then its own user message
// (sutproxy's record, through a recording proxy); the result reports TTFT
// per turn index.
func TestSessionsSendTheConversationSoFar(t *testing.T) {
	const turns = 4
	byID, samples, idOf, res := runSessions(t, shape.SessionsOptions{Rate: 40, Turns: genai.Fixed(turns), Duration: 250 * time.Millisecond,
		Seed: 5, Think: shape.ThinkTime{Law: "fixed", A: time.Millisecond}}, nil)
	sr := res.Sessions
	if sr == nil || sr.Sessions < 2 || sr.Completed != sr.Sessions || sr.TurnsNotIssued != 0 || res.SamplesFailed != 0 {
		t.Fatalf("sessions %+v, failed %d %v", sr, res.SamplesFailed, res.Errors)
	}
	if len(sr.Turns) != turns {
		t.Fatalf("%d turn rows, want %d", len(sr.Turns), turns)
	}
	for _, row := range sr.Turns {
		if row.Completed != sr.Sessions || row.TTFT.Count != sr.Sessions || row.TTFT.P50 <= 0 {
			t.Errorf("turn %d: %+v", row.Turn, row)
		}
	}
	checkConversations(t, byID, samples, idOf, turns, nil)
}

// checkConversations checks every session's requests against the record:
// turn k sends u1, a1, …, u(k−1), a(k−1), uk, where each a is the answer
// the server streamed for that turn; users, when set, are the user
// messages a session must send.
func checkConversations(t *testing.T, byID map[string]sutproxytest.Exchange, samples []sessionSample, idOf func(uint64) string, turns int, users func(session, turn int) string) {
	t.Helper()
	type turnRec struct {
		req    chatRequest
		answer string
	}
	sessions := map[int]map[int]turnRec{}
	for _, s := range samples {
		if s.Status != loadgen.SampleOK || s.Turn < 1 {
			t.Fatalf("sample %+v", s)
		}
		x, ok := byID[idOf(uint64(s.Sample))]
		if !ok {
			t.Fatalf("sample %d: no request %s in the record", s.Sample, idOf(uint64(s.Sample)))
		}
		var req chatRequest
		if err := json.Unmarshal(x.Request, &req); err != nil {
			t.Fatal(err)
		}
		if sessions[s.Session] == nil {
			sessions[s.Session] = map[int]turnRec{}
		}
		sessions[s.Session][s.Turn] = turnRec{req, chatAnswer(t, x.Response)}
	}
	for id, ts := range sessions {
		if len(ts) != turns {
			t.Fatalf("session %d: %d turns recorded, want %d", id, len(ts), turns)
		}
		for k := 1; k <= turns; k++ {
			msgs := ts[k].req.Messages
			if len(msgs) != 2*k-1 {
				t.Fatalf("session %d turn %d: %d messages, want %d", id, k, len(msgs), 2*k-1)
			}
			for j := 1; j < k; j++ {
				u, a := msgs[2*(j-1)], msgs[2*(j-1)+1]
				if u.Role != "user" || u != ts[j].req.Messages[2*(j-1)] {
					t.Errorf("session %d turn %d: message %d is %+v, want turn %d's user message %+v", id, k, 2*(j-1), u, j, ts[j].req.Messages[2*(j-1)])
				}
				if a.Role != "assistant" || a.Content != ts[j].answer || a.Content == "" {
					t.Errorf("session %d turn %d: message %d is %+v, want the server's answer to turn %d %q", id, k, 2*j-1, a, j, ts[j].answer)
				}
			}
			last := msgs[len(msgs)-1]
			if last.Role != "user" || users != nil && last.Content != users(id, k) {
				t.Errorf("session %d turn %d: the last message %+v, want the user's turn %d", id, k, last, k)
			}
			if ts[k].req.MaxTokens != 5 {
				t.Errorf("session %d turn %d: max_tokens %d, want the sample's 5", id, k, ts[k].req.MaxTokens)
			}
		}
	}
}

// A data set's conversations give each session its user messages: session
// s replays conversation s mod N, the server's answers between them.
func TestSessionsReplayConversations(t *testing.T) {
	var in strings.Builder
	for c := range 3 {
		fmt.Fprintf(&in, `{"conversations":[{"from":"human","value":"c%d first"},{"from":"gpt","value":"ignored"},{"from":"human","value":"c%d second"},{"from":"human","value":"c%d third"}]}`+"\n", c, c, c)
	}
	conv, err := genai.ReadConversations(strings.NewReader(in.String()), "chats.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	byID, samples, idOf, res := runSessions(t, shape.SessionsOptions{Rate: 40, TurnsOf: conv.Turns(), Duration: 200 * time.Millisecond, Seed: 2}, conv)
	if res.Sessions == nil || res.Sessions.Completed < 2 {
		t.Fatalf("sessions %+v", res.Sessions)
	}
	users := func(session, turn int) string {
		u, _ := conv.UserTurn(session, turn)
		return u
	}
	checkConversations(t, byID, samples, idOf, 3, users)
}

// A server whose answers break in the middle fails every first turn: each
// session ends there, its later turns never sent (the record has only
// first turns), and the result counts them not issued.
func TestSessionsEndAtAFailedAnswer(t *testing.T) {
	byID, samples, _, res := runSessionsOn(t, tinyLLM+",fault=error_mid", shape.SessionsOptions{Rate: 40, Turns: genai.Fixed(3),
		Duration: 200 * time.Millisecond, Seed: 3}, nil)
	sr := res.Sessions
	if sr == nil || sr.Sessions < 2 || sr.Failed != sr.Sessions || sr.TurnsIssued != sr.Sessions || sr.TurnsNotIssued != 2*sr.Sessions {
		t.Fatalf("sessions %+v", sr)
	}
	if res.SamplesFailed != sr.Sessions || len(samples) != int(sr.Sessions) {
		t.Fatalf("%d samples failed, %d exported, want one a session", res.SamplesFailed, len(samples))
	}
	for _, s := range samples {
		if s.Turn != 1 || s.Status == loadgen.SampleOK {
			t.Errorf("sample %+v: want a failed first turn", s)
		}
	}
	chat := 0
	for _, x := range byID {
		if strings.HasSuffix(x.Path, "/chat/completions") {
			chat++
		}
	}
	if chat != int(sr.Sessions) {
		t.Errorf("the server got %d chat requests, want the %d first turns", chat, sr.Sessions)
	}
}
