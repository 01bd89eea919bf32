package fake

import "github.com/acctapi/acctapi/fake/internal/store"

// Snapshot is a saved state of a server's store and accounts, made by
// [Server.Snapshot]. It is immutable and costs almost nothing to take:
// go-memdb shares the unchanged parts of its trees.
type Snapshot struct {
	db       *store.Snapshot
	accounts []Account
}

// Snapshot saves the server's current state. The journal, faults, clock,
// id sequence and the management API rate limit's counts are not part of
// it.
func (s *Server) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &Snapshot{db: s.db.Snapshot(), accounts: append([]Account(nil), s.accounts...)}
}

// Restore puts the server back in the state snap saved. It waits for
// writes in progress. A snapshot can be restored any number of times.
// Restoring costs time in proportion to the service users and API keys snap
// holds (their names and tokens are indexed again), and nothing for the rest.
func (s *Server) Restore(snap *Snapshot) {
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
