package fake_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// TestUpdateWithPointerToNil checks that an update member that points to
// a nil slice or map (what `var keep []string` and a loop that appends
// nothing give) removes every element, as a pointer to an empty one does,
// rather than going out as JSON null, which the API reads as absent (a
// review saw such updates answered 200 with nothing changed); and that the
// client's validation and the fake's agree on such a request.
func TestUpdateWithPointerToNil(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()

	hr := must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200,
		Headers: map[string]string{"X-A": "1"}}))(t)
	fos := backends.NewFailovers(srv.Client())
	fo := must(fos.Create(ctx, &backends.FailoverCreate{Backends: []string{hr.ID}}))(t)
	var keep []string
	if got := must(fos.Update(ctx, &backends.FailoverUpdate{ID: fo.ID, Backends: &keep}))(t); len(got.Backends) != 0 {
		t.Errorf("failover backends after an update to a pointer to nil: %v, want none", got.Backends)
	}
	if keep != nil {
		t.Errorf("the caller's slice changed to %#v", keep)
	}

	var noHeaders map[string]string
	hrs := backends.NewHTTPResponses(srv.Client())
	if got := must(hrs.Update(ctx, &backends.HTTPResponseUpdate{ID: hr.ID, Headers: &noHeaders}))(t); len(got.Headers) != 0 {
		t.Errorf("headers after an update to a pointer to nil: %v, want none", got.Headers)
	}

	tgs := backends.NewTunnelGroups(srv.Client())
	tg := must(tgs.Create(ctx, &backends.TunnelGroupCreate{Labels: map[string]string{"app": "a"}}))(t)
	var noLabels map[string]string
	_, errStrict := tgs.Update(ctx, &backends.TunnelGroupUpdate{ID: tg.ID, Labels: &noLabels})
	_, errLax := backends.NewTunnelGroups(srv.Client(acctapi.WithoutValidation())).
		Update(ctx, &backends.TunnelGroupUpdate{ID: tg.ID, Labels: &noLabels})
	sameVerdict(t, "tunnel group labels", errStrict, errLax)

	// One level down: an operator's binding, with features set to none.
	ops := k8sop.NewOperators(srv.Client())
	op := must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{"true"}, CSR: newCSR(t, "op")}}))(t)
	var noSelectors []string
	got := must(ops.Update(ctx, &k8sop.OperatorUpdate{ID: op.ID, Binding: &k8sop.BindingUpdate{EndpointSelectors: &noSelectors}}))(t)
	if got.Binding == nil || len(got.Binding.EndpointSelectors) != 0 {
		t.Errorf("binding after selectors were set to a pointer to nil: %+v, want no selectors", got.Binding)
	}
	var noFeatures []string
	ing := "ing.example:443"
	bad := &k8sop.OperatorUpdate{ID: op.ID, EnabledFeatures: &noFeatures, Binding: &k8sop.BindingUpdate{IngressEndpoint: &ing}}
	_, errStrict = ops.Update(ctx, bad)
	_, errLax = k8sop.NewOperators(srv.Client(acctapi.WithoutValidation())).Update(ctx, bad)
	if errStrict == nil {
		t.Fatal("a binding with features set to none: accepted by the client")
	}
	sameVerdict(t, "operator features", errStrict, errLax)
	if op2 := must(ops.Get(ctx, op.ID))(t); len(op2.EnabledFeatures) != 1 {
		t.Errorf("features after the refused update: %v, want [bindings]", op2.EnabledFeatures)
	}
}

// sameVerdict fails unless the client's validation (strict) and the
// fake's (lax, the same request sent without it) agree: both accept, or
// both refuse with a 400 naming the same field.
func sameVerdict(t *testing.T, what string, strict, lax error) {
	t.Helper()
	if (strict == nil) != (lax == nil) {
		t.Fatalf("%s: the client says %v, the fake %v", what, strict, lax)
	}
	if strict == nil {
		return
	}
	var fe *acctapi.FieldError
	var ae *acctapi.Error
	if !errors.As(strict, &fe) || !errors.As(lax, &ae) || ae.StatusCode != http.StatusBadRequest ||
		ae.ErrorCode != fe.Code || !strings.Contains(ae.Msg, fe.Field) {
		t.Fatalf("%s: the client says %v, the fake %v; want a field error and a 400 with its code and field", what, strict, lax)
	}
}
