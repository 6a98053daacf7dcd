package kserve

import (
	"fmt"
	"strings"
)

// Header is a request header a run adds to every request it sends: an
// HTTP header, or gRPC metadata under its lowercased name. Its value is a
// credential as often as not: never log it.
type Header struct {
	Name, Value string
}

// HeaderHost is the header that sets the HTTP Host header and gRPC's
// :authority instead of being added: what an ingress routes by.
const HeaderHost = "Host"

// reservedHeaders are the names the clients write themselves, or that
// frame the request (HTTP/1.1 and HTTP/2): one given by the user would
// contradict them, or be dropped by grpc-go (its isReservedHeader).
var reservedHeaders = []string{
	"content-length", "content-type", "transfer-encoding", "connection", "keep-alive",
	"proxy-connection", "upgrade", "te", "trailer", "expect", "user-agent",
	strings.ToLower(HeaderInferenceContentLength),
}

// CheckHeaderName refuses a name that is not an HTTP token (RFC 9110
// §5.6.2), that the clients write themselves (Content-Length, Te,
// User-Agent, ...), a pseudo-header (:path) or gRPC's own (grpc-*), or a
// binary metadata name (-bin, base64 on gRPC, not on HTTP). Host is
// accepted: it sets the HTTP Host header and gRPC :authority.
func CheckHeaderName(name string) error {
	lower := strings.ToLower(name)
	switch {
	case name == "":
		return fmt.Errorf("no header name")
	case strings.HasPrefix(name, ":"):
		return fmt.Errorf("%s is an HTTP/2 pseudo-header, which the client writes itself (Host sets :authority)", name)
	case !isToken(name):
		return fmt.Errorf("header name %q has a character an HTTP header name may not have (letters, digits and !#$%%&'*+-.^_`|~ only)", name)
	case strings.HasPrefix(lower, "grpc-"):
		return fmt.Errorf("%s: grpc-* names are gRPC's own", name)
	case strings.HasSuffix(lower, "-bin"):
		return fmt.Errorf("%s: binary metadata (-bin) is not supported", name)
	case lower == "accept-encoding":
		// A compressed answer is one no client of a run reads (a stream's
		// tokens would wait in the compressor): the generative client asks
		// for identity itself, and a user's value would contradict it.
		return fmt.Errorf("%s: answers are read uncompressed, and the clients ask for identity themselves", name)
	}
	for _, r := range reservedHeaders {
		if lower == r {
			return fmt.Errorf("%s is written by the client itself", name)
		}
	}
	return nil
}

// CheckHeaderValue refuses a value gRPC metadata cannot carry as text and
// an HTTP header line could be broken by: anything but printable ASCII
// (0x20-0x7E). The error does not quote the value.
func CheckHeaderValue(value string) error {
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("the value has a byte 0x%02x at offset %d: only printable ASCII is sent (a stray newline?)", c, i)
		}
	}
	return nil
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
