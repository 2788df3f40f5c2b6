package ratelimit

import "testing"

func TestClientIP(t *testing.T) {
	proxies, err := ParseTrustedProxies(" 10.0.0.0/8, 192.0.2.7 ,::1, 2001:db8::/32")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, remote, xff, want string
	}{
		{"NoHeader", "203.0.113.9", "", "203.0.113.9"},
		{"UntrustedPeerIgnored", "203.0.113.9", "1.2.3.4", "203.0.113.9"},
		{"TrustedPeer", "10.1.2.3", "198.51.100.1", "198.51.100.1"},
		{"SkipsTrustedHops", "10.1.2.3", "198.51.100.1, 10.9.9.9, 192.0.2.7", "198.51.100.1"},
		{"ForgedLeftIgnored", "10.1.2.3", "6.6.6.6, 198.51.100.1, 10.9.9.9", "198.51.100.1"},
		{"AllTrusted", "10.1.2.3", "10.0.0.1, 10.0.0.2", "10.0.0.1"},
		{"GarbageStopsWalk", "10.1.2.3", "1.2.3.4, nonsense, 10.0.0.2", "10.0.0.2"},
		{"PortsAndBrackets", "[::1]:5555", "[2001:db8::5]:80, 198.51.100.2:1234", "198.51.100.2"},
		{"IPv6Trusted", "::1", "2001:db9::1", "2001:db9::1"},
		{"MappedIPv4", "::ffff:10.1.2.3", "::ffff:198.51.100.3", "198.51.100.3"},
		{"RemoteWithPort", "203.0.113.9:443", "1.2.3.4", "203.0.113.9"},
		{"BadRemoteKept", "unix-socket", "1.2.3.4", "unix-socket"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := proxies.ClientIP(tt.remote, tt.xff); got != tt.want {
				t.Errorf("ClientIP(%q, %q) = %q, want %q", tt.remote, tt.xff, got, tt.want)
			}
		})
	}

	var none TrustedProxies
	if got := none.ClientIP("10.1.2.3", "1.2.3.4"); got != "10.1.2.3" {
		t.Errorf("zero TrustedProxies believed X-Forwarded-For: %q", got)
	}
}

func TestParseTrustedProxies(t *testing.T) {
	for _, s := range []string{"", " , ", "127.0.0.1", "10.0.0.0/8,fd00::/8", "::ffff:10.0.0.0/104"} {
		if _, err := ParseTrustedProxies(s); err != nil {
			t.Errorf("ParseTrustedProxies(%q): %v", s, err)
		}
	}
	for _, s := range []string{"10.0.0.0/33", "example.com", "10.0.0.1,,bad", "::ffff:0:0/90"} {
		if _, err := ParseTrustedProxies(s); err == nil {
			t.Errorf("ParseTrustedProxies(%q) succeeded, want an error", s)
		}
	}
	p, err := ParseTrustedProxies("::ffff:10.0.0.0/104")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.ClientIP("10.2.3.4", "198.51.100.1"); got != "198.51.100.1" {
		t.Errorf("mapped CIDR does not match IPv4 peers: %q", got)
	}
}

// TestClientBucket shows the one bucket rule: two addresses in one IPv6 /64
// share a bucket, two /64s do not, IPv4 counts by address.
func TestClientBucket(t *testing.T) {
	proxies, err := ParseTrustedProxies("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	bucket := func(remote, xff string) string { return proxies.ClientBucket(remote, xff) }
	for _, tt := range []struct {
		name, remote, xff, want string
	}{
		{"IPv4ByAddress", "203.0.113.9", "", "203.0.113.9"},
		{"IPv6By64", "2001:db8:1:2::1", "", "2001:db8:1:2::/64"},
		{"IPv6Bracketed", "[2001:db8:1:2:aaaa::1]:443", "", "2001:db8:1:2::/64"},
		{"IPv6ZoneDropped", "fe80::1%eth0", "", "fe80::/64"},
		{"MappedIPv4ByAddress", "::ffff:198.51.100.3", "", "198.51.100.3"},
		{"ForwardedIPv6", "10.1.2.3", "2001:db8:9:9::42", "2001:db8:9:9::/64"},
		{"NotAnAddressKept", "unix-socket", "", "unix-socket"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := bucket(tt.remote, tt.xff); got != tt.want {
				t.Errorf("ClientBucket(%q, %q) = %q, want %q", tt.remote, tt.xff, got, tt.want)
			}
		})
	}
	if a, b := bucket("2001:db8:1:2::1", ""), bucket("2001:db8:1:2:ffff:ffff:ffff:ffff", ""); a != b {
		t.Errorf("one /64, two buckets: %q and %q", a, b)
	}
	if a, b := bucket("2001:db8:1:2::1", ""), bucket("2001:db8:1:3::1", ""); a == b {
		t.Errorf("two /64s, one bucket: %q", a)
	}
	if a, b := bucket("192.0.2.1", ""), bucket("192.0.2.2", ""); a == b {
		t.Errorf("two IPv4 addresses, one bucket: %q", a)
	}
}
