package ratelimit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/google/go-cmp/cmp"
)

func validConfig() Config {
	return Config{
		Name:      "per client",
		Algorithm: AlgorithmSlidingWindow,
		Capacity:  30,
		Rate:      "60s",
		BucketKey: []string{"conn.client_ip"},
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	f := false
	tests := []struct {
		name   string
		modify func(*Config)
		want   []string // "field: code" of each error, in order
	}{
		{"valid", func(*Config) {}, nil},
		{"valid with enforce false and several keys", func(c *Config) {
			c.Enforce = &f
			c.BucketKey = []string{"req.host", "conn.client_ip", "getReqHeader('x-api-key')", "hasReqHeader('host') ? getReqHeader('host')[0] : 'unknown'"}
		}, nil},
		{"valid rates", func(c *Config) { c.Rate = "1h30m" }, nil},
		{"24h", func(c *Config) { c.Rate = "24h" }, nil},
		{"name missing", func(c *Config) { c.Name = "" }, []string{"name"}},
		{"name 1023 characters", func(c *Config) { c.Name = strings.Repeat("é", 1023) }, nil},
		{"name 1024 characters", func(c *Config) { c.Name = strings.Repeat("a", 1024) }, []string{"name"}},
		{"algorithm missing", func(c *Config) { c.Algorithm = "" }, []string{"algorithm"}},
		{"algorithm other", func(c *Config) { c.Algorithm = "token_bucket" }, []string{"algorithm"}},
		{"capacity 0", func(c *Config) { c.Capacity = 0 }, []string{"capacity"}},
		{"capacity 2e9", func(c *Config) { c.Capacity = 2_000_000_000 }, nil},
		{"capacity over 2e9", func(c *Config) { c.Capacity = 2_000_000_001 }, []string{"capacity"}},
		{"rate missing", func(c *Config) { c.Rate = "" }, []string{"rate"}},
		{"rate not a duration", func(c *Config) { c.Rate = "1 minute" }, []string{"rate"}},
		{"rate 50s", func(c *Config) { c.Rate = "50s" }, []string{"rate"}},
		{"rate 65s", func(c *Config) { c.Rate = "65s" }, []string{"rate"}},
		{"rate over 24h", func(c *Config) { c.Rate = "24h0m10s" }, []string{"rate"}},
		{"bucket_key missing", func(c *Config) { c.BucketKey = nil }, []string{"bucket_key"}},
		{"eleven bucket keys", func(c *Config) { c.BucketKey = make([]string, 11) }, []string{"bucket_key"}},
		{"bucket key does not compile", func(c *Config) {
			c.BucketKey = []string{"req.host", "conn.client_ip", "req.nope +"}
		}, []string{"bucket_key[2]"}},
		{"bucket key unknown variable", func(c *Config) { c.BucketKey = []string{"nope"} }, []string{"bucket_key[0]"}},
		{"bucket key is a map", func(c *Config) { c.BucketKey = []string{"req.headers"} }, []string{"bucket_key[0]"}},
		{"everything wrong", func(c *Config) { *c = Config{BucketKey: []string{""}} },
			[]string{"name", "algorithm", "capacity", "rate", "bucket_key[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			tt.modify(&c)
			err := c.Validate()
			var got []string
			for _, fe := range acctapi.FieldErrors(err) {
				if fe.Code != acctapi.CodeInvalidValue {
					t.Errorf("%s: code %s", fe.Field, fe.Code)
				}
				got = append(got, fe.Field)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil {
				var fe *acctapi.FieldError
				if !errors.As(err, &fe) || !errors.Is(err, acctapi.ErrInvalid) {
					t.Errorf("errors.As/Is do not find a FieldError in %v", err)
				}
			}
		})
	}
}

func TestConfigMessages(t *testing.T) {
	t.Parallel()
	c := validConfig()
	c.Rate = "65s"
	c.BucketKey = []string{"req.host +"}
	err := c.Validate()
	for _, want := range []string{
		`acctapi: rate: "65s" is not a multiple of 10s`,
		"acctapi: bucket_key[0]: does not compile:",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestActionValidate(t *testing.T) {
	t.Parallel()
	a := Action{Type: "rate_limit", Config: validConfig()}
	a.Config.Capacity = 0
	var got []string
	for _, fe := range acctapi.FieldErrors(a.Validate()) {
		got = append(got, fe.Field)
	}
	if diff := cmp.Diff([]string{"type", "config.capacity"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	a = Action{Type: ActionType, Config: validConfig()}
	if err := a.Validate(); err != nil {
		t.Errorf("valid action: %v", err)
	}
}

func TestConfigEnforced(t *testing.T) {
	t.Parallel()
	tr, f := true, false
	for _, tt := range []struct {
		name    string
		enforce *bool
		want    bool
	}{{"default", nil, true}, {"true", &tr, true}, {"false", &f, false}} {
		c := Config{Enforce: tt.enforce}
		if got := c.Enforced(); got != tt.want {
			t.Errorf("%s: Enforced() = %v", tt.name, got)
		}
	}
}

// FuzzValidate checks that validating any config, and compiling any bucket
// key, never panics, and that every error is a FieldError.
func FuzzValidate(f *testing.F) {
	f.Add("n", "sliding_window", int64(30), "60s", "conn.client_ip", "req.host")
	f.Add("", "", int64(0), "", "", "")
	f.Add("x", "sliding_window", int64(2e9), "24h", "getReqHeader('X-A')[0]", "hasQueryParam('a') ? 'y' : null")
	f.Add("x", "sliding_window", int64(1), "1h30m", "req.headers['host']", "[1, 2.5, true, b'x', null]")
	f.Add("x", "x", int64(-1), "-60s", "((((((((((((1))))))))))))", "'a' + ")
	f.Add("x", "sliding_window", int64(5), "60s", "getQueryParam(req.host)", "req.url.path.size() > 3")
	f.Add("x", "sliding_window", int64(5), "60s", "rand.int(dyn(1.5), 2)", "hash.md5(dyn(1), dyn(2))")
	f.Add("x", "sliding_window", int64(5), "60s", "queryString.encode(dyn({1: [2, {}]}))", "json.decode(req.host).a")
	f.Add("x", "sliding_window", int64(5), "60s", "inCidrRanges(dyn(1), dyn([1]))", "url.parse(dyn(b'x')).host")
	f.Add("x", "sliding_window", int64(5), "60s", "has(req.headers[dyn(1)])", "getReqCookie(dyn(2)).value + req.cookies.x[0].value")
	f.Add("x", "sliding_window", int64(5), "60s", "endpoint.id", "conn.geo.country")
	f.Add("x", "sliding_window", int64(5), "60s", "actions.ngrok.rate_limit.limited", "conn.server_region")
	f.Fuzz(func(t *testing.T, name, algo string, capacity int64, rate, k1, k2 string) {
		c := Config{Name: name, Algorithm: algo, Capacity: capacity, Rate: rate, BucketKey: []string{k1, k2}}
		err := c.Validate()
		for e := range strings.SplitSeq(errString(err), "\n") {
			if e != "" && !strings.HasPrefix(e, "acctapi: ") {
				t.Errorf("error line %q is not a FieldError", e)
			}
		}
		if len(acctapi.FieldErrors(err)) == 0 && err != nil {
			t.Errorf("error without FieldErrors: %v", err)
		}
		if err == nil {
			l, err := NewLimit(c)
			if err != nil {
				// Validate takes every variable; NewLimit refuses, as its
				// doc says, one whose provider option is missing and the
				// action's own result, read before it exists.
				for _, fe := range acctapi.FieldErrors(err) {
					if !strings.HasPrefix(fe.Reason, "uses outside data without a provider: ") &&
						!strings.Contains(fe.Reason, "but no rate-limit action runs before it") {
						t.Fatalf("valid config fails NewLimit: %v", err)
					}
				}
				return
			}
			l.EvaluateAt(newRequest("GET", "http://example.com/?a=1"), base)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestConfigDecodedStrictly pins a review's finding: json.Unmarshal into a
// Config or Action ignored a member it lacked, so "enfroce": false left a
// dry run enforcing, while the same typo in a policy was refused. Both
// now refuse unknown members, duplicates and wrong kinds, naming the
// member, and decode a good config as before.
func TestConfigDecodedStrictly(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ doc, field, reason string }{
		{`{"name":"n","enfroce":false}`, "enfroce", `did you mean "enforce"`},
		{`{"name":"n","capacity":"10"}`, "capacity", "must be a whole number"},
		{`{"name":"n","name":"m"}`, "", "name"},
		{`{"type":"rate-limit","config":{"rate":"60s","buket_key":["x"]}}`, "config.buket_key", `did you mean "bucket_key"`},
		{`{"typ":"rate-limit"}`, "typ", `did you mean "type"`},
	} {
		var err error
		if strings.Contains(tt.doc, `"type"`) || strings.Contains(tt.doc, `"typ"`) {
			var a Action
			err = json.Unmarshal([]byte(tt.doc), &a)
		} else {
			var c Config
			err = json.Unmarshal([]byte(tt.doc), &c)
		}
		fes := acctapi.FieldErrors(err)
		if len(fes) != 1 || fes[0].Field != tt.field || !strings.Contains(fes[0].Reason, tt.reason) {
			t.Errorf("%s: %v; want one error on %q saying %q", tt.doc, err, tt.field, tt.reason)
		}
	}
	var a Action
	doc := `{"type":"rate-limit","config":{"name":"n","enforce":false,"algorithm":"sliding_window","capacity":10,"rate":"60s","bucket_key":["conn.client_ip"]}}`
	if err := json.Unmarshal([]byte(doc), &a); err != nil {
		t.Fatal(err)
	}
	want := Action{Type: ActionType, Config: Config{Name: "n", Enforce: new(false), Algorithm: AlgorithmSlidingWindow, Capacity: 10, Rate: "60s", BucketKey: []string{"conn.client_ip"}}}
	if diff := cmp.Diff(want, a); diff != "" || a.Validate() != nil {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`null`), &a); err != nil || a.Config.Name != "n" {
		t.Errorf("null: %v, %+v; want nothing changed", err, a)
	}
}
