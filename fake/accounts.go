package fake

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake/internal/store"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
)

// Table names, which filter caches key by.
var (
	kindAPIKey  = resources.APIKeys.Name
	kindSvcUser = resources.ServiceUsers.Name
)

// tokenHash is the SHA-256 of an API key's token, as raw bytes: what the
// store keeps of a key's token, beside the key.
type tokenHash string

// hashToken returns the hash of a token, the form keys are stored in.
func hashToken(token string) tokenHash {
	sum := sha256.Sum256([]byte(token))
	return tokenHash(sum[:])
}

// registerAccounts defines the accounts' tables. An account's row is the
// account (without its keys' tokens) in its own account. The initial
// tokens table keeps the hash of every token an account was added with,
// deleted or not, so that no other account is ever added with it; it is
// in the store, so that a snapshot restores it with the keys. The usage
// table has one row per account: how many resources it stores.
func (s *Server) registerAccounts() {
	// An account's row carries its user id as its token: unique across
	// accounts, and found without a scan (AddAccount).
	s.accts = store.Define(s.schema, "accounts", store.Constraints[Account, accountUser]{
		Token: func(u accountUser) string { return string(u) },
	})
	s.initialTokens = store.Define(s.schema, "initial_tokens", store.Constraints[none, tokenHash]{
		Token: func(x tokenHash) string { return string(x) },
	})
	s.usage = store.Define(s.schema, "usage", store.Constraints[int, none]{})
}

// accountUser is an account row's extra data: its user id, which no
// other account has.
type accountUser string

// MaxTokenBytes is the longest API key token an [Account] may give.
const MaxTokenBytes = 256

// MaxAccounts is the most accounts a server holds, the first included
// ([WithAccount], [Server.AddAccount], fixtures and acctfake's admin API
// alike): a test of isolation needs a few. Each account's requests find
// it among them, and the admin API lists them all in one answer.
const MaxAccounts = 100

// MaxAccountKeys is the most initial API keys an [Account] may give. An
// account needs one key, a test of key rotation or of several principals a
// few more; 1,000 leaves room for any such use.
const MaxAccountKeys = 1000

// check reports what is wrong with a, if anything, as a *field.Error naming
// the member as a fixtures file spells it ("id", "user_id",
// "api_keys[i]"; never a token's value): an id other than "ac_" and up to
// 64 letters, digits, "_" or "-", a user id other than "usr_" and the same,
// more than MaxAccountKeys tokens, a token that is empty, longer than
// MaxTokenBytes or holds anything but printable ASCII other than space (a
// token travels in a header).
func (a Account) check() error {
	if a.ID != "" && !idLike(a.ID, "ac_") {
		return field.Invalid("id", "%q is not ac_ and up to 64 letters, digits, _ or -", truncate(a.ID, 64))
	}
	if a.UserID != "" && !idLike(a.UserID, "usr_") {
		return field.Invalid("user_id", "%q is not usr_ and up to 64 letters, digits, _ or -", truncate(a.UserID, 64))
	}
	if len(a.APIKeys) > MaxAccountKeys {
		return field.Invalid("api_keys", "has %d keys; at most %d are allowed", len(a.APIKeys), MaxAccountKeys)
	}
	for i, k := range a.APIKeys {
		ok := k != "" && len(k) <= MaxTokenBytes
		for j := 0; ok && j < len(k); j++ {
			ok = k[j] > ' ' && k[j] < 0x7f
		}
		if !ok {
			// Name the key by its place, never by its value.
			return field.Invalid(fmt.Sprintf("api_keys[%d]", i), "is empty, longer than %d bytes, or holds other than printable ASCII without spaces", MaxTokenBytes)
		}
	}
	return nil
}

// idLike reports whether id is prefix and 1 to 64 letters, digits, "_" or
// "-".
func idLike(id, prefix string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || rest == "" || len(rest) > 64 {
		return false
	}
	for _, c := range []byte(rest) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// AddAccount adds an account to a running server and returns it with its
// ids and keys filled in. A malformed id, user id or token (see [Account]),
// more than [MaxAccountKeys] tokens or more than the server's resource
// bound ([WithMaxResources]; each key is a resource), and an account id,
// user id or token already in use are errors; so is the token of another
// account's initial key even after that key was deleted, so that a token
// never names two accounts (see [Server.APIKey]). A server that holds
// [MaxAccounts] accounts refuses another. One about a member is, or wraps, an
// [acctapi.FieldError] naming it as a fixtures file does ("id", "user_id",
// "api_keys", "api_keys[i]"). Its cost grows with the number of tokens
// given, not with the accounts and keys the server holds.
func (s *Server) AddAccount(a Account) (Account, error) {
	if err := a.check(); err != nil {
		return Account{}, fmt.Errorf("fake: AddAccount: %w", err)
	}
	if n, bound := len(a.APIKeys), s.cfg.maxResources(); n > bound {
		return Account{}, fmt.Errorf("fake: AddAccount: %w", field.Invalid("api_keys", "has %d keys; the server stores at most %d resources per account", n, bound))
	}
	first := make(map[string]int, len(a.APIKeys))
	for i, tok := range a.APIKeys {
		if j, seen := first[tok]; seen {
			return Account{}, fmt.Errorf("fake: AddAccount: %w", field.Invalid(fmt.Sprintf("api_keys[%d]", i), "repeats api_keys[%d]", j))
		}
		first[tok] = i
	}
	now := s.now()
	if a.ID == "" {
		a.ID = s.ids.next("ac", now)
	}
	if a.UserID == "" {
		a.UserID = s.ids.next("usr", now)
	}
	if len(a.APIKeys) == 0 {
		a.APIKeys = []string{s.env.newToken()}
	}
	a.APIKeys = append([]string(nil), a.APIKeys...)
	// The store and the account list change together, under the lock that
	// Snapshot and Restore take, so neither sees one without the other.
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.accounts); n >= MaxAccounts {
		return Account{}, fmt.Errorf("fake: AddAccount: the server holds %d accounts, the most it holds (fake.MaxAccounts)", n)
	}
	err := s.db.Write(func(tx *store.Txn) error {
		if s.accts.Has(tx, a.ID, a.ID) {
			return fmt.Errorf("fake: AddAccount: %w", field.Invalid("id", "is taken: account %q exists", a.ID))
		}
		// A user is one account's: its id is the owner_id of the
		// account's keys and the principal of what they create.
		if row, taken := s.accts.ByToken(tx, a.UserID); taken {
			return fmt.Errorf("fake: AddAccount: %w", field.Invalid("user_id", "is taken: it is account %q's user", row.Value.ID))
		}
		if err := s.accts.Insert(tx, a.ID, a.ID, Account{ID: a.ID, UserID: a.UserID}, accountUser(a.UserID)); err != nil {
			return err
		}
		hashes := make([]tokenHash, len(a.APIKeys))
		for i, tok := range a.APIKeys {
			// Another account's initial token, deleted or not, and a
			// key's made through the API are taken; checked first, so
			// that a refusal makes no key id.
			hashes[i] = hashToken(tok)
			_, initial := s.initialTokens.ByToken(tx, string(hashes[i]))
			if _, live := s.keys.ByToken(tx, string(hashes[i])); initial || live {
				// Name the key by its place, never by its value.
				return fmt.Errorf("fake: AddAccount: %w", field.Invalid(fmt.Sprintf("api_keys[%d]", i), "is already in use"))
			}
		}
		for _, hash := range hashes {
			key := account.APIKey{ID: s.ids.next("ak", now), CreatedAt: now, OwnerID: a.UserID}
			if err := s.initialTokens.Insert(tx, a.ID, key.ID, none{}, hash); err != nil {
				return err
			}
			if err := s.keys.Insert(tx, a.ID, key.ID, key, hash); err != nil {
				return err
			}
		}
		return s.usage.Insert(tx, a.ID, a.ID, len(a.APIKeys), none{})
	})
	if err != nil {
		return Account{}, err
	}
	s.accounts = append(s.accounts, a)
	return a, nil
}

// Accounts returns the server's accounts, with their user ids and the
// tokens of their initial keys that still authenticate, in the order they
// were added: an initial key deleted through the API (DELETE /api_keys/{id})
// is left out, so an account may list none. Keys created through the API
// are not listed (their tokens are shown only when created).
func (s *Server) Accounts() []Account {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tx := s.db.Read()
	out := make([]Account, len(s.accounts))
	for i, a := range s.accounts {
		a.APIKeys = slices.DeleteFunc(slices.Clone(a.APIKeys), func(tok string) bool {
			row, ok := s.keys.ByToken(&tx, string(hashToken(tok)))
			return !ok || row.Account != a.ID
		})
		out[i] = a
	}
	return out
}

// APIKey returns the token of the first account's first initial key, the
// key [Server.Client] authenticates with. Once that key is deleted through
// the API, APIKey still returns its token, with which every request is
// answered 401 (ERR_NGROK_203), as the real service answers a deleted key:
// the token is never given to another account (see [Server.AddAccount]),
// so neither APIKey nor Client ever acts as another account. Use
// [Server.Accounts] for the keys that still authenticate.
func (s *Server) APIKey() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.accounts[0].APIKeys[0]
}

// countResources adds delta to the number of resources account stores
// (each reference from one to another counting as one), in tx. A delta
// that would take it past the server's bound ([WithMaxResources]) is
// refused with 409 and [acctapi.CodeResourceLimit], and changes nothing.
func (s *Server) countResources(tx *store.Txn, accountID string, delta int) error {
	row, err := s.room(tx, accountID, delta, false)
	if err != nil {
		return err
	}
	return s.usage.Replace(tx, row, row.Value+delta, none{})
}

// checkRoom is countResources without the change: whether the account
// has room for need more. atLeast says need is a lower bound (a create's
// references are known once it is built), as the refusal then says.
func (s *Server) checkRoom(tx *store.Txn, accountID string, need int, atLeast bool) error {
	_, err := s.room(tx, accountID, need, atLeast)
	return err
}

// room returns the account's count, or the 409 if need more would pass
// the bound.
func (s *Server) room(tx *store.Txn, accountID string, need int, atLeast bool) (store.Row[int, none], error) {
	row, ok := s.usage.Get(tx, accountID, accountID)
	if !ok {
		return row, fmt.Errorf("fake: no usage of account %q", accountID)
	}
	if bound := s.cfg.maxResources(); need > 0 && row.Value+need > bound {
		needs := fmt.Sprintf("%d", need)
		if atLeast {
			needs = "at least " + needs
		}
		return row, errorf(http.StatusConflict, acctapi.CodeResourceLimit,
			"The account stores %d resources, each reference from one to another counting as one, of the %d this server allows; this request needs %s more. Delete some first.",
			row.Value, bound, needs)
	}
	return row, nil
}

// accountOf returns the account id for a, or the first account for "".
func (s *Server) accountOf(id string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id == "" {
		return s.accounts[0].ID, nil
	}
	for _, a := range s.accounts {
		if a.ID == id {
			return a.ID, nil
		}
	}
	return "", fmt.Errorf("fake: no account %q", id)
}

// accountUser returns an account's user id as the store has it; hooks
// use it inside a transaction, where taking s.mu could deadlock.
func (s *Server) accountUser(tx *store.Txn, accountID string) string {
	row, _ := s.accts.Get(tx, accountID, accountID)
	return row.Value.UserID
}

// userOf returns an account's user id.
func (s *Server) userOf(accountID string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, a := range s.accounts {
		if a.ID == accountID {
			return a.UserID
		}
	}
	return ""
}

// serviceUserActive reports whether a service user exists and is active.
func (s *Server) serviceUserActive(tx *store.Txn, accountID, id string) bool {
	row, ok := s.users.Get(tx, accountID, id)
	return ok && row.Value.Active
}
