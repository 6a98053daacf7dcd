//go:build linux

package httploop

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

// GiveOwnP, after New, makes the loop's long waits block raw on the
// polling goroutine's own locked thread (epoll_pwait there) where before it
// parked (the thread asleep in the runtime: a futex).
func TestGiveOwnPBlocksRaw(t *testing.T) {
	s := startServer(t, always(okResponse("")))
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1}, &res)
	for _, own := range []bool{false, true} {
		if own {
			l.GiveOwnP()
		}
		ctx, cancel := context.WithCancel(context.Background())
		tid, done := make(chan int), make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tid <- unix.Gettid()
			l.PollUntil(ctx, time.Now().Add(time.Hour))
		}()
		want, other := unix.SYS_FUTEX, unix.SYS_EPOLL_PWAIT
		if own {
			want, other = other, want
		}
		id := <-tid
		seen := ""
		for deadline := time.Now().Add(10 * time.Second); seen != strconv.Itoa(want); {
			if time.Now().After(deadline) {
				t.Fatalf("OwnP %v: the polling thread's system call is %s, want %d (%d would be the other wait)", own, seen, want, other)
			}
			b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", id))
			if err != nil {
				t.Fatal(err)
			}
			if f := strings.Fields(string(b)); len(f) > 0 {
				seen = f[0]
			}
			runtime.Gosched()
		}
		cancel()
		<-done
	}
}
