package account_test

import (
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/internal/apitest"
)

// TestCursorOfAnotherCollection: a before_id that is plainly another
// collection's id is refused before sending, as a path's is: the server
// takes any before_id, so a service users' page after an API key's id
// was empty, with no error (a misuse review). Without validation it is
// sent, and an id of no known prefix always is.
func TestCursorOfAnotherCollection(t *testing.T) {
	t.Parallel()
	c, rec := apitest.NewRecorder(t, `{"service_users": [], "uri": "x", "next_page_uri": null}`)
	_, err := account.NewServiceUsers(c).Page(t.Context(), &acctapi.FilterOptions{BeforeID: "ak_2x"})
	if fes := acctapi.FieldErrors(err); len(fes) != 1 || fes[0].Field != "before_id" || len(rec.Requests()) != 0 {
		t.Errorf("Page after an API key's id: %v, %d requests; want a field error on before_id and none", err, len(rec.Requests()))
	}
	// The deprecated alias is its collection too.
	if _, err := account.NewBotUsers(c).Page(t.Context(), &acctapi.ListOptions{BeforeID: "ak_2x"}); acctapi.FieldErrors(err) == nil {
		t.Errorf("bot users after an API key's id: %v; want a field error on before_id", err)
	}
	if _, err := account.NewServiceUsers(c).Page(t.Context(), &acctapi.FilterOptions{BeforeID: "service_2x"}); err != nil {
		t.Errorf("Page after a service user's id: %v", err)
	}
	if _, err := account.NewServiceUsers(c).Page(t.Context(), &acctapi.FilterOptions{BeforeID: "made-up"}); err != nil {
		t.Errorf("Page after a made-up id: %v", err)
	}
	lax, err := acctapi.NewClient("k", acctapi.WithBaseURL(c.BaseURL()), acctapi.WithoutValidation(), acctapi.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	sent := len(rec.Requests())
	if _, err := account.NewServiceUsers(lax).Page(t.Context(), &acctapi.FilterOptions{BeforeID: "ak_2x"}); err != nil || len(rec.Requests()) != sent+1 {
		t.Errorf("Page without validation: %v, %d requests; want it sent", err, len(rec.Requests())-sent)
	}
}
