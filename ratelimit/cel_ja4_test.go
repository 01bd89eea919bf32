package ratelimit

import (
	"crypto/tls"
	"testing"
)

// TestJA4 checks the fingerprint against the example of FoxIO's JA4
// specification (15 cipher suites, 16 extensions with SNI and ALPN, h2,
// TLS 1.3), with GREASE values mixed in, which do not count.
func TestJA4(t *testing.T) {
	t.Parallel()
	hello := &tls.ClientHelloInfo{
		CipherSuites: []uint16{0x2a2a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8,
			0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035},
		Extensions: []uint16{0x4a4a, 0x0000, 0x0017, 0xff01, 0x000a, 0x000b, 0x0023, 0x0010, 0x0005, 0x000d,
			0x0012, 0x0033, 0x002d, 0x002b, 0x001b, 0x4469, 0x0015},
		SignatureSchemes:  []tls.SignatureScheme{0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601},
		SupportedVersions: []uint16{0x7a7a, tls.VersionTLS13, tls.VersionTLS12},
		SupportedProtos:   []string{"h2", "http/1.1"},
		ServerName:        "example.com",
	}
	if got, want := JA4(hello), "t13d1516h2_8daaf6152771_e5627efa2ab1"; got != want {
		t.Errorf("JA4 = %s, want %s", got, want)
	}
	tests := []struct {
		name   string
		modify func(*tls.ClientHelloInfo)
		want   string
	}{
		{"no SNI, no ALPN, TLS 1.2", func(h *tls.ClientHelloInfo) {
			h.ServerName, h.SupportedProtos, h.SupportedVersions = "", nil, []uint16{tls.VersionTLS12}
			h.Extensions = h.Extensions[2:] // without GREASE and SNI
		}, "t12i151500_8daaf6152771_e5627efa2ab1"},
		{"ALPN not alphanumeric", func(h *tls.ClientHelloInfo) { h.SupportedProtos = []string{"\x01x"} }, "t13d1516" + "08"},
		{"nothing", func(h *tls.ClientHelloInfo) { *h = tls.ClientHelloInfo{} }, "t00i000000_000000000000_000000000000"},
	}
	for _, tt := range tests {
		h := *hello
		tt.modify(&h)
		if got := JA4(&h); got[:len(tt.want)] != tt.want {
			t.Errorf("%s: JA4 = %s, want prefix %s", tt.name, got, tt.want)
		}
	}
}
