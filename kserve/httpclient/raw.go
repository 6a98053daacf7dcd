package httpclient

// Raw exposes a prepared request's wire bytes to clients that own their
// sockets (pkg/httploop): they write the request as-is and parse the answer
// themselves.

// Raw returns the whole HTTP/1.1 request (request line, headers and body)
// that p sends. The slice is shared by every send: do not modify it.
func (p *Prepared) Raw() []byte { return p.raw }
