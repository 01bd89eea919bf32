package fake

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/acctapi/acctapi/account"
)

const (
	kindAccount = "account"
	kindAPIKey  = "api_keys"
	kindSvcUser = "service_users"
	kindCA      = "certificate_authorities"
)

// AddAccount adds an account to a running server and returns it with its
// ids and keys filled in. An account id already in use is an error.
func (s *Server) AddAccount(a Account) (Account, error) {
	now := s.now()
	if a.ID == "" {
		a.ID = s.ids.next("ac", now)
	}
	if a.UserID == "" {
		a.UserID = s.ids.next("usr", now)
	}
	if len(a.APIKeys) == 0 {
		a.APIKeys = []string{s.newToken()}
	}
	a.APIKeys = append([]string(nil), a.APIKeys...)
	// The store and the account list change together, under the lock that
	// Snapshot and Restore take, so neither sees one without the other.
	s.mu.Lock()
	defer s.mu.Unlock()
	txn := s.db.Txn(true)
	defer txn.Abort()
	if lookup(txn, a.ID, kindAccount, a.ID) != nil {
		return Account{}, fmt.Errorf("fake: AddAccount: account %q exists", a.ID)
	}
	if err := insert(txn, &object{Account: a.ID, Kind: kindAccount, ID: a.ID, Value: Account{ID: a.ID, UserID: a.UserID}}); err != nil {
		return Account{}, err
	}
	for i, tok := range a.APIKeys {
		key := account.APIKey{ID: s.ids.next("ak", now), CreatedAt: now, OwnerID: a.UserID}
		o := &object{Account: a.ID, Kind: kindAPIKey, ID: key.ID, Value: key}
		if err := s.store(txn, o, meta{token: hashToken(tok)}, nil); err != nil {
			// Name the key by its place, never by its value.
			return Account{}, fmt.Errorf("fake: AddAccount: APIKeys[%d] is already in use", i)
		}
	}
	txn.Commit()
	s.accounts = append(s.accounts, a)
	return a, nil
}

// Accounts returns the server's accounts, with their user ids and initial
// keys, in the order they were added.
func (s *Server) Accounts() []Account {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Account, len(s.accounts))
	for i, a := range s.accounts {
		a.APIKeys = append([]string(nil), a.APIKeys...)
		out[i] = a
	}
	return out
}

// APIKey returns the first key of the first account.
func (s *Server) APIKey() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.accounts[0].APIKeys[0]
}

// newToken makes an API key token: random base-62 text, shaped like the
// real service's tokens.
func (s *Server) newToken() string {
	return s.ids.token(27) + "_" + s.ids.token(22)
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

// accountUser returns an account's user id as the store has it; handlers
// use it inside a transaction, where taking s.mu could deadlock.
func accountUser(txn *memdb.Txn, accountID string) string {
	if o := lookup(txn, accountID, kindAccount, accountID); o != nil {
		return o.Value.(Account).UserID
	}
	return ""
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

// keyOwner returns the owner_id of a stored API key.
func keyOwner(o *object) string {
	k, _ := o.Value.(account.APIKey)
	return k.OwnerID
}

// serviceUserActive reports whether a service user exists and is active.
func serviceUserActive(txn *memdb.Txn, accountID, id string) bool {
	o := lookup(txn, accountID, kindSvcUser, id)
	if o == nil {
		return false
	}
	return o.Value.(account.ServiceUser).Active
}
