package genclient

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// Options are the generative client's own settings; the connection's
// (MaxConns, Headers, TLS, timeouts) are httpclient's options, given to New.
type Options struct {
	// IgnoreEOS asks for exactly max_tokens tokens: ignore_eos (and, on
	// OpenAI APIs, min_tokens = max_tokens). Off by default: a server that
	// does not know the fields may refuse them (Triton does, for inputs its
	// model lacks).
	IgnoreEOS bool
	// MaxEventBytes bounds one SSE event or line, and a non-streamed
	// answer's body (default 1 MiB): beyond it the answer is malformed.
	MaxEventBytes int
	// StallTimeout fails a request that receives no byte for this long,
	// before its first response (queueing and prefill included) or between
	// two (0: no bound; httpclient's RequestTimeout bounds the whole
	// answer). The error matches os.ErrDeadlineExceeded: outcome timeout.
	StallTimeout time.Duration
}

// DefaultMaxConns is the connection cap New sets unless its httpclient
// options set one: each streamed answer holds its connection to the end,
// so a run's concurrency is its number of streams in flight.
const DefaultMaxConns = 1024

// Client is a genai.Client over HTTP for one of genai's HTTP APIs. Safe
// for concurrent use.
type Client struct {
	api   genai.API
	o     Options
	hc    *httpclient.Client
	calls sync.Pool // *call
	wg    sync.WaitGroup
	// noUsage: the server refused stream_options (a 400 naming it), so
	// streamed OpenAI requests go without from then on.
	noUsage atomic.Bool
	// idPrefix begins every OpenAI request's X-Request-Id ("nlg-" and 8
	// random hex digits, then "-" and genai.Request.ID): the server's
	// record of a request names the sample, and two runs against one
	// server never send the same id (vLLM refuses an id already running).
	idPrefix []byte
}

// HeaderRequestID names an OpenAI request (vLLM's, and most gateways',
// request id header).
const HeaderRequestID = "X-Request-Id"

// newIDPrefix is a client's request id prefix, "nlg-" and 8 random hex
// digits and "-".
func newIDPrefix() []byte {
	var b [4]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return fmt.Appendf(nil, "nlg-%x-", b)
}

// RequestID is the X-Request-Id an OpenAI request of this client carries
// for genai.Request.ID id.
func (c *Client) RequestID(id uint64) string {
	return string(strconv.AppendUint(append([]byte(nil), c.idPrefix...), id, 10))
}

var _ genai.Client = (*Client)(nil)

// New returns a client for api at baseURL (http[s]://host[:port][/prefix]).
func New(baseURL string, api genai.API, o Options, hopts ...httpclient.Option) (*Client, error) {
	switch api {
	case genai.APIGenerate, genai.APIGenerateStream, genai.APIOpenAICompletions, genai.APIOpenAIChat:
	default:
		return nil, fmt.Errorf("genclient: API %q is not an HTTP API: want %s, %s, %s or %s",
			api, genai.APIGenerate, genai.APIGenerateStream, genai.APIOpenAICompletions, genai.APIOpenAIChat)
	}
	if o.MaxEventBytes == 0 {
		o.MaxEventBytes = 1 << 20
	}
	if o.MaxEventBytes < 0 {
		return nil, fmt.Errorf("genclient: max event bytes %d: must be positive", o.MaxEventBytes)
	}
	if o.StallTimeout < 0 {
		return nil, fmt.Errorf("genclient: stall timeout %v: must be positive, or 0 for none", o.StallTimeout)
	}
	// identity: the answer is read as it comes, token by token; a
	// compressed stream would hold tokens back in the compressor.
	hopts = append([]httpclient.Option{httpclient.MaxConns(DefaultMaxConns),
		httpclient.Headers([]kserve.Header{{Name: "Accept-Encoding", Value: "identity"}})}, hopts...)
	hc, err := httpclient.New(baseURL, hopts...)
	if err != nil {
		return nil, err
	}
	c := &Client{api: api, o: o, hc: hc, idPrefix: newIDPrefix()}
	c.calls.New = func() any { return &call{c: c} }
	return c, nil
}

// HTTP is the underlying REST client (its retries, its probes).
func (c *Client) HTTP() *httpclient.Client { return c.hc }

// Generate sends req on a goroutine of its own and returns at once; h
// hears the answer from that goroutine. A request beyond MaxConns in
// flight waits there for a connection.
func (c *Client) Generate(ctx context.Context, req *genai.Request, h genai.Handler) {
	k := c.calls.Get().(*call)
	k.req, k.h, k.ended = req, h, false
	c.wg.Add(1)
	go k.run(ctx)
}

// Close waits for the requests in flight to end (cancel their contexts to
// hurry them) and closes the idle connections.
func (c *Client) Close() error {
	c.wg.Wait()
	return c.hc.Close()
}

// run sends the request and delivers its end, then returns the call to
// the pool.
func (k *call) run(ctx context.Context) {
	c := k.c
	defer c.wg.Done()
	usage := c.api == genai.APIOpenAIChat || c.api == genai.APIOpenAICompletions
	err := k.send(ctx, usage && !c.noUsage.Load())
	if err != nil && usage && !c.noUsage.Load() && refusesStreamOptions(err) {
		// The server does not take stream_options (it answered 400 naming
		// it, so it ran nothing): send once more without, as every later
		// request will.
		c.noUsage.Store(true)
		err = k.send(ctx, false)
	}
	if !k.ended {
		if err == nil {
			err = streamErrorf("the answer ended without an end") // not reached: ReadStream ends or fails
		}
		k.end(time.Now(), err)
	}
	k.req, k.h = nil, nil
	c.calls.Put(k)
}

// refusesStreamOptions: a 400 whose message names stream_options or
// include_usage.
func refusesStreamOptions(err error) bool {
	ke, ok := errors.AsType[*kserve.Error](err)
	return ok && ke.HTTPStatus == 400 &&
		(strings.Contains(ke.Message, "stream_options") || strings.Contains(ke.Message, "include_usage"))
}

func (k *call) send(ctx context.Context, usage bool) error {
	c := k.c
	body, err := c.body(k.req, usage)
	if err != nil {
		return err
	}
	if c.api == genai.APIOpenAIChat || c.api == genai.APIOpenAICompletions {
		k.id = strconv.AppendUint(append(k.id[:0], c.idPrefix...), k.req.ID, 10)
		k.raw = c.hc.AppendRequestWith(k.raw[:0], c.path(k.req), "application/json", HeaderRequestID, k.id, body)
	} else {
		k.raw = c.hc.AppendRequest(k.raw[:0], c.path(k.req), "application/json", body)
	}
	k.start()
	if c.o.StallTimeout <= 0 {
		return c.hc.Stream(ctx, k.raw, k)
	}
	return k.sendWatched(ctx)
}

// sendWatched sends with the stall bound: a timer, pushed back by every
// read, cancels the request when it fires. Its state is the request's own
// (not the pooled call's), so a timer that fires as the request ends
// cannot touch the next one.
func (k *call) sendWatched(ctx context.Context) error {
	d := k.c.o.StallTimeout
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stalled := new(atomic.Bool)
	k.stall = time.AfterFunc(d, func() { stalled.Store(true); cancel() })
	err := k.c.hc.Stream(ctx, k.raw, k)
	k.stall.Stop()
	k.stall = nil
	if stalled.Load() && err != nil {
		return fmt.Errorf("%w: no byte of the answer for %v (stall timeout): %w", kserve.ErrTransport, d, os.ErrDeadlineExceeded)
	}
	return err
}

// Retries is the underlying client's count of requests sent again on a
// fresh connection before any byte reached the server.
func (c *Client) Retries() uint64 { return c.hc.Retries() }

// APIs lists the APIs this package speaks.
func APIs() []genai.API {
	return slices.DeleteFunc(genai.APIs(), genai.API.GRPC)
}
