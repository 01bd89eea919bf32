package k8sop_test

import (
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
	"github.com/acctapi/acctapi/k8sop"
)

// TestCursorOfASubResourceList: an operator's bound endpoints are not a
// collection of their own: a cursor there is not checked against the
// operator's prefix, and a bad operator id is reported as the path's (a
// review saw it named before_id).
func TestCursorOfASubResourceList(t *testing.T) {
	t.Parallel()
	c, _ := apitest.NewRecorder(t, `{"endpoints": [], "uri": "x", "next_page_uri": null}`)
	ops := k8sop.NewOperators(c)
	if _, err := ops.BoundEndpointsPage(t.Context(), "k8sop_1", &acctapi.ListOptions{BeforeID: "ep_2"}); err != nil {
		t.Errorf("bound endpoints after an endpoint's id: %v", err)
	}
	_, err := ops.BoundEndpointsPage(t.Context(), "ep_1", &acctapi.ListOptions{BeforeID: "ep_2"})
	if fes := acctapi.FieldErrors(err); len(fes) != 1 || fes[0].Field != "id" {
		t.Errorf("bound endpoints of an endpoint's id: %v; want a field error on id", err)
	}
}
