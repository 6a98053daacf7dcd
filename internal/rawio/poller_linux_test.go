//go:build linux

package rawio

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openWithSocket opens a poller (OwnP as given) watching one end of a
// socket pair for input; it returns the poller, that end and the other.
func openWithSocket(t *testing.T, ownP bool) (p *Poller, watched, peer int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	p = &Poller{OwnP: ownP}
	if err := p.Open("test", 4); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := p.Ctl(unix.EPOLL_CTL_ADD, fds[0], unix.EPOLLIN, 7, 1); err != nil {
		t.Fatal(err)
	}
	return p, fds[0], fds[1]
}

// A long wait (past WaitLimit: a park, or with OwnP a raw block on the
// alarm set) ends as a park always has: at its time and not before; for
// a ready socket unless quiet, with the socket's event; a quiet one not
// for the socket, which it reports at its time; and for its context's end.
func TestLongWaitEnds(t *testing.T) {
	for _, ownP := range []bool{false, true} {
		t.Run(fmt.Sprintf("OwnP=%v", ownP), func(t *testing.T) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			p, watched, peer := openWithSocket(t, ownP)
			long := int64(20 * WaitLimit)

			wake := p.Now() + long
			if n, err := p.Wait(wake, false); err != nil || n != 0 {
				t.Fatalf("idle wait: %d events, %v; want 0", n, err)
			}
			if now := p.Now(); now < wake {
				t.Fatalf("idle wait ended %d ns before its time", wake-now)
			}

			if _, err := unix.Write(peer, []byte("x")); err != nil {
				t.Fatal(err)
			}
			// Not quiet: the ready socket ends it at once, a minute early.
			n, err := p.Wait(p.Now()+int64(time.Minute), false)
			if err != nil || n != 1 || p.Events[0].Fd != 7 {
				t.Fatalf("wait with a ready socket: %d events (%v), %v; want the socket's", n, p.Events[:n], err)
			}

			// Quiet: the socket (still unread) waits for the wake time.
			wake = p.Now() + long
			n, err = p.Wait(wake, true)
			if err != nil || n != 1 {
				t.Fatalf("quiet wait: %d events, %v; want the socket's at its end", n, err)
			}
			if now := p.Now(); now < wake {
				t.Fatalf("quiet wait ended %d ns before its time for a socket", wake-now)
			}

			// Nothing ready (past QuietLimit a wait is not quiet): only
			// the context ends a minute's wait.
			if _, err := unix.Read(watched, make([]byte, 8)); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			p.Watch(ctx)
			time.AfterFunc(time.Duration(long), cancel)
			if _, err := p.Wait(p.Now()+int64(time.Minute), false); err != nil {
				t.Fatal(err)
			}
			if !p.Cancelled() {
				t.Fatal("a minute's wait ended with its context still live")
			}
		})
	}
}

// A raw block holds its P, which the runtime must still be able to stop:
// a collection (stop the world) completes while a wait blocks, and the
// wait goes on after it, to its context's end.
func TestBlockedWaitLetsTheWorldStop(t *testing.T) {
	p, _, _ := openWithSocket(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan error, 1)
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		p.Watch(ctx)
		tid <- unix.Gettid()
		_, err := p.Wait(p.Now()+int64(time.Hour), false)
		ended <- err
	}()
	waitInSyscall(t, <-tid, unix.SYS_EPOLL_PWAIT)
	for range 3 {
		runtime.GC() // hangs if the blocked goroutine cannot be stopped
	}
	select {
	case err := <-ended:
		t.Fatalf("an hour's wait ended before its context did: %v", err)
	default:
	}
	cancel()
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
}

// waitInSyscall returns once thread tid of this process is in system call
// nr (/proc's view of it: the call's number first).
func waitInSyscall(t *testing.T, tid int, nr int) {
	t.Helper()
	path := fmt.Sprintf("/proc/self/task/%d/syscall", tid)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b)); len(f) > 0 && f[0] == strconv.Itoa(nr) {
			return
		}
		runtime.Gosched()
	}
}
