package acctapi_test

import (
	"go/ast"
	"go/token"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rootAPI is every exported name of package acctapi, methods as
// Type.Method: what a user calls, and nothing the resource packages alone
// need (that is in internal/rest). A change here is a change of the
// public API; make it on purpose.
var rootAPI = []string{
	"APIVersion", "Client", "Client.BaseURL", "Client.Dialect", "Client.Do",
	"CodeBadAuthorization", "CodeBadContentType", "CodeBadEventType", "CodeBadFilter", "CodeBadFormat", "CodeBadLimit", "CodeBadQuery",
	"CodeBadRoleARN", "CodeBadVersion",
	"CodeBodyNotExpected", "CodeBodyTooLarge", "CodeDescriptionTooLong", "CodeHeadersTooLarge", "CodeInactivePrincipal", "CodeInternal", "CodeInvalidJSON",
	"CodeInvalidToken", "CodeInvalidValue", "CodeLabelCountLimit", "CodeMalformedRequest", "CodeMetadataTooLong",
	"CodeManyAuths", "CodeManyTargets", "CodeMethodNotAllowed", "CodeNameRequired", "CodeNameTaken", "CodeNameTooLong",
	"CodeNoAPIKey", "CodeNoAuth", "CodeNoAuthField", "CodeNoAuthorization", "CodeNoContentType", "CodeNoRoute", "CodeNoTarget", "CodeNoVersion",
	"CodeNotFound", "CodeRateLimited",
	"CodeRepeatedQueryParam", "CodeResourceLimit", "CodeSourceTypeTaken", "CodeStillReferenced", "CodeUnavailable",
	"CodeUnknownBackend", "CodeUnknownDestination", "CodeUnknownField", "CodeUnknownQueryParam",
	"DefaultBaseURL", "DefaultMaxResponseBytes", "DefaultRetryPolicy", "DefaultTimeout",
	"Dialect", "Dialect.String", "DialectReal", "DialectSpec",
	"ErrInvalid", "ErrNoResource", "ErrOtherPath", "ErrPageLoop", "ErrPageTooLong", "Error", "Error.Error", "Error.Field", "Error.OperationID",
	"FieldError", "FieldErrors", "FilterOptions", "FilterOptions.Query", "FilterOptions.Validate",
	"HasCode", "IsNotFound", "IsRateLimited", "ListOptions", "ListOptions.Query", "ListOptions.Validate",
	"MaxDescriptionBytes", "MaxLimit", "MaxMetadataBytes", "NewClient", "NewRealServiceLimiter",
	"Option", "Ref", "ResponseTooLargeError", "ResponseTooLargeError.Error", "RetryPolicy", "Version",
	"WithBaseURL", "WithDialect", "WithHTTPClient", "WithMaxResponseBytes", "WithRetry", "WithThrottle",
	"WithUserAgent", "WithoutRetry", "WithoutValidation",
}

// TestRootAPI pins the root package's exported names (see rootAPI).
func TestRootAPI(t *testing.T) {
	var got []string
	for _, files := range parseDir(t, token.NewFileSet(), ".", false) {
		for _, f := range files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						got = append(got, d.Name.Name)
					} else if recv, ok := exportedReceiver(d.Recv); ok {
						got = append(got, recv+"."+d.Name.Name)
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								got = append(got, s.Name.Name)
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									got = append(got, n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(rootAPI))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exported names of package acctapi (-want +got):\n%s", diff)
	}
}
