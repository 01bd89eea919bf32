package fake_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// TestFixtureRefs checks fixtures that refer to each other: a key owned by
// a fixture service user, a failover over fixture backends, a subscription
// to a fixture destination, in the first account and in an account the
// file adds, whose key then works.
func TestFixtureRefs(t *testing.T) {
	t.Parallel()
	srv := fake.Start(t, fake.WithoutListener())
	err := srv.LoadFixtures(strings.NewReader(`{
	  "resources": [
	    {"path": "/service_users", "ref": "ci-user", "body": {"name": "ci"}},
	    {"path": "/api_keys", "body": {"description": "ci's key", "owner_id": "${ci-user}"}},
	    {"path": "/event_destinations", "ref": "dest", "body": {"format": "JSON", "target": {"monitoring": {"api_key": "k", "site": "example.com"}}}},
	    {"path": "/event_subscriptions", "body": {"description": "to ${dest}", "destination_ids": ["${dest}"]}}
	  ],
	  "accounts": [
	    {"id": "ac_second", "api_keys": ["second-key"], "resources": [
	      {"path": "/backends/http_response", "ref": "down", "body": {"status_code": 503}},
	      {"path": "/backends/http_response", "ref": "up", "body": {"status_code": 200}},
	      {"path": "/backends/failover", "body": {"description": "literal \u0024{x}", "backends": ["${down}", "${up}"]}}
	    ]}
	  ]}`))
	if err != nil {
		t.Fatal(err)
	}
	users := fake.List[account.ServiceUser](srv, "")
	if len(users) != 1 {
		t.Fatalf("service users: %+v", users)
	}
	var owned bool
	for _, k := range fake.List[account.APIKey](srv, "") {
		owned = owned || (k.OwnerID == users[0].ID && k.Description == "ci's key")
	}
	if !owned {
		t.Errorf("no key owned by the fixture service user %s", users[0].ID)
	}
	dests := fake.List[events.Destination](srv, "")
	subs := fake.List[events.Subscription](srv, "")
	if len(dests) != 1 || len(subs) != 1 || len(subs[0].Destinations) != 1 || subs[0].Destinations[0].ID != dests[0].ID ||
		subs[0].Description != "to "+dests[0].ID {
		t.Errorf("subscription %+v, want one to destination %+v", subs, dests)
	}

	fos := fake.List[backends.Failover](srv, "ac_second")
	resp := fake.List[backends.HTTPResponse](srv, "ac_second")
	if len(fos) != 1 || len(resp) != 2 || len(fos[0].Backends) != 2 || fos[0].Description != "literal ${x}" {
		t.Fatalf("failover %+v over %+v", fos, resp)
	}
	for i, code := range []int{503, 200} {
		b, ok := fake.Get[backends.HTTPResponse](srv, "ac_second", fos[0].Backends[i])
		if !ok || b.StatusCode != code {
			t.Errorf("failover backend %d: %+v, want the fixture with status %d", i, b, code)
		}
	}
	if n := len(fake.List[backends.Failover](srv, "")); n != 0 {
		t.Errorf("the first account has %d failovers", n)
	}
	c, err := srv.ClientFor("second-key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backends.NewFailovers(c).Get(t.Context(), fos[0].ID); err != nil {
		t.Errorf("the added account's key: %v", err)
	}
}

// TestFixtureErrors checks that a broken fixtures file is refused, naming
// the fixture and what is wrong.
func TestFixtureErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, fixtures, want string }{
		{"unknown ref", `[{"path": "/api_keys", "body": {"owner_id": "${nobody}"}}]`, `fixture 0 (/api_keys): ${nobody} names no earlier`},
		{"ref used before it is made", `[{"path": "/api_keys", "body": {"owner_id": "${u}"}}, {"path": "/service_users", "ref": "u", "body": {"name": "u"}}]`, `${u} names no earlier`},
		{"duplicate ref", `[{"path": "/service_users", "ref": "u", "body": {"name": "a"}}, {"path": "/service_users", "ref": "u", "body": {"name": "b"}}]`, `fixture 1 (/service_users): ref "u" names an earlier`},
		{"bad ref name", `[{"path": "/service_users", "ref": "a b", "body": {"name": "a"}}]`, `ref "a b"`},
		{"unknown member", `{"resources": [], "nope": 1}`, `fake: fixtures: the member nope is unknown`},
		{"two arrays", `[{"path": "/service_users", "body": {"name": "a"}}][{"path": "/service_users", "body": {"name": "b"}}]`, `fake: fixtures: the input has data after its JSON value`},
		{"trailing word", `[{"path": "/service_users", "body": {"name": "a"}}] trailing`, `the input has data after its JSON value`},
		{"trailing object", `{"resources": []} {}`, `the input has data after its JSON value`},
		{"member in another case", `[{"Path": "/service_users", "body": {"name": "a"}}]`, `fake: fixtures: [0]: the member Path is unknown`},
		{"top member in another case", `{"Resources": []}`, `the member Resources is unknown`},
		{"account member in another case", `{"accounts": [{"API_Keys": ["k"]}]}`, `fake: fixtures: accounts[0]: the member API_Keys is unknown`},
		{"unknown account member", `{"accounts": [{"keys": ["k"]}]}`, `accounts[0]: the member keys is unknown`},
		{"unknown member in an account's resource", `{"accounts": [{"resources": [{"path": "/service_users", "body": {}}, {"path": "/service_users", "Body": {}}]}]}`, `fake: fixtures: accounts[0].resources[1]: the member Body is unknown`},
		{"unknown member in a first-account resource", `{"resources": [{"path": "/service_users", "body": {"name": "a"}}, {"path": "/service_users", "bdy": {}}]}`, `fake: fixtures: resources[1]: the member bdy is unknown`},
		{"member twice", `[{"path": "/service_users", "path": "/api_keys", "body": {}}]`, `fake: fixtures: the member [0].path appears more than once`},
		{"member twice in an account", `{"accounts": [{"resources": [{"path": "/service_users", "body": {"name": "a", "name": "b"}}]}]}`, `the member accounts[0].resources[0].body.name appears more than once`},
		{"fixture not an object", `[1]`, `[0]: the value must be a JSON object`},
		{"not JSON", `[{"path": }]`, `the input is not valid JSON`},
		{"account key with space", `{"accounts": [{"api_keys": ["a b"]}]}`, `accounts[0].api_keys[0]`},
		{"account exists", `{"accounts": [{"id": "ac_x"}, {"id": "ac_x"}]}`, `accounts[1].id: is taken: account "ac_x" exists`},
		{"user of another account", `{"accounts": [{"id": "ac_x", "user_id": "usr_x"}, {"user_id": "usr_x"}]}`, `accounts[1].user_id: is taken: it is account "ac_x"'s user`},
		{"account id with a space", `{"accounts": [{"id": "ac_a b"}]}`, `accounts[0].id: "ac_a b" is not ac_`},
		{"user id without usr_", `{"accounts": [{"user_id": "u1"}]}`, `accounts[0].user_id: "u1" is not usr_`},
		{"account key in use", `{"accounts": [{"api_keys": ["k"]}, {"api_keys": ["j", "k"]}]}`, `accounts[1].api_keys[1]: is already in use`},
		{"trailing slash", `[{"path": "/service_users", "body": {"name": "a"}}, {"path": "/service_users/", "body": {"name": "b"}}]`, `fake: fixture 1 (/service_users/): write the path "/service_users", as the API spells it`},
		{"two slashes", `[{"path": "//service_users", "body": {"name": "a"}}]`, `fake: fixture 0 (//service_users): write the path "/service_users"`},
		{"bad resource in an account", `{"accounts": [{"resources": [{"path": "/service_users", "body": {"name": ""}}]}]}`, `fixture accounts[0].resources[0] (/service_users)`},
		// What the server sets is refused, given at all, as an unknown
		// member is for other resources (whose create requests have no
		// id): once replaced silently. Fixtures name each other by "ref".
		{"tunnel id", `[{"path":"/tunnels","body":{"id":"tn_web","labels":{"app":"web"}}},{"path":"/endpoints","body":{"id":"ep_web","url":"https://web.example","created_at":"2020-01-01T00:00:00Z","tunnel":{"id":"tn_web"},"principal":{"id":"usr_nobody"}}}]`,
			`fake: fixture 0 (/tunnels): "id" is set by the server: leave it out; give the fixture a "ref"`},
		{"empty tunnel id", `[{"path": "/tunnels", "body": {"id": ""}}]`, `fixture 0 (/tunnels): "id" is set by the server`},
		{"tunnel uri and created_at", `[{"path": "/tunnels", "body": {"uri": "", "created_at": "2020-01-01T00:00:00Z"}}]`, `fixture 0 (/tunnels): "uri" and "created_at" are set by the server`},
		{"endpoint id and created_at", `[{"path": "/endpoints", "body": {"id": "ep_web", "url": "https://web.example", "created_at": "2020-01-01T00:00:00Z"}}]`,
			`fixture 0 (/endpoints): "id" and "created_at" are set by the server`},
		{"endpoint uri and updated_at", `[{"path": "/endpoints", "body": {"uri": "x", "updated_at": "2020-01-01T00:00:00Z"}}]`, `"uri" and "updated_at" are set by the server`},
		// A reference to what the fake stores must be to something there.
		{"unknown tunnel", `[{"path": "/endpoints", "body": {"tunnel": {"id": "tn_web"}}}]`, `fixture 0 (/endpoints): tunnel.id: "tn_web" is no tunnel of the account`},
		{"empty tunnel", `[{"path": "/endpoints", "body": {"tunnel": {}}}]`, `tunnel.id: "" is no tunnel of the account`},
		{"another account's tunnel", `{"resources": [{"path": "/tunnels", "ref": "t", "body": {}}], "accounts": [{"resources": [{"path": "/endpoints", "body": {"tunnel": {"id": "${t}"}}}]}]}`,
			`fixture accounts[0].resources[0] (/endpoints): tunnel.id: "tn_`},
		{"unknown principal", `[{"path": "/endpoints", "body": {"principal": {"id": "usr_nobody"}}}]`, `principal.id: "usr_nobody" is neither the account's user`},
		{"another account's service user", `{"resources": [{"path": "/service_users", "ref": "u", "body": {"name": "u"}}], "accounts": [{"resources": [{"path": "/endpoints", "body": {"principal": {"id": "${u}"}}}]}]}`,
			`principal.id: "service_`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fake.Start(t, fake.WithoutListener())
			err := srv.LoadFixtures(strings.NewReader(tt.fixtures))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
			if strings.Contains(tt.want, "input") || strings.Contains(tt.want, "member") {
				// The file is refused as a whole, before anything is made.
				if got := fake.List[account.ServiceUser](srv, ""); len(got) != 0 {
					t.Errorf("service users after a refused file: %+v", got)
				}
			}
		})
	}
}

// TestFixtureEndpointRefs checks that an endpoint fixture refers to a
// tunnel and a service user through their fixtures' refs, that its
// principal is the account's user when it names none, and that a tunnel an
// endpoint refers to is not deleted from under it.
func TestFixtureEndpointRefs(t *testing.T) {
	t.Parallel()
	srv := fake.Start(t, fake.WithoutListener())
	err := srv.LoadFixtures(strings.NewReader(`[
	  {"path": "/tunnels", "ref": "web", "body": {"labels": {"app": "web"}}},
	  {"path": "/service_users", "ref": "ci", "body": {"name": "ci"}},
	  {"path": "/endpoints", "body": {"name": "by-ci", "tunnel": {"id": "${web}"}, "principal": {"id": "${ci}"}}},
	  {"path": "/endpoints", "body": {"name": "by-user"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	tn := fake.List[fake.Tunnel](srv, "")[0]
	ci := fake.List[account.ServiceUser](srv, "")[0]
	got := map[string][2]string{}
	for _, ep := range fake.List[k8sop.Endpoint](srv, "") {
		var tunnel string
		if ep.Tunnel != nil {
			tunnel = ep.Tunnel.ID
		}
		got[ep.Name] = [2]string{tunnel, ep.Principal.ID}
	}
	want := map[string][2]string{"by-ci": {tn.ID, ci.ID}, "by-user": {"", srv.Accounts()[0].UserID}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("endpoints' tunnel and principal (-want +got):\n%s", diff)
	}
	if err := fake.Delete[fake.Tunnel](srv, "", tn.ID); err == nil || !strings.Contains(err.Error(), acctapi.CodeStillReferenced) {
		t.Errorf("Delete of a tunnel an endpoint refers to: %v, want %s", err, acctapi.CodeStillReferenced)
	}
}

// Fixtures may name what they create and refer to it later, and may add
// accounts with resources of their own.
func ExampleServer_LoadFixtures() {
	srv, err := fake.New(fake.WithoutListener())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	err = srv.LoadFixtures(strings.NewReader(`{
	  "resources": [
	    {"path": "/service_users", "ref": "ci-user", "body": {"name": "ci"}},
	    {"path": "/api_keys", "body": {"description": "ci's key", "owner_id": "${ci-user}"}}
	  ],
	  "accounts": [
	    {"id": "ac_second", "api_keys": ["second-key"], "resources": [
	      {"path": "/service_users", "body": {"name": "second"}}
	    ]}
	  ]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ci := fake.List[account.ServiceUser](srv, "")[0]
	for _, k := range fake.List[account.APIKey](srv, "") {
		if k.Description == "ci's key" {
			fmt.Println("ci's key is owned by ci:", k.OwnerID == ci.ID)
		}
	}
	fmt.Println("second account:", fake.List[account.ServiceUser](srv, "ac_second")[0].Name)
	// Output:
	// ci's key is owned by ci: true
	// second account: second
}

// spaces reads as n bytes: "[", then spaces.
type spaces struct{ n, read int }

func (s *spaces) Read(p []byte) (int, error) {
	if s.read == s.n {
		return 0, io.EOF
	}
	k := min(len(p), s.n-s.read)
	for i := range k {
		p[i] = ' '
	}
	if s.read == 0 && k > 0 {
		p[0] = '['
	}
	s.read += k
	return k, nil
}

// TestFixturesOverLimit pins that fixtures longer than MaxFixturesBytes
// are refused as such, and nothing created: before, they were cut at 64
// MiB without a word and then reported as JSON that is not valid.
func TestFixturesOverLimit(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	err := srv.LoadFixtures(&spaces{n: fake.MaxFixturesBytes + 1})
	if err == nil || !strings.Contains(err.Error(), "over 67108864 bytes, the most LoadFixtures reads") {
		t.Errorf("fixtures of 64 MiB and a byte: %v; want them refused for their size", err)
	}
	// At the limit, they are read (and this input, "[" and spaces, is
	// then not valid JSON).
	err = srv.LoadFixtures(&spaces{n: fake.MaxFixturesBytes})
	if err == nil || strings.Contains(err.Error(), "the most LoadFixtures reads") {
		t.Errorf("fixtures of 64 MiB: %v; want them read, and refused as JSON", err)
	}
	if n := len(fake.List[account.ServiceUser](srv, "")); n != 0 {
		t.Errorf("%d service users created", n)
	}
}

// TestLoadFixturesNil: a nil reader is a misuse named in an error, not a
// nil-pointer panic (a review's finding).
func TestLoadFixturesNil(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	if err := srv.LoadFixtures(nil); err == nil || !strings.Contains(err.Error(), "nil io.Reader") {
		t.Errorf("LoadFixtures(nil) = %v; want an error naming the nil reader", err)
	}
}

// TestLoadFixturesEmpty pins a review's finding: fixtures that create
// nothing ([], or empty "resources" and "accounts") were accepted, while
// {} and null were refused, so a fixtures file that lost its contents
// started a server that a test then found empty. All are refused now.
func TestLoadFixturesEmpty(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	for _, raw := range []string{`[]`, ` [ ] `, `{"resources": []}`, `{"accounts": []}`, `{"resources": [], "accounts": []}`} {
		if err := srv.LoadFixtures(strings.NewReader(raw)); err == nil || !strings.Contains(err.Error(), "create nothing") {
			t.Errorf("LoadFixtures(%s) = %v; want an error saying they create nothing", raw, err)
		}
	}
	if err := srv.LoadFixtures(strings.NewReader(`{"accounts": [{"id": "ac_x"}]}`)); err != nil {
		t.Errorf("an account alone: %v", err)
	}
}

// TestFixtureAPIKeys pins a review's finding: an API key a fixture made
// for a service user had a token no one was ever shown, so it could not be
// used. FixtureAPIKeys gives it, and it authenticates as its owner.
func TestFixtureAPIKeys(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	err := srv.LoadFixtures(strings.NewReader(`[
		{"path": "/service_users", "ref": "ci-user", "body": {"name": "ci"}},
		{"path": "/api_keys", "ref": "ci-key", "body": {"owner_id": "${ci-user}"}},
		{"path": "/api_keys", "body": {"description": "the user's"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	keys := srv.FixtureAPIKeys()
	if len(keys) != 2 || keys[0].Ref != "ci-key" || keys[1].Ref != "" || keys[0].Token == "" || keys[0].Token == keys[1].Token {
		t.Fatalf("FixtureAPIKeys = %+v; want the two keys, in order, with their tokens", keys)
	}
	ci, ok := fake.Get[account.ServiceUser](srv, "", keys[0].OwnerID)
	if !ok || ci.Name != "ci" {
		t.Fatalf("the ci key's owner %q is not the ci service user", keys[0].OwnerID)
	}
	r := raw(t, srv, "GET", "/api_keys/"+keys[0].ID, map[string]string{"Authorization": "Bearer " + keys[0].Token}, "")
	if r.status != 200 {
		t.Errorf("GET with the fixture key's token: %d %s", r.status, r.body)
	}
}

// TestFixtureBounds: a fixtures file is bounded in accounts (refused
// before any is made) and in each body's bytes, before and after its
// ${ref}s are written out (a review's file of 64 MiB of "${a}" took 19 s
// and 6 GB to refuse for its list's length; one of a million accounts did
// not finish in 9 minutes).
func TestFixtureBounds(t *testing.T) {
	t.Parallel()
	accounts := func(n int) string {
		return `{"accounts": [` + strings.TrimSuffix(strings.Repeat(`{},`, n), ",") + `]}`
	}
	refs := func(n int) string {
		return `[{"path": "/backends/http_response", "ref": "a", "body": {"status_code": 200}},
			{"path": "/backends/failover", "body": {"backends": [` + strings.TrimSuffix(strings.Repeat(`"${a}",`, n), ",") + `]}}]`
	}
	for _, tt := range []struct {
		name, fixtures, want string
	}{
		{"accounts past the bound", accounts(fake.MaxAccounts), "accounts: has 100 accounts; the server holds 1 and at most 100 in all"},
		{"a body over MaxBodyBytes", `[{"path": "/service_users", "body": {"name": "` + strings.Repeat("x", fake.MaxBodyBytes) + `"}}]`,
			"fixture 0 (/service_users): body is 1048588 bytes; at most 1048576"},
		// 140,000 refs of 7 bytes (with quotes and comma) fit in 1 MiB; as
		// ids of 33 bytes they do not.
		{"a body over MaxBodyBytes once its refs are written out", refs(140_000), "fixture 1 (/backends/failover): body is 5040015 bytes with its ${ref}s written out"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fake.Start(t, fake.WithoutListener())
			err := srv.LoadFixtures(strings.NewReader(tt.fixtures))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
		})
	}
	// At the bound, the accounts are made.
	srv := fake.Start(t, fake.WithoutListener())
	if err := srv.LoadFixtures(strings.NewReader(accounts(fake.MaxAccounts - 1))); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Accounts()); n != fake.MaxAccounts {
		t.Errorf("%d accounts, want %d", n, fake.MaxAccounts)
	}
	if _, err := srv.AddAccount(fake.Account{}); err == nil || !strings.Contains(err.Error(), "fake.MaxAccounts") {
		t.Errorf("AddAccount past the bound: %v; want it refused, naming fake.MaxAccounts", err)
	}
	// So are options for more accounts than that.
	opts := make([]fake.Option, fake.MaxAccounts+1)
	for i := range opts {
		opts[i] = fake.WithAccount(fake.Account{})
	}
	if _, err := fake.New(opts...); err == nil || !strings.Contains(err.Error(), "fake: WithAccount: more than 100 accounts (fake.MaxAccounts)") {
		t.Errorf("New with %d WithAccount options: %v; want it refused, naming fake.MaxAccounts", len(opts), err)
	}
	if s, err := fake.New(opts[:fake.MaxAccounts]...); err != nil {
		t.Errorf("New with %d WithAccount options: %v", fake.MaxAccounts, err)
	} else {
		s.Close()
	}
}
