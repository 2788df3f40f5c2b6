package webhooks

import (
	"net/netip"
)

// Public reports whether the store may send to ip: whether ip is globally
// reachable by IANA's special-purpose address registries for IPv4 and IPv6
// (RFC 6890 and its updates). The most specific entry of specialPurpose
// that holds ip decides. An address that carries an IPv4 address (IPv4-
// mapped, IPv4-compatible, NAT64's well-known prefix, 6to4) is judged by
// that IPv4 address: 64:ff9b::a9fe:a9fe reaches 169.254.169.254 through
// a gateway. Multicast (its own registry) is never a destination, and an
// IPv6 address outside global unicast (2000::/3) is not yet assigned.
func Public(ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.WithZone("") // a zoned address matches no prefix; the zone names a link anyway
	var best *special
	for i := range specialPurpose {
		e := &specialPurpose[i]
		if e.prefix.Contains(ip) && (best == nil || e.prefix.Bits() > best.prefix.Bits()) {
			best = e
		}
	}
	if best == nil { // IPv4 outside every entry
		return true
	}
	if best.v4At > 0 {
		b := ip.As16()
		return Public(netip.AddrFrom4([4]byte(b[best.v4At : best.v4At+4])))
	}
	return best.global
}

// special is an entry of specialPurpose.
type special struct {
	prefix netip.Prefix
	// global is the registry's "Globally Reachable".
	global bool
	// v4At, when not 0, is the byte of the (16-byte) address where the IPv4
	// address it carries starts; that address decides instead of global.
	v4At int
}

func notGlobal(p string) special { return special{prefix: netip.MustParsePrefix(p)} }
func global(p string) special    { return special{prefix: netip.MustParsePrefix(p), global: true} }
func carriesV4(p string, at int) special {
	return special{prefix: netip.MustParsePrefix(p), v4At: at}
}

// specialPurpose is IANA's IPv4 and IPv6 Special-Purpose Address Registries
// (iana-ipv4-special-registry, iana-ipv6-special-registry), by their names,
// with the few additions each comment gives. Entries that are globally
// reachable matter only where they are carved out of a larger block that is
// not (192.0.0.0/24, 2001::/23).
var specialPurpose = []special{
	// IPv4
	notGlobal("0.0.0.0/8"),          // "This network" (0.0.0.0/32: "This host on this network")
	notGlobal("10.0.0.0/8"),         // Private-Use
	notGlobal("100.64.0.0/10"),      // Shared Address Space (carrier-grade NAT; also cloud metadata at 100.100.100.200)
	notGlobal("127.0.0.0/8"),        // Loopback
	notGlobal("169.254.0.0/16"),     // Link Local (cloud metadata at 169.254.169.254)
	notGlobal("172.16.0.0/12"),      // Private-Use
	notGlobal("192.0.0.0/24"),       // IETF Protocol Assignments
	notGlobal("192.0.0.0/29"),       // IPv4 Service Continuity Prefix
	notGlobal("192.0.0.8/32"),       // IPv4 dummy address
	global("192.0.0.9/32"),          // Port Control Protocol Anycast
	global("192.0.0.10/32"),         // Traversal Using Relays around NAT Anycast
	notGlobal("192.0.0.170/31"),     // NAT64/DNS64 Discovery (192.0.0.170 and .171)
	notGlobal("192.0.2.0/24"),       // Documentation (TEST-NET-1)
	notGlobal("192.88.99.0/24"),     // Deprecated (6to4 Relay Anycast): relays into 6to4, refused as 6to4 can be
	notGlobal("192.168.0.0/16"),     // Private-Use
	notGlobal("198.18.0.0/15"),      // Benchmarking
	notGlobal("198.51.100.0/24"),    // Documentation (TEST-NET-2)
	notGlobal("203.0.113.0/24"),     // Documentation (TEST-NET-3)
	notGlobal("224.0.0.0/4"),        // Multicast (IANA's multicast registry, not the special-purpose one)
	notGlobal("240.0.0.0/4"),        // Reserved
	notGlobal("255.255.255.255/32"), // Limited Broadcast

	// IPv6
	notGlobal("::/0"),              // anything outside global unicast: reserved by the IETF (IANA's IPv6 address space)
	global("2000::/3"),             // Global Unicast (IANA's IPv6 address space)
	notGlobal("::/128"),            // Unspecified Address
	notGlobal("::1/128"),           // Loopback Address
	carriesV4("::/96", 12),         // IPv4-compatible (deprecated, RFC 4291 §2.5.5.1): the IPv4 address inside decides
	carriesV4("::ffff:0:0/96", 12), // IPv4-mapped Address: the IPv4 address inside decides
	carriesV4("64:ff9b::/96", 12),  // IPv4-IPv6 Translat. (NAT64's well-known prefix): the IPv4 address inside decides
	notGlobal("64:ff9b:1::/48"),    // IPv4-IPv6 Translat. (local use): not globally reachable, and where the IPv4 address sits is the operator's choice
	notGlobal("100::/64"),          // Discard-Only Address Block
	notGlobal("100:0:0:1::/64"),    // Dummy IPv6 Prefix
	notGlobal("2001::/23"),         // IETF Protocol Assignments
	notGlobal("2001::/32"),         // TEREDO (an obfuscated IPv4 address inside)
	global("2001:1::1/128"),        // Port Control Protocol Anycast
	global("2001:1::2/128"),        // Traversal Using Relays around NAT Anycast
	global("2001:1::3/128"),        // DNS-SD Service Registration Protocol Anycast
	notGlobal("2001:2::/48"),       // Benchmarking
	global("2001:3::/32"),          // AMT
	global("2001:4:112::/48"),      // AS112-v6
	notGlobal("2001:10::/28"),      // Deprecated (previously ORCHID)
	global("2001:20::/28"),         // ORCHIDv2
	global("2001:30::/28"),         // Drone Remote ID Protocol Entity Tags (DETs) Prefix
	notGlobal("2001:db8::/32"),     // Documentation
	carriesV4("2002::/16", 2),      // 6to4: the IPv4 address inside decides
	notGlobal("3fff::/20"),         // Documentation
	notGlobal("5f00::/16"),         // Segment Routing (SRv6) SIDs
	notGlobal("fc00::/7"),          // Unique-Local
	notGlobal("fe80::/10"),         // Link-Local Unicast
	notGlobal("fec0::/10"),         // Site-local (deprecated by RFC 3879; no longer in the registry)
	notGlobal("ff00::/8"),          // Multicast (IANA's multicast registry)
}
