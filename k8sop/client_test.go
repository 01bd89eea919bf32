package k8sop

import (
	"context"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
	"github.com/acctapi/acctapi/internal/resources"
)

// op makes a call of an Operators operation.
func op(do func(context.Context, *Operators) error) func(context.Context, *acctapi.Client) error {
	return func(ctx context.Context, c *acctapi.Client) error { return do(ctx, NewOperators(c)) }
}

// reply is the server's answer to every call: an operator or a page of
// either list.
const reply = `{"operators":[{"id":"k8sop_1"}],"endpoints":[{"id":"ep_1"}],"uri":"u","next_page_uri":null}`

func TestOperatorsClient(t *testing.T) {
	bound := "/kubernetes_operators/" + apitest.EscapedID + "/bound_endpoints"
	calls := apitest.CRUDCalls[*Operators, Operator, OperatorList](NewOperators, resources.Operators.Path(),
		&OperatorCreate{Description: "d", EnabledFeatures: []string{"Ingress"}, Deployment: Deployment{Name: "n"}},
		`{"description":"d","metadata":"","enabled_features":["Ingress"],"region":"","deployment":{"name":"n","namespace":"","version":"","cluster_name":""}}`,
		&OperatorUpdate{ID: apitest.ID, Metadata: apitest.Ptr("m"), Deployment: &DeploymentUpdate{Version: apitest.Ptr("2")}},
		`{"id":"a/b c","metadata":"m","deployment":{"version":"2"}}`,
		apitest.Paging(), apitest.PagingQuery)
	calls = append(calls,
		apitest.Call{"update binding", op(func(ctx context.Context, s *Operators) error {
			_, err := s.Update(ctx, &OperatorUpdate{ID: apitest.ID, EnabledFeatures: &[]string{"bindings"},
				Binding: &BindingUpdate{EndpointSelectors: &[]string{"true"}, IngressEndpoint: apitest.Ptr("x:443")}, Region: apitest.Ptr("")})
			return err
		}), apitest.Request{"PATCH", "/kubernetes_operators/" + apitest.EscapedID, "",
			`{"id":"a/b c","enabled_features":["bindings"],"region":"","binding":{"endpoint_selectors":["true"],"ingress_endpoint":"x:443"}}`}},
		apitest.Call{"bound endpoints", op(func(ctx context.Context, s *Operators) error {
			return apitest.Drain(s.BoundEndpoints(ctx, apitest.ID, apitest.Paging()))
		}), apitest.Request{"GET", bound, apitest.PagingQuery, ""}},
		apitest.Call{"bound endpoints page", op(func(ctx context.Context, s *Operators) error {
			_, err := s.BoundEndpointsPage(ctx, apitest.ID, nil)
			return err
		}), apitest.Request{"GET", bound, "", ""}},
	)
	apitest.RunCalls(t, reply, calls)
}

func TestNilOptions(t *testing.T) {
	apitest.RunCalls(t, reply, apitest.CRUDCalls[*Operators, Operator, OperatorList](NewOperators, resources.Operators.Path(),
		&OperatorCreate{}, `{"description":"","metadata":"","enabled_features":null,"region":"","deployment":{"name":"","namespace":"","version":"","cluster_name":""}}`,
		&OperatorUpdate{ID: apitest.ID}, `{"id":"a/b c"}`, nil, ""))
}

func TestClientValidatesBeforeSending(t *testing.T) {
	c, srv := apitest.NewRecorder(t, `{}`)
	_, err := NewOperators(c).Create(t.Context(), &OperatorCreate{EnabledFeatures: []string{"nope"}})
	if !acctapi.HasCode(err, acctapi.CodeInvalidValue) || len(srv.Requests()) != 0 {
		t.Errorf("Create = %v, requests %+v; want a field error and no request", err, srv.Requests())
	}
}
