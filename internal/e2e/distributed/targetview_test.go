package distributed_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// inferRequest starts every KServe v2 HTTP inference request: what the
// target view counts as load (the probe's requests are GETs).
var inferRequest = []byte("POST /v2/models/")

// targetView is the target as the network shows it to the workers: a TCP
// relay in front of sutproxy that notes, for each connection, which peer
// opened it (the name owner gives its remote address) and when each
// inference request arrived, on the test's clock (the coordinator's: one
// host, or one kernel for network namespaces).
type targetView struct {
	addr   string // the relay's host:port: the runs' target
	owner  func(remote net.Addr) string
	naming sync.WaitGroup // the owner lookups under way

	mu    sync.Mutex
	conns []*viewConn
}

type viewConn struct {
	peer   string
	infers []time.Time
}

// startView relays listen to upstream until the test ends.
func startView(t *testing.T, listen, upstream string, owner func(net.Addr) string) *targetView {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatalf("the target view on %s: %v", listen, err)
	}
	v := &targetView{addr: ln.Addr().String(), owner: owner}
	var wg sync.WaitGroup
	var open sync.Map // net.Conn -> struct{}: closed at the end
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			vc := &viewConn{}
			v.mu.Lock()
			v.conns = append(v.conns, vc)
			v.mu.Unlock()
			open.Store(c, struct{}{})
			// The peer is named now, while its socket is surely open, but
			// beside the relay: a look through /proc must delay neither
			// the next accept nor this connection's requests.
			v.naming.Go(func() {
				peer := owner(c.RemoteAddr())
				v.mu.Lock()
				vc.peer = peer
				v.mu.Unlock()
			})
			wg.Go(func() { v.relay(c, upstream, vc, &open) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		open.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
		wg.Wait()
	})
	return v
}

func (v *targetView) relay(c net.Conn, upstream string, vc *viewConn, open *sync.Map) {
	defer c.Close()
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	open.Store(up, struct{}{})
	defer up.Close()
	go func() {
		_, _ = io.Copy(c, up)
		c.Close()
	}()
	buf := make([]byte, 64<<10)
	var tail []byte // the end of the last read: a request line may straddle two
	for {
		n, err := c.Read(buf)
		if n > 0 {
			now := time.Now()
			scan := append(tail, buf[:n]...)
			if k := bytes.Count(scan, inferRequest); k > 0 {
				v.mu.Lock()
				for range k {
					vc.infers = append(vc.infers, now)
				}
				v.mu.Unlock()
			}
			tail = append(tail[:0], scan[max(0, len(scan)-len(inferRequest)+1):]...)
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// byPeer is, for each peer, its inference requests' arrival times, in
// order of arrival.
func (v *targetView) byPeer() map[string][]time.Time {
	v.naming.Wait()
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string][]time.Time{}
	for _, c := range v.conns {
		out[c.peer] = append(out[c.peer], c.infers...)
	}
	for _, ts := range out {
		slices.SortFunc(ts, time.Time.Compare)
	}
	return out
}

// infers counts the inference requests that arrived.
func (v *targetView) infers() int {
	n := 0
	for _, ts := range v.byPeer() {
		n += len(ts)
	}
	return n
}

// byIP names a peer by its IP address: workers in their own network
// namespaces are distinct hosts.
func byIP(remote net.Addr) string {
	host, _, _ := net.SplitHostPort(remote.String())
	return host
}

// byProcess names a peer on loopback by the process that holds the
// socket: the pid's name in pids, found through /proc (the socket's inode
// in /proc/net/tcp, then among each process's descriptors); "?" when none.
func byProcess(pids func() map[int]string) func(net.Addr) string {
	return func(remote net.Addr) string {
		tcp, ok := remote.(*net.TCPAddr)
		if !ok {
			return "?"
		}
		inode := socketInode(tcp.Port)
		if inode == "" {
			return "?"
		}
		want := "socket:[" + inode + "]"
		for pid, name := range pids() {
			fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
			for _, fd := range fds {
				if l, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name())); err == nil && l == want {
					return name
				}
			}
		}
		return "?"
	}
}

// socketInode is the inode of the TCP socket whose local port is port (the
// client's end of a connection to the view), from /proc/net/tcp{,6}.
func socketInode(port int) string {
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 {
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 32); ok && err == nil && int(p) == port && fields[9] != "0" {
				return fields[9]
			}
		}
	}
	return ""
}
