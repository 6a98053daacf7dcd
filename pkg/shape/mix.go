package shape

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/genai"
)

// MaxMixEntries bounds --mix: Pick walks the entries once a query.
const MaxMixEntries = 64

const mixSyntaxHint = "write MODEL=WEIGHT, MODEL=WEIGHT@URL or MODEL=WEIGHT@URL;API, entries separated by commas, e.g. identity=0.7,resnet50=0.3"

// MixEntry is one model of --mix: its weight, and optionally its own
// target URL and API (empty: the run's).
type MixEntry struct {
	Model  string
	Weight float64
	Target string
	API    string
}

// String is e in ParseMix's syntax.
func (e MixEntry) String() string {
	s := e.Model + "=" + strconv.FormatFloat(e.Weight, 'g', -1, 64)
	if e.Target != "" {
		s += "@" + e.Target
		if e.API != "" {
			s += ";" + e.API
		}
	}
	return s
}

// Mix is --mix "identity=0.7,resnet50=0.3" (entries MODEL=WEIGHT,
// MODEL=WEIGHT@URL or MODEL=WEIGHT@URL;API): each query's model drawn by
// weight.
type Mix struct {
	Entries []MixEntry
}

// ParseMix reads --mix. The weights (each > 0) are normalised to sum to
// 1. A URL is http(s):// or grpc(s)://, an API one of --api's. Errors
// wrap ErrShape and name --mix and the entry.
func ParseMix(v string) (*Mix, error) {
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("%w: --mix is empty; %s", ErrShape, mixSyntaxHint)
	}
	parts := strings.Split(v, ",")
	if len(parts) > MaxMixEntries {
		return nil, fmt.Errorf("%w: --mix has %d entries, more than %d", ErrShape, len(parts), MaxMixEntries)
	}
	m := &Mix{Entries: make([]MixEntry, 0, len(parts))}
	for i, p := range parts {
		e, err := parseMixEntry(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%w: --mix: entry %d (%q): %s; %s", ErrShape, i+1, redact(p), err, mixSyntaxHint)
		}
		m.Entries = append(m.Entries, e)
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	total := 0.0
	for _, e := range m.Entries {
		total += e.Weight
	}
	for i := range m.Entries {
		m.Entries[i].Weight /= total
	}
	return m, nil
}

// parseMixEntry reads MODEL=WEIGHT[@URL[;API]]; its error says what is
// wrong, the caller names the entry. The URL is what follows the first
// '@' after the weight (a URL's own '@' stays in it), the API what
// follows its last ';'.
func parseMixEntry(p string) (MixEntry, error) {
	model, rest, ok := strings.Cut(p, "=")
	if !ok {
		return MixEntry{}, fmt.Errorf("no '=' between the model and its weight")
	}
	e := MixEntry{Model: strings.TrimSpace(model)}
	ws, target, hasTarget := strings.Cut(rest, "@")
	w, err := strconv.ParseFloat(strings.TrimSpace(ws), 64)
	if err != nil {
		return MixEntry{}, fmt.Errorf("weight %q is not a number", strings.TrimSpace(ws))
	}
	e.Weight = w
	if hasTarget {
		if i := strings.LastIndexByte(target, ';'); i >= 0 {
			target, e.API = target[:i], strings.TrimSpace(target[i+1:])
			if e.API == "" {
				return MixEntry{}, fmt.Errorf("empty API after ';'")
			}
		}
		e.Target = strings.TrimSpace(target)
		if e.Target == "" {
			return MixEntry{}, fmt.Errorf("empty URL after '@'")
		}
	}
	return e, nil
}

// check checks m however it was made (parsed, or built by a caller):
// errors wrap ErrShape and name --mix and the entry.
func (m *Mix) check() error {
	if len(m.Entries) == 0 {
		return fmt.Errorf("%w: --mix has no entry; %s", ErrShape, mixSyntaxHint)
	}
	if len(m.Entries) > MaxMixEntries {
		return fmt.Errorf("%w: --mix has %d entries, more than %d", ErrShape, len(m.Entries), MaxMixEntries)
	}
	seen := make(map[string]int, len(m.Entries))
	total := 0.0
	for i, e := range m.Entries {
		if err := e.check(); err != nil {
			return fmt.Errorf("%w: --mix: entry %d (%q): %s; %s", ErrShape, i+1, redact(e.String()), err, mixSyntaxHint)
		}
		if j, dup := seen[e.Model]; dup {
			return fmt.Errorf("%w: --mix: entry %d names model %q again (entry %d did); give each model one entry", ErrShape, i+1, e.Model, j+1)
		}
		seen[e.Model] = i
		total += e.Weight
	}
	if math.IsInf(total, 0) {
		return fmt.Errorf("%w: --mix: the weights' sum overflows; use smaller weights (they are normalised)", ErrShape)
	}
	return nil
}

// check is what is wrong with e, nil if nothing.
func (e MixEntry) check() error {
	switch {
	case e.Model == "":
		return fmt.Errorf("empty model name")
	case strings.ContainsAny(e.Model, ",=@; \t\r\n"):
		return fmt.Errorf("the model name holds a space or one of , = @ ;")
	case !(e.Weight > 0) || math.IsInf(e.Weight, 0):
		return fmt.Errorf("weight %g must be a number above 0 (weights are normalised to sum to 1)", e.Weight)
	}
	if e.Target == "" {
		if e.API != "" {
			return fmt.Errorf("an API without a URL; write MODEL=WEIGHT@URL;API")
		}
		return nil
	}
	if strings.Contains(e.Target, "@") {
		// As --target: a URL is stored with the run and logged, so it
		// carries no secret (the API token has its own flag).
		return fmt.Errorf("URL %q takes no credentials (user:password@): it is stored with the run and logged", redactURL(e.Target))
	}
	if err := checkMixURL(e.Target); err != nil {
		return err
	}
	if e.API != "" {
		if _, err := genai.ParseAPI(e.API); err != nil {
			return fmt.Errorf("API: %w", err)
		}
	}
	return nil
}

// checkMixURL is what is wrong with a mix entry's URL, nil if nothing.
// The entry's URL becomes its session's target, so it follows
// pkg/target's grammar (which the engine layer cannot import; a test
// holds the two together): a host with a port in range, a path only over
// HTTP(S) (the prefix of every request's path), no query and no fragment,
// which no request would carry.
func checkMixURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("URL %q is not a URL like http://host:8000 or grpc://host:8001", raw)
	}
	switch u.Scheme {
	case "http", "https", "grpc", "grpcs":
	default:
		return fmt.Errorf("URL %q is not http://, https://, grpc:// or grpcs://", raw)
	}
	if p := u.Port(); p == "" && strings.HasSuffix(u.Host, ":") {
		return fmt.Errorf("URL %q has an empty port: want %s://host:port", raw, u.Scheme)
	} else if n, err := strconv.Atoi(p); p != "" && (err != nil || n < 1 || n > 65535) {
		return fmt.Errorf("URL %q: port %s is not between 1 and 65535", raw, p)
	}
	switch {
	case u.RawQuery != "" || u.ForceQuery:
		return fmt.Errorf("URL %q takes no query (?...), as --target takes none", raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("URL %q takes no fragment (#...), as --target takes none", raw)
	case (u.Scheme == "grpc" || u.Scheme == "grpcs") && strings.Trim(u.Path, "/") != "":
		return fmt.Errorf("URL %q: a %s:// URL takes no path, as --target takes none", raw, u.Scheme)
	}
	return nil
}

// redactURL cuts what may be a URL's credentials (user:password@) out of
// u for an error: everything before its last '@' but the scheme.
func redactURL(u string) string {
	j := strings.LastIndexByte(u, '@')
	if j < 0 {
		return u
	}
	if i := strings.Index(u, "://"); i >= 0 && i < j {
		return u[:i+3] + "REDACTED@" + u[j+1:]
	}
	return "REDACTED@" + u[j+1:]
}

// userinfo is a URL's user information wherever it stands in a text.
var userinfo = regexp.MustCompile(`://[^/?#]*@`)

// redact is a --mix entry for an error: its URL's credentials cut out,
// and any "scheme://user:password@" elsewhere in it (a model name holding
// a URL by mistake).
func redact(entry string) string {
	if head, rest, ok := strings.Cut(entry, "@"); ok && strings.Contains(rest, "@") {
		entry = head + "@" + redactURL(rest)
	}
	return userinfo.ReplaceAllString(entry, "://REDACTED@")
}

// String is m in ParseMix's syntax.
func (m *Mix) String() string {
	parts := make([]string, len(m.Entries))
	for i, e := range m.Entries {
		parts[i] = e.String()
	}
	return strings.Join(parts, ",")
}

// Models are the entries' model names, in entry order.
func (m *Mix) Models() []string {
	names := make([]string, len(m.Entries))
	for i, e := range m.Entries {
		names[i] = e.Model
	}
	return names
}

// mixSalt is xored into Pick's seed, so that a mix seeded with the run's
// schedule seed draws independently of the arrival times (whose PCG that
// seed also seeds).
const mixSalt = 0x6d69785f_6d6f6465 // "mix_mode"

// Pick is the index of query's model: a weighted draw seeded by seed and
// the query's index alone, so the same query gets the same model in every
// pass and in every issuer, in any order. It is counter based: output
// number query of the splitmix64 generator started at seed^mixSalt, as a
// uniform u in [0, 1), falls in the entry whose share of the cumulative
// weights holds it. O(entries) time, no state; weights need not be
// normalised.
func (m *Mix) Pick(seed uint64, query int) int {
	n := len(m.Entries)
	if n <= 1 {
		return 0
	}
	total := 0.0
	for _, e := range m.Entries {
		total += max(e.Weight, 0)
	}
	z := (seed ^ mixSalt) + (uint64(query)+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	x := float64(z>>11) * 0x1p-53 * total
	cum := 0.0
	for i, e := range m.Entries {
		if cum += max(e.Weight, 0); x < cum {
			return i
		}
	}
	// Rounding left x at the total: the last entry with weight.
	for i := n - 1; i > 0; i-- {
		if m.Entries[i].Weight > 0 {
			return i
		}
	}
	return 0
}

// Index is the index of model's entry.
func (m *Mix) Index(model string) (int, bool) {
	for i, e := range m.Entries {
		if e.Model == model {
			return i, true
		}
	}
	return 0, false
}
