package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/rest"
)

func ExamplePath() {
	// Each segment is escaped, so an id with a slash stays one segment.
	fmt.Println(rest.Path("service_users", "a/b c"))
	// Output:
	// /service_users/a%2Fb%20c
}

// note and noteList are a small resource and its list response, as a
// resource package would define them.
type note struct {
	ID string `json:"id"`
}

type noteList struct {
	Notes       []note  `json:"notes"`
	NextPageURI *string `json:"next_page_uri"`
}

func (l *noteList) PageItems() []note { return l.Notes }

func (l *noteList) NextPage() string {
	if l.NextPageURI == nil {
		return ""
	}
	return *l.NextPageURI
}

func ExampleAll() {
	// A list of three notes served two to a page.
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("GET", r.URL.RequestURI())
		page := noteList{Notes: []note{{"note_3"}, {"note_2"}}}
		if r.URL.Query().Get("before_id") == "" {
			next := srv.URL + "/notes?before_id=note_2&limit=2"
			page.NextPageURI = &next
		} else {
			page.Notes = []note{{"note_1"}}
		}
		json.NewEncoder(w).Encode(page)
	}))
	defer srv.Close()

	c, err := acctapi.NewClient("secret-key", acctapi.WithBaseURL(srv.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for n, err := range rest.All[note, noteList](ctx, c, rest.Path("notes"), &acctapi.ListOptions{Limit: 2}) {
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(n.ID)
	}
	// Output:
	// GET /notes?limit=2
	// note_3
	// note_2
	// GET /notes?before_id=note_2&limit=2
	// note_1
}
