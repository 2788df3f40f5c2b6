package webhooks

import (
	"net/netip"
	"testing"
)

// TestPublic: every range of IANA's special-purpose registries that is not
// globally reachable is refused, by an address at its start, inside and at
// its end; addresses carrying an IPv4 address are judged by it; public
// addresses, and the registry's globally reachable exceptions, pass.
func TestPublic(t *testing.T) {
	refused := map[string][]string{
		"this network":                {"0.0.0.0", "0.1.2.3", "0.255.255.255"},
		"private-use":                 {"10.0.0.0", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255"},
		"shared (carrier-grade NAT)":  {"100.64.0.0", "100.100.100.200", "100.127.255.255"},
		"loopback":                    {"127.0.0.1", "127.8.9.10", "::1"},
		"link local":                  {"169.254.0.1", "169.254.169.254", "fe80::1", "fe80::1%eth0", "febf:ffff::1"},
		"IETF protocol assignments":   {"192.0.0.0", "192.0.0.1", "192.0.0.8", "192.0.0.170", "192.0.0.171", "192.0.0.255"},
		"documentation":               {"192.0.2.1", "198.51.100.7", "203.0.113.255", "2001:db8::1", "3fff::1", "3fff:fff:ffff::1"},
		"6to4 relay anycast":          {"192.88.99.1"},
		"benchmarking":                {"198.18.0.0", "198.19.255.255", "2001:2::1"},
		"multicast":                   {"224.0.0.1", "239.255.255.250", "ff02::1", "ff01::1", "ff0e::1"},
		"reserved":                    {"240.0.0.1", "250.1.2.3", "255.255.255.254"},
		"limited broadcast":           {"255.255.255.255"},
		"unspecified":                 {"::"},
		"IPv4-mapped":                 {"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:100.64.0.1"},
		"IPv4-compatible":             {"::127.0.0.1", "::169.254.169.254", "::10.0.0.1", "::0.0.0.2"},
		"NAT64 well-known prefix":     {"64:ff9b::169.254.169.254", "64:ff9b::a9fe:a9fe", "64:ff9b::127.0.0.1", "64:ff9b::10.0.0.1", "64:ff9b::100.100.100.200"},
		"NAT64 local use":             {"64:ff9b:1::1", "64:ff9b:1::8.8.8.8", "64:ff9b:1:ffff::1"},
		"6to4":                        {"2002:a9fe:a9fe::1", "2002:7f00:1::", "2002:a00:1::1", "2002:c0a8:101::1", "2002::1"},
		"Teredo":                      {"2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"},
		"IETF protocol assignments 6": {"2001:1::4", "2001:100::1", "2001:1ff::1"},
		"ORCHID (deprecated)":         {"2001:10::1"},
		"discard-only":                {"100::1"},
		"dummy prefix":                {"100:0:0:1::1"},
		"segment routing SIDs":        {"5f00::1"},
		"unique-local":                {"fc00::1", "fd00::1", "fdff:ffff::1"},
		"site-local (deprecated)":     {"fec0::1", "feff::1"},
		"not yet assigned IPv6":       {"4000::1", "1234::1", "e000::1", "::ffff:0:8.8.8.8"},
		"invalid":                     {""},
	}
	allowed := map[string][]string{
		"public IPv4":                  {"8.8.8.8", "1.1.1.1", "93.184.215.14", "100.63.255.255", "100.128.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255"},
		"public IPv6":                  {"2606:4700::6810:84e5", "2a00:1450:4001:80b::200e", "2001:200::1", "2c0f:ffff::1"},
		"registry's global exceptions": {"192.0.0.9", "192.0.0.10", "2001:1::1", "2001:1::2", "2001:1::3", "2001:3::1", "2001:4:112::1", "2001:20::1", "2001:30::1", "192.31.196.1", "192.175.48.1", "2620:4f:8000::1"},
		"a public IPv4 inside":         {"::ffff:8.8.8.8", "::8.8.8.8", "64:ff9b::8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"},
	}
	for want, table := range map[bool]map[string][]string{false: refused, true: allowed} {
		for name, addrs := range table {
			for _, s := range addrs {
				var ip netip.Addr
				if s != "" {
					ip = netip.MustParseAddr(s)
				}
				if got := Public(ip); got != want {
					t.Errorf("%s: Public(%s) = %v, want %v", name, s, got, want)
				}
			}
		}
	}
}
