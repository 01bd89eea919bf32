package ratelimit

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// template is a config string with ${expression} placeholders, Traffic
// Policy's CEL interpolation (custom-response's body and header values),
// compiled: each placeholder is an expression over the same variables as
// a rule's, whose value replaces it in its string form (as a bucket key's:
// a list joined with ",", null as ""). A placeholder that fails to
// evaluate is replaced by nothing, and so is one whose value would take
// the rendered string past the template's budget.
type template struct {
	parts []string      // literal text around the placeholders: len(exprs)+1
	exprs []cel.Program // nil for a string without placeholders
	// room is what the placeholders' values may add to the literal text
	// together: the budget less the literal text's length.
	room int
	// reads is the first of the rate-limit action's result variables a
	// placeholder reads (see resultRead), or "".
	reads string
}

// Budgets of a custom response's templates, in bytes of rendered output.
//
// A body may be as long as the largest value an expression may build
// (maxKeyBytes, 1 MiB): one placeholder echoing a request header fits,
// two hundred of them (180 MB from one request, found by a review) do
// not. A header value is bounded far lower: a proxy in front of the
// server must hold the whole response header (nginx's default
// proxy_buffer_size is 4 or 8 KiB, beyond which it answers 502), and
// 8 KiB is about what servers take for one field of a request (Apache's
// LimitRequestFieldSize is 8,190 bytes). net/http's 1 MiB
// (DefaultMaxHeaderBytes) bounds a whole request's header, what a server
// reads, not what a response should carry: a value that no proxy passes
// is no use to echo. Each value has its own budget, so the header as a
// whole is bounded by the document (its number of headers).
const (
	maxBodyBytes        = 1 << 20
	maxHeaderValueBytes = 8 << 10
)

// compileTemplate compiles s, whose rendered form may be at most budget
// bytes long; an unterminated or empty placeholder, an expression that
// does not compile, and literal text longer than budget are errors.
func compileTemplate(s string, budget int, prov *providers) (template, error) {
	var t template
	rest := s
	literal := 0
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			t.parts = append(t.parts, rest)
			if literal += len(rest); literal > budget {
				return template{}, fmt.Errorf("the text outside placeholders is %d bytes; the most is %d", literal, budget)
			}
			t.room = budget - literal
			return t, nil
		}
		n := placeholderEnd(rest[i+2:])
		if n < 0 {
			return template{}, fmt.Errorf("the placeholder at byte %d has no closing }", len(s)-len(rest)+i)
		}
		expr := rest[i+2 : i+2+n]
		if strings.TrimSpace(expr) == "" {
			return template{}, fmt.Errorf("the placeholder at byte %d is empty", len(s)-len(rest)+i)
		}
		c, err := compile(expr, cel.DynType, prov)
		if err != nil {
			return template{}, fmt.Errorf("the placeholder ${%s} %v", expr, err)
		}
		if c.checked.OutputType().Kind() == types.MapKind {
			return template{}, fmt.Errorf("the placeholder ${%s} is a map, which has no text form", expr)
		}
		if t.reads == "" {
			t.reads = resultRead(c.checked)
		}
		t.parts = append(t.parts, rest[:i])
		literal += i
		t.exprs = append(t.exprs, c.prog)
		rest = rest[i+2+n+1:]
	}
}

// placeholderEnd returns the index in s of the "}" that closes a
// placeholder whose expression s begins, skipping CEL's quoted strings
// (with their escapes, raw or triple-quoted), comments (// to the end of
// the line) and balanced braces (a map literal), or -1.
func placeholderEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '/':
			if strings.HasPrefix(s[i:], "//") {
				n := strings.IndexByte(s[i:], '\n')
				if n < 0 {
					return -1
				}
				i += n
			}
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		case '\'', '"':
			raw := i > 0 && (s[i-1] == 'r' || s[i-1] == 'R')
			q := string(c)
			if strings.HasPrefix(s[i:], q+q+q) {
				q += q + q
			}
			j := i + len(q)
			for ; j < len(s) && !strings.HasPrefix(s[j:], q); j++ {
				if s[j] == '\\' && !raw {
					j++
				}
			}
			if j >= len(s) {
				return -1
			}
			i = j + len(q) - 1
		}
	}
	return -1
}

// render returns t with its placeholders' values, evaluated in a. A
// placeholder whose value does not fit in what is left of the budget is
// replaced by nothing, as one that fails to evaluate: the literal text
// always fits (compileTemplate checked it), and a list's joined form is
// built no further than what is left, so nothing past the budget is
// built.
func (t *template) render(a *activation) string {
	if t.exprs == nil {
		return t.parts[0]
	}
	var b strings.Builder
	room := t.room
	for i, e := range t.exprs {
		b.WriteString(t.parts[i])
		if v, _, err := e.Eval(a); err == nil {
			if s, err := keyForm(v, min(room, maxKeyBytes)); err == nil && len(s) <= room {
				b.WriteString(s)
				room -= len(s)
			}
		}
	}
	b.WriteString(t.parts[len(t.parts)-1])
	return b.String()
}
