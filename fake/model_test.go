//lint:file-ignore SA1019 the model drives the deprecated bot-user alias on purpose.

package fake_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/k8sop"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestModelCoversEveryResource checks that the model drives every
// collection the description in internal/resources has, its alias
// included: a resource added there fails this test until the model knows
// it.
func TestModelCoversEveryResource(t *testing.T) {
	t.Parallel()
	have := map[string]bool{}
	for _, k := range allKinds() {
		have[k.path()] = true
	}
	for _, d := range resources.All() {
		if d.NoAPI {
			continue
		}
		for _, p := range []string{d.Path(), d.AliasPath()} {
			if p != "" && !have[p] {
				t.Errorf("the model has no kind for %s", p)
			}
		}
	}
}

// TestModel is a rapid state-machine test: it drives an in-memory fake
// through the typed clients with random sequences of operations and checks
// every answer, and after every step the whole state, against the reference
// model in model_ref_test.go. The steps for certificate authorities, bot
// users, event sources and Kubernetes operators follow TestModel's; at the
// end of this file, TestIsolationProperty holds accounts apart.
//
// The default run is short, from a fixed seed: 200 checks of about 50
// steps, about 20 s under -race on two cores (TestIsolationProperty adds
// 120 checks of about 40, about 8 s). It fails when it never reached one of
// requiredOutcomes (a 409 of each kind, a successful delete of every kind),
// so that a change of generators cannot quietly stop exercising them.
// ACCTAPI_LONG=1 runs 10,000 checks of about 50 from a random seed; the
// rapid flags (-rapid.checks, -rapid.steps, -rapid.seed, -rapid.failfile)
// and their RAPID_* variables still win when given (and then the required
// outcomes are not enforced).

// rapidBudget sets how many checks (and steps per check) the rapid tests
// of this file run, unless the rapid flags or RAPID_* variables say
// otherwise: a short run by default, a long one when ACCTAPI_LONG=1. The
// short run starts from a fixed seed, so that the same tree always passes
// or always fails (CI must not turn on chance); the long run, which is how
// new counterexamples are hunted, draws a random seed, as does any run
// given -rapid.seed=0. rapid v1.3.0 reads its settings from package-level
// flags each time Check (and Repeat) runs, so they are set here and put
// back when t ends. A test that calls it must not be parallel.
//
// It reports whether the run is the default short one (no ACCTAPI_LONG,
// no rapid flag or variable given, no -short: rapid runs a fifth of its
// checks under -short), whose outcomes are known to be reached.
func rapidBudget(t *testing.T, checks, steps int) (short bool) {
	t.Helper()
	seed := fixedSeed
	short = !testing.Short()
	if os.Getenv("ACCTAPI_LONG") == "1" {
		checks, steps, seed = 10000, 50, 0 // seed 0: random
		short = false
	}
	explicit := commandLineFlags()
	for _, s := range []struct {
		name, env string
		v         uint64
	}{{"rapid.checks", "RAPID_CHECKS", uint64(checks)}, {"rapid.steps", "RAPID_STEPS", uint64(steps)}, {"rapid.seed", "", seed}} {
		f := flag.Lookup(s.name)
		if f == nil || explicit[s.name] || (s.env != "" && os.Getenv(s.env) != "") {
			short = false
			continue
		}
		old := f.Value.String()
		if err := flag.Set(s.name, strconv.FormatUint(s.v, 10)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set(s.name, old) })
	}
	t.Logf("rapid: %s checks, %s steps each, seed %s (0: random)", flag.Lookup("rapid.checks").Value, flag.Lookup("rapid.steps").Value, flag.Lookup("rapid.seed").Value)
	return short
}

// fixedSeed is the short run's rapid seed.
const fixedSeed uint64 = 20261122

// commandLineFlags are the flags set on the command line, noted before
// rapidBudget first sets any (flag.Visit lists those too).
var commandLineFlags = sync.OnceValue(func() map[string]bool {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
})

// mAcct is one account as the machine drives it.
type mAcct struct {
	ref   *refAccount
	token string
	// checked validates requests before sending them; raw does not, so
	// the server answers invalid input.
	checked, raw *acctapi.Client
}

// machine is the state of one check: the fake, its clock, the model.
type machine struct {
	ctx        context.Context
	srv        *fake.Server
	clk        *fake.ManualClock
	m          *refModel
	accts      []*mAcct
	seen       []string // every id the fake made, of any kind and account
	lastSuffix string   // the largest id suffix seen; each new id sorts after it
	kinds      []kindRunner
}

// newMachine starts a fake with two accounts, a seed and a start time drawn
// from rapid, and the model of its initial state.
func newMachine(rt *rapid.T) *machine {
	start := t0.Add(time.Duration(rapid.Int64Range(0, 400*24*3600).Draw(rt, "start_s")) * time.Second)
	clk := fake.NewManualClock(start)
	seed := rapid.Uint64().Draw(rt, "id_seed")
	srv := fake.Start(rt, fake.WithoutListener(), fake.WithClock(clk), fake.WithIDSeed(seed), fake.WithIngressEndpoint(modelIngress),
		fake.WithAccount(fake.Account{ID: "ac_a", UserID: "usr_a", APIKeys: []string{"token-a"}}),
		fake.WithAccount(fake.Account{ID: "ac_b", UserID: "usr_b", APIKeys: []string{"token-b"}}))
	mc := &machine{ctx: context.Background(), srv: srv, clk: clk, m: newRefModel(srv.URL)}
	for _, acct := range srv.Accounts() {
		a := &mAcct{ref: mc.m.addAccount(acct.ID, acct.UserID), token: acct.APIKeys[0]}
		a.checked = mc.newClient(rt, a.token)
		a.raw = mc.newClient(rt, a.token, acctapi.WithoutValidation())
		// The account's initial key, learnt through the API: made by New,
		// owned by the account's user, with no description.
		page, err := account.NewAPIKeys(a.checked).Page(mc.ctx, nil)
		if err != nil || len(page.Keys) != 1 {
			rt.Fatalf("initial keys of %s: %v %v", acct.ID, page, err)
		}
		k := page.Keys[0]
		want := account.APIKey{ID: k.ID, URI: mc.m.uri("api_keys", k.ID), CreatedAt: stamp(start), OwnerID: acct.UserID}
		if diff := cmp.Diff(want, k); diff != "" || !wellFormedID("ak", k.ID) {
			rt.Fatalf("initial key of %s (-want +got):\n%s", acct.ID, diff)
		}
		mc.noteID(rt, "ak", k.ID)
		a.ref.keys.put(k)
		a.ref.tokens[k.ID] = a.token
		a.ref.mainKey = k.ID
		mc.accts = append(mc.accts, a)
	}
	mc.kinds = allKinds()
	return mc
}

func (mc *machine) newClient(rt *rapid.T, token string, opts ...acctapi.Option) *acctapi.Client {
	base := []acctapi.Option{acctapi.WithBaseURL(mc.srv.URL), acctapi.WithHTTPClient(mc.srv.HTTPClient()), acctapi.WithoutRetry()}
	c, err := acctapi.NewClient(token, append(base, opts...)...)
	if err != nil {
		rt.Fatal(err)
	}
	return c
}

// noteID checks a new id: its form, and that it sorts after every id made
// before it (so that creation order is id order, as lists assume).
func (mc *machine) noteID(rt *rapid.T, prefix, id string) string {
	rt.Helper()
	if !wellFormedID(prefix, id) {
		rt.Fatalf("new id %q: want %s_ and 27 base-62 characters", id, prefix)
	}
	suffix := id[len(prefix)+1:]
	if suffix <= mc.lastSuffix {
		rt.Fatalf("new id %q does not sort after the previous one (suffix %q)", id, mc.lastSuffix)
	}
	mc.lastSuffix = suffix
	mc.seen = append(mc.seen, id)
	return id
}

func (mc *machine) acct(rt *rapid.T) *mAcct {
	return mc.accts[rapid.IntRange(0, len(mc.accts)-1).Draw(rt, "account")]
}

// client picks the validating or the raw client of a.
func (mc *machine) client(rt *rapid.T, a *mAcct) (*acctapi.Client, bool) {
	if rapid.Bool().Draw(rt, "validating") {
		return a.checked, true
	}
	return a.raw, false
}

func (mc *machine) now() time.Time { return mc.clk.Now() }

// expect checks err against the model's answer f and reports whether the
// call was meant to succeed (and did).
func expect(rt *rapid.T, what string, err error, f *refFail, validating bool) bool {
	rt.Helper()
	outcomes.note(what, f, validating)
	var ae *acctapi.Error
	switch {
	case f == nil:
		if err != nil {
			rt.Fatalf("%s: got error %v, want success", what, err)
		}
		return true
	case f.local || (f.rule && validating):
		if err == nil || errors.As(err, &ae) || !errors.Is(err, acctapi.ErrInvalid) {
			rt.Fatalf("%s: got %v, want the client to refuse the request itself", what, err)
		}
		if f.rule {
			if fes := acctapi.FieldErrors(err); len(fes) == 0 || fes[0].Code != f.code {
				rt.Fatalf("%s: client's refusal %v, want first code %s", what, err, f.code)
			}
		}
	default:
		if !errors.As(err, &ae) {
			rt.Fatalf("%s: got %v, want API error %d %s", what, err, f.status, f.code)
		}
		if ae.StatusCode != f.status || ae.ErrorCode != f.code {
			rt.Fatalf("%s: got %d %s (%s), want %d %s", what, ae.StatusCode, ae.ErrorCode, ae.Msg, f.status, f.code)
		}
	}
	return false
}

// outcomeStats counts the answers the test checked, by operation and
// outcome, so a run can show what it exercised (-v).
type outcomeStats struct {
	mu    sync.Mutex
	n     map[string]int
	steps int
}

var outcomes outcomeStats

func (s *outcomeStats) note(what string, f *refFail, validating bool) {
	fs := strings.Fields(what)
	op := strings.Join(fs[:min(2, len(fs))], " ")
	if strings.Contains(what, "injected") {
		op += " fault"
	}
	out := "ok"
	switch {
	case f == nil:
	case f.local || (f.rule && validating):
		out = "refused by client"
	default:
		out = fmt.Sprintf("%d %s", f.status, f.code)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	s.n[op+" → "+out]++
}

// step counts one state check (rapid runs the invariant once before the
// first action and after every action).
func (s *outcomeStats) step() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps++
}

func (s *outcomeStats) report(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("%d state checks (steps, plus one per check)", s.steps)
	s.steps = 0
	keys := slices.Sorted(maps.Keys(s.n))
	total := 0
	for _, k := range keys {
		total += s.n[k]
	}
	t.Logf("%d answers checked", total)
	if testing.Verbose() {
		for _, k := range keys {
			t.Logf("%7d  %s", s.n[k], k)
		}
	}
	s.n = nil
}

// require fails t for each outcome in want that no answer had.
func (s *outcomeStats) require(t *testing.T, want []string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range want {
		if s.n[w] == 0 {
			t.Errorf("the run never checked %q: the generators (or the seed) no longer reach it", w)
		}
	}
}

// expectOK checks a step's answer (see expect) and returns what the fake
// answered and whether the step succeeded as the model says it must; want
// only names the type.
func expectOK[T any](rt *rapid.T, what string, f *refFail, validating bool, _ T) func(got *T, err error) (*T, bool) {
	return func(got *T, err error) (*T, bool) {
		rt.Helper()
		return got, expect(rt, what, err, f, validating)
	}
}

// expectSame checks a step's answer (see expect) and, when it succeeded,
// that the fake answered want.
func expectSame[T any](rt *rapid.T, what, label string, want T, f *refFail, validating bool) func(got *T, err error) {
	return func(got *T, err error) {
		rt.Helper()
		if expect(rt, what, err, f, validating) {
			same(rt, label, want, *got)
		}
	}
}

func same[T any](rt *rapid.T, what string, want, got T) {
	rt.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		rt.Fatalf("%s (-want +got):\n%s", what, diff)
	}
}

// ---- generators -------------------------------------------------------------------

// mostly draws from valid four times in five, else from invalid, so that
// most requests succeed and build state while every rule still gets broken.
func mostly[T any](valid, invalid []T) *rapid.Generator[T] {
	return rapid.Custom(func(rt *rapid.T) T {
		if rapid.IntRange(0, 4).Draw(rt, "valid") > 0 {
			return rapid.SampledFrom(valid).Draw(rt, "valid_value")
		}
		return rapid.SampledFrom(invalid).Draw(rt, "invalid_value")
	})
}

// The generators below are shared by the steps of TestModel only. A rapid
// generator must not be drawn from by two tests running in parallel:
// rapid v1.3.0 reads a generator's description outside the sync.Once that
// fills it, which the race detector reports. A test that runs in parallel
// builds its own (see examples/property).
var (
	genDesc = mostly([]string{"", "alpha", "alpine", "beta", "prod-1", "prod-2", "ünï",
		strings.Repeat("d", 255), strings.Repeat("é", 127) + "x", // 255 bytes: the longest allowed
	}, []string{strings.Repeat("é", 128)}) // 128 characters, 256 bytes: too long
	genMeta = mostly([]string{"", "m1", `{"k":1}`, "meta-x", strings.Repeat("m", 4096)}, []string{strings.Repeat("m", 4097)})
	genName = mostly([]string{"ci", "deploy", "ci-2", "ünï", strings.Repeat("n", 255)}, []string{"", strings.Repeat("n", 256)})
	genLit  = rapid.SampledFrom([]string{"", "al", "alpha", "prod", "-1", "ünï", "m", "meta", "x"})
	// made-up ids other than well-formed ones: the client refuses the first
	// three itself.
	genOddID = rapid.SampledFrom([]string{"", ".", "..", "a/b", "x y", "ünï", "?q=1", "%41", "service_short", "ak_"})
)

// optional draws a pointer to a value of g, or nil.
func optional[T any](rt *rapid.T, g *rapid.Generator[T], label string) *T {
	if !rapid.Bool().Draw(rt, label+"_set") {
		return nil
	}
	v := g.Draw(rt, label)
	return &v
}

// madeUpID draws an id that no account has: well-formed with prefix, or
// odd.
func madeUpID(rt *rapid.T, prefix string) string {
	if rapid.Bool().Draw(rt, "well_formed") {
		return prefix + "_" + rapid.StringOfN(rapid.RuneFrom([]rune(base62Chars)), 27, 27, -1).Draw(rt, "suffix")
	}
	return genOddID.Draw(rt, "odd_id")
}

// pickID draws an id to address with a path of kind: one of a's, any id
// the fake made (another kind's, another account's, a deleted one), or a
// made-up one.
func (mc *machine) pickID(rt *rapid.T, own []string, prefix string) string {
	switch rapid.IntRange(0, 3).Draw(rt, "id_source") {
	case 0, 1:
		if len(own) > 0 {
			return rapid.SampledFrom(own).Draw(rt, "own_id")
		}
	case 2:
		if len(mc.seen) > 0 {
			return rapid.SampledFrom(mc.seen).Draw(rt, "seen_id")
		}
	}
	return madeUpID(rt, prefix)
}

// idsOfPrefix returns the ids the fake made with prefix.
func (mc *machine) idsOfPrefix(prefixes ...string) []string {
	var out []string
	for _, id := range mc.seen {
		for _, p := range prefixes {
			if strings.HasPrefix(id, p+"_") {
				out = append(out, id)
			}
		}
	}
	return out
}

// refList draws a list of ids to reference: two times in three a valid
// one (distinct ids of own), else a mix of the account's own ids and
// others (another account's, deleted, made-up, empty), repeats allowed.
func (mc *machine) refList(rt *rapid.T, own []string, prefixes []string, label string) []string {
	if rapid.IntRange(0, 2).Draw(rt, label+"_valid") > 0 {
		return validRefs(rt, own, label)
	}
	pool := append([]string{""}, own...)
	pool = append(pool, own...) // own ids twice as likely
	pool = append(pool, mc.idsOfPrefix(prefixes...)...)
	pool = append(pool, prefixes[0]+"_"+strings.Repeat("0", 27)) // well-formed, never made
	return rapid.SliceOfN(rapid.SampledFrom(pool), 0, 3).Draw(rt, label)
}

var (
	genHeaders = mostly([]map[string]string{nil, {}, {"X-A": "1"}, {"Content-Type": "text/plain", "X-B": "2"}},
		[]map[string]string{{"bad header": "x"}, {"X-C": "a\nb"}})
	genStatus = mostly([]int{200, 201, 404, 503, 100, 599}, []int{0, 99, 600, -1})
	genBody   = rapid.SampledFrom([]string{"", "ok", "<h1>hi</h1>"})
	genLabels = mostly([]map[string]string{{"app": "x"}, {"app": "y"}, {"app": "x", "env": "a"}, {"env": "a"}},
		[]map[string]string{nil, {}, {"": "x"}, {"app": ""}})
	// genUpdateLabels has no nil map: a pointer to one is sent as null
	// (absent, to the server) but refused by the validating client.
	genUpdateLabels = mostly([]map[string]string{{"app": "x"}, {"app": "y"}, {"app": "x", "env": "a"}, {"env": "a"}},
		[]map[string]string{{}, {"": "x"}, {"app": ""}})
	genTunnelLabels = rapid.SampledFrom([]map[string]string{{}, {"app": "x"}, {"app": "x", "env": "a"}, {"app": "y", "env": "a"}, {"env": "b"}})
	role            = &events.CloudAuth{Role: &events.Role{RoleARN: "arn:aws:iam::123456789012:role/r"}}
	genTarget       = mostly([]events.Target{
		{Kinesis: &events.Kinesis{Auth: role, StreamARN: "arn:stream"}},
		{CloudWatchLogs: &events.CloudWatchLogs{Auth: role, LogGroupARN: "arn:group"}},
		{Firehose: &events.Firehose{Auth: role, DeliveryStreamARN: "arn:firehose"}},
	}, []events.Target{
		{}, // no target
		{Kinesis: &events.Kinesis{Auth: role, StreamARN: "arn:stream"}, CloudWatchLogs: &events.CloudWatchLogs{Auth: role, LogGroupARN: "arn:group"}},
		{Kinesis: &events.Kinesis{Auth: role}},                                         // no ARN
		{Kinesis: &events.Kinesis{StreamARN: "arn:stream"}},                            // no auth
		{Kinesis: &events.Kinesis{Auth: &events.CloudAuth{}, StreamARN: "arn:stream"}}, // auth without role or creds
		{Kinesis: &events.Kinesis{Auth: &events.CloudAuth{Role: role.Role, Creds: &events.Creds{AccessKeyID: "a", SecretAccessKey: "s"}}, StreamARN: "arn:stream"}}, // both auths
	})
	genFormat  = mostly([]string{"JSON", "json", "Json"}, []string{"", "xml"})
	genSources = rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) events.SubscriptionSource {
		return events.SubscriptionSource{Type: mostly([]string{"api_key_created.v0", "vault_deleted.v0",
			"http_request_complete.v0", "agent_session_start.v0", "tcp_connection_closed.v0"},
			[]string{"bogus.v0", "api_key_created", "API_KEY_CREATED.V0"}).Draw(rt, "type")}
	}), 0, 3)
)

// ---- the test ---------------------------------------------------------------------

func TestModel(t *testing.T) {
	budget := rapidBudget(t, 200, 50)
	t.Cleanup(func() { outcomes.report(t) })
	rapid.Check(t, func(rt *rapid.T) {
		mc := newMachine(rt)
		actions := map[string]func(*rapid.T){
			"":            mc.checkState,
			"clock":       mc.advanceClock,
			"createUser":  mc.createUser,
			"updateUser":  mc.updateUser,
			"createKey":   mc.createKey,
			"updateKey":   mc.updateKey,
			"useKey":      mc.useKey,
			"createHR":    mc.createHR,
			"updateHR":    mc.updateHR,
			"createFO":    mc.createFO,
			"updateFO":    mc.updateFO,
			"createTG":    mc.createTG,
			"updateTG":    mc.updateTG,
			"seedTunnel":  mc.seedTunnel,
			"createDst":   mc.createDst,
			"updateDst":   mc.updateDst,
			"createSub":   mc.createSub,
			"updateSub":   mc.updateSub,
			"get":         func(rt *rapid.T) { mc.kind(rt).get(mc, rt) },
			"delete":      func(rt *rapid.T) { mc.kind(rt).del(mc, rt) },
			"list":        func(rt *rapid.T) { mc.kind(rt).list(mc, rt) },
			"fault":       func(rt *rapid.T) { mc.kind(rt).fault(mc, rt) },
			"createMore":  mc.createAny, // more creates, so lists have pages
			"createMore2": mc.createAny,
			// rapid draws the first action in sorted order more often
			// than the others: let it be one that builds state.
			"0_createAny": mc.createAny,
			"deleteRef2":  mc.deleteReferenced,
			"deleteOwn":   mc.deleteOwn,
			// Certificate authorities, bot users, event sources,
			// Kubernetes operators and endpoints (below).
			"createCA":         mc.createCA,
			"updateCA":         mc.updateCA,
			"createBotUser":    mc.createBotUser,
			"updateBotUser":    mc.updateBotUser,
			"createSource":     mc.createSource,
			"getSource":        mc.getSource,
			"updateSource":     mc.updateSource,
			"listSources":      mc.listSources,
			"deleteSource":     mc.deleteSource,
			"createOp":         mc.createOp,
			"updateOp":         mc.updateOp,
			"seedEndpoint":     mc.seedEndpoint,
			"unseedEndpoint":   mc.unseedEndpoint,
			"boundEndpoints":   mc.boundEndpoints,
			"deleteReferenced": mc.deleteReferenced,
		}
		rt.Repeat(actions)
	})
	if budget && !t.Failed() {
		outcomes.require(t, requiredOutcomes(allKinds()))
	}
}

// requiredOutcomes are the answers the short run must have checked at
// least once, or it fails: a run that never reaches them proves nothing
// about them (a change of generators or of the seed can lose them without
// a sound). They are the conflicts (a referenced backend or destination,
// a taken name on create and on update, a taken source type), a
// successful delete of every kind, and invalid limits.
func requiredOutcomes(kinds []kindRunner) []string {
	out := []string{
		"create service_user → 409 ERR_NGROK_4112",
		"update service_user → 409 ERR_NGROK_4112",
		"create bot_user → 409 ERR_NGROK_4112",
		"delete failover_backends → 409 ERR_NGROK_6502",
		"delete http_response_backends → 409 ERR_NGROK_6502",
		"delete event_destinations → 409 ERR_NGROK_6502",
		"create event_source → 409 ERR_NGROK_5127",
		"create event_source → ok",
		"delete event_source → ok",
		"list bound_endpoints → 400 ERR_NGROK_233",
		"update kubernetes_operator → ok",
		"update certificate_authority → ok",
		"create certificate_authority → refused by client",
	}
	for _, k := range kinds {
		out = append(out, "delete "+k.kindName()+" → ok")
	}
	return out
}

func (mc *machine) kind(rt *rapid.T) kindRunner {
	return mc.kinds[rapid.IntRange(0, len(mc.kinds)-1).Draw(rt, "kind")]
}

// deleteOwn deletes one of the account's resources, of a kind it has:
// mostly a success, or a 409 when it is referenced.
func (mc *machine) deleteOwn(rt *rapid.T) {
	a := mc.acct(rt)
	var kinds []kindRunner
	for _, k := range mc.kinds {
		if len(k.ownIDs(a)) > 0 {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		rt.Skip("nothing to delete")
	}
	k := kinds[rapid.IntRange(0, len(kinds)-1).Draw(rt, "own_kind")]
	k.delID(mc, rt, a, rapid.SampledFrom(k.ownIDs(a)).Draw(rt, "own_id"))
}

// createAny creates a resource of a random kind (mostly a valid one).
func (mc *machine) createAny(rt *rapid.T) {
	switch rapid.IntRange(0, 8).Draw(rt, "create_kind") {
	case 0:
		mc.createUser(rt)
	case 1:
		mc.createHR(rt)
	case 2:
		mc.createDst(rt)
	case 3:
		mc.createCA(rt)
	case 4:
		mc.createOp(rt)
	case 5:
		mc.seedEndpoint(rt)
	case 6:
		mc.createSub(rt)
	case 7:
		mc.createFO(rt)
	default:
		mc.createTG(rt)
	}
}

// advanceClock moves the clock by a drawn duration, now and then
// backwards (ids must still sort by creation).
func (mc *machine) advanceClock(rt *rapid.T) {
	d := time.Duration(rapid.Int64Range(-3600, 3*24*3600).Draw(rt, "advance_s")) * time.Second
	mc.clk.Advance(d)
}

// checkState is the invariant: the fake's state is the model's, in every
// account, for every kind.
func (mc *machine) checkState(rt *rapid.T) {
	outcomes.step()
	for _, k := range mc.kinds {
		for _, a := range mc.accts {
			k.check(mc, rt, a)
		}
	}
	for _, a := range mc.accts {
		same(rt, "tunnels of "+a.ref.id, a.ref.tunnels.newestFirst(), orEmptySlice(fake.List[fake.Tunnel](mc.srv, a.ref.id)))
		same(rt, "endpoints of "+a.ref.id, a.ref.eps.newestFirst(), orEmptySlice(fake.List[k8sop.Endpoint](mc.srv, a.ref.id)))
	}
}

func orEmptySlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ---- service users and API keys ------------------------------------------------

// userClient is the client of service users, or of their deprecated
// bot-user alias.
type userClient interface {
	Create(ctx context.Context, r *account.ServiceUserCreate) (*account.ServiceUser, error)
	Update(ctx context.Context, r *account.ServiceUserUpdate) (*account.ServiceUser, error)
}

func serviceUsersOf(c *acctapi.Client) userClient { return account.NewServiceUsers(c) }
func botUsersOf(c *acctapi.Client) userClient     { return account.NewBotUsers(c) }

func (mc *machine) createUser(rt *rapid.T)    { mc.createUserAt(rt, "service_user", serviceUsersOf) }
func (mc *machine) updateUser(rt *rapid.T)    { mc.updateUserAt(rt, "service_user", serviceUsersOf) }
func (mc *machine) createBotUser(rt *rapid.T) { mc.createUserAt(rt, "bot_user", botUsersOf) }
func (mc *machine) updateBotUser(rt *rapid.T) { mc.updateUserAt(rt, "bot_user", botUsersOf) }

// asBotUser is a service user as the bot-user paths show it: its uri under
// /bot_users.
func (m *refModel) asBotUser(u account.ServiceUser) account.ServiceUser {
	u.URI = m.uri(resources.ServiceUsers.Alias, u.ID)
	return u
}

// createUserAt creates a service user through the path of kind
// ("service_user", or the alias "bot_user").
func (mc *machine) createUserAt(rt *rapid.T, kind string, users func(*acctapi.Client) userClient) {
	a := mc.acct(rt)
	in := account.ServiceUserCreate{Name: mc.drawName(rt, a), Active: optional(rt, rapid.Bool(), "active")}
	want, f := mc.m.createUser(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	if got, ok := expectOK(rt, "create "+kind, f, v, want)(users(c).Create(mc.ctx, &in)); ok {
		want = mc.m.insertUser(a.ref, want, mc.noteID(rt, "service", got.ID))
		if kind == "bot_user" {
			want = mc.m.asBotUser(want)
		}
		same(rt, "created "+strings.ReplaceAll(kind, "_", " "), want, *got)
	}
}

// updateUserAt updates a service user through the path of kind.
func (mc *machine) updateUserAt(rt *rapid.T, kind string, users func(*acctapi.Client) userClient) {
	a := mc.acct(rt)
	in := account.ServiceUserUpdate{ID: mc.pickID(rt, a.ref.users.ids(), "service"),
		Active: optional(rt, rapid.Bool(), "active")}
	if rapid.Bool().Draw(rt, "name_set") {
		name := mc.drawName(rt, a)
		in.Name = &name
	}
	want, f := mc.m.updateUser(a.ref, in)
	if kind == "bot_user" {
		want = mc.m.asBotUser(want)
	}
	c, v := mc.client(rt, a)
	expectSame(rt, "update "+kind+" "+in.ID, "updated "+strings.ReplaceAll(kind, "_", " "), want, f, v)(users(c).Update(mc.ctx, &in))
}

func (mc *machine) createKey(rt *rapid.T) {
	a := mc.acct(rt)
	owners := append([]string{"", a.ref.user, "usr_zz"}, mc.idsOfPrefix("service")...)
	in := account.APIKeyCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"),
		OwnerID: rapid.SampledFrom(owners).Draw(rt, "owner")}
	want, f := mc.m.createKey(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	got, err := account.NewAPIKeys(c).Create(mc.ctx, &in)
	if expect(rt, "create api_key", err, f, v) {
		if got.Token == nil || *got.Token == "" {
			rt.Fatalf("created API key has no token: %+v", got)
		}
		want = mc.m.insertKey(a.ref, want, mc.noteID(rt, "ak", got.ID), *got.Token)
		same(rt, "created API key", want, *got)
	}
}

func (mc *machine) updateKey(rt *rapid.T) {
	a := mc.acct(rt)
	in := account.APIKeyUpdate{ID: mc.pickID(rt, a.ref.keys.ids(), "ak"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata")}
	want, f := mc.m.updateKey(a.ref, in)
	c, v := mc.client(rt, a)
	expectSame(rt, "update api_key "+in.ID, "updated API key", want, f, v)(account.NewAPIKeys(c).Update(mc.ctx, &in))
}

// useKey makes a request with the token of a key the test made (perhaps
// deleted since, or owned by a service user since deactivated or deleted)
// and checks who it acts as.
func (mc *machine) useKey(rt *rapid.T) {
	var tokens []string
	for _, a := range mc.accts {
		for id, tok := range a.ref.tokens {
			if id != a.ref.mainKey {
				tokens = append(tokens, tok)
			}
		}
	}
	if len(tokens) == 0 {
		rt.Skip("no key made yet")
	}
	slices.Sort(tokens)
	tok := rapid.SampledFrom(tokens).Draw(rt, "token")
	acct, f := mc.m.authenticate(tok)
	got, err := account.NewServiceUsers(mc.newClient(rt, tok)).Page(mc.ctx, nil)
	if expect(rt, "auth made_key", err, f, false) {
		same(rt, "service users seen with a made key", acct.users.newestFirst(), got.ServiceUsers)
	}
}

// ---- backends ---------------------------------------------------------------------

func (mc *machine) createHR(rt *rapid.T) {
	a := mc.acct(rt)
	in := backends.HTTPResponseCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"),
		Body: genBody.Draw(rt, "body"), Headers: genHeaders.Draw(rt, "headers"), StatusCode: genStatus.Draw(rt, "status")}
	want, f := mc.m.createHR(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	if got, ok := expectOK(rt, "create http_response", f, v, want)(backends.NewHTTPResponses(c).Create(mc.ctx, &in)); ok {
		same(rt, "created HTTP response backend", mc.m.insertHR(a.ref, want, mc.noteID(rt, "bkdhr", got.ID)), *got)
	}
}

func (mc *machine) updateHR(rt *rapid.T) {
	a := mc.acct(rt)
	in := backends.HTTPResponseUpdate{ID: mc.pickID(rt, a.ref.hrs.ids(), "bkdhr"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata"),
		Body: optional(rt, genBody, "body"), Headers: optional(rt, genHeaders, "headers"), StatusCode: optional(rt, genStatus, "status")}
	want, f := mc.m.updateHR(a.ref, in)
	c, v := mc.client(rt, a)
	expectSame(rt, "update http_response "+in.ID, "updated HTTP response backend", want, f, v)(backends.NewHTTPResponses(c).Update(mc.ctx, &in))
}

var backendPrefixes = []string{"bkdhr", "bkdfo", "bkdtg"}

func (a *mAcct) backendIDs() []string {
	return append(append(a.ref.hrs.ids(), a.ref.fos.ids()...), a.ref.tgs.ids()...)
}

func (mc *machine) createFO(rt *rapid.T) {
	a := mc.acct(rt)
	in := backends.FailoverCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"),
		Backends: mc.refList(rt, a.backendIDs(), backendPrefixes, "backends")}
	want, f := mc.m.createFO(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	if got, ok := expectOK(rt, "create failover", f, v, want)(backends.NewFailovers(c).Create(mc.ctx, &in)); ok {
		same(rt, "created failover backend", mc.m.insertFO(a.ref, want, mc.noteID(rt, "bkdfo", got.ID)), *got)
	}
}

func (mc *machine) updateFO(rt *rapid.T) {
	a := mc.acct(rt)
	in := backends.FailoverUpdate{ID: mc.pickID(rt, a.ref.fos.ids(), "bkdfo"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata")}
	if rapid.Bool().Draw(rt, "backends_set") {
		list := mc.refList(rt, slices.DeleteFunc(a.backendIDs(), func(id string) bool { return id == in.ID }), backendPrefixes, "backends")
		in.Backends = &list
	}
	want, f := mc.m.updateFO(a.ref, in)
	c, v := mc.client(rt, a)
	expectSame(rt, "update failover "+in.ID, "updated failover backend", want, f, v)(backends.NewFailovers(c).Update(mc.ctx, &in))
}

func (mc *machine) createTG(rt *rapid.T) {
	a := mc.acct(rt)
	in := backends.TunnelGroupCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"),
		Labels: genLabels.Draw(rt, "labels")}
	want, f := mc.m.createTG(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	if got, ok := expectOK(rt, "create tunnel_group", f, v, want)(backends.NewTunnelGroups(c).Create(mc.ctx, &in)); ok {
		same(rt, "created tunnel group backend", mc.m.insertTG(a.ref, want, mc.noteID(rt, "bkdtg", got.ID)), *got)
	}
}

func (mc *machine) updateTG(rt *rapid.T) {
	a := mc.acct(rt)
	in := backends.TunnelGroupUpdate{ID: mc.pickID(rt, a.ref.tgs.ids(), "bkdtg"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata"),
		Labels: optional(rt, genUpdateLabels, "labels")}
	want, f := mc.m.updateTG(a.ref, in)
	c, v := mc.client(rt, a)
	expectSame(rt, "update tunnel_group "+in.ID, "updated tunnel group backend", want, f, v)(backends.NewTunnelGroups(c).Update(mc.ctx, &in))
}

// seedTunnel seeds a tunnel (tunnels have no API path).
func (mc *machine) seedTunnel(rt *rapid.T) {
	a := mc.acct(rt)
	labels := genTunnelLabels.Draw(rt, "labels")
	got, err := fake.Seed[fake.Tunnel](mc.srv, a.ref.id, &fake.Tunnel{Labels: labels})
	if err != nil {
		rt.Fatalf("seed tunnel: %v", err)
	}
	want := mc.m.seedTunnel(a.ref, labels, mc.noteID(rt, "tn", got.ID), mc.now())
	same(rt, "seeded tunnel", want, got)
}

// ---- events -----------------------------------------------------------------------

func (mc *machine) createDst(rt *rapid.T) {
	a := mc.acct(rt)
	in := events.DestinationCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"),
		Format: genFormat.Draw(rt, "format"), Target: genTarget.Draw(rt, "target")}
	want, f := mc.m.createDst(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	if got, ok := expectOK(rt, "create event_destination", f, v, want)(events.NewDestinations(c).Create(mc.ctx, &in)); ok {
		same(rt, "created event destination", mc.m.insertDst(a.ref, want, mc.noteID(rt, "ed", got.ID)), *got)
	}
}

func (mc *machine) updateDst(rt *rapid.T) {
	a := mc.acct(rt)
	in := events.DestinationUpdate{ID: mc.pickID(rt, a.ref.dsts.ids(), "ed"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata"),
		Format: optional(rt, genFormat, "format"), Target: optional(rt, genTarget, "target")}
	want, f := mc.m.updateDst(a.ref, in)
	c, v := mc.client(rt, a)
	expectSame(rt, "update event_destination "+in.ID, "updated event destination", want, f, v)(events.NewDestinations(c).Update(mc.ctx, &in))
}

func (mc *machine) createSub(rt *rapid.T) {
	a := mc.acct(rt)
	in := events.SubscriptionCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"),
		Sources: genSources.Draw(rt, "sources"), DestinationIDs: mc.refList(rt, a.ref.dsts.ids(), []string{"ed"}, "destination_ids")}
	want, sources, f := mc.m.createSub(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	if got, ok := expectOK(rt, "create event_subscription", f, v, want)(events.NewSubscriptions(c).Create(mc.ctx, &in)); ok {
		same(rt, "created event subscription", mc.m.insertSub(a.ref, want, sources, mc.noteID(rt, "esb", got.ID)), *got)
	}
}

func (mc *machine) updateSub(rt *rapid.T) {
	a := mc.acct(rt)
	in := events.SubscriptionUpdate{ID: mc.pickID(rt, a.ref.subs.ids(), "esb"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata"),
		Sources: optional(rt, genSources, "sources")}
	if rapid.Bool().Draw(rt, "destination_ids_set") {
		list := mc.refList(rt, a.ref.dsts.ids(), []string{"ed"}, "destination_ids")
		in.DestinationIDs = &list
	}
	want, f := mc.m.updateSub(a.ref, in)
	c, v := mc.client(rt, a)
	expectSame(rt, "update event_subscription "+in.ID, "updated event subscription", want, f, v)(events.NewSubscriptions(c).Update(mc.ctx, &in))
}

// ---- operations every kind has: get, delete, list, faults, state --------------------

// kindRunner runs the operations every kind shares.
type kindRunner interface {
	get(mc *machine, rt *rapid.T)
	del(mc *machine, rt *rapid.T)
	list(mc *machine, rt *rapid.T)
	fault(mc *machine, rt *rapid.T)
	check(mc *machine, rt *rapid.T, a *mAcct)
	// probe addresses one of victim's resources through from's client:
	// get, update and delete must all be 404 (TestIsolationProperty).
	probe(mc *machine, rt *rapid.T, from, victim *mAcct)
	// listAll lists every item through a's client, following pages.
	listAll(mc *machine, rt *rapid.T, a *mAcct) []any
	// state is a's stored resources of the kind.
	state(mc *machine, a *mAcct) any
	// delID deletes id through a's client and checks the answer.
	delID(mc *machine, rt *rapid.T, a *mAcct, id string)
	ownIDs(a *mAcct) []string
	kindName() string
	idPrefix() string
	// path is the collection path the kind is reached by.
	path() string
	// isAlias reports a kind that serves another kind's records (bot
	// users): its state is the other kind's.
	isAlias() bool
}

// pageOf is one page of a list response, as the domain packages' list
// types expose it.
type pageOf[T any] interface {
	PageItems() []T
	NextPage() string
}

// getPage fetches the page at uri (a next_page_uri) into a new L.
func getPage[L any](ctx context.Context, c *acctapi.Client, uri string) (*L, error) {
	out := new(L)
	if err := c.Do(ctx, http.MethodGet, uri, nil, nil, out); err != nil {
		return nil, err
	}
	return out, nil
}

// resKind describes one kind to the shared operations. T is the resource,
// L its list page.
type resKind[T any, L any, PL interface {
	*L
	pageOf[T]
}] struct {
	name  string         // in messages and outcomes
	d     resources.Desc // the resource's description: prefix, path, filterable fields
	alias bool           // the records of d under its alias path
	// shown is what the kind's path shows of a stored value (an alias's
	// uri is under the alias path); nil: the value as stored.
	shown   func(m *refModel, v T) T
	table   func(a *refAccount) *refTable[T]
	fields  func(v T) map[string]string
	created func(v T) time.Time
	// times are the filterable timestamp fields besides created_at.
	times func(v T) map[string]time.Time
	get_  func(ctx context.Context, c *acctapi.Client, id string) (*T, error)
	del_  func(ctx context.Context, c *acctapi.Client, id string) error
	page  func(ctx context.Context, c *acctapi.Client, limit int, beforeID, filter string) (*L, error)
	// modelDel is the model's delete (nil: deleteRef, refusing while
	// referenced).
	modelDel func(m *refModel, a *refAccount, id string) *refFail
	// createValid sends a valid create request, for faults.
	createValid func(ctx context.Context, c *acctapi.Client) error
	// touch sends a valid update of id (changing its description, or a
	// service user's name).
	touch func(ctx context.Context, c *acctapi.Client, id string) error
}

func annotatedFields(id, desc, meta string) map[string]string {
	return map[string]string{"id": id, "description": desc, "metadata": meta}
}

// readClient is what the kinds read through: every resource client has it.
type readClient[T, L, O any] interface {
	Get(ctx context.Context, id string) (*T, error)
	Delete(ctx context.Context, id string) error
	Page(ctx context.Context, opts O) (*L, error)
}

// clientKind sets k's get_, del_ and page to its client's, which newS
// makes; opts makes its list options.
func clientKind[S readClient[T, L, O], T, L, O any, PL interface {
	*L
	pageOf[T]
}](k *resKind[T, L, PL], newS func(*acctapi.Client) S, opts func(limit int, before, filter string) O) *resKind[T, L, PL] {
	k.get_ = func(ctx context.Context, c *acctapi.Client, id string) (*T, error) { return newS(c).Get(ctx, id) }
	k.del_ = func(ctx context.Context, c *acctapi.Client, id string) error { return newS(c).Delete(ctx, id) }
	k.page = func(ctx context.Context, c *acctapi.Client, limit int, before, filter string) (*L, error) {
		return newS(c).Page(ctx, opts(limit, before, filter))
	}
	return k
}

// filterOpts and listOpts are the list options of lists with and without
// a filter.
func filterOpts(limit int, before, filter string) *acctapi.FilterOptions {
	return &acctapi.FilterOptions{Limit: limit, BeforeID: before, Filter: filter}
}

func listOpts(limit int, before, _ string) *acctapi.ListOptions {
	return &acctapi.ListOptions{Limit: limit, BeforeID: before}
}

func allKinds() []kindRunner {
	return []kindRunner{
		clientKind(&resKind[account.ServiceUser, account.ServiceUserList, *account.ServiceUserList]{
			name: "service_users", d: resources.ServiceUsers,
			table:    func(a *refAccount) *refTable[account.ServiceUser] { return &a.users },
			fields:   func(v account.ServiceUser) map[string]string { return map[string]string{"id": v.ID} },
			created:  func(v account.ServiceUser) time.Time { return v.CreatedAt },
			modelDel: (*refModel).deleteUser,
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := account.NewServiceUsers(c).Update(ctx, &account.ServiceUserUpdate{ID: id, Name: ptr("stolen"), Active: ptr(false)})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := account.NewServiceUsers(c).Create(ctx, &account.ServiceUserCreate{Name: "faulty"})
				return err
			},
		}, account.NewServiceUsers, filterOpts),
		clientKind(&resKind[account.APIKey, account.APIKeyList, *account.APIKeyList]{
			name: "api_keys", d: resources.APIKeys,
			table: func(a *refAccount) *refTable[account.APIKey] { return &a.keys },
			fields: func(v account.APIKey) map[string]string {
				f := annotatedFields(v.ID, v.Description, v.Metadata)
				f["owner_id"] = v.OwnerID
				return f
			},
			created:  func(v account.APIKey) time.Time { return v.CreatedAt },
			modelDel: (*refModel).deleteKey,
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := account.NewAPIKeys(c).Update(ctx, &account.APIKeyUpdate{ID: id, Description: ptr("stolen")})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := account.NewAPIKeys(c).Create(ctx, &account.APIKeyCreate{})
				return err
			},
		}, account.NewAPIKeys, filterOpts),
		clientKind(&resKind[backends.HTTPResponse, backends.HTTPResponseList, *backends.HTTPResponseList]{
			name: "http_response_backends", d: resources.HTTPResponses,
			table:   func(a *refAccount) *refTable[backends.HTTPResponse] { return &a.hrs },
			created: func(v backends.HTTPResponse) time.Time { return v.CreatedAt },
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := backends.NewHTTPResponses(c).Update(ctx, &backends.HTTPResponseUpdate{ID: id, StatusCode: ptr(500)})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := backends.NewHTTPResponses(c).Create(ctx, &backends.HTTPResponseCreate{StatusCode: 200})
				return err
			},
		}, backends.NewHTTPResponses, listOpts),
		clientKind(&resKind[backends.Failover, backends.FailoverList, *backends.FailoverList]{
			name: "failover_backends", d: resources.Failovers,
			table:   func(a *refAccount) *refTable[backends.Failover] { return &a.fos },
			created: func(v backends.Failover) time.Time { return v.CreatedAt },
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := backends.NewFailovers(c).Update(ctx, &backends.FailoverUpdate{ID: id, Backends: &[]string{}})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := backends.NewFailovers(c).Create(ctx, &backends.FailoverCreate{})
				return err
			},
		}, backends.NewFailovers, listOpts),
		clientKind(&resKind[backends.TunnelGroup, backends.TunnelGroupList, *backends.TunnelGroupList]{
			name: "tunnel_group_backends", d: resources.TunnelGroups,
			table: func(a *refAccount) *refTable[backends.TunnelGroup] { return &a.tgs },
			fields: func(v backends.TunnelGroup) map[string]string {
				return annotatedFields(v.ID, v.Description, v.Metadata)
			},
			created: func(v backends.TunnelGroup) time.Time { return v.CreatedAt },
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := backends.NewTunnelGroups(c).Update(ctx, &backends.TunnelGroupUpdate{ID: id, Labels: &map[string]string{"stolen": "yes"}})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := backends.NewTunnelGroups(c).Create(ctx, &backends.TunnelGroupCreate{Labels: map[string]string{"a": "b"}})
				return err
			},
		}, backends.NewTunnelGroups, filterOpts),
		clientKind(&resKind[events.Destination, events.DestinationList, *events.DestinationList]{
			name: "event_destinations", d: resources.EventDestinations,
			table:   func(a *refAccount) *refTable[events.Destination] { return &a.dsts },
			fields:  func(v events.Destination) map[string]string { return annotatedFields(v.ID, v.Description, v.Metadata) },
			created: func(v events.Destination) time.Time { return v.CreatedAt },
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := events.NewDestinations(c).Update(ctx, &events.DestinationUpdate{ID: id, Description: ptr("stolen")})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := events.NewDestinations(c).Create(ctx, &events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Kinesis: &events.Kinesis{Auth: role, StreamARN: "arn"}}})
				return err
			},
		}, events.NewDestinations, filterOpts),
		clientKind(&resKind[events.Subscription, events.SubscriptionList, *events.SubscriptionList]{
			name: "event_subscriptions", d: resources.EventSubscriptions,
			table:   func(a *refAccount) *refTable[events.Subscription] { return &a.subs },
			fields:  func(v events.Subscription) map[string]string { return annotatedFields(v.ID, v.Description, v.Metadata) },
			created: func(v events.Subscription) time.Time { return v.CreatedAt },
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := events.NewSubscriptions(c).Update(ctx, &events.SubscriptionUpdate{ID: id, DestinationIDs: &[]string{}})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := events.NewSubscriptions(c).Create(ctx, &events.SubscriptionCreate{})
				return err
			},
		}, events.NewSubscriptions, filterOpts),
		clientKind(&resKind[account.CertificateAuthority, account.CertificateAuthorityList, *account.CertificateAuthorityList]{
			name: "certificate_authorities", d: resources.CertificateAuthorities,
			table: func(a *refAccount) *refTable[account.CertificateAuthority] { return &a.cas },
			fields: func(v account.CertificateAuthority) map[string]string {
				f := annotatedFields(v.ID, v.Description, v.Metadata)
				f["subject_common_name"] = v.SubjectCommonName
				return f
			},
			created: func(v account.CertificateAuthority) time.Time { return v.CreatedAt },
			times: func(v account.CertificateAuthority) map[string]time.Time {
				return map[string]time.Time{"not_before": v.NotBefore, "not_after": v.NotAfter}
			},
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := account.NewCertificateAuthorities(c).Update(ctx, &account.CertificateAuthorityUpdate{ID: id, Description: ptr("stolen")})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := account.NewCertificateAuthorities(c).Create(ctx, &account.CertificateAuthorityCreate{CAPEM: modelCAs()[0].pem})
				return err
			},
		}, account.NewCertificateAuthorities, filterOpts),
		clientKind(&resKind[k8sop.Operator, k8sop.OperatorList, *k8sop.OperatorList]{
			name: "kubernetes_operators", d: resources.Operators,
			table:   func(a *refAccount) *refTable[k8sop.Operator] { return &a.ops },
			created: func(v k8sop.Operator) time.Time { return v.CreatedAt },
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := k8sop.NewOperators(c).Update(ctx, &k8sop.OperatorUpdate{ID: id, Description: ptr("stolen"), Region: ptr("stolen")})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := k8sop.NewOperators(c).Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"ingress"}})
				return err
			},
		}, k8sop.NewOperators, listOpts),
		// The deprecated alias: the service users' records under
		// /bot_users, whose list takes no filter.
		clientKind(&resKind[account.BotUser, account.BotUserList, *account.BotUserList]{
			name: "bot_users", d: resources.ServiceUsers, alias: true, shown: (*refModel).asBotUser,
			table:    func(a *refAccount) *refTable[account.ServiceUser] { return &a.users },
			created:  func(v account.ServiceUser) time.Time { return v.CreatedAt },
			modelDel: (*refModel).deleteUser,
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := account.NewBotUsers(c).Update(ctx, &account.BotUserUpdate{ID: id, Name: ptr("stolen-bot"), Active: ptr(false)})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := account.NewBotUsers(c).Create(ctx, &account.BotUserCreate{Name: "faulty-bot"})
				return err
			},
		}, account.NewBotUsers, listOpts),
	}
}

func (k *resKind[T, L, PL]) get(mc *machine, rt *rapid.T) {
	a := mc.acct(rt)
	id := mc.pickID(rt, k.table(a.ref).ids(), k.d.Prefix)
	want, ok := k.table(a.ref).get(id)
	f := localPathFail(k.d.Prefix, id)
	if f == nil && !ok {
		f = failNotFound
	}
	got, err := k.get_(mc.ctx, a.checked, id)
	if expect(rt, "get "+k.name+" "+id, err, f, true) {
		same(rt, "got "+k.name, k.show(mc.m, want), *got)
	}
}

func (k *resKind[T, L, PL]) del(mc *machine, rt *rapid.T) {
	a := mc.acct(rt)
	id := mc.pickID(rt, k.ownIDs(a), k.d.Prefix)
	if id == a.ref.mainKey {
		rt.Skip("the account's own key")
	}
	k.delID(mc, rt, a, id)
}

func (k *resKind[T, L, PL]) delID(mc *machine, rt *rapid.T, a *mAcct, id string) {
	var f *refFail
	if k.modelDel != nil {
		f = k.modelDel(mc.m, a.ref, id)
	} else {
		f = deleteRef(a.ref, k.table(a.ref), id)
	}
	err := k.del_(mc.ctx, a.checked, id)
	expect(rt, "delete "+k.name+" "+id, err, f, true)
}

// drawFilter draws one of the simple filters over fields.
func (mc *machine) drawFilter(rt *rapid.T, a *mAcct, fields []string) refFilter {
	f := refFilter{field: rapid.SampledFrom(fields).Draw(rt, "filter_field"), not: rapid.Bool().Draw(rt, "filter_not")}
	switch f.field {
	case "id", "owner_id":
		f.op = rapid.SampledFrom([]string{"==", "!="}).Draw(rt, "filter_op")
		pool := append([]string{"x", a.ref.user}, mc.seen...)
		f.lit = rapid.SampledFrom(pool).Draw(rt, "filter_id")
	case "created_at":
		f.op = rapid.SampledFrom([]string{">=", "<", "recent"}).Draw(rt, "filter_op")
		f.at = stamp(mc.now()).Add(time.Duration(rapid.Int64Range(-5*24*3600, 3600).Draw(rt, "filter_at_s")) * time.Second)
	case "not_before", "not_after":
		// Near a bound of one of the test's CAs, or now.
		f.op = rapid.SampledFrom([]string{">=", "<"}).Draw(rt, "filter_op")
		f.at = rapid.SampledFrom(append(caBounds(), stamp(mc.now()))).Draw(rt, "filter_at")
		f.at = f.at.Add(time.Duration(rapid.IntRange(-1, 1).Draw(rt, "filter_at_off")) * time.Second)
	default:
		f.op = rapid.SampledFrom([]string{"==", "!=", "startsWith", "endsWith", "contains"}).Draw(rt, "filter_op")
		f.lit = genLit.Draw(rt, "filter_lit")
	}
	return f
}

// badFilters are filters no list accepts.
var badFilters = []string{`obj.nope == "x"`, `obj.id.startsWith("x")`, `obj.description ==`, `obj.description`, `obj["id"] == "x"`}

func (k *resKind[T, L, PL]) list(mc *machine, rt *rapid.T) {
	a := mc.acct(rt)
	limit, ok := mc.drawLimit(rt, a, k.path(), k.name, nil)
	if !ok {
		return
	}
	before := ""
	if rapid.Bool().Draw(rt, "before_set") {
		before = mc.pickID(rt, k.table(a.ref).ids(), k.d.Prefix)
	}
	all := k.table(a.ref).newestFirst()
	filter := ""
	if k.filters() != nil {
		switch rapid.IntRange(0, 5).Draw(rt, "filter_kind") {
		case 0, 1:
			f := mc.drawFilter(rt, a, k.filters())
			filter = f.cel()
			var kept []T
			for _, v := range all {
				times := map[string]time.Time{"created_at": k.created(v)}
				if k.times != nil {
					maps.Copy(times, k.times(v))
				}
				if f.match(k.fields(v), times, mc.now()) {
					kept = append(kept, v)
				}
			}
			all = kept
		case 2:
			filter = rapid.SampledFrom(badFilters).Draw(rt, "bad_filter")
			_, err := k.page(mc.ctx, a.checked, limit, before, filter)
			f := failBad(acctapi.CodeBadFilter)
			if foreignID(k.d.Prefix, before) {
				f = failLocal // the client refuses another collection's cursor first
			}
			expect(rt, "list "+k.name+" filter="+filter, err, f, true)
			return
		}
	}
	what := fmt.Sprintf("list %s limit=%d before_id=%q filter=%q", k.name, limit, before, filter)
	if foreignID(k.d.Prefix, before) {
		_, err := k.page(mc.ctx, a.checked, limit, before, filter)
		expect(rt, what, err, failLocal, true)
		return
	}
	pageL, err := k.page(mc.ctx, a.checked, limit, before, filter)
	outcomes.note("list "+k.name, nil, true)
	for i, want := range pages(all, k.table(a.ref).id, before, pageSize(limit)) {
		if i > 0 {
			pageL, err = getPage[L](mc.ctx, a.checked, PL(pageL).NextPage())
		}
		if err != nil {
			rt.Fatalf("%s: page %d: %v", what, i, err)
		}
		p := PL(pageL)
		shown := make([]T, len(want.items))
		for j, v := range want.items {
			shown[j] = k.show(mc.m, v)
		}
		same(rt, fmt.Sprintf("%s: page %d", what, i), shown, orEmptySlice(p.PageItems()))
		last := ""
		if want.more {
			last = k.table(a.ref).id(want.items[len(want.items)-1])
		}
		mc.checkNext(rt, what, i, p.NextPage(), want.more, k.path(), last, limit, filter)
	}
}

// fault injects one fault on a request of kind and checks what the client
// sees; the invariant then checks that nothing changed.
func (k *resKind[T, L, PL]) fault(mc *machine, rt *rapid.T) {
	a := mc.acct(rt)
	method := rapid.SampledFrom([]string{http.MethodGet, http.MethodGet + " list", http.MethodPost, http.MethodPatch, http.MethodDelete}).Draw(rt, "fault_method")
	mode := rapid.SampledFrom([]string{"503", "429", "drop"}).Draw(rt, "fault_mode")
	httpMethod, _, _ := strings.Cut(method, " ")
	retry := time.Duration(rapid.IntRange(1, 120).Draw(rt, "retry_after_s")) * time.Second
	switch mode {
	case "503":
		mc.srv.FailNext(httpMethod, k.path()+"/**", 1, http.StatusServiceUnavailable)
	case "429":
		mc.srv.RateLimitNext(httpMethod, k.path()+"/**", 1, retry)
	default:
		mc.srv.DropNext(httpMethod, k.path()+"/**", 1)
	}
	defer mc.srv.ClearFaults()
	// The request the fault answers: any id will do, as the server never
	// looks (an id the client refuses itself would never reach it).
	id := madeUpID(rt, k.d.Prefix)
	if ids := k.table(a.ref).ids(); len(ids) > 0 && rapid.Bool().Draw(rt, "fault_own_id") {
		id = rapid.SampledFrom(ids).Draw(rt, "fault_id")
	}
	if localPathFail(k.d.Prefix, id) != nil {
		id = k.d.Prefix + "_x"
	}
	var err error
	switch method {
	case http.MethodGet:
		_, err = k.get_(mc.ctx, a.checked, id)
	case http.MethodGet + " list":
		_, err = k.page(mc.ctx, a.checked, 0, "", "")
	case http.MethodPost:
		err = k.createValid(mc.ctx, a.checked)
	case http.MethodPatch:
		err = k.touch(mc.ctx, a.checked, id)
	case http.MethodDelete:
		err = k.del_(mc.ctx, a.checked, id)
	}
	what := fmt.Sprintf("%s %s with an injected %s", method, k.path(), mode)
	var ae *acctapi.Error
	switch mode {
	case "503":
		expect(rt, what, err, &refFail{status: http.StatusServiceUnavailable, code: acctapi.CodeUnavailable}, true)
	case "429":
		expect(rt, what, err, &refFail{status: http.StatusTooManyRequests, code: acctapi.CodeRateLimited}, true)
		if errors.As(err, &ae); ae.RetryAfter != retry {
			rt.Fatalf("%s: RetryAfter %v, want %v", what, ae.RetryAfter, retry)
		}
	default:
		if err == nil || errors.As(err, &ae) {
			rt.Fatalf("%s: got %v, want a transport error", what, err)
		}
	}
}

// ownIDs are the ids of a's resources of the kind that a test may
// delete: all but the key the account's clients use.
func (k *resKind[T, L, PL]) ownIDs(a *mAcct) []string {
	var own []string
	for _, id := range k.table(a.ref).ids() {
		if id != a.ref.mainKey {
			own = append(own, id)
		}
	}
	return own
}

func (k *resKind[T, L, PL]) kindName() string { return k.name }

// path is the collection path the kind is reached by.
func (k *resKind[T, L, PL]) path() string {
	if k.alias {
		return k.d.AliasPath()
	}
	return k.d.Path()
}

// filters are the kind's filterable fields; nil when its list takes no
// filter (an alias never does).
func (k *resKind[T, L, PL]) filters() []string {
	if k.alias {
		return nil
	}
	return k.d.Filter
}
func (k *resKind[T, L, PL]) idPrefix() string { return k.d.Prefix }

// show is what the kind's path shows of a stored value v.
func (k *resKind[T, L, PL]) show(m *refModel, v T) T {
	if k.shown == nil {
		return v
	}
	return k.shown(m, v)
}
func (k *resKind[T, L, PL]) isAlias() bool { return k.alias }

func (k *resKind[T, L, PL]) check(mc *machine, rt *rapid.T, a *mAcct) {
	if k.alias {
		return // the other kind's check covers it
	}
	same(rt, k.name+" of "+a.ref.id, k.table(a.ref).newestFirst(), orEmptySlice(fake.List[T](mc.srv, a.ref.id)))
}

func (k *resKind[T, L, PL]) probe(mc *machine, rt *rapid.T, from, victim *mAcct) {
	ids := k.table(victim.ref).ids()
	if len(ids) == 0 {
		rt.Skip("victim has none")
	}
	id := rapid.SampledFrom(ids).Draw(rt, "victim_id")
	_, err := k.get_(mc.ctx, from.raw, id)
	expect(rt, "cross-account-get "+k.name, err, failNotFound, false)
	err = k.touch(mc.ctx, from.raw, id)
	expect(rt, "cross-account-update "+k.name, err, failNotFound, false)
	err = k.del_(mc.ctx, from.raw, id)
	expect(rt, "cross-account-delete "+k.name, err, failNotFound, false)
}

func (k *resKind[T, L, PL]) listAll(mc *machine, rt *rapid.T, a *mAcct) []any {
	var out []any
	limit := rapid.IntRange(1, 5).Draw(rt, "limit")
	pageL, err := k.page(mc.ctx, a.raw, limit, "", "")
	for {
		if err != nil {
			rt.Fatalf("list %s of %s: %v", k.name, a.ref.id, err)
		}
		for _, v := range PL(pageL).PageItems() {
			out = append(out, v)
		}
		next := PL(pageL).NextPage()
		if next == "" {
			return out
		}
		pageL, err = getPage[L](mc.ctx, a.raw, next)
	}
}

func (k *resKind[T, L, PL]) state(mc *machine, a *mAcct) any {
	if k.alias {
		return nil
	}
	return fake.List[T](mc.srv, a.ref.id)
}

// ---- more steps of TestModel -------------------------------------------------------
//
// Certificate authorities, the deprecated bot-user paths, event sources,
// Kubernetes operators with their seeded endpoints and bound endpoints,
// deletes of referenced resources and invalid list limits.

// ---- certificate authority PEMs ------------------------------------------------------

// modelCAs are the ca_pem texts the test sends, built once: valid CA
// certificates of various names, validity periods (around t0, so that
// filters on not_before and not_after split them) and key usages, and
// texts that are not exactly one CA certificate.
var modelCAs = sync.OnceValue(func() []refCAPEM {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	day := 24 * time.Hour
	type spec struct {
		name, cn string
		nb, na   time.Time
		ca       bool
		ku       x509.KeyUsage
		eku      []x509.ExtKeyUsage
		unknown  []asn1.ObjectIdentifier
		kuNames  []string
		ekuNames []string
	}
	specs := []spec{
		{name: "alpha", cn: "alpha-ca", nb: t0.Add(-30 * day), na: t0.Add(365 * day), ca: true,
			ku: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, kuNames: []string{"cert_sign", "crl_sign"}},
		{name: "beta", cn: "beta", nb: t0.Add(100 * day), na: t0.Add(200 * day), ca: true,
			ku: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, kuNames: []string{"digital_signature", "cert_sign"},
			eku: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, ekuNames: []string{"server_auth", "client_auth"}},
		{name: "no-cn", cn: "", nb: t0.Add(300 * day), na: t0.Add(1000 * day), ca: true,
			ku: x509.KeyUsageCertSign, kuNames: []string{"cert_sign"}},
		{name: "unicode", cn: "ünï root", nb: t0.Add(-1000 * day), na: t0.Add(50 * day), ca: true,
			eku:     []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
			unknown: []asn1.ObjectIdentifier{{1, 2, 3, 4}}, ekuNames: []string{"any", "1.2.3.4"}},
		{name: "prod", cn: "prod-1 meta", nb: t0.Add(10 * day), na: t0.Add(11 * day), ca: true,
			ku: x509.KeyUsageCertSign | x509.KeyUsageKeyEncipherment, kuNames: []string{"key_encipherment", "cert_sign"}},
		{name: "leaf", cn: "leaf", nb: t0, na: t0.Add(day)}, // not a CA
	}
	var out []refCAPEM
	pems := map[string]string{}
	for i, s := range specs {
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 1)), Subject: pkix.Name{CommonName: s.cn},
			NotBefore: s.nb, NotAfter: s.na, KeyUsage: s.ku, ExtKeyUsage: s.eku, UnknownExtKeyUsage: s.unknown,
			BasicConstraintsValid: true, IsCA: s.ca,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			panic(err)
		}
		p := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
		pems[s.name] = p
		var info *account.CAInfo
		if s.ca {
			info = &account.CAInfo{SubjectCommonName: s.cn, NotBefore: s.nb, NotAfter: s.na,
				KeyUsages: orEmptySlice(s.kuNames), ExtendedKeyUsages: orEmptySlice(s.ekuNames)}
		}
		out = append(out, refCAPEM{name: s.name, pem: p, info: info})
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	return append(out,
		refCAPEM{name: "empty", pem: ""},
		refCAPEM{name: "not pem", pem: "nope"},
		refCAPEM{name: "two", pem: pems["alpha"] + pems["beta"]},
		refCAPEM{name: "text before", pem: "x\n" + pems["alpha"]},
		refCAPEM{name: "public key", pem: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))},
	)
})

// genCAPEM draws a ca_pem: a CA four times in five.
var genCAPEM = rapid.Custom(func(rt *rapid.T) refCAPEM {
	var valid, invalid []refCAPEM
	for _, c := range modelCAs() {
		if c.info != nil {
			valid = append(valid, c)
		} else {
			invalid = append(invalid, c)
		}
	}
	return mostly(valid, invalid).Draw(rt, "ca_pem")
})

// caBounds are the validity bounds of the CAs the test sends, the
// moments a filter on not_before or not_after is drawn near.
func caBounds() []time.Time {
	var out []time.Time
	for _, c := range modelCAs() {
		if c.info != nil {
			out = append(out, c.info.NotBefore, c.info.NotAfter)
		}
	}
	return out
}

// ---- certificate authorities --------------------------------------------------------

func (mc *machine) createCA(rt *rapid.T) {
	a := mc.acct(rt)
	ca := genCAPEM.Draw(rt, "ca")
	in := account.CertificateAuthorityCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"), CAPEM: ca.pem}
	want, f := mc.m.createCA(a.ref, in, ca.info, mc.now())
	c, v := mc.client(rt, a)
	if got, ok := expectOK(rt, "create certificate_authority ("+ca.name+")", f, v, want)(account.NewCertificateAuthorities(c).Create(mc.ctx, &in)); ok {
		same(rt, "created certificate authority", mc.m.insertCA(a.ref, want, mc.noteID(rt, "ca", got.ID)), *got)
	}
}

func (mc *machine) updateCA(rt *rapid.T) {
	a := mc.acct(rt)
	in := account.CertificateAuthorityUpdate{ID: mc.pickID(rt, a.ref.cas.ids(), "ca"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata")}
	want, f := mc.m.updateCA(a.ref, in)
	c, v := mc.client(rt, a)
	expectSame(rt, "update certificate_authority "+in.ID, "updated certificate authority", want, f, v)(account.NewCertificateAuthorities(c).Update(mc.ctx, &in))
}

// ---- bot users: the deprecated alias of service users ------------------------------------

// drawName draws a service user name, one of a's own names a third of
// the time (taken: 409 on create, and on update unless it is the user's
// own).
func (mc *machine) drawName(rt *rapid.T, a *mAcct) string {
	if len(a.ref.users.items) > 0 && rapid.IntRange(0, 2).Draw(rt, "name_taken") == 0 {
		return rapid.SampledFrom(a.ref.users.items).Draw(rt, "taken_user").Name
	}
	return genName.Draw(rt, "name")
}

// ---- event sources ------------------------------------------------------------------

var genSourceType = mostly([]string{"api_key_created.v0", "vault_deleted.v0", "http_request_complete.v0",
	"agent_session_start.v0", "tcp_connection_closed.v0", "certificate_authority_updated.v0"},
	[]string{"bogus.v0", "API_KEY_CREATED.V0", "", "a/b"})

// pickSource draws a subscription and a type: mostly one of its own
// sources, so that gets, updates and deletes find something.
func (mc *machine) pickSource(rt *rapid.T, a *mAcct) (string, string) {
	// Half the time one of the account's own sources, so that the
	// answers for a source that exists are reached whatever the seed.
	var withSources []string
	for _, id := range a.ref.subs.ids() {
		if v, _ := a.ref.subs.get(id); len(v.Sources) > 0 {
			withSources = append(withSources, id)
		}
	}
	if len(withSources) > 0 && rapid.Bool().Draw(rt, "own_source") {
		sub := rapid.SampledFrom(withSources).Draw(rt, "own_subscription")
		v, _ := a.ref.subs.get(sub)
		return sub, rapid.SampledFrom(v.Sources).Draw(rt, "source").Type
	}
	return mc.pickID(rt, a.ref.subs.ids(), "esb"), genSourceType.Draw(rt, "type")
}

// asSent turns the model's failure for a rule into what the raw client
// meets: a path it cannot build fails before the server can judge the rule.
func asSent(f *refFail, validating bool, sub string, rest ...string) *refFail {
	if f != nil && f.rule && !validating {
		if lf := localPathFail("esb", sub); lf != nil {
			return lf
		}
		for _, s := range rest {
			if lf := localPathFail("", s); lf != nil {
				return lf
			}
		}
	}
	return f
}

func (mc *machine) createSource(rt *rapid.T) {
	a := mc.acct(rt)
	sub, typ := mc.pickSource(rt, a)
	body := ""
	switch rapid.IntRange(0, 4).Draw(rt, "subscription_id") {
	case 0:
		body = sub
	case 1:
		body = mc.pickID(rt, a.ref.subs.ids(), "esb")
	}
	want, f := mc.m.createSource(a.ref, sub, body, typ)
	c, v := mc.client(rt, a)
	f = asSent(f, v, sub)
	got, err := events.NewSources(c).Create(mc.ctx, sub, &events.SourceCreate{SubscriptionID: body, Type: typ})
	if expect(rt, "create event_source "+sub+" "+typ, err, f, v) {
		same(rt, "created event source", want, *got)
	}
}

func (mc *machine) getSource(rt *rapid.T) {
	a := mc.acct(rt)
	sub, typ := mc.pickSource(rt, a)
	want, f := mc.m.getSource(a.ref, sub, typ)
	got, err := events.NewSources(a.checked).Get(mc.ctx, sub, typ)
	if expect(rt, "get event_source "+sub+" "+typ, err, f, true) {
		same(rt, "got event source", want, *got)
	}
}

func (mc *machine) updateSource(rt *rapid.T) {
	a := mc.acct(rt)
	sub, typ := mc.pickSource(rt, a)
	want, f := mc.m.getSource(a.ref, sub, typ)
	c, v := mc.client(rt, a)
	f = asSent(f, v, sub, typ)
	got, err := events.NewSources(c).Update(mc.ctx, &events.SourceUpdate{SubscriptionID: sub, Type: typ})
	if expect(rt, "update event_source "+sub+" "+typ, err, f, v) {
		same(rt, "updated event source", want, *got)
	}
}

func (mc *machine) listSources(rt *rapid.T) {
	a := mc.acct(rt)
	sub := mc.pickID(rt, a.ref.subs.ids(), "esb")
	want, f := mc.m.listSources(a.ref, sub)
	got, err := events.NewSources(a.checked).List(mc.ctx, sub)
	if expect(rt, "list event_sources "+sub, err, f, true) {
		same(rt, "listed event sources", want, *got)
	}
}

func (mc *machine) deleteSource(rt *rapid.T) {
	a := mc.acct(rt)
	sub, typ := mc.pickSource(rt, a)
	f := mc.m.deleteSource(a.ref, sub, typ)
	err := events.NewSources(a.checked).Delete(mc.ctx, sub, typ)
	expect(rt, "delete event_source "+sub+" "+typ, err, f, true)
}

// ---- Kubernetes operators ------------------------------------------------------------

var (
	genFeatures = mostly([][]string{{}, {"bindings"}, {"ingress"}, {"Bindings", "GATEWAY"}, {"gateway", "ingress", "gateway"},
		{"bindings", "ingress", "BINDINGS"}}, [][]string{{"teleport"}, {"bindings", ""}})
	// genSelectors has no empty list: whether one is sent as [] or
	// omitted is the client's business, not the contract's.
	genSelectors = mostly([][]string{nil, {`true`}, {`false`}, {`endpoint.name == "a"`}, {`endpoint.name == "b"`},
		{`endpoint.name == "a"`, `endpoint.name == "b"`}, {`false`, `endpoint.name == "b"`}},
		[][]string{{`endpoint.nope == "x"`}, {`true`, `endpoint.name`}, {`endpoint.name ==`}})
	genRegion     = rapid.SampledFrom([]string{"", "global", "eu", "us"})
	genIngress    = rapid.SampledFrom([]string{"", "", "mine:443"})
	genDeployment = rapid.Custom(func(rt *rapid.T) k8sop.Deployment {
		return k8sop.Deployment{Name: rapid.SampledFrom([]string{"", "op", "op-2"}).Draw(rt, "dep_name"),
			Namespace: rapid.SampledFrom([]string{"", "ns"}).Draw(rt, "dep_ns"), Version: rapid.SampledFrom([]string{"", "1.0", "1.1"}).Draw(rt, "dep_version"),
			ClusterName: rapid.SampledFrom([]string{"", "c1"}).Draw(rt, "dep_cluster")}
	})
	genEndpointName     = rapid.SampledFrom([]string{"a", "b", "c", ""})
	genEndpointBindings = rapid.SampledFrom([][]string{nil, {"kubernetes"}, {"public"}, {"public", "kubernetes"}, {"internal"}})
)

func (mc *machine) createOp(rt *rapid.T) {
	a := mc.acct(rt)
	in := k8sop.OperatorCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"),
		EnabledFeatures: genFeatures.Draw(rt, "features"), Region: genRegion.Draw(rt, "region"), Deployment: genDeployment.Draw(rt, "deployment")}
	// A binding mostly goes with the bindings feature, now and then without.
	if hasBindings(in.EnabledFeatures) || rapid.IntRange(0, 5).Draw(rt, "stray_binding") == 0 {
		if rapid.IntRange(0, 4).Draw(rt, "binding_set") > 0 {
			in.Binding = &k8sop.BindingCreate{EndpointSelectors: genSelectors.Draw(rt, "selectors"), IngressEndpoint: genIngress.Draw(rt, "ingress")}
		}
	}
	want, f := mc.m.createOp(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	if got, ok := expectOK(rt, "create kubernetes_operator", f, v, want)(k8sop.NewOperators(c).Create(mc.ctx, &in)); ok {
		same(rt, "created kubernetes operator", mc.m.insertOp(a.ref, want, mc.noteID(rt, "k8sop", got.ID)), *got)
	}
}

func (mc *machine) updateOp(rt *rapid.T) {
	a := mc.acct(rt)
	in := k8sop.OperatorUpdate{ID: mc.pickID(rt, a.ref.ops.ids(), "k8sop"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata"),
		EnabledFeatures: optional(rt, genFeatures, "features"), Region: optional(rt, genRegion, "region")}
	if rapid.Bool().Draw(rt, "binding_set") {
		in.Binding = &k8sop.BindingUpdate{IngressEndpoint: optional(rt, genIngress, "ingress")}
		if sel := genSelectors.Draw(rt, "selectors"); sel != nil {
			in.Binding.EndpointSelectors = &sel
		}
	}
	if rapid.Bool().Draw(rt, "deployment_set") {
		in.Deployment = &k8sop.DeploymentUpdate{Name: optional(rt, rapid.SampledFrom([]string{"", "op-3"}), "dep_name"),
			Version: optional(rt, rapid.SampledFrom([]string{"", "2.0"}), "dep_version")}
	}
	want, f := mc.m.updateOp(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	expectSame(rt, "update kubernetes_operator "+in.ID, "updated kubernetes operator", want, f, v)(k8sop.NewOperators(c).Update(mc.ctx, &in))
}

// seedEndpoint seeds an endpoint (endpoints have no API path).
func (mc *machine) seedEndpoint(rt *rapid.T) {
	a := mc.acct(rt)
	in := k8sop.Endpoint{Name: genEndpointName.Draw(rt, "endpoint_name"), Bindings: genEndpointBindings.Draw(rt, "endpoint_bindings"),
		Proto: "https", URL: "https://x.test"}
	got, err := fake.Seed[k8sop.Endpoint](mc.srv, a.ref.id, &in)
	if err != nil {
		rt.Fatalf("seed endpoint: %v", err)
	}
	want := mc.m.seedEndpoint(a.ref, in, mc.noteID(rt, "ep", got.ID), mc.now())
	same(rt, "seeded endpoint", want, got)
}

// unseedEndpoint removes a seeded endpoint with fake.Delete.
func (mc *machine) unseedEndpoint(rt *rapid.T) {
	a := mc.acct(rt)
	ids := a.ref.eps.ids()
	if len(ids) == 0 {
		rt.Skip("no endpoint")
	}
	id := rapid.SampledFrom(ids).Draw(rt, "endpoint")
	if err := fake.Delete[k8sop.Endpoint](mc.srv, a.ref.id, id); err != nil {
		rt.Fatalf("delete endpoint %s: %v", id, err)
	}
	a.ref.eps.del(id)
}

// boundEndpoints pages through an operator's bound endpoints.
func (mc *machine) boundEndpoints(rt *rapid.T) {
	a := mc.acct(rt)
	id := mc.pickID(rt, a.ref.ops.ids(), "k8sop")
	path := "/kubernetes_operators/" + url.PathEscape(id) + "/bound_endpoints"
	limit, ok := mc.drawLimit(rt, a, path, "bound_endpoints", localPathFail("k8sop", id))
	if !ok {
		return
	}
	before := ""
	if rapid.Bool().Draw(rt, "before_set") {
		before = mc.pickID(rt, a.ref.eps.ids(), "ep")
	}
	all, f := mc.m.boundEndpoints(a.ref, id)
	ops := k8sop.NewOperators(a.checked)
	got, err := ops.BoundEndpointsPage(mc.ctx, id, &acctapi.ListOptions{Limit: limit, BeforeID: before})
	what := fmt.Sprintf("list bound_endpoints %s limit=%d before_id=%q", id, limit, before)
	if !expect(rt, what, err, f, true) {
		return
	}
	for i, want := range pages(all, func(e k8sop.Endpoint) string { return e.ID }, before, pageSize(limit)) {
		if i > 0 {
			got, err = getPage[k8sop.EndpointList](mc.ctx, a.checked, got.NextPage())
			if err != nil {
				rt.Fatalf("%s: page %d: %v", what, i, err)
			}
		}
		same(rt, fmt.Sprintf("%s: page %d", what, i), want.items, orEmptySlice(got.Endpoints))
		last := ""
		if want.more {
			last = want.items[len(want.items)-1].ID
		}
		mc.checkNext(rt, what, i, got.NextPage(), want.more, path, last, limit, "")
	}
}

// ---- lists: limits and next pages ----------------------------------------------------

// drawLimit draws a page size: mostly 1 to 5, now and then absent (0,
// the default of 100) or 100; and now and then an invalid one (0 or 101,
// which the typed clients will not send), sent raw to path, which must
// answer 400 ERR_NGROK_233 (or, when pathFail is set, fail as it says):
// then ok is false.
func (mc *machine) drawLimit(rt *rapid.T, a *mAcct, path, name string, pathFail *refFail) (limit int, ok bool) {
	switch rapid.IntRange(0, 11).Draw(rt, "limit_kind") {
	case 0:
		return 0, true
	case 1:
		return 100, true
	case 2:
		bad := rapid.SampledFrom([]string{"0", "101", "-1", "x"}).Draw(rt, "bad_limit")
		err := a.checked.Do(mc.ctx, http.MethodGet, path, url.Values{"limit": {bad}}, nil, nil)
		expect(rt, "list "+name+" limit="+bad, err, first(pathFail, failBad(acctapi.CodeBadLimit)), true)
		return 0, false
	}
	return rapid.IntRange(1, 5).Draw(rt, "limit"), true
}

// pageSize is the size of the pages a list sent with limit has: limit,
// or 100 without one.
func pageSize(limit int) int {
	if limit == 0 {
		return acctapi.MaxLimit
	}
	return limit
}

// checkNext checks a page's next_page_uri: none after the last page, else
// the list's own (escaped) path with before_id last, the page's last id,
// the same limit (when one was sent; without one, none or the default,
// 100) and the same filter.
func (mc *machine) checkNext(rt *rapid.T, what string, i int, next string, more bool, path, last string, limit int, filter string) {
	rt.Helper()
	if !more {
		if next != "" {
			rt.Fatalf("%s: page %d is the last but next_page_uri is %q", what, i, next)
		}
		return
	}
	u, err := url.Parse(next)
	if err != nil {
		rt.Fatalf("%s: page %d: next_page_uri %q: %v", what, i, next, err)
	}
	q := u.Query()
	wantLimit, n := strconv.Itoa(limit), 2+min(len(filter), 1)
	if limit == 0 {
		wantLimit = "100"
		if !q.Has("limit") {
			wantLimit, n = "", n-1
		}
	}
	wantURL := mc.srv.URL + path
	if got := u.Scheme + "://" + u.Host + u.EscapedPath(); got != wantURL || q.Get("before_id") != last ||
		q.Get("limit") != wantLimit || q.Get("filter") != filter || len(q) != n {
		rt.Fatalf("%s: page %d: next_page_uri %q, want %s with before_id=%s, limit=%s, filter=%q", what, i, next, wantURL, last, wantLimit, filter)
	}
}

// ---- references -------------------------------------------------------------------

// deleteReferenced deletes a backend or destination that a failover or
// subscription of the account references: 409 ERR_NGROK_6502.
func (mc *machine) deleteReferenced(rt *rapid.T) {
	a := mc.acct(rt)
	var ids []string
	for _, f := range a.ref.fos.items {
		ids = append(ids, f.Backends...)
	}
	for _, s := range a.ref.subs.items {
		for _, d := range s.Destinations {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) == 0 {
		rt.Skip("nothing referenced")
	}
	slices.Sort(ids)
	id := rapid.SampledFrom(slices.Compact(ids)).Draw(rt, "referenced")
	prefix, _, _ := strings.Cut(id, "_")
	for _, k := range mc.kinds {
		if k.idPrefix() == prefix && !k.isAlias() {
			k.delID(mc, rt, a, id)
			return
		}
	}
	rt.Fatalf("no kind for %s", id)
}

// validRefs draws a list of distinct ids from own: a list every rule
// accepts (as long as own holds only ids that exist).
func validRefs(rt *rapid.T, own []string, label string) []string {
	if len(own) == 0 {
		return []string{}
	}
	perm := rapid.Permutation(own).Draw(rt, label+"_order")
	return perm[:rapid.IntRange(0, min(3, len(perm))).Draw(rt, label+"_n")]
}

// TestIsolationProperty checks cross-account isolation as a property: with
// two accounts and random operations through each account's clients,
// nothing of one account is ever read, listed, changed or deleted through
// the other's keys. Each attack is made by one account on the other's
// resources (of every kind, including ones deleted since); the victim's
// whole stored state must be the same after it, and no answer the attacker
// gets may mention any id the victim ever had. Between attacks, the
// model-checked operations of TestModel build state in both accounts.
func TestIsolationProperty(t *testing.T) {
	rapidBudget(t, 120, 40)
	t.Cleanup(func() { outcomes.report(t) })
	rapid.Check(t, func(rt *rapid.T) {
		mc := newMachine(rt)
		ever := map[string]map[string]bool{} // account → every id it has had
		for _, a := range mc.accts {
			ever[a.ref.id] = map[string]bool{}
		}
		remember := func() {
			for _, a := range mc.accts {
				for _, id := range accountIDs(a) {
					ever[a.ref.id][id] = true
				}
			}
		}
		remember()
		// pair draws an attacker and a victim.
		pair := func(rt *rapid.T) (from, victim *mAcct) {
			i := rapid.IntRange(0, 1).Draw(rt, "attacker")
			return mc.accts[i], mc.accts[1-i]
		}
		// unchanged runs attack and fails unless the victim's state is
		// the same after it, and nothing the attacker saw names the
		// victim's ids.
		unchanged := func(rt *rapid.T, victim *mAcct, what string, attack func() []any) {
			rt.Helper()
			before := victimState(mc, victim)
			seen := attack()
			if diff := cmp.Diff(before, victimState(mc, victim)); diff != "" {
				rt.Fatalf("%s changed the other account's state (-before +after):\n%s", what, diff)
			}
			raw, err := json.Marshal(seen)
			if err != nil {
				rt.Fatal(err)
			}
			for id := range ever[victim.ref.id] {
				if strings.Contains(string(raw), id) {
					rt.Fatalf("%s: the attacker's answers mention %s of the other account:\n%s", what, id, raw)
				}
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"": func(rt *rapid.T) {
				mc.checkState(rt)
				remember()
			},
			// Operations that build state in either account.
			"createAny":  mc.createAny,
			"createAny2": mc.createAny,
			// rapid draws the first action in sorted order more often than
			// the others: let it be one that builds state.
			"0_createAny":    mc.createAny,
			"createUser":     mc.createUser,
			"createKey":      mc.createKey,
			"createFO":       mc.createFO,
			"createSub":      mc.createSub,
			"seedTunnel":     mc.seedTunnel,
			"updateFO":       mc.updateFO,
			"updateSub":      mc.updateSub,
			"updateUser":     mc.updateUser,
			"delete":         func(rt *rapid.T) { mc.kind(rt).del(mc, rt) },
			"clock":          mc.advanceClock,
			"createCA":       mc.createCA,
			"createOp":       mc.createOp,
			"updateOp":       mc.updateOp,
			"seedEndpoint":   mc.seedEndpoint,
			"createSource":   mc.createSource,
			"deleteSource":   mc.deleteSource,
			"boundEndpoints": mc.boundEndpoints,
			// Attacks.
			"probe": func(rt *rapid.T) {
				from, victim := pair(rt)
				k := mc.kind(rt)
				unchanged(rt, victim, "get, update and delete by the other account", func() []any {
					k.probe(mc, rt, from, victim)
					return nil
				})
			},
			"list": func(rt *rapid.T) {
				from, victim := pair(rt)
				unchanged(rt, victim, "lists of the other account", func() []any {
					var seen []any
					for _, k := range mc.kinds {
						seen = append(seen, k.listAll(mc, rt, from)...)
					}
					outcomes.note("cross-account-list all_kinds", nil, true)
					return seen
				})
			},
			"sources": func(rt *rapid.T) {
				from, victim := pair(rt)
				unchanged(rt, victim, "the sources of the other account's subscriptions", func() []any {
					return sourceAttack(mc, rt, from, victim)
				})
			},
			"boundEndpoints2": func(rt *rapid.T) {
				// The other account's operators' bound endpoints are not
				// found, and one's own operators (a selector of "true"
				// matches every endpoint) never bind the other's
				// endpoints.
				from, victim := pair(rt)
				unchanged(rt, victim, "bound endpoints across accounts", func() []any {
					return boundEndpointsAttack(mc, rt, from, victim)
				})
			},
			"reference": func(rt *rapid.T) {
				from, victim := pair(rt)
				unchanged(rt, victim, "references to the other account's resources", func() []any {
					return referenceAttack(mc, rt, from, victim)
				})
			},
			"sameNames": func(rt *rapid.T) {
				// Names are unique per account only: the attacker may
				// take the victim's service user names.
				from, victim := pair(rt)
				if len(victim.ref.users.items) == 0 {
					rt.Skip("victim has no service user")
				}
				name := rapid.SampledFrom(victim.ref.users.items).Draw(rt, "victim_user").Name
				unchanged(rt, victim, "a service user named as the other account's", func() []any {
					in := account.ServiceUserCreate{Name: name}
					want, f := mc.m.createUser(from.ref, in, mc.now())
					got, err := account.NewServiceUsers(from.raw).Create(mc.ctx, &in)
					if expect(rt, "cross-account-name service_user", err, f, false) {
						want = mc.m.insertUser(from.ref, want, mc.noteID(rt, "service", got.ID))
						same(rt, "created service user", want, *got)
						return []any{got}
					}
					return nil
				})
			},
		})
	})
}

// referenceAttack makes from's client refer to victim's resources: a
// failover of the victim's backends, a subscription to its destinations,
// an API key owned by its service user, and updates that do the same to
// from's own resources. Each must be refused as if the id did not exist.
func referenceAttack(mc *machine, rt *rapid.T, from, victim *mAcct) []any {
	var seen []any
	pick := func(ids []string, label string) string {
		if len(ids) == 0 {
			rt.Skip("victim has nothing to refer to")
		}
		return rapid.SampledFrom(ids).Draw(rt, label)
	}
	switch rapid.IntRange(0, 4).Draw(rt, "reference_kind") {
	case 0:
		id := pick(victim.backendIDs(), "victim_backend")
		got, err := backends.NewFailovers(from.raw).Create(mc.ctx, &backends.FailoverCreate{Backends: []string{id}})
		expect(rt, "cross-account-ref failover.backends", err, failBad(acctapi.CodeUnknownBackend), false)
		seen = append(seen, got)
	case 1:
		id := pick(victim.ref.dsts.ids(), "victim_destination")
		got, err := events.NewSubscriptions(from.raw).Create(mc.ctx, &events.SubscriptionCreate{DestinationIDs: []string{id}})
		expect(rt, "cross-account-ref subscription.destination_ids", err, failBad(acctapi.CodeUnknownDestination), false)
		seen = append(seen, got)
	case 2:
		id := pick(victim.ref.users.ids(), "victim_user")
		got, err := account.NewAPIKeys(from.raw).Create(mc.ctx, &account.APIKeyCreate{OwnerID: id})
		expect(rt, "cross-account-ref api_key.owner_id", err, failInvalid, false)
		seen = append(seen, got)
	case 3:
		own := pick(from.ref.fos.ids(), "own_failover")
		id := pick(victim.backendIDs(), "victim_backend")
		got, err := backends.NewFailovers(from.raw).Update(mc.ctx, &backends.FailoverUpdate{ID: own, Backends: &[]string{id}})
		expect(rt, "cross-account-ref failover.backends(update)", err, failBad(acctapi.CodeUnknownBackend), false)
		seen = append(seen, got)
	default:
		own := pick(from.ref.subs.ids(), "own_subscription")
		id := pick(victim.ref.dsts.ids(), "victim_destination")
		got, err := events.NewSubscriptions(from.raw).Update(mc.ctx, &events.SubscriptionUpdate{ID: own, DestinationIDs: &[]string{id}})
		expect(rt, "cross-account-ref subscription.destination_ids(update)", err, failBad(acctapi.CodeUnknownDestination), false)
		seen = append(seen, got)
	}
	return seen
}

// sourceAttack addresses the sources of one of victim's subscriptions
// through from's client: list, get, create, update and delete must all be
// 404, as if the subscription did not exist.
func sourceAttack(mc *machine, rt *rapid.T, from, victim *mAcct) []any {
	if len(victim.ref.subs.items) == 0 {
		rt.Skip("victim has no subscription")
	}
	sub := rapid.SampledFrom(victim.ref.subs.items).Draw(rt, "victim_subscription")
	typ := "api_key_created.v0"
	if len(sub.Sources) > 0 {
		typ = rapid.SampledFrom(sub.Sources).Draw(rt, "victim_source").Type
	}
	src := events.NewSources(from.raw)
	list, err := src.List(mc.ctx, sub.ID)
	expect(rt, "cross-account-list event_sources", err, failNotFound, false)
	got, err := src.Get(mc.ctx, sub.ID, typ)
	expect(rt, "cross-account-get event_source", err, failNotFound, false)
	created, err := src.Create(mc.ctx, sub.ID, &events.SourceCreate{Type: rapid.SampledFrom([]string{typ, "vault_created.v0"}).Draw(rt, "new_type")})
	expect(rt, "cross-account-create event_source", err, failNotFound, false)
	updated, err := src.Update(mc.ctx, &events.SourceUpdate{SubscriptionID: sub.ID, Type: typ})
	expect(rt, "cross-account-update event_source", err, failNotFound, false)
	err = src.Delete(mc.ctx, sub.ID, typ)
	expect(rt, "cross-account-delete event_source", err, failNotFound, false)
	return []any{list, got, created, updated}
}

// boundEndpointsAttack lists the bound endpoints of one of victim's
// operators through from's client (404), and every page of the bound
// endpoints of each of from's own operators, which must be what the
// model says from's own endpoints give.
func boundEndpointsAttack(mc *machine, rt *rapid.T, from, victim *mAcct) []any {
	var seen []any
	ops := k8sop.NewOperators(from.raw)
	if ids := victim.ref.ops.ids(); len(ids) > 0 {
		id := rapid.SampledFrom(ids).Draw(rt, "victim_operator")
		page, err := ops.BoundEndpointsPage(mc.ctx, id, nil)
		expect(rt, "cross-account-list bound_endpoints", err, failNotFound, false)
		seen = append(seen, page)
	}
	for _, id := range from.ref.ops.ids() {
		want, _ := mc.m.boundEndpoints(from.ref, id)
		got := []k8sop.Endpoint{}
		for e, err := range ops.BoundEndpoints(mc.ctx, id, &acctapi.ListOptions{Limit: rapid.IntRange(1, 5).Draw(rt, "limit")}) {
			if err != nil {
				rt.Fatalf("bound endpoints of %s: %v", id, err)
			}
			got = append(got, e)
		}
		same(rt, "bound endpoints of "+id, want, got)
		seen = append(seen, got)
	}
	outcomes.note("own-list bound_endpoints", nil, true)
	return seen
}

// victimState is everything stored for a, read with the fake's own
// inspection API, by kind.
func victimState(mc *machine, a *mAcct) map[string]any {
	out := map[string]any{"tunnels": fake.List[fake.Tunnel](mc.srv, a.ref.id), "endpoints": fake.List[k8sop.Endpoint](mc.srv, a.ref.id)}
	for i, k := range mc.kinds {
		out[string(rune('a'+i))] = k.state(mc, a)
	}
	return out
}

// accountIDs returns every id a holds now, by the model (which the
// invariant keeps equal to the fake).
func accountIDs(a *mAcct) []string {
	r := a.ref
	return slices.Concat(r.users.ids(), r.keys.ids(), r.hrs.ids(), r.fos.ids(), r.tgs.ids(), r.tunnels.ids(), r.dsts.ids(), r.subs.ids(),
		r.cas.ids(), r.ops.ids(), r.eps.ids())
}
