package fake

import "github.com/acctapi/acctapi/fake/internal/store"

// Snapshot is a saved state of a server's store and accounts, made by
// [Server.Snapshot]. It is immutable and costs almost nothing to take:
// go-memdb shares the unchanged parts of its trees.
type Snapshot struct {
	server   *Server // the server it was taken of, the only one it restores
	db       *store.Snapshot
	accounts []Account
}

// Snapshot saves the server's current state. The journal, faults, clock,
// id sequence and the management API rate limit's counts are not part of
// it.
func (s *Server) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &Snapshot{server: s, db: s.db.Snapshot(), accounts: append([]Account(nil), s.accounts...)}
}

// Restore puts the server back in the state snap saved. It waits for
// writes in progress. A snapshot can be restored any number of times.
// Restoring costs time in proportion to the service users and API keys snap
// holds (their names and tokens, the accounts' initial tokens included, are
// indexed again), and nothing for the rest.
//
// snap must be a snapshot this server's Snapshot made: Restore panics on a
// nil or zero Snapshot, and on a snapshot of another server, whose
// accounts and keys this one's clients do not know.
func (s *Server) Restore(snap *Snapshot) {
	switch {
	case snap == nil:
		panic("fake: Restore: nil *Snapshot")
	case snap.server == nil:
		panic("fake: Restore: a zero Snapshot; take one with Server.Snapshot")
	case snap.server != s:
		panic("fake: Restore: the snapshot is of another server; restore it on the server whose Snapshot made it")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db.Restore(snap.db)
	s.accounts = append([]Account(nil), snap.accounts...)
}

// Reset puts the server back in the state [New] left it in: its accounts
// and their initial keys, nothing else. It also clears the journal, the
// reactors and what the management API's rate limit ([WithRateLimit]) has
// counted.
func (s *Server) Reset() {
	s.Restore(s.initial)
	s.ClearJournal()
	s.ClearFaults()
	s.limiter.reset()
}
