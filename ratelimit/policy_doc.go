package ratelimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/trunc"
	"go.yaml.in/yaml/v3"
)

// decodeDocument reads a policy document into its top-level members. A
// document whose first character after JSON's white space (space, tab,
// line feed, carriage return) is "{" or "[" is JSON, which YAML comments
// may follow (see yamlComments), or YAML in flow style if it is not JSON
// at what only YAML has (see flowYAML); anything else is YAML, read into
// the same values, which decodeValue checks for both. (Other Unicode
// spaces, a vertical tab or a no-break space, are white space to neither:
// a document starting with one is YAML, and refused.)
func decodeDocument(doc []byte) (map[string]any, error) {
	trimmed := bytes.Trim(doc, jsonSpace)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		d := json.NewDecoder(bytes.NewReader(trimmed))
		d.UseNumber() // numbers reach the strict decoder as written
		var top any
		err := d.Decode(&top)
		if err == nil {
			end := d.InputOffset()
			if _, err := d.Token(); err != io.EOF && !yamlComments(trimmed[end:]) {
				return nil, invalidDocument("the policy is not valid JSON", errors.New("data after the top-level value"))
			}
			if err := duplicateMember(trimmed[:end]); err != nil {
				return nil, invalidDocument("the policy is not valid JSON", err)
			}
			return topLevel(top)
		}
		// YAML's flow style looks like JSON ({type: rate-limit, ...}): a
		// document that stops being JSON at what only YAML has (an
		// unquoted word, a single quote, a comment) is read as YAML below.
		// (YAML would also take much broken JSON, a trailing comma or a
		// missing value, whose JSON error is more use.)
		if !flowYAML(trimmed, err) {
			return nil, invalidDocument("the policy is not valid JSON", jsonError(trimmed, err))
		}
	}
	top, err := decodeYAML(doc)
	if err != nil {
		return nil, invalidDocument("the policy is not valid YAML", err)
	}
	return topLevel(top)
}

// flowYAML reports whether doc, which begins with "{" or "[" and is not
// JSON (err), is YAML in flow style: JSON's syntax error is at a
// character only YAML allows there, a letter or underscore (an unquoted
// word), a single quote or a "#" (a comment).
func flowYAML(doc []byte, err error) bool {
	var syn *json.SyntaxError
	if !errors.As(err, &syn) || syn.Offset < 1 || syn.Offset > int64(len(doc)) {
		return false
	}
	c := doc[syn.Offset-1]
	return c == '\'' || c == '#' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// yamlComments reports whether rest, what follows a JSON document's value,
// is only YAML comments, which YAML, a superset of JSON, reads the
// document without: each line blank or a "#" and its text, the first
// separated from the value by white space, as YAML requires.
func yamlComments(rest []byte) bool {
	if len(rest) == 0 || !bytes.ContainsAny(rest[:1], jsonSpace) {
		return false
	}
	for line := range bytes.Lines(rest) {
		if line = bytes.Trim(line, " \t\r\n"); len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}

// topLevel checks that a decoded document is a policy, an object of
// phases, and returns its members.
func topLevel(top any) (map[string]any, error) {
	m, ok := top.(map[string]any)
	if !ok {
		return nil, notAPolicy(top)
	}
	if err := bareAction(m); err != nil {
		return nil, err
	}
	return m, nil
}

// jsonSpace is JSON's white space (RFC 8259, section 2).
const jsonSpace = " \t\n\r"

// duplicateMember reports an object member named twice, which YAML
// refuses too; encoding/json would keep the last silently.
func duplicateMember(doc []byte) error {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber() // a number out of float64's range is decodeValue's to refuse, at its path
	type frame struct {
		keys  map[string]bool
		isObj bool
		want  bool // the next string token is a member name
	}
	var stack []frame
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		top := len(stack) - 1
		if delim, ok := tok.(json.Delim); ok {
			switch delim {
			case '{', '[':
				if top >= 0 && stack[top].isObj {
					stack[top].want = true
				}
				stack = append(stack, frame{keys: map[string]bool{}, isObj: delim == '{', want: delim == '{'})
			default:
				stack = stack[:top]
			}
			continue
		}
		if top < 0 || !stack[top].isObj {
			continue
		}
		if stack[top].want {
			k := tok.(string)
			if stack[top].keys[k] {
				return fmt.Errorf("member %q appears twice in one object", k)
			}
			stack[top].keys[k] = true
		}
		stack[top].want = !stack[top].want
	}
}

// jsonError adds the line and column to a JSON syntax error.
func jsonError(doc []byte, err error) error {
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		return err
	}
	before := doc[:min(max(int(syn.Offset)-1, 0), len(doc))] // Offset is just past the bad byte
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

func invalidDocument(reason string, err error) error {
	return &field.Error{Reason: reason, Code: field.CodeInvalidJSON, Err: err}
}

// maxExpandedYAML bounds a YAML document's size with its aliases
// expanded, in bytes of scalars plus two a node: aliases let a 112 KB
// document stand for half a gigabyte of JSON (found by a black-box check:
// NewPolicy took 6 s and 2.2 GB), which yaml.v3's own limit, on nodes
// rather than bytes, let through.
const maxExpandedYAML = 4 << 20

// decodeYAML reads one YAML document into maps with string keys, lists
// and scalars.
func decodeYAML(doc []byte) (any, error) {
	d := yaml.NewDecoder(bytes.NewReader(doc))
	var n yaml.Node
	if err := d.Decode(&n); err != nil {
		if err == io.EOF {
			return nil, errors.New("the document is empty")
		}
		return nil, err
	}
	var extra yaml.Node
	switch err := d.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		return nil, err // text after the document that is not YAML
	default:
		return nil, errors.New("a policy is one YAML document; this has more (\"---\")")
	}
	if size := expandedSize(&n, map[*yaml.Node]int{}, 0); size > maxExpandedYAML {
		return nil, fmt.Errorf("with its aliases expanded the document is more than %d bytes", maxExpandedYAML)
	}
	if err := checkYAMLKeys(&n, ""); err != nil {
		return nil, err
	}
	markHugeNumbers(&n)
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return normalizeYAML(v, "")
}

// checkYAMLKeys refuses a mapping of n with two keys that are one key
// once written as text, as normalizeYAML writes them: 1 and 1.0, or 1 and
// 0x1, true and True. yaml.v3 refuses keys spelt alike; these it decodes
// into one map, where the later silently replaced the earlier (1 and 0x1),
// or into two that normalizeYAML made one, either winning by the map's
// order (1 and 1.0). Aliases are not followed: what they name is checked
// where it is written.
func checkYAMLKeys(n *yaml.Node, path string) error {
	var seen map[string]string // a key's text as written, by its text as normalizeYAML writes it
	if n.Kind == yaml.MappingNode {
		seen = make(map[string]string, len(n.Content)/2)
	}
	for i, c := range n.Content {
		sub := path
		if n.Kind == yaml.SequenceNode {
			sub = fmt.Sprintf("%s[%d]", path, i)
		}
		if seen != nil {
			if i%2 == 0 {
				if c.Kind != yaml.ScalarNode || c.ShortTag() == "!!merge" {
					continue
				}
				var k any
				if err := c.Decode(&k); err != nil {
					continue // (refused when the document is decoded)
				}
				ks := fmt.Sprint(k)
				// (Spelt alike, yaml.v3 refuses it, with its line.)
				if first, dup := seen[ks]; dup && first != c.Value {
					return fmt.Errorf("%s: the key %s is given more than once, in different spellings", orTop(path), trunc.String(ks, 64))
				}
				seen[ks] = c.Value
				continue
			}
			if k := n.Content[i-1]; k.Kind == yaml.ScalarNode {
				sub = join(path, k.Value)
			}
		}
		if err := checkYAMLKeys(c, sub); err != nil {
			return err
		}
	}
	return nil
}

// hugeNumber prefixes the scalars markHugeNumbers marks. YAML text cannot
// hold a NUL, so no scalar of the document begins with one.
const hugeNumber = "\x00number:"

// markHugeNumbers marks the plain scalar values of n that yaml.v3 reads as
// strings only because they are numbers beyond float64's range (1e400),
// so that normalizeYAML makes numbers of them and they are refused as out
// of range, as JSON's are, not as strings where a number belongs. Keys
// stay as written.
func markHugeNumbers(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Style == 0 && n.ShortTag() == "!!str" {
		if _, err := strconv.ParseFloat(n.Value, 64); errors.Is(err, strconv.ErrRange) {
			n.Value = hugeNumber + n.Value
		}
	}
	for i, c := range n.Content {
		if n.Kind != yaml.MappingNode || i%2 == 1 {
			markHugeNumbers(c)
		}
	}
}

// expandedSize returns the size of n with its aliases expanded (scalars'
// bytes plus two a node), or a number above maxExpandedYAML once it is
// known to exceed it. memo holds the sizes of nodes already measured, so
// that each anchored node is measured once. A node that contains itself
// through an alias is left to the decoder, which refuses it ("anchor ...
// contains itself"): it counts as measured (-1, then 0) while inside.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int, depth int) int {
	if s, ok := memo[n]; ok {
		return max(s, 0)
	}
	if depth > 10_000 {
		return maxExpandedYAML + 1
	}
	memo[n] = -1
	size := 2 + len(n.Value)
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		size += expandedSize(n.Alias, memo, depth+1)
	}
	for _, c := range n.Content {
		if size += expandedSize(c, memo, depth+1); size > maxExpandedYAML {
			break
		}
	}
	memo[n] = size
	return size
}

// normalizeYAML turns the maps yaml.v3 makes for mappings with non-string
// keys into maps with string keys (a scalar key as written: 200 becomes
// "200"), and rejects other keys and values JSON cannot hold.
func normalizeYAML(v any, path string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			n, err := normalizeYAML(e, join(path, k))
			if err != nil {
				return nil, err
			}
			v[k] = n
		}
		return v, nil
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			switch k.(type) {
			case string, int, int64, uint64, float64, bool:
			default:
				return nil, fmt.Errorf("%s: a key of type %T; keys must be strings", orTop(path), k)
			}
			ks := fmt.Sprint(k) // (checkYAMLKeys refused two keys of one text)
			n, err := normalizeYAML(e, join(path, ks))
			if err != nil {
				return nil, err
			}
			m[ks] = n
		}
		return m, nil
	case []any:
		for i, e := range v {
			n, err := normalizeYAML(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			v[i] = n
		}
		return v, nil
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("%s: %v is not a number JSON can hold", orTop(path), v)
		}
	case string:
		if n, ok := strings.CutPrefix(v, hugeNumber); ok {
			return json.Number(n), nil
		}
	}
	return v, nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func orTop(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}

// notAPolicy explains a document that is not an object.
func notAPolicy(top any) error {
	if l, ok := top.([]any); ok {
		if len(l) > 0 {
			if m, ok := l[0].(map[string]any); ok {
				if _, ok := m["actions"]; ok {
					return field.Invalid("", "this is a list of rules, not a policy: put it under on_http_request")
				}
				if _, ok := m["type"]; ok {
					return field.Invalid("", "this is a list of actions, not a policy: put it in a rule, "+
						"as on_http_request: [{actions: [...]}]")
				}
			}
		}
		return field.Invalid("", "the policy is a list; a policy is a mapping such as on_http_request: [rules]")
	}
	return field.Invalid("", "the policy is a %s; a policy is a mapping such as on_http_request: [rules]", kindOf(top))
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	return "number"
}

// bareAction reports a document that is a rate-limit action or config
// instead of a policy, with one error instead of one per member.
func bareAction(m map[string]any) error {
	for k := range m {
		if len(k) > 3 && k[:3] == "on_" {
			return nil
		}
	}
	_, hasType := m["type"]
	_, hasConfig := m["config"]
	if hasType || hasConfig {
		return field.Invalid("", "this is an action config, not a policy: wrap it as "+
			"on_http_request: [{actions: [<this action>]}], or use NewLimit with its config")
	}
	// A config's own members, or only members a config has (name and
	// enforce alone, say).
	own, onlyConfig := false, true
	for k := range m {
		switch k {
		case "bucket_key", "capacity", "rate", "algorithm":
			own = true
		case "name", "enforce":
		default:
			onlyConfig = false
		}
	}
	if own || onlyConfig && len(m) > 0 {
		return field.Invalid("", "this is an action config (a rate-limit config), not a policy: wrap it as "+
			"on_http_request: [{actions: [{type: rate-limit, config: <this>}]}], or use NewLimit")
	}
	return nil
}
