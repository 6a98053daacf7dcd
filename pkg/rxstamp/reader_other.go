//go:build !linux

package rxstamp

// Without recvmsg timestamps reads stay plain and Arrival reports false.
func newReader(*Conn) reader { return nil }
