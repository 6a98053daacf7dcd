package daemon

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Allowlist decides which hosts a run may send load to: the control API can
// point traffic anywhere, so an operator can fence it.
type Allowlist struct {
	any      bool
	names    map[string]bool
	suffixes []string // from *.example.com: ".example.com"
	prefixes []netip.Prefix
}

// NewAllowlist parses entries: host names, *.suffix wildcards, IP addresses
// and CIDRs. No entries allows everything.
func NewAllowlist(entries []string) (*Allowlist, error) {
	a := &Allowlist{names: map[string]bool{}}
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
			continue
		case strings.HasPrefix(e, "*."):
			a.suffixes = append(a.suffixes, e[1:])
		case strings.Contains(e, "/"):
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR: %v", e, err)
			}
			a.prefixes = append(a.prefixes, p.Masked())
		default:
			if ip, err := netip.ParseAddr(e); err == nil {
				a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
				continue
			}
			if strings.ContainsAny(e, " :@") {
				return nil, fmt.Errorf("%q is not a host name, IP address or CIDR", e)
			}
			a.names[e] = true
		}
	}
	a.any = len(a.names) == 0 && len(a.suffixes) == 0 && len(a.prefixes) == 0
	return a, nil
}

// Allows reports whether host may be targeted. A name that is not listed
// itself is allowed when every address it resolves to is in an allowed CIDR,
// so a CIDR entry covers the names that point into it.
func (a *Allowlist) Allows(ctx context.Context, host string) bool {
	if a.any || a.Lists(host) {
		return true
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil || len(a.prefixes) == 0 {
		return false
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, ip := range addrs {
		if !a.inPrefixes(ip) {
			return false
		}
	}
	return true
}

// Lists reports whether host is listed itself: a listed name, a name under
// a *.suffix, or an IP address in a listed CIDR. It resolves nothing, and
// an empty list lists nothing.
func (a *Allowlist) Lists(host string) bool {
	host = strings.ToLower(strings.Trim(host, "[]"))
	if a.names[host] {
		return true
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return a.inPrefixes(ip)
	}
	return false
}

// Empty reports whether the list has no entries (Allows allows everything).
func (a *Allowlist) Empty() bool { return a.any }

func (a *Allowlist) inPrefixes(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
