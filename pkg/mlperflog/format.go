package mlperflog

import (
	"math"
	"strconv"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// formatDouble prints v as a default C++ ostream prints a double (precision
// 6, %g): LoadGen writes its double-valued summary lines and detail values
// this way (LOADGEN-REFERENCE.md §6.1, §6.2). Non-finite values print as
// glibc does: "nan", "inf", "-inf".
func formatDouble(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return trace.FormatQPS(v)
}

// fixed prints v like LoadGen's DoubleToString(v, prec): std::fixed with prec
// decimals. Go and glibc both round the exact binary value half to even.
func fixed(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// bool01 prints a bool as an ostream without std::boolalpha does.
func bool01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// percentileLabel is LoadGen's DoubleToString(p*100, prec): "90.0" for the
// headline and early-stopping lines (prec 1), "99.90" for the latency
// table and result keys (prec 2).
func percentileLabel(p float64, prec int) string {
	return fixed(p*100, prec)
}

// oneLine replaces every control character (line breaks included) with a
// space, so text that came over the network stays on its line of the
// summary.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
}

// neutral makes text from outside (SUT name, error messages, extra fields)
// safe to print in the summary: on one line, and without the phrase the
// TEST04 script searches anywhere in a line ("Early stopping ...
// percentile estimate"), so a server's message cannot become a score.
func neutral(s string) string {
	return strings.ReplaceAll(oneLine(s), "Early stopping", "Early-stopping")
}
