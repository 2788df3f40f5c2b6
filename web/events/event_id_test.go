package events

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"petstore/web/openapi"
)

// TestEventIDPattern: the API document's pattern for Last-Event-ID takes
// exactly the resume points parseEventID reads, so a client that checks
// the header against the document is never refused for it, and never
// sends one the stream refuses (SPEC §17).
func TestEventIDPattern(t *testing.T) {
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	param := doc.Components.Parameters["LastEventId"]
	if param == nil || param.Value.Name != HeaderLastEventID || param.Value.In != "header" {
		t.Fatalf("components.parameters.LastEventId is not the %s header", HeaderLastEventID)
	}
	schema := param.Value.Schema.Value

	max := big.NewInt(1<<63 - 1)
	samples := []string{"0", "-0", "+0", "-000", "-1", "+-1", "--0", "1", "42", "007", "+42",
		" 42", "42 ", "\t42\r\n", "4 2", "42x", "0x10", "1_000", "1e3", "4.0", "٣", "４２", "-", "+", " ",
		"9223372036854775807", "9223372036854775808", "+09223372036854775807", "000000000000000000000000009223372036854775807",
		"18446744073709551615", "99999999999999999999", "10000000000000000000"}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			samples = append(samples, string(r)+"7", "7"+string(r), string(r)+"7"+string(r))
		}
	}
	// Around the largest id, and around every number the pattern's
	// alternatives turn on: each prefix of it with one digit less.
	digits := max.String()
	for i := range digits {
		for _, d := range "0123456789" {
			n, _ := new(big.Int).SetString(digits[:i]+string(d)+strings.Repeat("9", len(digits)-i-1), 10)
			samples = append(samples, n.String())
		}
	}
	for k := int64(-300); k <= 300; k++ {
		samples = append(samples, new(big.Int).Add(max, big.NewInt(k)).String())
	}
	// Random numbers of 1 to 25 digits, mostly past the largest id at 20
	// and over, with a sign or zeros in front now and then.
	rng := rand.New(rand.NewPCG(28, 17))
	for range 20_000 {
		var b strings.Builder
		b.WriteString([]string{"", "", "+", "-", "0", "00"}[rng.IntN(6)])
		for range 1 + rng.IntN(25) {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		samples = append(samples, b.String())
	}

	for _, s := range samples {
		_, serverTakes := parseEventID(s)
		docTakes := schema.VisitJSON(s) == nil
		if serverTakes != docTakes {
			t.Errorf("Last-Event-ID %+q: the stream takes it: %v, the document: %v", s, serverTakes, docTakes)
		}
	}
}
