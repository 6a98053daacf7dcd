//go:build linux

package rawio

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// Peer is a resolved TCP address, ready for Connect.
type Peer struct {
	addr   string
	sa     unix.Sockaddr
	family int
}

// Resolve resolves addr ("host:port") once, before any connection.
func Resolve(addr string) (Peer, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return Peer{}, err
	}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		return Peer{addr, sa, unix.AF_INET}, nil
	}
	sa := &unix.SockaddrInet6{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To16())
	return Peer{addr, sa, unix.AF_INET6}, nil
}

// Connect starts a non-blocking connect to p and returns the socket, which
// becomes writable when connected (or failed: SO_ERROR says). Requests go
// out one by one at their due times, so Nagle is off (it would hold one
// back for the previous one's ACK); receive timestamps are on, so an answer
// is timed by its arrival, not by when the loop got round to reading it
// (without them, an old kernel, answers are timed when read).
func (p Peer) Connect() (int, error) {
	fd, err := unix.Socket(p.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("TCP_NODELAY: %w", err)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	if err := unix.Connect(fd, p.sa); err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return -1, fmt.Errorf("connect %s: %w", p.addr, err)
	}
	return fd, nil
}
