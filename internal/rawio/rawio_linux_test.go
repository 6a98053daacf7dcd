//go:build linux

package rawio

import (
	"encoding/binary"
	"net"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	binary.NativeEndian.PutUint64(b[0:8], uint64(unix.CmsgLen(len(data))))
	binary.NativeEndian.PutUint32(b[8:12], uint32(level))
	binary.NativeEndian.PutUint32(b[12:16], uint32(typ))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

func TestRxTimestamp(t *testing.T) {
	ts := make([]byte, 16)
	binary.NativeEndian.PutUint64(ts[0:8], 1_700_000_000)
	binary.NativeEndian.PutUint64(ts[8:16], 123)
	want := int64(1_700_000_000)*1e9 + 123
	other := cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, make([]byte, 4))
	cases := []struct {
		name string
		oob  []byte
		want int64
	}{
		{"alone", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts), want},
		{"after another message", append(other, cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)...), want},
		{"none", other, 0},
		{"empty", nil, 0},
		{"truncated data", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts[:8]), 0},
		{"length past the buffer", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)[:20], 0},
	}
	for _, c := range cases {
		if got := RxTimestamp(c.oob); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// Recv gets the bytes and a receive time from a real socket, without
// allocating.
func TestRecvOnASocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	raw.Control(func(f uintptr) {
		fd = int(f)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	})
	var r Receiver
	buf := make([]byte, 64)
	msg := []byte("ping")
	// The kernel turns receive timestamps on for the whole stack only
	// after the first socket asks, in deferred work: packets until then
	// carry none. Exchange until one does (the loops fall back to the
	// read time meanwhile).
	for i := 0; ; i++ {
		if i == 100_000 {
			t.Fatal("no receive timestamp after 100,000 exchanges")
		}
		if _, err := s.Write(msg); err != nil {
			t.Fatal(err)
		}
		n, rx, err := r.Recv(fd, buf)
		for err == unix.EAGAIN {
			n, rx, err = r.Recv(fd, buf)
		}
		if err != nil || n == 0 {
			t.Fatalf("warm-up Recv: %d, %v", n, err)
		}
		if rx != 0 {
			break
		}
	}
	before := time.Now()
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := s.Write(msg); err != nil {
			t.Fatal(err)
		}
		for {
			n, rx, err := r.Recv(fd, buf)
			if err == unix.EAGAIN {
				continue
			}
			if err != nil || string(buf[:n]) != "ping" || rx == 0 {
				t.Fatalf("Recv = %q, %d, %v", buf[:n], rx, err)
			}
			if at := Arrival(rx, time.Now()); at.Before(before.Add(-time.Millisecond)) || at.After(time.Now()) {
				t.Fatalf("arrival %v outside the exchange", at.Sub(before))
			}
			return
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Recv", allocs)
	}
}

// A short wait with a slack sleeps until its time and leaves the thread's
// own slack as it found it: other goroutines run on the thread after.
func TestPollerSlackIsPutBack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		t.Skipf("PR_GET_TIMERSLACK: %v", err)
	}
	var p Poller
	if err := p.Open("test", 4); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Slack = 150 * time.Microsecond
	for range 3 {
		wake := p.Now() + int64(20*time.Microsecond)
		if _, err := p.Wait(wake, false); err != nil {
			t.Fatal(err)
		}
		if now := p.Now(); now < wake {
			t.Fatalf("woke %d ns before the wake time", wake-now)
		}
	}
	after, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || after != before {
		t.Errorf("thread's slack %d ns after the waits (%v), want %d as before", after, err, before)
	}
}
