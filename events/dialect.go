package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
)

// The two wire dialects of an event target (see [acctapi.Dialect]), written
// once: the SDK encodes requests with them, Target decodes either, and the
// fake translates raw bodies with [Translate] and error paths with
// [TranslateField].
//
// A scope is an object whose member names may differ between the dialects:
// renames pairs the specification's name with the real service's, and
// members gives the scope of a member's value, by the specification's name.
// A deep scope (a whole document) looks for "target" at any depth.
type scope struct {
	renames []pair
	members map[string]*scope
	deep    bool
}

// pair is one member's name in the specification's dialect and in the real
// service's.
type pair struct{ spec, real string }

var (
	credsScope = &scope{renames: []pair{
		{"cloud_access_key_id", "aws_access_key_id"},
		{"cloud_secret_access_key", "aws_secret_access_key"},
	}}
	cloudScope      = &scope{members: map[string]*scope{"auth": {members: map[string]*scope{"creds": credsScope}}}}
	monitoringScope = &scope{renames: []pair{{"tags", "ddtags"}, {"site", "ddsite"}}}
	targetScope     = &scope{
		renames: []pair{{"monitoring", "datadog"}, {"cloud_logs_ingestion", "azure_logs_ingestion"}},
		members: map[string]*scope{
			"firehose":        cloudScope,
			"kinesis":         cloudScope,
			"cloudwatch_logs": cloudScope,
			"s3":              cloudScope,
			"monitoring":      monitoringScope,
		},
	}
	documentScope = &scope{members: map[string]*scope{"target": targetScope}, deep: true}
)

// quotedNames are every name that differs, quoted as in JSON, by the
// dialect they belong to; a body holding none of another dialect's names
// (and no \u escape, which could spell one) needs no translation.
var quotedNames = func() (names [2][][]byte) {
	for _, s := range []*scope{credsScope, monitoringScope, targetScope} {
		for _, p := range s.renames {
			names[acctapi.DialectSpec] = append(names[acctapi.DialectSpec], []byte(strconv.Quote(p.spec)))
			names[acctapi.DialectReal] = append(names[acctapi.DialectReal], []byte(strconv.Quote(p.real)))
		}
	}
	return names
}()

// name returns the member name n of s in dialect to, n's name in the
// specification's dialect, by which s.members knows it, and whether one
// of s's renames names it.
func (s *scope) name(n string, to acctapi.Dialect) (out, spec string, renamed bool) {
	for _, p := range s.renames {
		if n == p.spec || n == p.real {
			if to == acctapi.DialectReal {
				return p.real, p.spec, true
			}
			return p.spec, p.spec, true
		}
	}
	return n, n, false
}

// child returns the scope of the value of member spec, or nil when its
// names are the same in both dialects.
func (s *scope) child(spec string) *scope {
	if c, ok := s.members[spec]; ok {
		return c
	}
	if s.deep {
		return s
	}
	return nil
}

// Translate returns body, a JSON document, with the member names of every
// event target in it written in dialect to: the value of any member named
// "target", at any depth, is an event target (as in a destination, a list
// of destinations, or a create or update request). Names already in
// dialect to, and everything outside event targets, are left as they are,
// so a body may mix the dialects; but one member given in both (say
// "monitoring" and "datadog" in one target) is an error, a
// [*acctapi.FieldError] on that member's path with code
// [acctapi.CodeInvalidValue], unless one of the two is null: null is the
// same as absent, and that one is left out.
//
// When there is nothing to rename, body itself is returned. A body that
// is not one valid JSON value, or that nests objects and arrays deeper
// than encoding/json's decoder does (10,000 levels), is returned as it is,
// without an error, for the caller's decoder to report. Otherwise the
// result is compact, with members in their order and numbers as written.
//
// A server that speaks both dialects calls Translate(body,
// acctapi.DialectSpec) on a request body before decoding it, and
// Translate(response, acctapi.DialectReal) on what it answers a client of
// the real service's dialect.
func Translate(body []byte, to acctapi.Dialect) ([]byte, error) {
	if to != acctapi.DialectSpec && to != acctapi.DialectReal {
		return nil, fmt.Errorf("events: Translate: unknown dialect %v", to)
	}
	return translate(body, documentScope, "", to)
}

// translate is Translate for a value of scope s at path.
//
// Its cost is linear in the body: a member's path is built only for an
// error (each level keeps a link to its parent, not a copy of its path),
// a member left out is cut once, and only the few names a scope renames
// are tracked. A body nested deeper than maxDepth is returned as it is,
// for the caller's decoder to refuse (encoding/json's own limit is the
// same).
func translate(body []byte, s *scope, path string, to acctapi.Dialect) ([]byte, error) {
	if !needsTranslation(body, to) {
		return body, nil
	}
	return newTranslator(body, to).run(body, s, path)
}

// newTranslator returns a translator of body into dialect to.
func newTranslator(body []byte, to acctapi.Dialect) *translator {
	t := &translator{dec: json.NewDecoder(bytes.NewReader(body)), to: to}
	t.dec.UseNumber()
	t.enc = json.NewEncoder(&t.out)
	t.enc.SetEscapeHTML(false)
	t.out.Grow(len(body))
	return t
}

// run is translate's work, on the translator of body.
func (t *translator) run(body []byte, s *scope, path string) ([]byte, error) {
	var root *jpath
	if path != "" {
		root = &jpath{name: path}
	}
	if err := t.value(s, root); err != nil {
		if _, ok := err.(*field.Error); ok {
			return nil, err
		}
		return body, nil // not JSON, or too deep: the caller's decoder says so
	}
	if _, err := t.dec.Token(); err != io.EOF {
		return body, nil // more after the value
	}
	return t.out.Bytes(), nil
}

// maxDepth is how deeply translate nests objects and arrays, as
// encoding/json's decoder does.
const maxDepth = 10000

// errTooDeep stops a translation nested deeper than maxDepth.
var errTooDeep = errors.New("events: nested too deeply")

// needsTranslation reports whether body may hold a name of the dialect
// other than to.
func needsTranslation(body []byte, to acctapi.Dialect) bool {
	if bytes.Contains(body, []byte(`\u`)) {
		return true
	}
	for _, n := range quotedNames[1-to] {
		if bytes.Contains(body, n) {
			return true
		}
	}
	return false
}

// translator rewrites one JSON document token by token.
type translator struct {
	dec   *json.Decoder
	enc   *json.Encoder // writes strings to out
	out   bytes.Buffer
	to    acctapi.Dialect
	depth int // objects and arrays open
	cuts  int // members cut, for tests
	moved int // records of written members cuts examined, for tests
}

// jpath is the path of a value: a member name or an array index below
// its parent's path (nil for the top).
type jpath struct {
	parent *jpath
	name   string // a member's name (which may be "")
	index  int    // an element's index
	elem   bool   // an element, not a member
}

// String returns the path as a [*acctapi.FieldError] names a field, such
// as "target.monitoring.tags" or "items[2].target".
func (p *jpath) String() string {
	if p == nil {
		return ""
	}
	var segs []*jpath
	for q := p; q != nil; q = q.parent {
		segs = append(segs, q)
	}
	var b strings.Builder
	for i := len(segs) - 1; i >= 0; i-- {
		switch q := segs[i]; {
		case q.elem:
			b.WriteString("[" + strconv.Itoa(q.index) + "]")
		case b.Len() > 0:
			b.WriteString("." + q.name)
		default:
			b.WriteString(q.name)
		}
	}
	return b.String()
}

func (t *translator) value(s *scope, path *jpath) error {
	tok, err := t.dec.Token()
	if err != nil {
		return err
	}
	return t.valueFrom(tok, s, path)
}

// valueFrom writes the value that starts with tok, already read.
func (t *translator) valueFrom(tok json.Token, s *scope, path *jpath) error {
	switch v := tok.(type) {
	case json.Delim:
		if t.depth++; t.depth > maxDepth {
			return errTooDeep
		}
		defer func() { t.depth-- }()
		if v == '{' {
			return t.object(s, path)
		}
		return t.array(s, path)
	case string:
		return t.str(v)
	case json.Number:
		t.out.WriteString(string(v))
	case bool:
		t.out.WriteString(strconv.FormatBool(v))
	case nil:
		t.out.WriteString("null")
	}
	return nil
}

// span is where a member of an object was written in the output, from
// the comma before it (if any), and whether its value is null.
type span struct {
	start, end int
	null       bool
}

// renamed is a member whose name one of the scope's renames gives: the
// name it was written under, the name it was read under, and where it was
// written.
type renamed struct {
	out, in string
	at      span
}

func (t *translator) object(s *scope, path *jpath) error {
	t.out.WriteByte('{')
	// The members written under a renamed name: at most one per rename,
	// so finding one, and moving them when one is cut, costs little
	// however many other members the object has.
	var written []renamed
	for n := 0; t.dec.More(); { // n members written
		tok, err := t.dec.Token()
		if err != nil {
			return err
		}
		in, _ := tok.(string)
		out, spec, isRenamed := in, in, false
		if s != nil {
			out, spec, isRenamed = s.name(in, t.to)
		}
		member := &jpath{parent: path, name: out}
		vtok, err := t.dec.Token()
		if err != nil {
			return err
		}
		w := -1 // out's entry in written
		if isRenamed {
			for i := range written {
				if written[i].out == out {
					w = i
				}
			}
		}
		if w >= 0 && written[w].in != in {
			// One member in both dialects is an error, unless one of
			// them is null, which is the same as absent (the contract's
			// §1): that one is left out.
			switch prev := written[w].at; {
			case vtok == nil:
				continue
			case prev.null:
				t.cut(prev, written)
				n--
			default:
				return field.Invalid(member.String(), "is given in both dialects, as %q and as %q", written[w].in, in)
			}
		}
		start := t.out.Len()
		if n > 0 {
			t.out.WriteByte(',')
		}
		n++
		if err := t.str(out); err != nil {
			return err
		}
		t.out.WriteByte(':')
		var child *scope
		if s != nil {
			child = s.child(spec)
		}
		if err := t.valueFrom(vtok, child, member); err != nil {
			return err
		}
		if isRenamed {
			r := renamed{out: out, in: in, at: span{start: start, end: t.out.Len(), null: vtok == nil}}
			if w >= 0 {
				written[w] = r
			} else {
				written = append(written, r)
			}
		}
	}
	if _, err := t.dec.Token(); err != nil { // '}'
		return err
	}
	t.out.WriteByte('}')
	return nil
}

// cut removes the member written at sp from the output, with the comma
// that joined it to the members around it, and moves the spans in
// written after it. What follows it moves back in place.
func (t *translator) cut(sp span, written []renamed) {
	b := t.out.Bytes()
	end := sp.end
	if b[sp.start] != ',' && end < len(b) && b[end] == ',' {
		end++ // the first member: the next one's comma goes with it
	}
	n := copy(b[sp.start:], b[end:])
	t.out.Truncate(sp.start + n)
	t.cuts++
	t.moved += len(written)
	for i := range written {
		if o := &written[i].at; o.start > sp.start {
			// A member after a first member that was cut lost its comma
			// with it: it starts where the cut one did.
			o.start = max(o.start-(end-sp.start), sp.start)
			o.end -= end - sp.start
		}
	}
}

func (t *translator) array(s *scope, path *jpath) error {
	t.out.WriteByte('[')
	for i := 0; t.dec.More(); i++ {
		if i > 0 {
			t.out.WriteByte(',')
		}
		if err := t.value(s, &jpath{parent: path, index: i, elem: true}); err != nil {
			return err
		}
	}
	if _, err := t.dec.Token(); err != nil { // ']'
		return err
	}
	t.out.WriteByte(']')
	return nil
}

// str writes s as a JSON string.
func (t *translator) str(s string) error {
	if err := t.enc.Encode(s); err != nil {
		return err
	}
	t.out.Truncate(t.out.Len() - 1) // Encode's newline
	return nil
}

// TranslateField returns path, a member's JSON path as a
// [*acctapi.FieldError] names it (such as "target.monitoring.tags" or
// "target.kinesis.auth.creds.cloud_access_key_id", relative to a request
// body), with the names of event-target members written in dialect to.
// A server that speaks both dialects uses it to name a field in the
// request's dialect. An unknown dialect panics, naming it: it is a
// programming error, and a path left as it is would name a member the
// request did not send.
func TranslateField(path string, to acctapi.Dialect) string {
	if to != acctapi.DialectSpec && to != acctapi.DialectReal {
		panic(fmt.Sprintf("events: TranslateField: unknown dialect %d", to))
	}
	if path == "" {
		return path
	}
	segs := strings.Split(path, ".")
	s := documentScope
	for i, seg := range segs {
		name, index, _ := strings.Cut(seg, "[")
		if s == nil {
			break
		}
		out, spec, _ := s.name(name, to)
		if index != "" {
			out += "[" + index
		}
		segs[i] = out
		s = s.child(spec)
	}
	return strings.Join(segs, ".")
}

// Marshal returns the JSON encoding of v (a destination, a list of them, a
// create or update request, or any value holding event targets under a
// member named "target") in dialect to.
func Marshal(v any, to acctapi.Dialect) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Translate(b, to)
}

// ValidateDialect is [DestinationCreate.Validate] with the fields of its
// errors named in dialect d ([TranslateField]), as a server of that
// dialect names them: a client of the real service reports
// target.kinesis.auth.creds.aws_secret_access_key, not the
// specification's cloud_secret_access_key, whether the check ran in the
// client or in the server.
func (r *DestinationCreate) ValidateDialect(d acctapi.Dialect) error {
	return inDialect(r.Validate(), d)
}

// ValidateDialect is [DestinationUpdate.Validate] with the fields of its
// errors named in dialect d, as [DestinationCreate.ValidateDialect].
func (r *DestinationUpdate) ValidateDialect(d acctapi.Dialect) error {
	return inDialect(r.Validate(), d)
}

// inDialect returns err with its fields named in dialect d, and the
// target names in reasons about a target too (TranslateReason); an
// unknown d is an error of its own, as for [Translate].
func inDialect(err error, d acctapi.Dialect) error {
	if d != acctapi.DialectSpec && d != acctapi.DialectReal {
		return errors.Join(fmt.Errorf("events: ValidateDialect: unknown dialect %v", d), err)
	}
	return field.Map(err, func(e field.Error) field.Error {
		e.Reason = TranslateReason(e.Field, e.Reason, d)
		e.Field = TranslateField(e.Field, d)
		return e
	})
}

// TranslateReason returns reason, a [*acctapi.FieldError]'s reason about
// the member at path (as the specification's dialect names it), with the
// names of event-target kinds and credentials in it written in dialect to
// when path is under "target": a reason such as "exactly one of …,
// monitoring, cloud_logs_ingestion is required" reads "…, datadog,
// azure_logs_ingestion …" in the real service's dialect. Names inside
// double-quoted strings are left alone: those quote what the client sent.
// Member names that are also English words (tags, site) are renamed only
// in paths, by [TranslateField].
func TranslateReason(path, reason string, to acctapi.Dialect) string {
	if to != acctapi.DialectReal || !strings.HasPrefix(path, "target") {
		return reason
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(reason, '"')
		if i < 0 {
			b.WriteString(realTargetNames.Replace(reason))
			return b.String()
		}
		end := closingQuote(reason, i+1)
		b.WriteString(realTargetNames.Replace(reason[:i]))
		b.WriteString(reason[i:end])
		reason = reason[end:]
	}
}

// closingQuote returns the index just past the '"' that closes the quoted
// string starting at from (after a backslash, a byte is skipped, as %q
// escapes), or len(s) when it is not closed.
func closingQuote(s string, from int) int {
	for j := from; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

// realTargetNames renames the names of target kinds and credentials that
// the real service spells otherwise (see TranslateReason).
var realTargetNames = strings.NewReplacer(
	"cloud_logs_ingestion", "azure_logs_ingestion",
	"monitoring", "datadog",
	"cloud_access_key_id", "aws_access_key_id",
	"cloud_secret_access_key", "aws_secret_access_key",
)

// MarshalDialect returns the request's JSON body in dialect d, as a client
// of that dialect sends it.
func (r *DestinationCreate) MarshalDialect(d acctapi.Dialect) ([]byte, error) { return Marshal(r, d) }

// MarshalDialect returns the request's JSON body in dialect d, as a client
// of that dialect sends it.
func (r *DestinationUpdate) MarshalDialect(d acctapi.Dialect) ([]byte, error) { return Marshal(r, d) }

// UnmarshalJSON decodes a target written in either dialect, so a client
// understands a server of either (see [acctapi.Dialect]). A member given
// in both dialects at once is an error.
func (t *Target) UnmarshalJSON(data []byte) error {
	data, err := translate(data, targetScope, "target", acctapi.DialectSpec)
	if err != nil {
		return err
	}
	type plain Target // without this method
	return json.Unmarshal(data, (*plain)(t))
}
