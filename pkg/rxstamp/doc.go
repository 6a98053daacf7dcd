// Package rxstamp reads when a TCP connection's data reached the kernel
// (SO_TIMESTAMPNS), so that a response's latency can end — and a simulated
// model's service can start — at the packet's arrival, not at the moment a
// goroutine got round to reading it.
//
// On an idle 2-vCPU VM a process woken by a packet runs 0.1–0.4 ms after the
// packet arrived (halted vCPUs wake slowly), and grpc-go adds goroutine
// hand-offs on top; a load generator that stamps responses when it reads
// them reports that wake-up as the server's latency. The kernel's receive
// timestamp is taken before any of it.
package rxstamp
