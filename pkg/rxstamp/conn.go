package rxstamp

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// Conn is a TCP connection that remembers when its latest data arrived.
// Reads go through recvmsg with the kernel's receive timestamp; everything
// else is the embedded *net.TCPConn's.
type Conn struct {
	*net.TCPConn
	last atomic.Int64 // Unix ns of the latest data read; 0 = none since Reset
	rd   reader       // the platform's recvmsg state; nil = plain reads
	// onWrite is called, once, when the next write starts (OnNextWrite).
	onWrite atomic.Pointer[func(time.Time)]
	ln      *Listener // set for accepted connections, to unregister on Close
}

// Wrap turns on receive timestamps for tc. Where the platform has none (or
// the socket refuses the option) the Conn still works and Arrival reports
// false.
func Wrap(tc *net.TCPConn) *Conn {
	c := &Conn{TCPConn: tc}
	c.rd = newReader(c)
	return c
}

// Dial connects with d and wraps the connection.
func Dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc, nil
	}
	return Wrap(tc), nil
}

// Read reads like net.Conn's Read, recording when the data arrived.
func (c *Conn) Read(p []byte) (int, error) {
	if c.rd == nil {
		return c.TCPConn.Read(p)
	}
	return c.rd.read(p)
}

// Write writes like net.Conn's Write, first telling a waiting OnNextWrite
// callback when it started.
func (c *Conn) Write(p []byte) (int, error) {
	if f := c.onWrite.Swap(nil); f != nil {
		(*f)(time.Now())
	}
	return c.TCPConn.Write(p)
}

// OnNextWrite asks for f to be called with the start time of the next write
// on the connection (replacing an earlier request not yet served). A server
// learns from it when its answers really leave, after its own encoding and
// hand-offs; on a connection shared by concurrent requests the next write
// may carry another answer, so it is an estimate.
func (c *Conn) OnNextWrite(f func(start time.Time)) { c.onWrite.Store(&f) }

// Close closes the connection.
func (c *Conn) Close() error {
	if c.ln != nil {
		c.ln.forget(c)
	}
	return c.TCPConn.Close()
}

// Stamped reports whether reads carry kernel timestamps.
func (c *Conn) Stamped() bool { return c.rd != nil }

// Reset forgets the latest arrival, so that the next Arrival is about data
// read after this call.
func (c *Conn) Reset() { c.last.Store(0) }

// Arrival returns when the latest data read arrived, as a time on now's
// clock (with its monotonic reading), never after now. ok is false when no
// timestamped data was read since Reset.
//
// The kernel stamps with the wall clock; the result is now minus the wall
// time elapsed since the stamp, so a wall-clock step between the two shows
// as an arrival clamped to now (stepped back) or too early (stepped forward)
// — callers bound it below by when they sent the request.
func (c *Conn) Arrival(now time.Time) (at time.Time, ok bool) {
	ns := c.last.Load()
	if ns == 0 {
		return now, false
	}
	d := now.UnixNano() - ns
	if d <= 0 {
		return now, true
	}
	return now.Add(-time.Duration(d)), true
}

// stamp records an arrival; arrivals only move forward, so a reader of
// Arrival never sees a time before data it already consumed.
func (c *Conn) stamp(ns int64) {
	for {
		old := c.last.Load()
		if ns <= old || c.last.CompareAndSwap(old, ns) {
			return
		}
	}
}

// reader is the platform's timestamping read.
type reader interface {
	read(p []byte) (int, error)
}
