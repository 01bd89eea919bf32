package fake

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Fixture is one resource to create when loading fixtures: the collection
// path of its create request ("/service_users", "/backends/failover"; also
// "/tunnels" and "/endpoints", which have no API path) and the create
// request's JSON body.
type Fixture struct {
	// Path is the collection path, such as "/service_users".
	Path string `json:"path"`
	// Body is the create request, as it would be sent to Path.
	Body json.RawMessage `json:"body"`
}

// LoadFixtures reads a JSON array of [Fixture] from r and creates each
// resource, in order, in the first account, through the same strict
// decoding, validation and hooks as the API. It stops at the first
// failure, naming the fixture; the fixtures before it stay created.
//
//	[{"path": "/service_users", "body": {"name": "ci"}},
//	 {"path": "/backends/http_response", "body": {"status_code": 418}}]
func (s *Server) LoadFixtures(r io.Reader) error {
	var fixtures []Fixture
	dec := json.NewDecoder(io.LimitReader(r, 64<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fixtures); err != nil {
		return fmt.Errorf("fake: fixtures: %w", err)
	}
	acct, _ := s.accountOf("")
	for i, f := range fixtures {
		info := s.resByKind[strings.Trim(f.Path, "/")]
		if info == nil {
			return fmt.Errorf("fake: fixture %d: unknown path %q", i, f.Path)
		}
		in := info.newIn()
		body := []byte(f.Body)
		if len(body) == 0 {
			body = []byte("{}")
		}
		if err := decode(body, in, &s.members); err != nil {
			return fmt.Errorf("fake: fixture %d (%s): %v", i, f.Path, err)
		}
		c := &call{s: s, now: s.now(), base: s.seedBase(), account: acct, owner: s.userOf(acct)}
		if _, err := info.seed(c, in); err != nil {
			return fmt.Errorf("fake: fixture %d (%s): %v", i, f.Path, err)
		}
	}
	return nil
}
