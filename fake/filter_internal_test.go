package fake

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/k8sop"
)

// keyField is obj's fields of an API key, as the fake's API key list
// gives them to filters.
// keyObj is obj for the API key v.
func keyObj(v account.APIKey) *objVal {
	return &objVal{field: func(name string) ref.Val { return keyField(v, name) }}
}

func keyField(v any, name string) ref.Val {
	k := v.(account.APIKey)
	switch name {
	case "id":
		return types.String(k.ID)
	case "description":
		return types.String(k.Description)
	case "metadata":
		return types.String(k.Metadata)
	case "owner_id":
		return types.String(k.OwnerID)
	case "created_at":
		return types.Timestamp{Time: k.CreatedAt}
	}
	return nil
}

// keyFields are the API key list's filterable fields (contract §3).
var keyFields = []string{"id", "description", "metadata", "owner_id", "created_at"}

// costItems are API keys with the shortest and the longest fields
// validation allows, for checking filter cost bounds.
func costItems(now time.Time) []account.APIKey {
	return []account.APIKey{
		{ID: "ak_" + strings.Repeat("z", 27), CreatedAt: now, OwnerID: "usr_1"},
		{ID: "ak_" + strings.Repeat("Z", 27), Description: strings.Repeat("d", acctapi.MaxDescriptionBytes),
			Metadata: strings.Repeat("m", acctapi.MaxMetadataBytes), CreatedAt: now.Add(-time.Hour), OwnerID: "service_1"},
		{ID: "ak_" + strings.Repeat("0", 27), Description: strings.Repeat("é", acctapi.MaxDescriptionBytes/2),
			Metadata: strings.Repeat("ü", acctapi.MaxMetadataBytes/2), CreatedAt: now.Add(-48 * time.Hour)},
		maxSizeKeys(1, now)[0],
	}
}

// checkCostBound compiles expr for the API key list and, when it has a
// cost bound, checks that every evaluation on costItems costs within it
// and that the untracked program answers as the tracked one does. It
// reports whether expr has a bound.
func checkCostBound(t *testing.T, expr string) (bounded, compiled bool) {
	t.Helper()
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	f, err := compileFilter(expr, keyFields)
	if err != nil {
		return false, false
	}
	if f.fast == nil {
		return false, true
	}
	for i, item := range costItems(now) {
		act := &activation{obj: keyObj(item), now: types.Timestamp{Time: now}}
		want, cost, terr := f.eval(act)
		if terr == nil && cost+f.base > f.maxCost {
			t.Errorf("%s, item %d: cost %d, over the bound %d", expr, i, cost+f.base, f.maxCost)
		}
		out, _, err := f.fast.Eval(act)
		got, err := result(out, err)
		if (err == nil) != (terr == nil) || got != want {
			t.Errorf("%s, item %d: untracked %v, %v; tracked %v, %v", expr, i, got, err, want, terr)
		}
	}
	return true, true
}

// TestFilterCostBound checks the untracked evaluation of filters against
// the tracked one (see checkCostBound), and that an expression whose cost
// grows with a field of unknown size has no bound.
func TestFilterCostBound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr    string
		bounded bool
	}{
		{`obj.description == "key-4242" && obj.created_at >= timestamp("2020-01-01T00:00:00Z")`, true},
		{`obj.description.startsWith("d") && obj.metadata in ["a", "b"]`, true},
		{`obj.description.contains("dd") || obj.metadata.contains("mmm")`, true},
		{`obj.metadata.contains("` + strings.Repeat("m", 4000) + `")`, true},
		{`obj.metadata.endsWith("m") && size(obj.metadata) > 3 && obj.metadata.size() < 5000`, true},
		{`obj.created_at > time.now.subtract("7d") || obj.created_at.add("1d12h") > time.now`, true},
		{`obj.id == "ak_x" || obj.id in ["a", "b"]`, true},
		{`obj.owner_id != null && !(obj.owner_id == "")`, true}, // equality is bounded by the literal
		{`1 < 2.5 && obj.description.size() > 1.5 && size(obj.metadata) >= 0u`, true},
		{`obj.metadata < "n" && obj.description >= "é" && obj.metadata != "ü"`, true},
		{`obj.owner_id in ["usr_1", "service_1", ""]`, true},
		{`obj.owner_id.contains("service")`, false},  // owner_id's size is unknown
		{`obj.owner_id.startsWith("service")`, true}, // but not needed here
		{`size(obj.owner_id) > 2`, false},            // and is here
	}
	for _, tt := range tests {
		bounded, ok := checkCostBound(t, tt.expr)
		if !ok {
			t.Errorf("%s: does not compile", tt.expr)
		} else if bounded != tt.bounded {
			t.Errorf("%s: bounded %v, want %v", tt.expr, bounded, tt.bounded)
		}
	}
}

// FuzzFilterCostBound runs checkCostBound on any expression.
func FuzzFilterCostBound(f *testing.F) {
	for _, s := range []string{
		`obj.description == "x" && obj.created_at >= timestamp("2020-01-01T00:00:00Z")`,
		`obj.metadata.contains("mm") || obj.description.contains("é")`,
		`size(obj.description) + 1 > 4000`,
		`obj.metadata in ["m", "ü", ""] || obj.description.endsWith("é")`,
		`obj.created_at.add("1d") > time.now && size(obj.id) == 30`,
		`obj.owner_id.startsWith("usr_")`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) { checkCostBound(t, expr) })
}

// TestFilterGrammar checks that filters accept what contract §3 lists and
// refuse everything else with ERR_NGROK_250 and a message naming the
// construct.
func TestFilterGrammar(t *testing.T) {
	t.Parallel()
	accepted := []string{
		`!(obj.description == "a") && (obj.metadata != "b" || obj.id == "ak_1")`,
		`obj.created_at < time.now && obj.created_at >= timestamp("2020-01-01T00:00:00Z")`,
		`obj.created_at > time.now.subtract("7d") && obj.created_at <= time.now.add("1d12h30m15s")`,
		`obj.created_at >= timestamp(time.now).subtract("7d")`, // the real service's own example
		`obj.metadata in ["a", "b"] && obj.id in ["ak_1"] && 1 in [1, 2u, 3.0]`,
		`obj.owner_id in ["x", null] && size(obj.metadata) in [1, 2u, 3.0]`,
		`obj.created_at in [timestamp("2026-01-01T00:00:00Z"), timestamp("2026-01-02T00:00:00Z")]`,
		`size(obj.metadata) > 3 && obj.description.size() <= 255`,
		`obj.description.startsWith("a") || obj.description.endsWith("b") || obj.metadata.contains("c")`,
		`obj.description == "" || obj.owner_id == null || null != obj.owner_id`,
		// The filtering documentation's own form, on the optional text
		// fields (where null is "").
		`obj.owner_id == "usr_1" && (obj.metadata == null || obj.metadata == "")`,
		`null != obj.description && obj.metadata in ["x", null]`,
		`-1 < 0 && 1.5 > 0.5 && "a" < "b"`,
		// Ordering across int, uint and double, as CEL defines it (a
		// review saw 1 < 2.5 refused with the checker's overload error).
		`1 < 2.5 && obj.description.size() > 1.5 && size(obj.metadata) >= 0u && 2u <= 2.0`,
		// ! is supported, so !! is; negative numbers are constants;
		// minus signs in strings are text.
		`!!(obj.description == "") || !!!(obj.metadata == "a")`,
		`size(obj.metadata) > -1 && size(obj.metadata) in [-1, - 2, -3.5e-1] && -.5 < 0.0`,
		`obj.description != "--" && obj.metadata != 'a--b' && obj.owner_id != r"\" && obj.metadata != """--"""`,
		// A duration of any number of digits within CEL's range.
		`timestamp("0001-01-01T00:00:00Z").add("3652058d") < time.now`,
		`obj.created_at > time.now.subtract("0000000007d")`,
	}
	for _, expr := range accepted {
		if _, err := compileFilter(expr, keyFields); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
	refused := []struct{ expr, want string }{
		{`obj.metadata.matches("[\\pL\\pN]{1000}z")`, "matches is not supported"},
		{`matches(obj.metadata, "a")`, "matches is not supported"},
		{`[obj.id].exists(x, x.startsWith("ak_"))`, "the macro exists is not supported"},
		{`["a"].all(x, x == obj.description)`, "the macro all is not supported"},
		{`["a"].exists_one(x, x == obj.description)`, "the macro exists_one is not supported"},
		{`["a"].map(x, x + "b").size() > 0`, "the macro map is not supported"},
		{`["a"].filter(x, x == "a").size() > 0`, "the macro filter is not supported"},
		{`size([obj.metadata]) > 0`, "a list literal is supported only on the right of in"},
		{`[1, 2] == [1, 2]`, "a list literal is supported only on the right of in"},
		{`obj.metadata in ["a", obj.description]`, "in needs a list literal of constants"},
		{`"a" in obj.metadata`, "in needs a list literal of constants"},
		{`size({"a": 1}) == 1`, "map literals are not supported"},
		{`obj.description + "x" == "y"`, "arithmetic (+) is not supported"},
		{`size(obj.metadata) * 2 > 1`, "arithmetic (*) is not supported"},
		{`-size(obj.metadata) < 0`, "arithmetic (-) is not supported"},
		// The parser folds an even number of negations away (a review
		// saw these accepted).
		{`--"abc" == "abc"`, "arithmetic (-) is not supported"},
		{`--obj.id == obj.id`, "arithmetic (-) is not supported"},
		{`----obj.created_at < time.now`, "arithmetic (-) is not supported"},
		{`- -obj.description == ""`, "arithmetic (-) is not supported"},
		{`-(-size(obj.metadata)) == 1`, "arithmetic (-) is not supported"},
		{`size(obj.metadata) == --1`, "arithmetic (-) is not supported"},
		{`obj.description == "--" && --obj.metadata == ""`, "arithmetic (-) is not supported"},
		// A supported function called wrongly says what is wrong (a
		// review saw "the function add is not supported").
		{`obj.created_at.add("1d","2d") > time.now`, `add takes 1 argument, not 2: t.add("<duration>")`},
		{`subtract(obj.created_at, "1d") > time.now`, `subtract is a method, called as t.subtract("<duration>")`},
		{`size(obj.description, 1) == 0`, "size takes one value: size(x) or x.size(), not 2 arguments"},
		{`obj.description.size(1) == 0`, "size takes one value"},
		{`"2020-01-01T00:00:00Z".timestamp() < time.now`, `timestamp is called as timestamp("<RFC 3339>"), not as a method`},
		{`timestamp("2020-01-01T00:00:00Z", "UTC") < time.now`, "timestamp takes 1 argument, not 2"},
		{`obj.description.contains()`, "contains takes 1 argument, not 0"},
		{`startsWith(obj.description, "a")`, "startsWith is a method"},
		// == null on a field that is never null matched nothing (a
		// review); owner_id, nullable in the real service, and the
		// optional text fields, where null is "" (TestFilterNullIsEmpty),
		// may be compared with null.
		{`obj.id == null`, `obj.id is a string, never null; compare it with == ""`},
		{`null != obj.id`, `obj.id is a string, never null`},
		{`obj.created_at == null`, "obj.created_at is a timestamp, never null"},
		{`obj.owner_id == null || obj.id != null`, "obj.id is a string, never null"},
		{`obj.id in ["x", null]`, "in: obj.id is a string, never null; take null out of the list"},
		// So is anything else whose type is never null (a review saw
		// these answer no item, or every one).
		{`obj.created_at.add("0s") == null`, "a timestamp is never null: comparing one with null is always false"},
		{`time.now != null`, "a timestamp is never null: comparing one with null is always true"},
		{`obj.created_at.add("1.5h") < time.now`, "fractions are not accepted"},
		{`size(obj.metadata) % 2 == 1`, "arithmetic (%) is not supported"},
		{`string(obj.created_at) == ""`, "the conversion string() is not supported"},
		{`int("1") == 1`, "the conversion int() is not supported"},
		{`duration("1h") > duration("1m")`, "the conversion duration() is not supported"},
		{`dyn(obj.metadata) == ""`, "the conversion dyn() is not supported"},
		{`obj["id"] == "x"`, "index access is not supported"},
		{`obj.description == "" ? true : false`, "the conditional operator ?: is not supported"},
		{`obj.metadata.lowerAscii() == ""`, "the function lowerAscii is not supported"},
		{`obj == obj`, "obj may be used only as obj.<field>"},
		{`obj.nope == ""`, "unsupported field: obj.nope"},
		{`has(obj.metadata)`, "the function has is not supported"},
		// A field compared with a value of another type is refused, not
		// an empty answer (contract §3: times compare as timestamps).
		{`obj.created_at == "2026-11-24T06:31:09Z"`, "no matching overload for '_==_' applied to '(timestamp, string)'"},
		{`obj.created_at > "2020"`, "no matching overload"},
		{`obj.description == 1`, "no matching overload for '_==_' applied to '(wrapper(string), int)'"},
		{`obj.description == b"k"`, "no matching overload"},
		{`obj.metadata < 5`, "no matching overload"},
		// So is a constant in a list that mixes types (which CEL types as
		// list(dyn)) that the left operand can never equal: it matched
		// nothing (a review).
		{`obj.created_at in ["2026-01-01T00:00:00Z"]`, "no matching overload for '@in'"},
		{`obj.created_at in ["2026-01-01T00:00:00Z", null]`, "can never equal the string 2026-01-01T00:00:00Z"},
		{`obj.created_at in ["2026-01-01T00:00:00Z", 1]`, "can never equal the string"},
		{`obj.owner_id in [1, null]`, "can never equal the int 1"},
		{`obj.description in ["x", 2.5]`, "can never equal the double 2.5"},
		{`1 in [1, true]`, "can never equal the bool true"},
		// An element that is not a literal is checked by its type (a
		// review found timestamp("…") passed over).
		{`obj.id in ["ak_1", timestamp("2026-11-25T03:18:26Z")]`, "the string on its left can never equal a timestamp"},
		{`obj.description.x == ""`, "obj.description has no members"},
		{`obj.id.startsWith("ak_")`, "startsWith is not supported on obj.id"},
		{`"ak_123".contains(obj.id)`, "contains is not supported on obj.id"},
		{`timestamp(obj.description) < time.now`, "timestamp() takes a string literal"},
		{`timestamp("yesterday") < time.now`, "timestamp(\"yesterday\")"},
		{`obj.created_at.add(obj.description) < time.now`, "add() takes a string literal"},
		{`obj.created_at.add("1w") < time.now`, "invalid duration"},
		{`time.later < time.now`, "only obj.<field> may be selected"},
		{`x == 1`, "unknown name x"},
	}
	for _, tt := range refused {
		_, err := compileFilter(tt.expr, keyFields)
		var e *apiError
		if !errors.As(err, &e) || e.status != http.StatusBadRequest || e.code != acctapi.CodeBadFilter || !strings.Contains(e.msg, tt.want) {
			t.Errorf("%s: %v; want a 400 %s naming %q", tt.expr, err, acctapi.CodeBadFilter, tt.want)
		}
	}
}

// TestFilterTimeRange checks that add() and subtract() never wrap: a
// duration beyond CEL's 10,000 years, or a result outside years 0001 to
// 9999, is a 400 ERR_NGROK_250 (before any item is read when it does not
// depend on the time of the request or on an item), and a shift within
// range, however long, gives the right time.
func TestFilterTimeRange(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	obj := keyObj(account.APIKey{CreatedAt: now})
	tests := []struct {
		expr    string
		want    bool
		refused string // in the compile error, or else in the evaluation's
		atRun   bool   // refused only when evaluated
	}{
		{expr: `time.now.add("999999d") > time.now`, want: true},
		{expr: `time.now.add("106752d") > time.now`, want: true},
		{expr: `time.now.subtract("106752d") < time.now`, want: true},
		{expr: `obj.created_at.add("999999d") == timestamp("4764-10-18T00:00:00Z")`, want: true},
		{expr: `timestamp("0001-01-01T00:00:00Z").add("999999d999999d999999d652061d") == timestamp("9999-12-31T00:00:00Z")`, want: true},
		{expr: `timestamp("9999-12-31T23:59:59Z").subtract("1s").add("1s") == timestamp("9999-12-31T23:59:59Z")`, want: true},
		{expr: `timestamp("9999-12-31T23:59:59Z").add("1d") > time.now`, refused: "timestamp out of range"},
		{expr: `timestamp("9999-12-31T23:59:59Z").add("1s") > time.now`, refused: "timestamp out of range"},
		{expr: `timestamp("0001-01-01T00:00:00Z").subtract("1s") < time.now`, refused: "timestamp out of range"},
		{expr: `timestamp("2026-01-01T00:00:00Z").add("999999d999999d999999d") < time.now`, refused: "timestamp out of range"},
		{expr: `time.now.add("999999d999999d999999d999999d") > time.now`, refused: "out of range: at most 10,000 years"},
		{expr: `time.now.add("999999d999999d999999d") > time.now`, refused: "timestamp out of range", atRun: true},
		{expr: `obj.created_at.subtract("999999d") < time.now`, refused: "timestamp out of range", atRun: true},
		// Where || or && would settle the result without the shift, its
		// error is still the request's (a review saw these answer 200,
		// listing every item or none).
		{expr: `obj.created_at.subtract("999999d") < time.now || obj.description == ""`, refused: "timestamp out of range", atRun: true},
		{expr: `obj.created_at.subtract("999999d") < time.now && false`, refused: "timestamp out of range", atRun: true},
		// Any number of digits, within range (a review saw 7 refused).
		{expr: `time.now.add("1000000d") > time.now`, want: true},
		{expr: `timestamp("0001-01-01T00:00:00Z").add("3652058d") == timestamp("9999-12-31T00:00:00Z")`, want: true},
		{expr: `time.now.add("3652501d") > time.now`, refused: "out of range: at most 10,000 years"},
		{expr: `time.now.add("1.5h") > time.now`, refused: "fractions are not accepted"},
	}
	for _, tt := range tests {
		f, err := compileFilter(tt.expr, keyFields)
		if err == nil {
			var got bool
			got, err = f.matcher(now)(obj)
			if tt.refused == "" {
				if err != nil || got != tt.want {
					t.Errorf("%s = %v, %v; want %v", tt.expr, got, err, tt.want)
				}
				continue
			}
			if !tt.atRun {
				t.Errorf("%s: compiled; want refused", tt.expr)
			}
		} else if tt.atRun {
			t.Errorf("%s: %v; want refused when evaluated", tt.expr, err)
		}
		var e *apiError
		if !errors.As(err, &e) || e.status != http.StatusBadRequest || e.code != acctapi.CodeBadFilter || !strings.Contains(e.msg, tt.refused) {
			t.Errorf("%s: %v; want a 400 %s saying %q", tt.expr, err, acctapi.CodeBadFilter, tt.refused)
		}
	}
}

// TestFilterRequests sends issue 12's reproductions as list requests:
// each refused construct is a 400 ERR_NGROK_250 naming it, and a time far
// in the future no longer wraps into the past.
func TestFilterRequests(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	for range 20 {
		in := &account.APIKeyCreate{Description: "k", Metadata: strings.Repeat("a", 4000)}
		if _, err := Seed[account.APIKey](srv, "", in); err != nil {
			t.Fatal(err)
		}
	}
	get := func(filter string) (int, map[string]any) {
		req := httptest.NewRequest(http.MethodGet, "/api_keys?limit=100&filter="+url.QueryEscape(filter), nil)
		req.Header.Set("Authorization", "Bearer "+srv.APIKey())
		req.Header.Set("Service-Version", acctapi.APIVersion)
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %d %s", filter, rec.Code, rec.Body)
		}
		return rec.Code, body
	}
	for _, tt := range []struct{ filter, want string }{
		{`obj.metadata.matches("[\\pL\\pN]{1000}z")`, "matches is not supported"},
		{strings.Repeat(`obj.metadata.matches("[\\pL\\pN]{30}z") || `, 60) + "false", "matches is not supported"},
		{`[obj.id].exists(x, x.startsWith("ak_"))`, "the macro exists is not supported"},
		{`timestamp("9999-12-31T23:59:59Z").add("1d") > time.now`, "timestamp out of range"},
		{`time.now.add("999999d999999d999999d") > time.now`, "timestamp out of range"},
		// No item reaches the shift (a review saw 200 with no keys): time.now
		// is one time for the request, checked before any item is read.
		{`obj.description == "zz" && obj.created_at < time.now.add("999999d").add("999999d").add("999999d")`, "timestamp out of range"},
		// A review's reproductions: 200 with no keys, or the checker's
		// raw output, or a supported function said unsupported.
		{`--"abc" == "abc"`, "arithmetic (-) is not supported"},
		{`obj.id == null`, "obj.id is a string, never null"},
		{`obj.created_at.add("1d","2d") > time.now`, "add takes 1 argument, not 2"},
	} {
		code, body := get(tt.filter)
		if msg, _ := body["msg"].(string); code != http.StatusBadRequest || body["error_code"] != acctapi.CodeBadFilter || !strings.Contains(msg, tt.want) {
			t.Errorf("%.60s: %d %s %q; want 400 %s saying %q", tt.filter, code, body["error_code"], msg, acctapi.CodeBadFilter, tt.want)
		}
	}
	for _, tt := range []struct {
		filter string
		want   int
	}{
		{`time.now.add("999999d") < time.now`, 0},
		{`time.now.add("106752d") > time.now`, 21}, // the server's own key too
		{`obj.metadata.contains("aaaa") && size(obj.metadata) == 4000`, 20},
		{`1 < 2.5 && obj.description.size() < 1.5`, 21},
		{`timestamp("0001-01-01T00:00:00Z").add("3652058d") > time.now`, 21},
	} {
		code, body := get(tt.filter)
		if keys, _ := body["keys"].([]any); code != http.StatusOK || len(keys) != tt.want {
			t.Errorf("%s: %d, %d keys; want 200, %d", tt.filter, code, len(keys), tt.want)
		}
	}
}

// TestFilterRequestCost checks that a request's evaluations, tracked or
// not, are refused once they cost more than maxFilterRequestCost, and not
// before.
func TestFilterRequestCost(t *testing.T) {
	t.Parallel()
	// About 10,000 per evaluation, bounded: the first 250 or so run
	// untracked, then tracking takes over and the request is refused
	// soon after its cost passes the limit.
	expr := `obj.metadata in [` + strings.Repeat(`"b", `, 499) + `"b"]`
	f, err := compileFilter(expr, keyFields)
	if err != nil {
		t.Fatal(err)
	}
	if f.fast == nil {
		t.Fatalf("%s: no cost bound", expr)
	}
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	obj := keyObj(maxSizeKeys(1, now)[0])
	_, each, err := f.eval(&activation{obj: obj, now: types.Timestamp{Time: now}})
	if err != nil {
		t.Fatal(err)
	}
	each += f.base
	match := f.matcher(now)
	var evals int
	for evals = 1; evals < 10_000; evals++ {
		if _, err := match(obj); err != nil {
			if !strings.Contains(err.Error(), "too costly") {
				t.Fatalf("evaluation %d: %v", evals, err)
			}
			break
		}
	}
	// Refused, not before the evaluations' cost passes the limit, nor
	// after it passes twice the limit.
	if evals == 10_000 {
		t.Fatal("never refused")
	}
	if lo, hi := maxFilterRequestCost/each, 2*maxFilterRequestCost/each+1; uint64(evals) <= lo || uint64(evals) > hi {
		t.Errorf("refused at evaluation %d, want in (%d, %d] (cost %d per evaluation, bound %d)", evals, lo, hi, each, f.maxCost)
	}
}

// TestFilterRequestTotal runs a request of each of the worst filters we
// could build (worstFilters, measured by BenchmarkFilterWorst) over
// 10,000 items of the largest size, and checks what its evaluations cost
// in all: at most twice the request budget plus one evaluation
// (maxRequestTotal for the real budget), and every evaluation counted at
// no less than it cost. The items are all alike, so one tracked
// evaluation gives what each costs. The short run gives requests a
// twentieth of the budget (under -race, the real one takes 20 s);
// ACCTAPI_LONG=1 runs them with maxFilterRequestCost.
func TestFilterRequestTotal(t *testing.T) {
	t.Parallel()
	budget := uint64(maxFilterRequestCost / 20)
	if os.Getenv("ACCTAPI_LONG") != "" {
		budget = maxFilterRequestCost
	}
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	item := maxSizeKeys(1, now)[0]
	for _, tt := range worstFilters() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := compileFilter(tt.expr, keyFields)
			if err != nil {
				t.Fatal(err)
			}
			obj := keyObj(item)
			_, each, err := f.eval(&activation{obj: obj, now: types.Timestamp{Time: now}})
			if err != nil {
				t.Fatal(err)
			}
			each += f.base
			match := f.costedMatcher(now, budget)
			var total, evals uint64
			for range worstItems {
				evals++
				_, counted, err := match(obj)
				if counted < each {
					t.Fatalf("evaluation %d counted %d, cost %d", evals, counted, each)
				}
				total += each
				if err != nil {
					break
				}
			}
			if most := 2*budget + maxFilterCost; total > most {
				t.Errorf("%d evaluations cost %d, over %d", evals, total, most)
			}
			t.Logf("%d evaluations of cost %d (bound %d): %d in all", evals, each, f.maxCost, total)
		})
	}
}

// BenchmarkCompileFilter measures what a list request with a filter pays
// before looking at any item.
func BenchmarkCompileFilter(b *testing.B) {
	expr := `obj.description == "key-4242" && obj.created_at >= timestamp("2020-01-01T00:00:00Z")`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileFilter(expr, apiKeyFields); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFilterCache checks that a server compiles a filter once per list,
// never caches a refusal, and holds at most maxCachedFilters.
func TestFilterCache(t *testing.T) {
	t.Parallel()
	var fc filterCache
	expr := `obj.description == "x"`
	a, err := fc.compile(kindAPIKey, expr, apiKeyFields)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := fc.compile(kindAPIKey, expr, apiKeyFields); again != a {
		t.Error("the same filter on the same list was compiled again")
	}
	// Service users have no description: the same text is refused there.
	if _, err := fc.compile(kindSvcUser, expr, svcUserFields); err == nil {
		t.Error("a filter compiled for one list was used for another")
	}
	if _, err := fc.compile(kindSvcUser, expr, svcUserFields); err == nil {
		t.Error("a refused filter was accepted the second time")
	}
	for i := range 2 * maxCachedFilters {
		if _, err := fc.compile(kindAPIKey, fmt.Sprintf("obj.metadata == %q", fmt.Sprint(i)), apiKeyFields); err != nil {
			t.Fatal(err)
		}
		if len(fc.m) > maxCachedFilters {
			t.Fatalf("%d cached filters", len(fc.m))
		}
	}
}

// TestFilterFieldTypes checks that every list's filterable fields
// (internal/resources, contract §3) have a CEL type, so that a filter on
// any of them type-checks its comparisons.
func TestFilterFieldTypes(t *testing.T) {
	t.Parallel()
	n := 0
	for _, d := range resources.All() {
		for _, f := range d.Filter {
			n++
			if filterFieldTypes[f] == nil {
				t.Errorf("%s: filterable field %s has no type in filterFieldTypes", d.Name, f)
			}
		}
	}
	if n == 0 {
		t.Fatal("no list has filterable fields")
	}
}

// TestSelectorBudgetIsFilterBudget pins contract §6: listing bound
// endpoints has the same per-request cost bound as a list filter (a
// review found the selectors' 2,000,000 units refusing a selector at
// 5,000 endpoints that a filter passed at 8,000 keys).
func TestSelectorBudgetIsFilterBudget(t *testing.T) {
	if k8sop.MatchBudget != maxRequestTotal {
		t.Errorf("k8sop.MatchBudget = %d, a filter's request %d", k8sop.MatchBudget, maxRequestTotal)
	}
}

// TestFilterNullIsEmpty: on the optional text fields, which the real
// service leaves out of its answers when they are empty, null is "": a
// review's client sent the filtering documentation's own form,
// (obj.metadata == null || obj.metadata == ""), and got a 400 where the
// real service answers.
func TestFilterNullIsEmpty(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	for _, in := range []*account.APIKeyCreate{{Description: "both", Metadata: "m"}, {Description: "no metadata"}, {Metadata: "no description"}} {
		if _, err := Seed[account.APIKey](srv, "", in); err != nil {
			t.Fatal(err)
		}
	}
	keys := account.NewAPIKeys(srv.Client())
	for _, tt := range []struct {
		filter string
		want   []string // descriptions, newest first
	}{
		{`obj.metadata == null`, []string{"no metadata"}},
		{`obj.metadata == null || obj.metadata == ""`, []string{"no metadata"}},
		{`null == obj.description`, []string{""}},
		{`obj.metadata != null && obj.description != null`, []string{"both"}},
		{`obj.description in ["both", null]`, []string{"", "both"}},
	} {
		var got []string // the key the server made has neither: left out
		for k, err := range keys.List(t.Context(), &acctapi.FilterOptions{Filter: tt.filter}) {
			if err != nil {
				t.Fatalf("%s: %v", tt.filter, err)
			}
			if k.Description != "" || k.Metadata != "" {
				got = append(got, k.Description)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q; want %q", tt.filter, got, tt.want)
		}
	}
}
