package ratelimit

import (
	"fmt"
	"net/netip"
	"strings"
)

// TrustedProxies are the peers whose X-Forwarded-For this server believes
// (TRUSTED_PROXIES). The zero value trusts nobody.
type TrustedProxies struct {
	prefixes []netip.Prefix
}

// ParseTrustedProxies parses a comma-separated list of IPs and CIDRs, such
// as "10.0.0.0/8, 192.0.2.7, ::1". An empty string trusts nobody.
func ParseTrustedProxies(s string) (TrustedProxies, error) {
	var t TrustedProxies
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return TrustedProxies{}, fmt.Errorf("trusted proxies: %q is not an IP or CIDR", f)
			}
			if p.Addr().Is4In6() {
				// ::ffff:10.0.0.0/104 means 10.0.0.0/8: match it like
				// the unmapped addresses it will be compared with.
				if p.Bits() < 96 {
					return TrustedProxies{}, fmt.Errorf("trusted proxies: %q mixes IPv4-mapped and IPv6", f)
				}
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			t.prefixes = append(t.prefixes, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return TrustedProxies{}, fmt.Errorf("trusted proxies: %q is not an IP or CIDR", f)
		}
		a = a.Unmap().WithZone("")
		t.prefixes = append(t.prefixes, netip.PrefixFrom(a, a.BitLen()))
	}
	return t, nil
}

// Trusted reports whether ip is one of the trusted proxies.
func (t TrustedProxies) Trusted(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	for _, p := range t.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ClientIP returns the address to rate-limit an anonymous request by.
// X-Forwarded-For is believed only when the peer itself is trusted, and is
// read from the right, skipping trusted hops: the first untrusted address is
// the client, since everything left of it was written by the client and can
// be forged. If every hop is trusted, the leftmost is the client; an entry
// that is not an address stops the walk at the nearest hop before it.
func (t TrustedProxies) ClientIP(remoteIP, xForwardedFor string) string {
	peer, ok := parseHost(remoteIP)
	if !ok {
		return remoteIP
	}
	if !t.Trusted(peer) || strings.TrimSpace(xForwardedFor) == "" {
		return peer.String()
	}
	client := peer
	hops := strings.Split(xForwardedFor, ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parseHost(hops[i])
		if !ok {
			break
		}
		client = hop
		if !t.Trusted(hop) {
			break
		}
	}
	return client.String()
}

// parseHost reads an address as proxies write them: bare, with a port, or
// bracketed IPv6 with or without a port. IPv4-mapped IPv6 becomes IPv4, so
// one client has one subject.
func parseHost(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			a, err = netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
			if err != nil {
				return netip.Addr{}, false
			}
		} else {
			a = ap.Addr()
		}
	}
	return a.Unmap().WithZone(""), true
}

// ClientBucket is the one place that decides which per-address bucket a
// request counts against (SPEC §6): the client address of ClientIP, an
// IPv6 client by its /64 ("2001:db8:1:2::/64"), since one subscriber is
// usually given a whole /64 and would otherwise have 2^64 fresh buckets,
// and an IPv4 client (IPv4-mapped IPv6 included) by its address. Every
// per-IP limit uses it: the anonymous API, the browser forms, the
// console's sign-in lockout and bans by IP.
func (t TrustedProxies) ClientBucket(remoteIP, xForwardedFor string) string {
	return AddressBucket(t.ClientIP(remoteIP, xForwardedFor))
}

// AddressBucket is ClientBucket for an address already found: an IPv6
// address becomes its /64, anything else (IPv4, or a peer that is not an
// IP address at all, kept as is) stays as it is.
func AddressBucket(ip string) string {
	a, ok := parseHost(ip)
	if !ok || !a.Is6() {
		return ip
	}
	p, err := a.Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}
