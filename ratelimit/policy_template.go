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
// evaluate is replaced by nothing.
type template struct {
	parts []string      // literal text around the placeholders: len(exprs)+1
	exprs []cel.Program // nil for a string without placeholders
}

// compileTemplate compiles s; an unterminated or empty placeholder, or an
// expression that does not compile, is an error.
func compileTemplate(s string, prov *providers) (template, error) {
	var t template
	rest := s
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			t.parts = append(t.parts, rest)
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
		t.parts = append(t.parts, rest[:i])
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

// render returns t with its placeholders' values, evaluated in a.
func (t *template) render(a *activation) string {
	if t.exprs == nil {
		return t.parts[0]
	}
	var b strings.Builder
	for i, e := range t.exprs {
		b.WriteString(t.parts[i])
		if v, _, err := e.Eval(a); err == nil {
			if s, err := keyString(v); err == nil {
				b.WriteString(s)
			}
		}
	}
	b.WriteString(t.parts[len(t.parts)-1])
	return b.String()
}
