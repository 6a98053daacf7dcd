package genwire

// This file is what a generative client over ModelStreamInfer does with a
// response once it has read it: the same for grpc-go's client and
// grpcloop's, so that a malformed answer fails a sample with the same
// outcome whichever sends.

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// Call is one request in flight. Its handler is called under mu, so that a
// cancellation's End never runs beside the reader's Tokens, and never after
// End.
type Call struct {
	mu      sync.Mutex
	h       genai.Handler
	ctx     context.Context
	capture genai.ContentHandler // the handler, when the request captures its content
	ended   bool
	tokens  bool // a token-bearing response arrived
	ids     int  // output_ids counted over the responses
	idsSeen bool
	stop    func() bool // the ctx watch; nil without one
}

// NewCall is req's call, answered to h. A ctx that can end is watched
// with context.AfterFunc, which starts no goroutine until it ends: its end
// ends the call (genai.Client's contract).
func NewCall(ctx context.Context, req *genai.Request, h genai.Handler) *Call {
	c := &Call{h: h, ctx: ctx}
	if ch, ok := h.(genai.ContentHandler); ok && req.Capture {
		c.capture = ch
	}
	if ctx.Done() != nil {
		c.mu.Lock() // a cancellation's End waits for stop to be set
		c.stop = context.AfterFunc(ctx, c.cancelled)
		c.mu.Unlock()
	}
	return c
}

// Captures says whether the request asked for its content.
func (c *Call) Captures() bool { return c.capture != nil }

func (c *Call) cancelled() { c.End(time.Now(), genai.Usage{}, c.ctx.Err()) }

// Final says whether w is the last response of its request: the final
// flag, the one response of a model that is not decoupled, or an error.
func Final(w *Response, oneResponse bool) bool {
	return w.Final || oneResponse || w.ErrMsg != "" || !w.Infer
}

// Deliver hands w, read at at, to call, the request in flight with w's id
// (nil: none); final is Final(w, ...), and raw the message (read only for
// a call that captures, during the call). The error, when not nil, ends
// the stream, and with it every request in flight on it: a response for no
// request in flight, or bytes that are no response.
func Deliver(at time.Time, w *Response, raw []byte, call *Call, final bool) error {
	switch {
	case w.Err != nil:
		return fmt.Errorf("%w: %w", genai.ErrStream, w.Err)
	case call == nil && w.ErrMsg != "":
		// The server's error, for no request it names: it is about one
		// of them, but which is unknown.
		return &kserve.Error{Code: codes.Unknown, Message: w.ErrMsg}
	case call == nil:
		return errUnknownID(w)
	case w.ErrMsg != "":
		call.fail(at, &kserve.Error{Code: codes.Unknown, Message: w.ErrMsg})
	case !w.Infer:
		call.End(at, genai.Usage{}, fmt.Errorf("%w: %w: ModelStreamInfer response with neither infer_response nor error_message",
			genai.ErrStream, kserve.ErrMalformed))
	case !final && w.Outputs == 0:
		// Not the end, and nothing in it: a server that broke its answer
		// (and may never send the rest). Waiting for a final response
		// would hold the sample to the run's drain timeout.
		call.End(at, genai.Usage{}, fmt.Errorf("%w: %w: ModelStreamInfer response with no output that is not the final one",
			genai.ErrStream, kserve.ErrMalformed))
	default:
		call.response(at, w, raw, final)
	}
	return nil
}

// ErrStreamEnded is a stream that ended (cleanly) before the final
// responses of the requests in flight on it.
var ErrStreamEnded = fmt.Errorf("%w: %w: ModelStreamInfer stream ended before the request's final response (%s)",
	genai.ErrStream, kserve.ErrMalformed, FinalParam)

// errUnknownID is a response for no request in flight: the stream no
// longer says which answer is whose, so every request on it fails.
func errUnknownID(w *Response) error {
	id := w.IDText
	if w.IDOK {
		id = strconv.FormatUint(w.ID, 10)
	}
	return fmt.Errorf("%w: %w: ModelStreamInfer response for request id %q, which is not in flight", genai.ErrStream, kserve.ErrMalformed, id)
}

// response hands a response's tokens to the handler (and its content, when
// captured), and ends the request on its last.
func (c *Call) response(at time.Time, w *Response, raw []byte, final bool) {
	c.mu.Lock()
	if !c.ended {
		if w.IDsSeen {
			c.ids += w.IDs
			c.idsSeen = true
		}
		if n := w.Tokens(); n > 0 {
			c.tokens = true
			if c.capture != nil {
				text, ids := Content(raw)
				c.capture.Content(text, ids)
			}
			c.h.Tokens(at, n)
		}
	}
	tokens := c.tokens
	c.mu.Unlock()
	if final {
		var u genai.Usage
		if c.idsSeen {
			u.OutputTokens = c.ids
		}
		var err error
		if !tokens {
			// The final response, and not one token before it: the server
			// answered nothing, which must not count as a completion.
			err = fmt.Errorf("%w: %w (the final response came without a token-bearing one before it)", genai.ErrNoOutputTokens, kserve.ErrMalformed)
		}
		c.End(at, u, err)
	}
}

// fail ends the request with the server's error; after tokens it is a
// broken answer, malformed as well.
func (c *Call) fail(at time.Time, ke *kserve.Error) {
	c.mu.Lock()
	mid := c.tokens
	c.mu.Unlock()
	var err error = ke
	if mid {
		err = fmt.Errorf("%w: %w: error in the middle of the answer: %w", genai.ErrStream, kserve.ErrMalformed, ke)
	}
	c.End(at, genai.Usage{}, err)
}

// End calls the handler's End once: later calls, and responses after it,
// do nothing.
func (c *Call) End(at time.Time, u genai.Usage, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended = true
	if c.stop != nil {
		c.stop()
	}
	c.h.End(at, u, err)
}
