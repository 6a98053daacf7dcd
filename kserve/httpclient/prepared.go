package httpclient

// Requests encoded once and sent many times, for load generation: the whole
// HTTP request (line, headers, body) is built before the clock starts.

import (
	"context"
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// Prepared is an inference request encoded once, ready to be sent any
// number of times, concurrently.
type Prepared struct {
	raw     []byte // the whole HTTP request
	path    string // its path, the base URL's prefix included
	bodyLen int
	want    *kserve.Expect // the answer check; nil: none
	batch   int            // the request's batch size, for want
}

// BodyLen is the size of the request body in bytes.
func (p *Prepared) BodyLen() int { return p.bodyLen }

// PrepareInfer encodes req (for req.Model and req.Version) with the client's
// binary setting: Content-Type application/octet-stream and
// Inference-Header-Content-Length when binary, application/json when not.
// (With no Content-Type at all the KServe Python server's FastAPI front
// parses the body as JSON and answers 400 to every binary request; Triton
// ignores the header.)
func (c *Client) PrepareInfer(req *kserve.InferRequest) (*Prepared, error) {
	if req.Model == "" {
		return nil, fmt.Errorf("kserve: infer request without a model name")
	}
	body, jsonLen, err := kserve.EncodeInferRequest(nil, req, c.cfg.binary)
	if err != nil {
		return nil, fmt.Errorf("kserve: encode request for model %q: %w", req.Model, err)
	}
	ct := "application/octet-stream"
	if jsonLen < 0 {
		ct = "application/json"
	}
	path := c.prefix + c.modelPath(req.Model, req.Version) + "/infer"
	raw := c.appendRequest(make([]byte, 0, len(body)+len(path)+len(c.host)+len(c.extra)+160), "POST", path, ct, jsonLen, body)
	return &Prepared{raw: raw, path: path, bodyLen: len(body)}, nil
}

// PrepareInferExpect is PrepareInfer with the check of every answer to the
// request that InferPreparedCheck makes: want's model name, output names,
// datatypes and shapes, at the request's batch size (want.BatchOf). A nil
// want checks nothing.
func (c *Client) PrepareInferExpect(req *kserve.InferRequest, want *kserve.Expect) (*Prepared, error) {
	p, err := c.PrepareInfer(req)
	if err != nil {
		return nil, err
	}
	p.want, p.batch = want, want.BatchOf(req)
	return p, nil
}

// InferPrepared sends p and decodes the response. The response owns its
// memory (one copy of the body).
func (c *Client) InferPrepared(ctx context.Context, p *Prepared) (*kserve.InferResponse, error) {
	resp := c.acquireResponse()
	defer c.release(resp)
	if err := c.roundTrip(ctx, p.raw, resp); err != nil {
		return nil, err
	}
	if st := resp.StatusCode(); st < 200 || st >= 300 {
		return nil, c.statusError(resp, p.path)
	}
	jsonLen, err := kserve.ParseInferenceHeaderLength(resp.Header.Peek(kserve.HeaderInferenceContentLength))
	if err != nil {
		return nil, err
	}
	body := append([]byte(nil), resp.Body()...)
	return kserve.DecodeInferResponse(body, jsonLen)
}

// InferPreparedCheck sends p and checks only the status, the framing (a
// non-empty body, a JSON header length within it) and, when p was prepared
// with an Expect, the JSON header against it (an error matching
// kserve.ErrBadResponse): the cheap path for performance runs, where
// outputs are not read.
func (c *Client) InferPreparedCheck(ctx context.Context, p *Prepared) error {
	_, err := c.InferPreparedCheckAt(ctx, p)
	return err
}

// InferPreparedCheckAt is InferPreparedCheck that also returns when the
// response reached this host's kernel, before this process woke up to read
// it (zero when the connection has no receive timestamps): a load
// generator's latency should end there, not include its own wake-up.
func (c *Client) InferPreparedCheckAt(ctx context.Context, p *Prepared) (time.Time, error) {
	var at time.Time
	err := c.inferPreparedCheck(ctx, p, &at)
	return at, err
}

func (c *Client) inferPreparedCheck(ctx context.Context, p *Prepared, at *time.Time) error {
	resp := c.acquireResponse()
	defer c.release(resp)
	if err := c.roundTripAt(ctx, p.raw, resp, at); err != nil {
		return err
	}
	if st := resp.StatusCode(); st < 200 || st >= 300 {
		return c.statusError(resp, p.path)
	}
	jsonLen, err := kserve.ParseInferenceHeaderLength(resp.Header.Peek(kserve.HeaderInferenceContentLength))
	if err != nil {
		return err
	}
	body := resp.Body()
	if err := kserve.CheckInferResponseFraming(body, jsonLen); err != nil {
		return err
	}
	bin := int64(-1)
	if jsonLen >= 0 {
		body, bin = body[:jsonLen], int64(len(body)-jsonLen)
	}
	return p.want.CheckAnswer(body, p.batch, bin)
}
