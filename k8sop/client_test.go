package k8sop

import (
	"context"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
)

// op makes a call of an Operators operation.
func op(do func(context.Context, *Operators) error) func(context.Context, *acctapi.Client) error {
	return func(ctx context.Context, c *acctapi.Client) error { return do(ctx, NewOperators(c)) }
}

func TestOperatorsClient(t *testing.T) {
	const list = `{"operators":[{"id":"k8sop_1"}],"endpoints":[{"id":"ep_1"}],"uri":"u","next_page_uri":null}`
	apitest.RunCalls(t, list, []apitest.Call{
		{"create", op(func(ctx context.Context, s *Operators) error {
			_, err := s.Create(ctx, &OperatorCreate{Description: "d", EnabledFeatures: []string{"Ingress"}, Deployment: Deployment{Name: "n"}})
			return err
		}), apitest.Request{"POST", "/kubernetes_operators", "", `{"description":"d","metadata":"","enabled_features":["Ingress"],"region":"","deployment":{"name":"n","namespace":"","version":"","cluster_name":""}}`}},
		{"get", op(func(ctx context.Context, s *Operators) error {
			_, err := s.Get(ctx, "k8sop/1")
			return err
		}), apitest.Request{"GET", "/kubernetes_operators/k8sop%2F1", "", ""}},
		{"update", op(func(ctx context.Context, s *Operators) error {
			_, err := s.Update(ctx, &OperatorUpdate{ID: "k8sop_1", Metadata: apitest.Ptr("m"), Deployment: &DeploymentUpdate{Version: apitest.Ptr("2")}})
			return err
		}), apitest.Request{"PATCH", "/kubernetes_operators/k8sop_1", "", `{"id":"k8sop_1","metadata":"m","deployment":{"version":"2"}}`}},
		{"delete", op(func(ctx context.Context, s *Operators) error {
			return s.Delete(ctx, "k8sop_1")
		}), apitest.Request{"DELETE", "/kubernetes_operators/k8sop_1", "", ""}},
		{"list", op(func(ctx context.Context, s *Operators) error {
			return apitest.Drain(s.List(ctx, &acctapi.ListOptions{Limit: 5}))
		}), apitest.Request{"GET", "/kubernetes_operators", "limit=5", ""}},
		{"page", op(func(ctx context.Context, s *Operators) error {
			_, err := s.Page(ctx, &acctapi.ListOptions{BeforeID: "k8sop_9"})
			return err
		}), apitest.Request{"GET", "/kubernetes_operators", "before_id=k8sop_9", ""}},
		{"bound endpoints", op(func(ctx context.Context, s *Operators) error {
			return apitest.Drain(s.BoundEndpoints(ctx, "k8sop 1", &acctapi.ListOptions{Limit: 2}))
		}), apitest.Request{"GET", "/kubernetes_operators/k8sop%201/bound_endpoints", "limit=2", ""}},
		{"bound endpoints page", op(func(ctx context.Context, s *Operators) error {
			_, err := s.BoundEndpointsPage(ctx, "k8sop_1", nil)
			return err
		}), apitest.Request{"GET", "/kubernetes_operators/k8sop_1/bound_endpoints", "", ""}},
	})
}

func TestClientValidatesBeforeSending(t *testing.T) {
	c, srv := apitest.NewRecorder(t, `{}`)
	_, err := NewOperators(c).Create(t.Context(), &OperatorCreate{EnabledFeatures: []string{"nope"}})
	if !acctapi.HasCode(err, acctapi.CodeInvalidValue) || len(srv.Requests()) != 0 {
		t.Errorf("Create = %v, requests %+v; want a field error and no request", err, srv.Requests())
	}
}
