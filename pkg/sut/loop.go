package sut

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/httploop"
	"github.com/netloadgen/netloadgen/pkg/qsl"
)

// Loop is an engine SUT that sends pre-encoded HTTP requests through an
// httploop.Loop on the engine's issuer goroutine (loadgen.Poller): the
// issuer writes each request at its due time and reads answers while it
// waits for the next one. It serves one run at a time, and only an engine
// that polls it (a run on the system clock) ever sees its answers.
type Loop struct {
	polled[[]byte]
	loop *httploop.Loop
	enc  *httpclient.Client
}

// LoopOptions configure the connections of a Loop.
type LoopOptions struct {
	Addr     string // host:port
	MaxConns int    // cap on connections (default 64)
	// Slack is the timer slack of the sleeps until a due time (0: the
	// thread's own; httploop.Config.Slack).
	Slack time.Duration
	// TLS, when set, makes the loop speak TLS with it (an https://
	// target: httploop.Config.TLS).
	TLS *tls.Config
	// MaxResponseBytes caps one answer (httploop.Config.MaxResponseBytes;
	// 0: enc's, httpclient.MaxResponseBytes).
	MaxResponseBytes int
	// Budget, when set, is shared with other loops (the issuers of one
	// run): the answers all of them read at once hold at most its limit
	// (httploop.Config.Budget); nil: the loop's own, of enc's limit.
	Budget *httpclient.Budget
}

// NewLoop builds a Loop SUT for a performance run: enc encodes the
// requests (its base URL, binary setting and Host header), the loop sends
// them to lo.Addr. It fails where httploop does not run (not Linux: match
// httploop.ErrUnsupported and fall back to Network) and for response
// capture, which needs decoded answers.
func NewLoop(enc *httpclient.Client, lib qsl.Library, o Options, lo LoopOptions) (*Loop, error) {
	if o.Capture {
		return nil, fmt.Errorf("sut: the loop client does not return responses (Options.Capture)")
	}
	shape, err := New(nil, lib, o)
	if err != nil {
		return nil, err
	}
	l := &Loop{enc: enc}
	l.polled = newPolled(shape, l.encode)
	// One limit for both clients: the pool's, unless given.
	if lo.MaxResponseBytes <= 0 {
		lo.MaxResponseBytes = enc.MaxResponseBytes()
	}
	cfg := httploop.Config{Addr: lo.Addr, MaxConns: lo.MaxConns, Slack: lo.Slack, TLS: lo.TLS, Timeout: o.Timeout, OnDone: l.onDone,
		// Always: the binary sizes are checked on every answer, with or
		// without the model's metadata.
		Check: l.check, MaxResponseBytes: lo.MaxResponseBytes, MaxResponseBytesTotal: enc.ResponseBudget().Limit(), Budget: lo.Budget}
	l.loop, err = httploop.New(cfg)
	if err != nil {
		return nil, err
	}
	l.tr = l.loop
	return l, nil
}

// check is the answer check: the JSON of the answer to the request tag
// names, at its batch size, and its binary sizes against the body.
func (l *Loop) check(tag uint64, json []byte, binLen int64) error {
	return l.o.Expect.CheckAnswer(json, l.batchOf(tag), binLen)
}

// encode builds the whole HTTP request for samples.
func (l *Loop) encode(samples []int) ([]byte, error) {
	req, err := l.shape.request(samples)
	if err != nil {
		return nil, err
	}
	p, err := l.enc.PrepareInfer(req)
	if err != nil {
		return nil, fmt.Errorf("sut: encode samples %v: %w", samples, err)
	}
	return p.Raw(), nil
}
