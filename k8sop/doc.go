// Package k8sop manages Kubernetes operators: the records the ngrok
// operator software registers for itself, their bindings, and the endpoints
// bound to them.
//
// These endpoints are meant to be called by the operator software, not by
// people. [Operators] is the client; [OperatorCreate] and [OperatorUpdate]
// carry the API's rules in their Validate and Normalize methods, which the
// fake runs too. Endpoint selectors are CEL expressions over a variable
// `endpoint` holding an [Endpoint]; [CompileSelectors] compiles them once and
// [Selectors.Match] evaluates them:
//
//	sel, err := k8sop.CompileSelectors([]string{`"kubernetes" in endpoint.bindings`})
//	ok, err := sel.Match(&ep)
package k8sop
