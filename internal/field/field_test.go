package field

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFieldErrorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{name: "field and reason", err: &Error{Field: "name", Reason: "is required", Code: CodeInvalidValue},
			want: "acctapi: name: is required"},
		{name: "nested path", err: &Error{Field: "target.kinesis.auth.role.role_arn", Reason: "is required"},
			want: "acctapi: target.kinesis.auth.role.role_arn: is required"},
		{name: "no field", err: &Error{Reason: "body is empty"},
			want: "acctapi: body is empty"},
		{name: "with cause", err: &Error{Field: "filter", Reason: "does not compile", Err: errors.New("syntax error")},
			want: "acctapi: filter: does not compile: syntax error"},
		{name: "Invalid formats its reason", err: Invalid("enabled_features[2]", "unknown feature %q", "x"),
			want: `acctapi: enabled_features[2]: unknown feature "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFieldErrorMatching(t *testing.T) {
	t.Parallel()
	cause := io.ErrUnexpectedEOF
	name := Invalid("name", "is required")
	filter := &Error{Field: "filter", Reason: "bad", Code: "ERR_NGROK_250", Err: cause}
	joined := fmt.Errorf("create: %w", errors.Join(name, filter))

	if !errors.Is(name, ErrInvalid) {
		t.Error("errors.Is(Error, ErrInvalid) = false")
	}
	if !errors.Is(joined, ErrInvalid) {
		t.Error("errors.Is(joined field errors, ErrInvalid) = false")
	}
	if !errors.Is(joined, cause) {
		t.Error("errors.Is(joined, cause) = false, want the cause reachable")
	}
	if errors.Is(errors.New("other"), ErrInvalid) {
		t.Error("errors.Is(plain error, ErrInvalid) = true")
	}
	var fe *Error
	if !errors.As(joined, &fe) || fe != name {
		t.Errorf("errors.As found %v, want the first field error %v", fe, name)
	}
	if Invalid("x", "y").Code != CodeInvalidValue {
		t.Errorf("Invalid code = %q, want %q", Invalid("x", "y").Code, CodeInvalidValue)
	}
}

// fields lists the Field of each field error in err, in order.
func fields(err error) []string {
	var out []string
	for _, fe := range Errors(err) {
		out = append(out, fe.Field)
	}
	return out
}

func TestFieldErrors(t *testing.T) {
	t.Parallel()
	a, b, c, d := Invalid("a", "x"), Invalid("b", "x"), Invalid("c", "x"), Invalid("d", "x")
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{name: "nil", err: nil, want: nil},
		{name: "plain error", err: errors.New("boom"), want: nil},
		{name: "one", err: a, want: []string{"a"}},
		{name: "wrapped", err: fmt.Errorf("ctx: %w", a), want: []string{"a"}},
		{name: "joined in order", err: errors.Join(a, b, c), want: []string{"a", "b", "c"}},
		{
			name: "nested joins and wrapping, other errors skipped",
			err:  errors.Join(a, fmt.Errorf("x: %w", errors.Join(b, errors.New("other"), c)), nil, d),
			want: []string{"a", "b", "c", "d"},
		},
		{name: "fmt with two %w", err: fmt.Errorf("%w and %w", b, a), want: []string{"b", "a"}},
		{name: "cause inside a field error not listed", err: &Error{Field: "a", Err: b}, want: []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, fields(tt.err)); diff != "" {
				t.Errorf("Errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	t.Parallel()
	other := errors.New("other")
	tests := []struct {
		name string
		path string
		err  error
		want []string
		// wantOther says whether the non-field error must survive.
		wantOther bool
	}{
		{name: "nil", path: "auth", err: nil, want: nil},
		{name: "plain field", path: "auth", err: Invalid("role_arn", "x"), want: []string{"auth.role_arn"}},
		{name: "dotted field", path: "target.kinesis", err: Invalid("auth.role.role_arn", "x"),
			want: []string{"target.kinesis.auth.role.role_arn"}},
		{name: "index field", path: "enabled_features", err: Invalid("[2]", "x"), want: []string{"enabled_features[2]"}},
		{name: "empty field", path: "description", err: Invalid("", "x"), want: []string{"description"}},
		{name: "joined, order kept", path: "p", err: errors.Join(Invalid("a", "x"), Invalid("[0]", "x"), Invalid("", "x")),
			want: []string{"p.a", "p[0]", "p"}},
		{name: "twice", path: "outer", err: Prefix("inner", Invalid("f", "x")), want: []string{"outer.inner.f"}},
		{name: "other errors kept", path: "p", err: errors.Join(Invalid("a", "x"), other),
			want: []string{"p.a"}, wantOther: true},
		{name: "only other errors", path: "p", err: fmt.Errorf("w: %w", other), wantOther: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Prefix(tt.path, tt.err)
			if tt.err == nil && got != nil {
				t.Fatalf("Prefix(nil) = %v, want nil", got)
			}
			if diff := cmp.Diff(tt.want, fields(got)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if errors.Is(got, other) != tt.wantOther {
				t.Errorf("errors.Is(Prefix(...), other) = %v, want %v", !tt.wantOther, tt.wantOther)
			}
		})
	}
}

func TestPrefixKeepsInput(t *testing.T) {
	t.Parallel()
	cause := errors.New("cause")
	orig := &Error{Field: "role_arn", Reason: "bad", Code: CodeInvalidValue, Err: cause}
	got := Prefix("auth", orig)
	if orig.Field != "role_arn" {
		t.Errorf("Prefix changed its input's Field to %q", orig.Field)
	}
	var fe *Error
	if !errors.As(got, &fe) {
		t.Fatalf("Prefix result %v holds no Error", got)
	}
	want := &Error{Field: "auth.role_arn", Reason: "bad", Code: CodeInvalidValue, Err: cause}
	if diff := cmp.Diff(*want, *fe, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("prefixed error (-want +got):\n%s", diff)
	}
	if !errors.Is(got, cause) || !errors.Is(got, ErrInvalid) {
		t.Errorf("Prefix result %v lost its chain", got)
	}
}

func TestCheckDescriptionAndMetadata(t *testing.T) {
	t.Parallel()
	// "é" is two bytes in UTF-8: the limits count bytes, not characters.
	e := func(n int) string { return strings.Repeat("é", n) }
	tests := []struct {
		name     string
		check    func(field, s string) error
		s        string
		wantCode string // "" for no error
	}{
		{name: "description empty", check: CheckDescription, s: ""},
		{name: "description 255 bytes", check: CheckDescription, s: e(127) + "a"},
		{name: "description 256 bytes in 128 characters", check: CheckDescription, s: e(128), wantCode: CodeDescriptionTooLong},
		{name: "description 256 ASCII bytes", check: CheckDescription, s: strings.Repeat("a", 256), wantCode: CodeDescriptionTooLong},
		{name: "metadata 4096 bytes", check: CheckMetadata, s: e(2048)},
		{name: "metadata 4097 bytes in 2049 characters", check: CheckMetadata, s: e(2048) + "a", wantCode: CodeMetadataTooLong},
		{name: "description pointer 256 bytes", check: func(f, s string) error { return CheckDescriptionPtr(f, &s) }, s: e(128), wantCode: CodeDescriptionTooLong},
		{name: "metadata pointer 4096 bytes", check: func(f, s string) error { return CheckMetadataPtr(f, &s) }, s: e(2048)},
		{name: "metadata pointer 4097 bytes", check: func(f, s string) error { return CheckMetadataPtr(f, &s) }, s: e(2048) + "a", wantCode: CodeMetadataTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.check("spec.description", tt.s)
			if tt.wantCode == "" {
				if err != nil {
					t.Errorf("check(%d bytes) = %v, want nil", len(tt.s), err)
				}
				return
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("check(%d bytes) = %v, want a Error", len(tt.s), err)
			}
			if fe.Field != "spec.description" || fe.Code != tt.wantCode {
				t.Errorf("got field %q code %q, want spec.description %s", fe.Field, fe.Code, tt.wantCode)
			}
			if want := fmt.Sprintf("is %d bytes;", len(tt.s)); !strings.HasPrefix(fe.Reason, want) {
				t.Errorf("reason %q, want it to start with %q", fe.Reason, want)
			}
		})
	}
}

func TestCheckPtrNil(t *testing.T) {
	t.Parallel()
	if err := CheckDescriptionPtr("description", nil); err != nil {
		t.Errorf("CheckDescriptionPtr(nil) = %v, want nil", err)
	}
	if err := CheckMetadataPtr("metadata", nil); err != nil {
		t.Errorf("CheckMetadataPtr(nil) = %v, want nil", err)
	}
}

// TestNilAsEmpty checks that NilAsEmpty sends a pointer to a nil slice or
// map as [] or {}, at every depth a request has, without touching the
// caller's value, and leaves everything else as it is.
func TestNilAsEmpty(t *testing.T) {
	type inner struct {
		Selectors *[]string `json:"selectors,omitempty"`
	}
	type Embedded struct {
		Labels *map[string]string `json:"labels,omitempty"`
	}
	type req struct {
		Embedded
		Backends *[]string `json:"backends,omitempty"`
		Absent   *[]string `json:"absent,omitempty"`
		Kept     *[]string `json:"kept,omitempty"`
		Binding  *inner    `json:"binding,omitempty"`
		Plain    []string  `json:"plain,omitempty"`
		hidden   *[]string
	}
	var nilSlice, nilSelectors []string
	var nilMap map[string]string
	kept := []string{"a"}
	in := &req{Embedded: Embedded{Labels: &nilMap}, Backends: &nilSlice, Kept: &kept,
		Binding: &inner{Selectors: &nilSelectors}, hidden: &nilSlice}
	raw, err := json.Marshal(NilAsEmpty(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"labels":{},"backends":[],"kept":["a"],"binding":{"selectors":[]}}`; string(raw) != want {
		t.Errorf("sent %s, want %s", raw, want)
	}
	if nilSlice != nil || nilMap != nil || nilSelectors != nil || in.Binding.Selectors != &nilSelectors || in.Backends != &nilSlice {
		t.Error("NilAsEmpty changed the caller's value")
	}
	// Nothing to change: the same value back, no copy.
	same := &req{Kept: &kept}
	if got := NilAsEmpty(same); got != any(same) {
		t.Errorf("NilAsEmpty(%+v) made a copy", same)
	}
	// Types that encode themselves, and []byte (a base64 string), as
	// json.Marshal has them (a review saw a *json.RawMessage pointing to nil
	// fail to encode).
	type own struct {
		Raw  *json.RawMessage `json:"raw"`
		Data *[]byte          `json:"data"`
	}
	var nilRaw json.RawMessage
	var nilBytes []byte
	if raw, err := json.Marshal(NilAsEmpty(&own{Raw: &nilRaw, Data: &nilBytes})); err != nil || string(raw) != `{"raw":null,"data":null}` {
		t.Errorf("NilAsEmpty of a *json.RawMessage and a *[]byte to nil: %s, %v; want both null, as json.Marshal has them", raw, err)
	}
	if raw, _ := json.Marshal(NilAsEmpty(req{Backends: &nilSlice})); string(raw) != `{"backends":[]}` {
		t.Errorf("a request passed by value: sent %s, want {\"backends\":[]}", raw)
	}
	for _, v := range []any{nil, &nilSlice, map[string]any{"a": &nilSlice}} {
		if got := NilAsEmpty(v); !reflect.DeepEqual(got, v) {
			t.Errorf("NilAsEmpty(%#v) = %#v, want it unchanged", v, got)
		}
	}
}

// TestParseQueryInt: the rule for the integers of query strings (the
// API's limit, acctfake's admin limit and status): digits only.
func TestParseQueryInt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"5", 5, true},
		{"100", 100, true},
		{"0", 0, true},
		{"+5", 0, false},
		{"-5", 0, false},
		{"-0", 0, false},
		{"", 0, false},
		{" 5", 0, false},
		{"5 ", 0, false},
		{"0x10", 0, false},
		{"1e2", 0, false},
		{"99999999999999999999999", 0, false},
	} {
		n, err := ParseQueryInt(tt.in)
		if (err == nil) != tt.ok || n != tt.want {
			t.Errorf("ParseQueryInt(%q) = %d, %v; want %d, ok %v", tt.in, n, err, tt.want, tt.ok)
		}
	}
}
