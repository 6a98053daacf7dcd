package genclient

// One request's answer, read as it arrives: the response's head, then SSE
// events (or one JSON body), each response timed and handed to the
// request's genai.Handler.

import (
	"bufio"
	"bytes"
	"io"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// call is one request in flight, pooled with its buffers.
type call struct {
	c     *Client
	req   *genai.Request
	h     genai.Handler
	raw   []byte // the HTTP request
	id    []byte // an OpenAI request's X-Request-Id
	hdr   fasthttp.ResponseHeader
	body  bodyReader
	sse   sseParser
	buf   []byte // a non-streamed answer, or an error status's body
	info  answerInfo
	usage genai.Usage
	ids   int       // output_ids over the answer
	resps int       // token-bearing responses so far
	sent  time.Time // when the request was handed to the connection
	last  time.Time // the latest response's arrival
	ended bool      // End was called
	// wantDone: an OpenAI stream, which ends with `data: [DONE]`.
	wantDone bool
	streamed bool        // the request asked for a stream
	stall    *time.Timer // the stall bound's timer, pushed back by each read; nil: none
}

var _ httpclient.StreamReader = (*call)(nil)

// start readies the call for a send.
func (k *call) start() {
	k.usage, k.ids, k.resps, k.ended = genai.Usage{}, 0, 0, false
	k.streamed = k.c.stream(k.req)
	k.wantDone = k.c.api == genai.APIOpenAIChat || k.c.api == genai.APIOpenAICompletions
	k.sent = time.Now()
	k.last = k.sent
}

// ReadStream reads the answer's head and body from the connection; the
// connection is kept when the body was read to its end and the server did
// not say it closes it.
func (k *call) ReadStream(a *httpclient.Answer) (keep bool, err error) {
	keep, err = k.readAnswer(a)
	return keep && !k.hdr.ConnectionClose(), err
}

func (k *call) readAnswer(a *httpclient.Answer) (keep bool, err error) {
	br := a.Reader()
	if err := k.readHead(br); err != nil {
		return false, err
	}
	k.body.init(br, k.hdr.ContentLength())
	if st := k.hdr.StatusCode(); st < 200 || st >= 300 {
		const limit = 64 << 10
		body, keep, err := k.readAll(a, limit)
		if err != nil {
			return false, err
		}
		return keep, httpclient.StatusError(st, body)
	}
	if ce := k.hdr.Peek("Content-Encoding"); len(ce) > 0 && !bytes.EqualFold(ce, []byte("identity")) {
		// Every request asks for identity (Accept-Encoding): a compressed
		// answer would only fail later as garbled events.
		return false, streamErrorf("the server compressed its answer (Content-Encoding: %s) although loadgend asks for identity (Accept-Encoding: identity): "+
			"turn compression off on the server or the proxy in front of it", clip(ce))
	}
	// Events when the server says so, or, to a streamed request, unless it
	// says JSON (some servers label their events text/plain).
	ct := k.hdr.ContentType()
	if bytes.HasPrefix(ct, []byte("text/event-stream")) || k.streamed && !bytes.HasPrefix(ct, []byte("application/json")) {
		return k.readEvents(a)
	}
	return k.readOne(a)
}

// maxInterimHeads bounds the interim (1xx) heads skipped before an answer,
// as fasthttp, under the tensor client, bounds them.
const maxInterimHeads = 100

// readHead reads the answer's head, skipping interim ones (100 Continue,
// 103 Early Hints: the answer follows them on the same connection, as the
// tensor clients skip them). 101 is no interim head but a switch to
// another protocol: the answer will never come.
func (k *call) readHead(br *bufio.Reader) error {
	for range maxInterimHeads {
		k.hdr.Reset()
		if err := k.hdr.Read(br); err != nil {
			return err
		}
		switch st := k.hdr.StatusCode(); {
		case st == 101:
			return streamErrorf("the server answered 101 Switching Protocols: it speaks another protocol on this connection, not an HTTP answer")
		case st < 100 || st >= 200:
			return nil
		}
	}
	return streamErrorf("more than %d interim (1xx) heads before the answer", maxInterimHeads)
}

// arrival is when the latest bytes read arrived, never before the send
// nor before the bytes read earlier: the kernel's stamp is on the wall
// clock, brought onto the monotonic one with a few µs of noise, and a
// wall-clock step would move it further (pkg/rxstamp).
func (k *call) arrival(a *httpclient.Answer) time.Time {
	if k.stall != nil {
		k.stall.Reset(k.c.o.StallTimeout)
	}
	if at := a.Arrival(time.Now()); at.After(k.last) {
		k.last = at
	}
	return k.last
}

// readEvents reads server-sent events to the body's end. Each event is
// timed by the read that completed it.
func (k *call) readEvents(a *httpclient.Answer) (bool, error) {
	k.sse.reset(k.c.o.MaxEventBytes)
	for {
		space, err := k.sse.space()
		if err != nil {
			return false, err
		}
		n, rerr := k.body.read(space)
		at := k.arrival(a)
		k.sse.wrote(n)
		for {
			ev, ok, err := k.sse.next()
			if err != nil {
				return false, err
			}
			if !ok {
				break
			}
			if err := k.event(at, ev); err != nil {
				return false, err
			}
		}
		switch {
		case rerr == io.EOF:
			return k.streamEnd(at)
		case rerr != nil:
			return false, rerr
		}
	}
}

// event takes one event: the end of an OpenAI stream, an error, or a
// response. After the end (OpenAI's [DONE]) the rest of the body is read
// and dropped, so the connection can carry another request.
func (k *call) event(at time.Time, ev sseEvent) error {
	if k.ended {
		return nil
	}
	if string(ev.Type) == "error" {
		return streamErrorf("an error event after %d token responses: %s", k.resps, clip(ev.Data))
	}
	if k.wantDone && string(ev.Data) == "[DONE]" {
		k.end(at, nil)
		return nil
	}
	if !scanAnswer(ev.Data, &k.info) {
		return streamErrorf("an SSE event whose data is not a JSON object: %q", clip(ev.Data))
	}
	return k.account(at, ev.Data)
}

// account hands a decoded response (JSON data) to the handler.
func (k *call) account(at time.Time, data []byte) error {
	info := &k.info
	if info.errMsg != nil {
		return streamErrorf("an error in the answer after %d token responses: %s", k.resps, clip(info.errMsg))
	}
	if info.usage {
		k.usage.OutputTokens, k.usage.InputTokens = info.outTokens, info.inTokens
	}
	k.ids += info.ids
	if info.text || info.ids > 0 {
		k.resps++
		if k.req.Capture {
			if ch, ok := k.h.(genai.ContentHandler); ok {
				text, ids := answerContent(data)
				ch.Content(text, ids)
			}
		}
		k.h.Tokens(at, max(info.ids, 1))
	}
	return nil
}

// streamEnd is the body's clean end: the answer's end for Triton's
// generate_stream, too early for an OpenAI stream not yet [DONE].
func (k *call) streamEnd(at time.Time) (bool, error) {
	if err := k.sse.end(); err != nil {
		return false, err
	}
	if !k.ended {
		if k.wantDone && k.resps == 0 {
			return false, noOutputTokens("the stream ended without data: [DONE]")
		}
		if k.wantDone {
			return false, streamErrorf("the stream ended without data: [DONE] (after %d token responses)", k.resps)
		}
		k.end(at, nil)
	}
	return k.body.mode != bodyClose, nil
}

// readOne reads a non-streamed answer: one JSON object.
func (k *call) readOne(a *httpclient.Answer) (bool, error) {
	body, keep, err := k.readAll(a, k.c.o.MaxEventBytes)
	if err != nil {
		return false, err
	}
	if !keep && k.body.mode != bodyClose {
		return false, streamErrorf("an answer larger than %d bytes", k.c.o.MaxEventBytes)
	}
	if !scanAnswer(body, &k.info) {
		return false, streamErrorf("an answer that is not a JSON object: %q", clip(body))
	}
	at := k.arrival(a)
	if err := k.account(at, body); err != nil {
		return false, err
	}
	k.end(at, nil)
	return keep, nil
}

// readAll reads the body, up to limit bytes; keep is false when it was
// longer (the rest is left unread) or ran to the connection's close.
func (k *call) readAll(a *httpclient.Answer, limit int) (body []byte, keep bool, err error) {
	k.buf = k.buf[:0]
	for len(k.buf) <= limit {
		if len(k.buf) == cap(k.buf) {
			k.buf = append(k.buf, 0)[:len(k.buf)]
		}
		n, err := k.body.read(k.buf[len(k.buf):cap(k.buf)])
		k.buf = k.buf[:len(k.buf)+n]
		switch {
		case err == io.EOF:
			return k.buf, k.body.mode != bodyClose, nil
		case err != nil:
			return nil, false, err
		}
	}
	return k.buf[:limit], false, nil
}

// end delivers the answer's end once, with the server's count: usage, or
// else the output_ids received. An answer that ends well without one
// token-bearing response fails: the server answered nothing.
func (k *call) end(at time.Time, err error) {
	k.ended = true
	if err == nil && k.resps == 0 {
		err = noOutputTokens("no response carried output text or output_ids")
	}
	if k.usage.OutputTokens == 0 {
		k.usage.OutputTokens = k.ids
	}
	k.h.End(at, k.usage, err)
}
