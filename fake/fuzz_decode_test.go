package fake

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/k8sop"
)

// requestTypes are the request bodies the fake decodes, one constructor
// each: every create and update type, and the seed-only types.
var requestTypes = []func() any{
	func() any { return new(account.APIKeyCreate) },
	func() any { return new(account.APIKeyUpdate) },
	func() any { return new(account.ServiceUserCreate) },
	func() any { return new(account.ServiceUserUpdate) },
	func() any { return new(account.CertificateAuthorityCreate) },
	func() any { return new(account.CertificateAuthorityUpdate) },
	func() any { return new(backends.FailoverCreate) },
	func() any { return new(backends.FailoverUpdate) },
	func() any { return new(backends.HTTPResponseCreate) },
	func() any { return new(backends.HTTPResponseUpdate) },
	func() any { return new(backends.TunnelGroupCreate) },
	func() any { return new(backends.TunnelGroupUpdate) },
	func() any { return new(events.DestinationCreate) },
	func() any { return new(events.DestinationUpdate) },
	func() any { return new(events.SubscriptionCreate) },
	func() any { return new(events.SubscriptionUpdate) },
	func() any { return new(events.SourceCreate) },
	func() any { return new(events.SourceUpdate) },
	func() any { return new(k8sop.OperatorCreate) },
	func() any { return new(k8sop.OperatorUpdate) },
	func() any { return new(k8sop.Endpoint) },
	func() any { return new(Tunnel) },
}

// FuzzDecode runs arbitrary bodies through the fake's own strict decoder
// and the request type's Validate, as the server does for every write:
// never a panic, and every refusal a 400 with an error code, whose field
// and message stay bounded whatever the body holds.
func FuzzDecode(f *testing.F) {
	for i, body := range []string{
		`{"description":"d","metadata":"m","owner_id":"usr_1"}`,
		`{"name":"n","active":false}`,
		`{"Name":"n"}`,
		`{"name":"a","name":"b"}`,
		`{"ca_pem":"-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----"}`,
		`{"backends":["bkdhr_1","bkdhr_1"]}`,
		`{"status_code":200,"headers":{"a":"b","a":"c"},"body":"x"}`,
		`{"labels":{"":"x"}}`,
		`{"format":"json","target":{"kinesis":{"stream_arn":"s","auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"}}}}}`,
		`{"sources":[{"type":"api_key_created.v0"}],"destination_ids":["ed_1"]}`,
		`{"type":"api_key_created.v0","subscription_id":"esb_1"}`,
		`{"enabled_features":["Bindings","INGRESS"],"binding":{"endpoint_selectors":["true"],"csr":"x"},"deployment":{"name":"n","namespace":"ns"}}`,
		`{"deployment":{"namespace":"x"}}`,
		`{"bindings":["kubernetes"],"name":"e","url":"https://x"}`,
		`{"labels":{"a":"b"}}`,
		`[1,2]`, `null`, `"x"`, `{"a":`, `{} {}`, ``,
		`{"region":1}`, `{"labels":{"env":5}}`, `{"sources":[{"type":"x"},{"type":1}]}`, `{"status_code":200.5}`,
		`{"status_code":1e400}`, `{"status_code":-1}`, `{"backends":[1]}`, `{"active":"true"}`, `{"target":"x"}`,
		`{"target":{"monitoring":{"api_key":5}}}`, `{"deployment":{"name":[]}}`, `{"created_at":5,"port":1.5}`,
		"{\"labels\":{\"\xff\":\"a\",\"\xfe\":\"b\"}}", "{\"labels\":{\"\xff\":\"a\",\"\\ufffd\":\"b\"}}",
	} {
		f.Add(uint8(i), []byte(body))
	}
	long := strings.Repeat("x", 5000)
	for i := range requestTypes {
		for _, m := range []string{`"type":"` + long + `"`, `"name":"` + long + `"`, `"description":"` + long + `"`,
			`"labels":{"` + long + `":""}`, `"backends":["` + long + `"]`, `"destination_ids":["` + long + `"]`,
			`"sources":[{"type":"` + long + `"}]`, `"enabled_features":["` + long + `"]`, `"owner_id":"` + long + `"`} {
			f.Add(uint8(i), []byte("{"+m+"}"))
		}
	}
	var ms members
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		v := requestTypes[int(which)%len(requestTypes)]()
		err := decode(body, v, &ms)
		// Compare the member check with a plain one over encoding/json's
		// tokens: the same verdict and code on every body json accepts.
		if json.Valid(body) {
			want := refCheckMembers(body, reflect.TypeOf(v), &ms)
			var got string
			if err := checkMembers(body, reflect.TypeOf(v), &ms); err != nil {
				got = err.(*apiError).code
			}
			if got != want {
				t.Fatalf("%T %q: member check %q, plain check %q", v, body, got, want)
			}
			// The walk that names a member of the wrong JSON type by its
			// path finds every one encoding/json finds, and no other.
			sc := memberScanner{b: body, ms: &ms, types: true}
			werr := sc.value(reflect.TypeOf(v), "")
			jerr := json.Unmarshal(body, requestTypes[int(which)%len(requestTypes)]())
			var typ *json.UnmarshalTypeError
			if errors.As(jerr, &typ) && werr == nil {
				t.Fatalf("%T %q: encoding/json finds %v, the walk nothing", v, body, jerr)
			}
			if ae, ok := werr.(*apiError); ok && ae.code == acctapi.CodeInvalidValue && jerr == nil {
				t.Fatalf("%T %q: the walk finds %v, encoding/json nothing", v, body, werr)
			}
		}
		if err == nil {
			err = checkRequest(v)
		}
		if err == nil {
			return
		}
		var ae *apiError
		if !errors.As(err, &ae) {
			t.Fatalf("%T: error %v is not an API error", v, err)
		}
		if ae.status != http.StatusBadRequest || !strings.HasPrefix(ae.code, "ERR_") {
			t.Fatalf("%T: status %d code %q, want 400 and a code: %v", v, ae.status, ae.code, err)
		}
		if len(ae.field) > 140 || len(ae.msg) > 4096 {
			t.Fatalf("%T: field of %d bytes, message of %d: not bounded", v, len(ae.field), len(ae.msg))
		}
	})
}

// refCheckMembers is the obvious member check, over encoding/json's
// tokens, that checkMembers must agree with: it returns the error code, or
// "" when the body passes. It reads member names from the same table.
func refCheckMembers(body []byte, t reflect.Type, ms *members) string {
	return refWalk(json.NewDecoder(bytes.NewReader(body)), t, ms)
}

func refWalk(dec *json.Decoder, t reflect.Type, ms *members) string {
	tok, err := dec.Token()
	if err != nil {
		return ""
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch tok {
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if code := refWalk(dec, elem, ms); code != "" {
				return code
			}
		}
		_, _ = dec.Token()
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, _ := dec.Token()
			name, _ := kt.(string)
			if seen[name] {
				return acctapi.CodeInvalidJSON
			}
			seen[name] = true
			var ft reflect.Type
			switch {
			case t != nil && t.Kind() == reflect.Struct:
				var ok bool
				if ft, ok = ms.of(t)[name]; !ok {
					return acctapi.CodeUnknownField
				}
			case t != nil && t.Kind() == reflect.Map:
				ft = t.Elem()
			}
			if code := refWalk(dec, ft, ms); code != "" {
				return code
			}
		}
		_, _ = dec.Token()
	}
	return ""
}

// BenchmarkCheckMembers is the strict member check alone on a service
// user's create body: it should not allocate.
func BenchmarkCheckMembers(b *testing.B) {
	body := []byte(`{"name":"bench-user","active":true}`)
	t := reflect.TypeOf(new(account.ServiceUserCreate))
	var ms members
	b.ReportAllocs()
	for b.Loop() {
		if err := checkMembers(body, t, &ms); err != nil {
			b.Fatal(err)
		}
	}
}
