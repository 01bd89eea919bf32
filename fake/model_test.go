//lint:file-ignore SA1019 the model drives the deprecated bot-user alias on purpose.

package fake_test

// TestModel is a rapid state-machine test: it drives an in-memory fake
// through the typed clients with random sequences of operations and checks
// every answer, and after every step the whole state, against the reference
// model in model_ref_test.go (and model_ref_more_test.go; the steps for
// certificate authorities, bot users, event sources and Kubernetes
// operators are in model_more_test.go).
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

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

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
// no rapid flag or variable given), whose outcomes are known to be
// reached.
func rapidBudget(t *testing.T, checks, steps int) (short bool) {
	t.Helper()
	seed := fixedSeed
	short = true
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
	role            = events.CloudAuth{Role: &events.Role{RoleARN: "arn:role"}}
	genTarget       = mostly([]events.Target{
		{Kinesis: &events.Kinesis{Auth: role, StreamARN: "arn:stream"}},
		{CloudWatchLogs: &events.CloudWatchLogs{Auth: role, LogGroupARN: "arn:group"}},
		{Firehose: &events.Firehose{Auth: role, DeliveryStreamARN: "arn:firehose"}},
	}, []events.Target{
		{}, // no target
		{Kinesis: &events.Kinesis{Auth: role, StreamARN: "arn:stream"}, CloudWatchLogs: &events.CloudWatchLogs{Auth: role, LogGroupARN: "arn:group"}},
		{Kinesis: &events.Kinesis{Auth: role}},              // no ARN
		{Kinesis: &events.Kinesis{StreamARN: "arn:stream"}}, // no auth
		{Kinesis: &events.Kinesis{Auth: events.CloudAuth{Role: role.Role, Creds: &events.Creds{AccessKeyID: "a", SecretAccessKey: "s"}}, StreamARN: "arn:stream"}}, // both auths
	})
	genFormat  = mostly([]string{"", "JSON", "json", "Json"}, []string{"xml"})
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
			// Kubernetes operators and endpoints (model_more_test.go).
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

func (mc *machine) createUser(rt *rapid.T) {
	a := mc.acct(rt)
	in := account.ServiceUserCreate{Name: mc.drawName(rt, a), Active: optional(rt, rapid.Bool(), "active")}
	want, f := mc.m.createUser(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	got, err := account.NewServiceUsers(c).Create(mc.ctx, &in)
	if expect(rt, "create service_user", err, f, v) {
		want = mc.m.insertUser(a.ref, want, mc.noteID(rt, "service", got.ID))
		same(rt, "created service user", want, *got)
	}
}

func (mc *machine) updateUser(rt *rapid.T) {
	a := mc.acct(rt)
	in := account.ServiceUserUpdate{ID: mc.pickID(rt, a.ref.users.ids(), "service"),
		Active: optional(rt, rapid.Bool(), "active")}
	if rapid.Bool().Draw(rt, "name_set") {
		name := mc.drawName(rt, a)
		in.Name = &name
	}
	want, f := mc.m.updateUser(a.ref, in)
	c, v := mc.client(rt, a)
	got, err := account.NewServiceUsers(c).Update(mc.ctx, &in)
	if expect(rt, "update service_user "+in.ID, err, f, v) {
		same(rt, "updated service user", want, *got)
	}
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
	got, err := account.NewAPIKeys(c).Update(mc.ctx, &in)
	if expect(rt, "update api_key "+in.ID, err, f, v) {
		same(rt, "updated API key", want, *got)
	}
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
	got, err := backends.NewHTTPResponses(c).Create(mc.ctx, &in)
	if expect(rt, "create http_response", err, f, v) {
		want = mc.m.insertHR(a.ref, want, mc.noteID(rt, "bkdhr", got.ID))
		same(rt, "created HTTP response backend", want, *got)
	}
}

func (mc *machine) updateHR(rt *rapid.T) {
	a := mc.acct(rt)
	in := backends.HTTPResponseUpdate{ID: mc.pickID(rt, a.ref.hrs.ids(), "bkdhr"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata"),
		Body: optional(rt, genBody, "body"), Headers: optional(rt, genHeaders, "headers"), StatusCode: optional(rt, genStatus, "status")}
	want, f := mc.m.updateHR(a.ref, in)
	c, v := mc.client(rt, a)
	got, err := backends.NewHTTPResponses(c).Update(mc.ctx, &in)
	if expect(rt, "update http_response "+in.ID, err, f, v) {
		same(rt, "updated HTTP response backend", want, *got)
	}
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
	got, err := backends.NewFailovers(c).Create(mc.ctx, &in)
	if expect(rt, "create failover", err, f, v) {
		want = mc.m.insertFO(a.ref, want, mc.noteID(rt, "bkdfo", got.ID))
		same(rt, "created failover backend", want, *got)
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
	got, err := backends.NewFailovers(c).Update(mc.ctx, &in)
	if expect(rt, "update failover "+in.ID, err, f, v) {
		same(rt, "updated failover backend", want, *got)
	}
}

func (mc *machine) createTG(rt *rapid.T) {
	a := mc.acct(rt)
	in := backends.TunnelGroupCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"),
		Labels: genLabels.Draw(rt, "labels")}
	want, f := mc.m.createTG(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	got, err := backends.NewTunnelGroups(c).Create(mc.ctx, &in)
	if expect(rt, "create tunnel_group", err, f, v) {
		want = mc.m.insertTG(a.ref, want, mc.noteID(rt, "bkdtg", got.ID))
		same(rt, "created tunnel group backend", want, *got)
	}
}

func (mc *machine) updateTG(rt *rapid.T) {
	a := mc.acct(rt)
	in := backends.TunnelGroupUpdate{ID: mc.pickID(rt, a.ref.tgs.ids(), "bkdtg"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata"),
		Labels: optional(rt, genUpdateLabels, "labels")}
	want, f := mc.m.updateTG(a.ref, in)
	c, v := mc.client(rt, a)
	got, err := backends.NewTunnelGroups(c).Update(mc.ctx, &in)
	if expect(rt, "update tunnel_group "+in.ID, err, f, v) {
		same(rt, "updated tunnel group backend", want, *got)
	}
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
	got, err := events.NewDestinations(c).Create(mc.ctx, &in)
	if expect(rt, "create event_destination", err, f, v) {
		want = mc.m.insertDst(a.ref, want, mc.noteID(rt, "ed", got.ID))
		same(rt, "created event destination", want, *got)
	}
}

func (mc *machine) updateDst(rt *rapid.T) {
	a := mc.acct(rt)
	in := events.DestinationUpdate{ID: mc.pickID(rt, a.ref.dsts.ids(), "ed"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata"),
		Format: optional(rt, genFormat, "format"), Target: optional(rt, genTarget, "target")}
	want, f := mc.m.updateDst(a.ref, in)
	c, v := mc.client(rt, a)
	got, err := events.NewDestinations(c).Update(mc.ctx, &in)
	if expect(rt, "update event_destination "+in.ID, err, f, v) {
		same(rt, "updated event destination", want, *got)
	}
}

func (mc *machine) createSub(rt *rapid.T) {
	a := mc.acct(rt)
	in := events.SubscriptionCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"),
		Sources: genSources.Draw(rt, "sources"), DestinationIDs: mc.refList(rt, a.ref.dsts.ids(), []string{"ed"}, "destination_ids")}
	want, sources, f := mc.m.createSub(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	got, err := events.NewSubscriptions(c).Create(mc.ctx, &in)
	if expect(rt, "create event_subscription", err, f, v) {
		want = mc.m.insertSub(a.ref, want, sources, mc.noteID(rt, "esb", got.ID))
		same(rt, "created event subscription", want, *got)
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
	got, err := events.NewSubscriptions(c).Update(mc.ctx, &in)
	if expect(rt, "update event_subscription "+in.ID, err, f, v) {
		same(rt, "updated event subscription", want, *got)
	}
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
	// get, update and delete must all be 404 (isolation_prop_test.go).
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
	name, prefix, path string
	alias              bool     // the records of another kind, under another path
	filters            []string // filterable fields; nil when the list takes no filter
	table              func(a *refAccount) *refTable[T]
	fields             func(v T) map[string]string
	created            func(v T) time.Time
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

func allKinds() []kindRunner {
	bg := []string{"id", "description", "metadata", "created_at"}
	return []kindRunner{
		&resKind[account.ServiceUser, account.ServiceUserList, *account.ServiceUserList]{
			name: "service_users", prefix: "service", path: "/service_users", filters: []string{"id", "created_at"},
			table:   func(a *refAccount) *refTable[account.ServiceUser] { return &a.users },
			fields:  func(v account.ServiceUser) map[string]string { return map[string]string{"id": v.ID} },
			created: func(v account.ServiceUser) time.Time { return v.CreatedAt },
			get_: func(ctx context.Context, c *acctapi.Client, id string) (*account.ServiceUser, error) {
				return account.NewServiceUsers(c).Get(ctx, id)
			},
			del_: func(ctx context.Context, c *acctapi.Client, id string) error {
				return account.NewServiceUsers(c).Delete(ctx, id)
			},
			page: func(ctx context.Context, c *acctapi.Client, limit int, before, filter string) (*account.ServiceUserList, error) {
				return account.NewServiceUsers(c).Page(ctx, &acctapi.FilterOptions{Limit: limit, BeforeID: before, Filter: filter})
			},
			modelDel: (*refModel).deleteUser,
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := account.NewServiceUsers(c).Update(ctx, &account.ServiceUserUpdate{ID: id, Name: ptr("stolen"), Active: ptr(false)})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := account.NewServiceUsers(c).Create(ctx, &account.ServiceUserCreate{Name: "faulty"})
				return err
			},
		},
		&resKind[account.APIKey, account.APIKeyList, *account.APIKeyList]{
			name: "api_keys", prefix: "ak", path: "/api_keys", filters: []string{"id", "description", "metadata", "owner_id", "created_at"},
			table: func(a *refAccount) *refTable[account.APIKey] { return &a.keys },
			fields: func(v account.APIKey) map[string]string {
				f := annotatedFields(v.ID, v.Description, v.Metadata)
				f["owner_id"] = v.OwnerID
				return f
			},
			created: func(v account.APIKey) time.Time { return v.CreatedAt },
			get_: func(ctx context.Context, c *acctapi.Client, id string) (*account.APIKey, error) {
				return account.NewAPIKeys(c).Get(ctx, id)
			},
			del_: func(ctx context.Context, c *acctapi.Client, id string) error {
				return account.NewAPIKeys(c).Delete(ctx, id)
			},
			page: func(ctx context.Context, c *acctapi.Client, limit int, before, filter string) (*account.APIKeyList, error) {
				return account.NewAPIKeys(c).Page(ctx, &acctapi.FilterOptions{Limit: limit, BeforeID: before, Filter: filter})
			},
			modelDel: (*refModel).deleteKey,
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := account.NewAPIKeys(c).Update(ctx, &account.APIKeyUpdate{ID: id, Description: ptr("stolen")})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := account.NewAPIKeys(c).Create(ctx, &account.APIKeyCreate{})
				return err
			},
		},
		&resKind[backends.HTTPResponse, backends.HTTPResponseList, *backends.HTTPResponseList]{
			name: "http_response_backends", prefix: "bkdhr", path: "/backends/http_response",
			table:   func(a *refAccount) *refTable[backends.HTTPResponse] { return &a.hrs },
			created: func(v backends.HTTPResponse) time.Time { return v.CreatedAt },
			get_: func(ctx context.Context, c *acctapi.Client, id string) (*backends.HTTPResponse, error) {
				return backends.NewHTTPResponses(c).Get(ctx, id)
			},
			del_: func(ctx context.Context, c *acctapi.Client, id string) error {
				return backends.NewHTTPResponses(c).Delete(ctx, id)
			},
			page: func(ctx context.Context, c *acctapi.Client, limit int, before, _ string) (*backends.HTTPResponseList, error) {
				return backends.NewHTTPResponses(c).Page(ctx, &acctapi.ListOptions{Limit: limit, BeforeID: before})
			},
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := backends.NewHTTPResponses(c).Update(ctx, &backends.HTTPResponseUpdate{ID: id, StatusCode: ptr(500)})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := backends.NewHTTPResponses(c).Create(ctx, &backends.HTTPResponseCreate{StatusCode: 200})
				return err
			},
		},
		&resKind[backends.Failover, backends.FailoverList, *backends.FailoverList]{
			name: "failover_backends", prefix: "bkdfo", path: "/backends/failover",
			table:   func(a *refAccount) *refTable[backends.Failover] { return &a.fos },
			created: func(v backends.Failover) time.Time { return v.CreatedAt },
			get_: func(ctx context.Context, c *acctapi.Client, id string) (*backends.Failover, error) {
				return backends.NewFailovers(c).Get(ctx, id)
			},
			del_: func(ctx context.Context, c *acctapi.Client, id string) error {
				return backends.NewFailovers(c).Delete(ctx, id)
			},
			page: func(ctx context.Context, c *acctapi.Client, limit int, before, _ string) (*backends.FailoverList, error) {
				return backends.NewFailovers(c).Page(ctx, &acctapi.ListOptions{Limit: limit, BeforeID: before})
			},
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := backends.NewFailovers(c).Update(ctx, &backends.FailoverUpdate{ID: id, Backends: &[]string{}})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := backends.NewFailovers(c).Create(ctx, &backends.FailoverCreate{})
				return err
			},
		},
		&resKind[backends.TunnelGroup, backends.TunnelGroupList, *backends.TunnelGroupList]{
			name: "tunnel_group_backends", prefix: "bkdtg", path: "/backends/tunnel_group", filters: bg,
			table: func(a *refAccount) *refTable[backends.TunnelGroup] { return &a.tgs },
			fields: func(v backends.TunnelGroup) map[string]string {
				return annotatedFields(v.ID, v.Description, v.Metadata)
			},
			created: func(v backends.TunnelGroup) time.Time { return v.CreatedAt },
			get_: func(ctx context.Context, c *acctapi.Client, id string) (*backends.TunnelGroup, error) {
				return backends.NewTunnelGroups(c).Get(ctx, id)
			},
			del_: func(ctx context.Context, c *acctapi.Client, id string) error {
				return backends.NewTunnelGroups(c).Delete(ctx, id)
			},
			page: func(ctx context.Context, c *acctapi.Client, limit int, before, filter string) (*backends.TunnelGroupList, error) {
				return backends.NewTunnelGroups(c).Page(ctx, &acctapi.FilterOptions{Limit: limit, BeforeID: before, Filter: filter})
			},
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := backends.NewTunnelGroups(c).Update(ctx, &backends.TunnelGroupUpdate{ID: id, Labels: &map[string]string{"stolen": "yes"}})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := backends.NewTunnelGroups(c).Create(ctx, &backends.TunnelGroupCreate{Labels: map[string]string{"a": "b"}})
				return err
			},
		},
		&resKind[events.Destination, events.DestinationList, *events.DestinationList]{
			name: "event_destinations", prefix: "ed", path: "/event_destinations", filters: bg,
			table:   func(a *refAccount) *refTable[events.Destination] { return &a.dsts },
			fields:  func(v events.Destination) map[string]string { return annotatedFields(v.ID, v.Description, v.Metadata) },
			created: func(v events.Destination) time.Time { return v.CreatedAt },
			get_: func(ctx context.Context, c *acctapi.Client, id string) (*events.Destination, error) {
				return events.NewDestinations(c).Get(ctx, id)
			},
			del_: func(ctx context.Context, c *acctapi.Client, id string) error {
				return events.NewDestinations(c).Delete(ctx, id)
			},
			page: func(ctx context.Context, c *acctapi.Client, limit int, before, filter string) (*events.DestinationList, error) {
				return events.NewDestinations(c).Page(ctx, &acctapi.FilterOptions{Limit: limit, BeforeID: before, Filter: filter})
			},
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := events.NewDestinations(c).Update(ctx, &events.DestinationUpdate{ID: id, Description: ptr("stolen")})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := events.NewDestinations(c).Create(ctx, &events.DestinationCreate{Target: events.Target{Kinesis: &events.Kinesis{Auth: role, StreamARN: "arn"}}})
				return err
			},
		},
		&resKind[events.Subscription, events.SubscriptionList, *events.SubscriptionList]{
			name: "event_subscriptions", prefix: "esb", path: "/event_subscriptions", filters: bg,
			table:   func(a *refAccount) *refTable[events.Subscription] { return &a.subs },
			fields:  func(v events.Subscription) map[string]string { return annotatedFields(v.ID, v.Description, v.Metadata) },
			created: func(v events.Subscription) time.Time { return v.CreatedAt },
			get_: func(ctx context.Context, c *acctapi.Client, id string) (*events.Subscription, error) {
				return events.NewSubscriptions(c).Get(ctx, id)
			},
			del_: func(ctx context.Context, c *acctapi.Client, id string) error {
				return events.NewSubscriptions(c).Delete(ctx, id)
			},
			page: func(ctx context.Context, c *acctapi.Client, limit int, before, filter string) (*events.SubscriptionList, error) {
				return events.NewSubscriptions(c).Page(ctx, &acctapi.FilterOptions{Limit: limit, BeforeID: before, Filter: filter})
			},
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := events.NewSubscriptions(c).Update(ctx, &events.SubscriptionUpdate{ID: id, DestinationIDs: &[]string{}})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := events.NewSubscriptions(c).Create(ctx, &events.SubscriptionCreate{})
				return err
			},
		},
		&resKind[account.CertificateAuthority, account.CertificateAuthorityList, *account.CertificateAuthorityList]{
			name: "certificate_authorities", prefix: "ca", path: "/certificate_authorities",
			filters: []string{"id", "description", "metadata", "subject_common_name", "created_at", "not_before", "not_after"},
			table:   func(a *refAccount) *refTable[account.CertificateAuthority] { return &a.cas },
			fields: func(v account.CertificateAuthority) map[string]string {
				f := annotatedFields(v.ID, v.Description, v.Metadata)
				f["subject_common_name"] = v.SubjectCommonName
				return f
			},
			created: func(v account.CertificateAuthority) time.Time { return v.CreatedAt },
			times: func(v account.CertificateAuthority) map[string]time.Time {
				return map[string]time.Time{"not_before": v.NotBefore, "not_after": v.NotAfter}
			},
			get_: func(ctx context.Context, c *acctapi.Client, id string) (*account.CertificateAuthority, error) {
				return account.NewCertificateAuthorities(c).Get(ctx, id)
			},
			del_: func(ctx context.Context, c *acctapi.Client, id string) error {
				return account.NewCertificateAuthorities(c).Delete(ctx, id)
			},
			page: func(ctx context.Context, c *acctapi.Client, limit int, before, filter string) (*account.CertificateAuthorityList, error) {
				return account.NewCertificateAuthorities(c).Page(ctx, &acctapi.FilterOptions{Limit: limit, BeforeID: before, Filter: filter})
			},
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := account.NewCertificateAuthorities(c).Update(ctx, &account.CertificateAuthorityUpdate{ID: id, Description: ptr("stolen")})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := account.NewCertificateAuthorities(c).Create(ctx, &account.CertificateAuthorityCreate{CAPEM: modelCAs()[0].pem})
				return err
			},
		},
		&resKind[k8sop.Operator, k8sop.OperatorList, *k8sop.OperatorList]{
			name: "kubernetes_operators", prefix: "k8sop", path: "/kubernetes_operators",
			table:   func(a *refAccount) *refTable[k8sop.Operator] { return &a.ops },
			created: func(v k8sop.Operator) time.Time { return v.CreatedAt },
			get_: func(ctx context.Context, c *acctapi.Client, id string) (*k8sop.Operator, error) {
				return k8sop.NewOperators(c).Get(ctx, id)
			},
			del_: func(ctx context.Context, c *acctapi.Client, id string) error {
				return k8sop.NewOperators(c).Delete(ctx, id)
			},
			page: func(ctx context.Context, c *acctapi.Client, limit int, before, _ string) (*k8sop.OperatorList, error) {
				return k8sop.NewOperators(c).Page(ctx, &acctapi.ListOptions{Limit: limit, BeforeID: before})
			},
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := k8sop.NewOperators(c).Update(ctx, &k8sop.OperatorUpdate{ID: id, Description: ptr("stolen"), Region: ptr("stolen")})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := k8sop.NewOperators(c).Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"ingress"}})
				return err
			},
		},
		// The deprecated alias: the service users' records under
		// /bot_users, whose list takes no filter.
		&resKind[account.BotUser, account.BotUserList, *account.BotUserList]{
			name: "bot_users", prefix: "service", path: "/bot_users", alias: true,
			table:   func(a *refAccount) *refTable[account.ServiceUser] { return &a.users },
			created: func(v account.ServiceUser) time.Time { return v.CreatedAt },
			get_: func(ctx context.Context, c *acctapi.Client, id string) (*account.BotUser, error) {
				return account.NewBotUsers(c).Get(ctx, id)
			},
			del_: func(ctx context.Context, c *acctapi.Client, id string) error {
				return account.NewBotUsers(c).Delete(ctx, id)
			},
			page: func(ctx context.Context, c *acctapi.Client, limit int, before, _ string) (*account.BotUserList, error) {
				return account.NewBotUsers(c).Page(ctx, &acctapi.ListOptions{Limit: limit, BeforeID: before})
			},
			modelDel: (*refModel).deleteUser,
			touch: func(ctx context.Context, c *acctapi.Client, id string) error {
				_, err := account.NewBotUsers(c).Update(ctx, &account.BotUserUpdate{ID: id, Name: ptr("stolen-bot"), Active: ptr(false)})
				return err
			},
			createValid: func(ctx context.Context, c *acctapi.Client) error {
				_, err := account.NewBotUsers(c).Create(ctx, &account.BotUserCreate{Name: "faulty-bot"})
				return err
			},
		},
	}
}

func (k *resKind[T, L, PL]) get(mc *machine, rt *rapid.T) {
	a := mc.acct(rt)
	id := mc.pickID(rt, k.table(a.ref).ids(), k.prefix)
	want, ok := k.table(a.ref).get(id)
	f := localPathFail(id)
	if f == nil && !ok {
		f = failNotFound
	}
	got, err := k.get_(mc.ctx, a.checked, id)
	if expect(rt, "get "+k.name+" "+id, err, f, true) {
		same(rt, "got "+k.name, want, *got)
	}
}

func (k *resKind[T, L, PL]) del(mc *machine, rt *rapid.T) {
	a := mc.acct(rt)
	id := mc.pickID(rt, k.ownIDs(a), k.prefix)
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
	limit, ok := mc.drawLimit(rt, a, k.path, k.name, nil)
	if !ok {
		return
	}
	before := ""
	if rapid.Bool().Draw(rt, "before_set") {
		before = mc.pickID(rt, k.table(a.ref).ids(), k.prefix)
	}
	all := k.table(a.ref).newestFirst()
	filter := ""
	if k.filters != nil {
		switch rapid.IntRange(0, 5).Draw(rt, "filter_kind") {
		case 0, 1:
			f := mc.drawFilter(rt, a, k.filters)
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
			expect(rt, "list "+k.name+" filter="+filter, err, failBad(acctapi.CodeBadFilter), true)
			return
		}
	}
	what := fmt.Sprintf("list %s limit=%d before_id=%q filter=%q", k.name, limit, before, filter)
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
		same(rt, fmt.Sprintf("%s: page %d", what, i), want.items, orEmptySlice(p.PageItems()))
		last := ""
		if want.more {
			last = k.table(a.ref).id(want.items[len(want.items)-1])
		}
		mc.checkNext(rt, what, i, p.NextPage(), want.more, k.path, last, limit, filter)
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
		mc.srv.FailNext(httpMethod, k.path+"/**", 1, http.StatusServiceUnavailable)
	case "429":
		mc.srv.RateLimitNext(httpMethod, k.path+"/**", 1, retry)
	default:
		mc.srv.DropNext(httpMethod, k.path+"/**", 1)
	}
	defer mc.srv.ClearFaults()
	// The request the fault answers: any id will do, as the server never
	// looks (an id the client refuses itself would never reach it).
	id := madeUpID(rt, k.prefix)
	if ids := k.table(a.ref).ids(); len(ids) > 0 && rapid.Bool().Draw(rt, "fault_own_id") {
		id = rapid.SampledFrom(ids).Draw(rt, "fault_id")
	}
	if localPathFail(id) != nil {
		id = k.prefix + "_x"
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
	what := fmt.Sprintf("%s %s with an injected %s", method, k.path, mode)
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
func (k *resKind[T, L, PL]) idPrefix() string { return k.prefix }
func (k *resKind[T, L, PL]) isAlias() bool    { return k.alias }

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
