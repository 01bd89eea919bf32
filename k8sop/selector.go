package k8sop

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"

	"github.com/acctapi/acctapi"
)

// MaxSelectorCost bounds the evaluation cost of one endpoint selector, in
// CEL cost units; an evaluation that exceeds it fails.
const MaxSelectorCost = 10_000

// selectorEnv is the CEL environment of endpoint selectors, built once; a
// cel.Env is immutable and safe for concurrent use.
var selectorEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		ext.NativeTypes(reflect.TypeFor[Endpoint](), ext.ParseStructTag("json")),
		cel.Variable("endpoint", cel.ObjectType("k8sop.Endpoint")),
	)
})

// Selectors is a compiled list of endpoint selectors. It is immutable and
// safe for concurrent use; a nil *Selectors matches nothing.
type Selectors struct {
	programs []cel.Program
}

// CompileSelectors compiles each expression, which must be a CEL
// expression of type bool over the variable `endpoint` (an [Endpoint], its
// members named as in JSON), such as
// `"kubernetes" in endpoint.bindings && endpoint.url.startsWith("https://")`.
// Compile once and match many times.
//
// The error joins one [*acctapi.FieldError] per invalid expression, with
// Field "endpoint_selectors[i]" and [acctapi.CodeInvalidValue].
func CompileSelectors(exprs []string) (*Selectors, error) {
	env, err := selectorEnv()
	if err != nil {
		return nil, fmt.Errorf("k8sop: selector environment: %w", err)
	}
	s := &Selectors{programs: make([]cel.Program, 0, len(exprs))}
	var errs []error
	for i, expr := range exprs {
		p, err := compile(env, expr)
		if err != nil {
			errs = append(errs, &acctapi.FieldError{Field: fmt.Sprintf("endpoint_selectors[%d]", i),
				Code: acctapi.CodeInvalidValue, Reason: "is not a valid endpoint selector", Err: err})
			continue
		}
		s.programs = append(s.programs, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

func compile(env *cel.Env, expr string) (cel.Program, error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("has type %s, want bool", ast.OutputType())
	}
	return env.Program(ast, cel.CostLimit(MaxSelectorCost))
}

// Match reports whether at least one selector matches e. It stops at the
// first match; a selector whose evaluation fails (too costly, say) counts as
// no match, and when none matches those failures are returned, joined.
func (s *Selectors) Match(e *Endpoint) (bool, error) {
	if s == nil || e == nil {
		return false, nil
	}
	vars := map[string]any{"endpoint": e}
	var errs []error
	for _, p := range s.programs {
		out, _, err := p.Eval(vars)
		if err != nil {
			errs = append(errs, fmt.Errorf("k8sop: endpoint selector: %w", err))
			continue
		}
		if b, ok := out.Value().(bool); ok && b {
			return true, nil
		}
	}
	return false, errors.Join(errs...)
}
