package outcome

import (
	"strconv"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
)

// Status is the protocol status a failed request was answered with: an
// HTTP status (100–599) or one of gRPC's 17 codes, or none (the zero
// Status) when no answer carried one. Anything outside those ranges is
// "HTTP other" or "gRPC other", so the set of values stays fixed (520) and
// a server cannot make a metric's series or a result's failure list grow
// with the numbers it invents; the example message keeps the real one.
type Status struct{ i uint16 }

// The index space of Status: none, then HTTP 100–599, HTTP other, the gRPC
// codes 0–16 and gRPC other.
const (
	httpFirst   = 1
	httpMin     = 100
	httpMax     = 599
	httpOther   = httpFirst + httpMax - httpMin + 1
	grpcFirst   = httpOther + 1
	grpcCodes   = 17
	grpcOther   = grpcFirst + grpcCodes
	numStatuses = grpcOther + 1
)

// grpcNames are the codes' canonical names (grpc's doc/statuscodes.md),
// which codes.Code.String does not give ("Unavailable").
var grpcNames = [grpcCodes]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// statusText and statusLabel hold every Status's String and Label, built
// once so neither allocates on a failure.
var statusText, statusLabel = statusTables()

func statusTables() (text, label [numStatuses]string) {
	for c := httpMin; c <= httpMax; c++ {
		i := httpFirst + c - httpMin
		text[i], label[i] = "HTTP "+strconv.Itoa(c), "http_"+strconv.Itoa(c)
	}
	text[httpOther], label[httpOther] = "HTTP other", "http_other"
	for c, name := range grpcNames {
		text[grpcFirst+c], label[grpcFirst+c] = "gRPC "+name, "grpc_"+lower(name)
	}
	text[grpcOther], label[grpcOther] = "gRPC other", "grpc_other"
	return text, label
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// HTTPStatus is the Status of an HTTP answer with status code c.
func HTTPStatus(c int) Status {
	if c < httpMin || c > httpMax {
		return Status{httpOther}
	}
	return Status{uint16(httpFirst + c - httpMin)}
}

// GRPCStatus is the Status of a gRPC answer with code c.
func GRPCStatus(c codes.Code) Status {
	if c >= grpcCodes {
		return Status{grpcOther}
	}
	return Status{uint16(grpcFirst + int(c))}
}

// statusOf is an answer's status: its HTTP status when it came over HTTP
// (kserve derives a gRPC code for those too, which is not what was sent).
func statusOf(e *kserve.Error) Status {
	if e.HTTPStatus != 0 {
		return HTTPStatus(e.HTTPStatus)
	}
	return GRPCStatus(e.Code)
}

// String is how a result and a summary show the status: "HTTP 500",
// "gRPC UNAVAILABLE", "" for none.
func (s Status) String() string { return statusText[s.i] }

// Label is the status as a metric label value: "http_500",
// "grpc_unavailable", "" for none.
func (s Status) Label() string { return statusLabel[s.i] }

// Labels returns every Label value, "" first: the code label's fixed set.
func Labels() []string { return append([]string(nil), statusLabel[:]...) }
