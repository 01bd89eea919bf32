package ratelimit

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// JA4 returns the JA4 fingerprint (FoxIO's JA4 specification) of a TLS
// ClientHello over TCP, such as "t13d1516h2_8daaf6152771_e5627efa2ab1",
// for conn.tls.ja4_fingerprint. Only the code that terminates TLS sees the
// ClientHello: compute it in tls.Config.GetConfigForClient, keep it with
// the connection, and return it from the function given to
// [WithTLSFingerprint]. GREASE values are ignored, as the specification
// says.
func JA4(hello *tls.ClientHelloInfo) string {
	var b strings.Builder
	b.WriteString("t")
	b.WriteString(ja4Version(hello.SupportedVersions))
	if hello.ServerName != "" || slices.Contains(hello.Extensions, 0x0000) {
		b.WriteByte('d')
	} else {
		b.WriteByte('i')
	}
	ciphers := notGrease(hello.CipherSuites)
	exts := notGrease(hello.Extensions)
	fmt.Fprintf(&b, "%02d%02d", min(len(ciphers), 99), min(len(exts), 99))
	b.WriteString(ja4ALPN(hello.SupportedProtos))
	b.WriteByte('_')
	slices.Sort(ciphers)
	b.WriteString(ja4Hash(hexList(ciphers), len(ciphers) == 0))
	b.WriteByte('_')
	exts = slices.DeleteFunc(exts, func(e uint16) bool { return e == 0x0000 || e == 0x0010 }) // SNI, ALPN
	slices.Sort(exts)
	list := hexList(exts)
	sigs := make([]uint16, 0, len(hello.SignatureSchemes))
	for _, s := range hello.SignatureSchemes {
		sigs = append(sigs, uint16(s))
	}
	if sigs = notGrease(sigs); len(sigs) > 0 {
		list += "_" + hexList(sigs)
	}
	b.WriteString(ja4Hash(list, len(exts) == 0))
	return b.String()
}

// isGrease reports a GREASE value (RFC 8701): 0x0a0a, 0x1a1a, ... 0xfafa.
func isGrease(v uint16) bool { return v&0x0f0f == 0x0a0a && v>>8 == v&0xff }

func notGrease(in []uint16) []uint16 {
	return slices.DeleteFunc(slices.Clone(in), isGrease)
}

func ja4Version(versions []uint16) string {
	best := uint16(0)
	for _, v := range notGrease(versions) {
		if v > best && v <= tls.VersionTLS13 {
			best = v
		}
	}
	switch best {
	case tls.VersionTLS13:
		return "13"
	case tls.VersionTLS12:
		return "12"
	case tls.VersionTLS11:
		return "11"
	case tls.VersionTLS10:
		return "10"
	case 0x0300:
		return "s3"
	}
	return "00"
}

// ja4ALPN is the first and last character of the first ALPN value, or of
// its hex form when either is not alphanumeric; "00" without one.
func ja4ALPN(protos []string) string {
	if len(protos) == 0 || protos[0] == "" {
		return "00"
	}
	p := protos[0]
	first, last := p[0], p[len(p)-1]
	if !isAlnum(first) || !isAlnum(last) {
		h := hex.EncodeToString([]byte(p))
		return h[:1] + h[len(h)-1:]
	}
	return string([]byte{first, last})
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func hexList(vs []uint16) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%04x", v)
	}
	return strings.Join(parts, ",")
}

// ja4Hash is the first 12 hex digits of SHA-256 of s, or twelve zeros
// when the list it hashes is empty.
func ja4Hash(s string, empty bool) string {
	if empty {
		return "000000000000"
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
