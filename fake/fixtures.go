package fake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/internal/field"
)

// Fixture is one resource to create when loading fixtures: the collection
// path of its create request ("/service_users", "/backends/failover"; also
// "/tunnels" and "/endpoints", which have no API path) and the create
// request's JSON body. Ref, when set, names the resource for the fixtures
// after it: "${ref}" anywhere in their bodies stands for its id.
type Fixture struct {
	// Path is the collection path, such as "/service_users".
	Path string `json:"path"`
	// Ref names the created resource for later fixtures: letters, digits,
	// '-', '_' and '.', unique in the file.
	Ref string `json:"ref,omitempty"`
	// Body is the create request, as it would be sent to Path.
	Body json.RawMessage `json:"body"`
}

// fixtureFile is the object form of a fixtures file, its lists still
// raw so that each element is decoded on its own and an error names it.
type fixtureFile struct {
	// Resources are created in the server's first account.
	Resources []json.RawMessage `json:"resources"`
	// Accounts are added, each with its resources.
	Accounts []json.RawMessage `json:"accounts"`
}

// fixtureAccount is an account a fixtures file adds ([Server.AddAccount]),
// with the resources to create in it.
type fixtureAccount struct {
	ID        string            `json:"id"`
	UserID    string            `json:"user_id"`
	APIKeys   []string          `json:"api_keys"`
	Resources []json.RawMessage `json:"resources"`
}

// fixtureSet is a decoded fixtures file: the first account's fixtures and
// the accounts to add with theirs.
type fixtureSet struct {
	resources []Fixture
	accounts  []fixtureAccountSet
}

type fixtureAccountSet struct {
	account   Account
	resources []Fixture
}

// refPattern is a reference in a fixture's body; refName is a valid name.
var (
	refPattern = regexp.MustCompile(`\$\{([^}]*)\}`)
	refName    = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

// MaxFixturesBytes is the most [Server.LoadFixtures] reads: 64 MiB.
const MaxFixturesBytes = 64 << 20

// readFixtures reads all of r, and refuses it when it is longer than limit
// bytes: cut, it would be reported as JSON that is not valid.
func readFixtures(r io.Reader, limit int64) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("the input is over %d bytes, the most LoadFixtures reads (MaxFixturesBytes); split it, or seed the rest with Seed", limit)
	}
	return raw, nil
}

// LoadFixtures reads fixtures from r and creates each resource, in order,
// through the same strict decoding, validation and hooks as the API. It
// stops at the first failure, naming the fixture; what came before it
// stays created.
//
// The file itself is read as strictly as a request body, and wholly
// before anything is created: it must be exactly one JSON value (data
// after it, such as a second array, is an error), and every object's
// members must be the documented ones, spelled exactly ("Path" is not
// "path") and given once. Such an error names where it is:
// "[2]" in the array form, "resources[2]", "accounts[0]" or
// "accounts[0].resources[2]" in the object form; a member given twice is
// named by its JSON path ("accounts[0].resources[2].body.name"). A path is
// the API's, its leading "/" optional ("/service_users" or "service_users",
// never "/service_users/", which the API answers 404).
//
// The fixtures are either a JSON array of [Fixture], created in the first
// account:
//
//	[{"path": "/service_users", "body": {"name": "ci"}},
//	 {"path": "/backends/http_response", "body": {"status_code": 418}}]
//
// or an object with the first account's "resources" and further
// "accounts" to add, each with an optional "id", "user_id" and "api_keys"
// (as [Account]; made up when absent) and its own "resources":
//
//	{"resources": [
//	   {"path": "/service_users", "ref": "ci-user", "body": {"name": "ci"}},
//	   {"path": "/api_keys", "body": {"owner_id": "${ci-user}"}}],
//	 "accounts": [
//	   {"id": "ac_second", "api_keys": ["second-key"], "resources": [
//	     {"path": "/backends/http_response", "ref": "down", "body": {"status_code": 503}},
//	     {"path": "/backends/failover", "body": {"backends": ["${down}"]}}]}]}
//
// A fixture with a "ref" names its resource, and "${ref}" in the body of a
// later fixture, in any account, stands for that resource's id. "${" always
// starts a reference; write a literal one as "\u0024{". A fixture never
// gives an id: the server makes it, so an "id" member is refused, as are
// the other members the server sets of a tunnel's or endpoint's body
// (whose body is the record, see [Seed]): "uri", "created_at" and
// "updated_at", even when empty. An endpoint's "tunnel" and "principal"
// must name a tunnel, and the user or a service user, of its account
// (through their fixtures' refs), as Seed requires.
//
// The fixtures are read whole into memory, and at most [MaxFixturesBytes]
// of them: a longer input is refused, saying so, before anything is
// created, as is a file whose accounts would take the server past
// [MaxAccounts]. A fixture's body is at most [MaxBodyBytes], as an API
// request's is, before and after its "${ref}"s are written out.
func (s *Server) LoadFixtures(r io.Reader) error {
	if r == nil {
		return errors.New("fake: fixtures: LoadFixtures was given a nil io.Reader")
	}
	raw, err := readFixtures(r, MaxFixturesBytes)
	if err != nil {
		return fmt.Errorf("fake: fixtures: %w", err)
	}
	set, err := s.parseFixtures(raw)
	if err != nil {
		return fmt.Errorf("fake: fixtures: %w", err)
	}
	refs := map[string]string{}
	first, _ := s.accountOf("")
	if err := s.loadFixtures(first, "", set.resources, refs); err != nil {
		return err
	}
	for i, fa := range set.accounts {
		where := fmt.Sprintf("accounts[%d]", i)
		a, err := s.AddAccount(fa.account)
		if fe := (*field.Error)(nil); errors.As(err, &fe) {
			return fmt.Errorf("fake: fixtures: %s.%s: %s", where, fe.Field, fe.Reason)
		} else if err != nil {
			return fmt.Errorf("fake: fixtures: %s: %v", where, strings.TrimPrefix(err.Error(), "fake: "))
		}
		if err := s.loadFixtures(a.ID, where+".", fa.resources, refs); err != nil {
			return err
		}
	}
	return nil
}

// errNoFixtures refuses fixtures that create nothing ([], or empty
// "resources" and "accounts"): a file that lost its contents would
// otherwise start a server a test then finds empty.
var errNoFixtures = errors.New("the fixtures create nothing (an empty array, or empty \"resources\" and \"accounts\"); give at least one fixture, or no fixtures at all")

// parseFixtures decodes a whole fixtures file before anything is created,
// as strictly as the API decodes a request body (see decode): exactly one
// JSON value, members spelled exactly as documented, none unknown, none
// twice. Each fixture and account is decoded on its own so that an error
// names where it is: "[2]" in the array form, "resources[2]",
// "accounts[0]" or "accounts[0].resources[2]" in the object form.
func (s *Server) parseFixtures(raw []byte) (fixtureSet, error) {
	var set fixtureSet
	var file fixtureFile
	if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && trimmed[0] == '[' {
		if err := s.decodeFixture(raw, &file.Resources, ""); err != nil {
			return set, err
		}
		if len(file.Resources) == 0 {
			return set, errNoFixtures
		}
		resources, err := s.decodeFixtures(file.Resources, "")
		set.resources = resources
		return set, err
	}
	if err := s.decodeFixture(raw, &file, ""); err != nil {
		return set, err
	}
	if file.Resources == nil && file.Accounts == nil {
		return set, errors.New(`want an array of fixtures, or an object with "resources" or "accounts"`)
	}
	if len(file.Resources) == 0 && len(file.Accounts) == 0 {
		return set, errNoFixtures
	}
	// Refused before anything is created, and before the accounts are
	// decoded: a file of a million small accounts took minutes.
	if held := len(s.Accounts()); len(file.Accounts) > MaxAccounts-held {
		return set, fmt.Errorf("accounts: has %d accounts; the server holds %d and at most %d in all (fake.MaxAccounts)", len(file.Accounts), held, MaxAccounts)
	}
	var err error
	if set.resources, err = s.decodeFixtures(file.Resources, "resources"); err != nil {
		return set, err
	}
	for i, rawAccount := range file.Accounts {
		where := fmt.Sprintf("accounts[%d]", i)
		var fa fixtureAccount
		if err := s.decodeFixture(rawAccount, &fa, where); err != nil {
			return set, err
		}
		resources, err := s.decodeFixtures(fa.Resources, where+".resources")
		if err != nil {
			return set, err
		}
		set.accounts = append(set.accounts, fixtureAccountSet{
			account:   Account{ID: fa.ID, UserID: fa.UserID, APIKeys: fa.APIKeys},
			resources: resources,
		})
	}
	return set, nil
}

// decodeFixtures decodes each of a list's fixtures, named in errors as
// where[i].
func (s *Server) decodeFixtures(raws []json.RawMessage, where string) ([]Fixture, error) {
	fixtures := make([]Fixture, len(raws))
	for i, raw := range raws {
		if err := s.decodeFixture(raw, &fixtures[i], fmt.Sprintf("%s[%d]", where, i)); err != nil {
			return nil, err
		}
	}
	return fixtures, nil
}

// decodeFixture decodes one value of a fixtures file with the API's strict
// decode, turning its error, worded for a request body, into one that
// names where the value is ("" for the whole file).
func (s *Server) decodeFixture(raw []byte, v any, where string) error {
	var err error
	if terr := checkText(raw); terr != nil {
		err = terr
	} else {
		err = decode(raw, v, &s.members)
	}
	if err == nil {
		return nil
	}
	body := "the value"
	if where == "" {
		body = "the input"
	}
	msg := err.Error()
	if ae := (*apiError)(nil); errors.As(err, &ae) {
		msg = strings.NewReplacer("The request body", body, "The request member", "the member").Replace(ae.msg)
	}
	if where == "" {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %s", where, msg)
}

// loadFixtures creates fixtures in an account, resolving and recording
// references in refs. where names the account in errors: "" for the first
// (fixtures are named by their index, "fixture 2"), "accounts[1]." for
// another ("fixture accounts[1].resources[2]").
func (s *Server) loadFixtures(acct, where string, fixtures []Fixture, refs map[string]string) error {
	for i, f := range fixtures {
		fail := func(format string, args ...any) error {
			name := fmt.Sprint(i)
			if where != "" {
				name = fmt.Sprintf("%sresources[%d]", where, i)
			}
			return fmt.Errorf("fake: fixture %s (%s): %s", name, f.Path, fmt.Sprintf(format, args...))
		}
		info := s.resByKind[strings.TrimPrefix(f.Path, "/")]
		if info == nil {
			if s.resByKind[strings.Trim(f.Path, "/")] != nil {
				// The API answers 404 to "/service_users/": a fixture is
				// spelt as a request to it would be.
				return fail("write the path %q, as the API spells it", "/"+strings.Trim(f.Path, "/"))
			}
			return fail("unknown path")
		}
		if f.Ref != "" {
			if !refName.MatchString(f.Ref) {
				return fail("ref %q: want 1 to 64 letters, digits, '-', '_' or '.'", f.Ref)
			}
			if _, dup := refs[f.Ref]; dup {
				return fail("ref %q names an earlier fixture too", f.Ref)
			}
		}
		body := []byte(f.Body)
		if len(body) == 0 {
			body = []byte("{}")
		}
		// A body is held to an API body's bound before and after its
		// ${ref}s are written out: a ref of 4 bytes becomes an id of up
		// to 33, and a fixture of 64 MiB of them took 19 s and 6 GB to
		// refuse for its list's length.
		if len(body) > MaxBodyBytes {
			return fail("body is %d bytes; at most %d (fake.MaxBodyBytes)", len(body), MaxBodyBytes)
		}
		var unknown string
		body = refPattern.ReplaceAllFunc(body, func(m []byte) []byte {
			name := string(m[2 : len(m)-1])
			id, ok := refs[name]
			if !ok && unknown == "" {
				unknown = name
			}
			return []byte(id)
		})
		if unknown != "" {
			return fail("${%s} names no earlier fixture's ref", unknown)
		}
		if len(body) > MaxBodyBytes {
			return fail("body is %d bytes with its ${ref}s written out; at most %d (fake.MaxBodyBytes)", len(body), MaxBodyBytes)
		}
		in := info.newIn()
		if err := decode(body, in, &s.members); err != nil {
			return fail("%v", err)
		}
		var given map[string]json.RawMessage
		_ = json.Unmarshal(body, &given) // decode read it as an object, or null
		if names := info.serverSetIn(in, given); len(names) > 0 {
			return fail(`%s set by the server: leave it out; give the fixture a "ref" to write its id as "${ref}" in later fixtures`,
				quoteJoin(names))
		}
		c := &call{s: s, now: s.now(), base: s.seedBase(), account: acct, owner: s.userOf(acct)}
		v, err := info.seed(c, in)
		if err != nil {
			return fail("%v", err)
		}
		if k, ok := v.(account.APIKey); ok && k.Token != nil {
			s.mu.Lock()
			s.fixtureKeys = append(s.fixtureKeys, FixtureAPIKey{Account: acct, Ref: f.Ref, ID: k.ID, OwnerID: k.OwnerID, Token: *k.Token})
			s.mu.Unlock()
		}
		if f.Ref != "" {
			var created struct {
				ID string `json:"id"`
			}
			if raw, err := json.Marshal(v); err != nil || json.Unmarshal(raw, &created) != nil || created.ID == "" {
				return fail("ref %q: the created resource has no id", f.Ref)
			}
			refs[f.Ref] = created.ID
		}
	}
	return nil
}

// FixtureAPIKey is an API key a fixture created (see
// [Server.FixtureAPIKeys]), with its token.
type FixtureAPIKey struct {
	// Account is the id of the key's account.
	Account string
	// Ref is the fixture's "ref", "" when it has none.
	Ref string
	// ID and OwnerID are the key's id and owner_id.
	ID, OwnerID string
	// Token is the key's secret, for the Authorization header.
	Token string
}

// FixtureAPIKeys returns the API keys that fixtures created
// ([Server.LoadFixtures]), with their tokens, in the order created. The
// API shows a key's token only in the answer to the request that creates
// it, which for a fixture no one reads: without this, a key a fixture
// made for a service user ({"path": "/api_keys", "body": {"owner_id":
// "${ci-user}"}}) could never be used. cmd/acctfake prints them at start.
// A key deleted since, or removed by [Server.Reset] (which restores the
// state before the fixtures), no longer authenticates, as any deleted
// key.
func (s *Server) FixtureAPIKeys() []FixtureAPIKey {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.fixtureKeys)
}

// quoteJoin names members for a message: "id", or "id", "uri" and
// "created_at".
func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0] + " is"
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1] + " are"
}
