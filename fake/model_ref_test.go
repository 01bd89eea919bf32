package fake_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// This file is the reference model that model_test.go holds the fake to: a
// plain, deliberately naive description of the account API's observable
// behaviour for the resources it covers, written from the contract (the
// decisions where the specification is silent) and not from the fake's
// code. It uses maps and slices only, never go-memdb, and calls nothing in
// package fake but its
// exported Tunnel type (a plain struct). Every rule is spelled out here
// again on purpose, so that a rule the fake gets wrong is not also wrong in
// the model.

// refFail is the answer the model expects instead of a success: an API
// error with status and code, or, when local is set, an error the client
// makes itself without asking the server (a request its Validate refuses,
// a path it will not build, a dropped connection).
type refFail struct {
	status int
	code   string
	local  bool
	// rule marks a request that breaks one of the request's own rules,
	// which a validating client refuses before sending it.
	rule bool
}

func failBad(code string) *refFail { return &refFail{status: http.StatusBadRequest, code: code} }

// failRule is a broken rule of the request itself.
func failRule(code string) *refFail {
	return &refFail{status: http.StatusBadRequest, code: code, rule: true}
}

var (
	failInvalid  = failBad(acctapi.CodeInvalidValue)
	failBroken   = failRule(acctapi.CodeInvalidValue)
	failNotFound = &refFail{status: http.StatusNotFound, code: acctapi.CodeNotFound}
	failInUse    = &refFail{status: http.StatusConflict, code: acctapi.CodeStillReferenced}
	failNameUsed = &refFail{status: http.StatusConflict, code: acctapi.CodeNameTaken}
	failLocal    = &refFail{local: true}
)

// refTable is one account's resources of one kind, oldest first (creation
// order; the model checks separately that ids grow with it).
type refTable[T any] struct {
	items []T
	id    func(T) string
}

func (t *refTable[T]) get(id string) (T, bool) {
	for _, v := range t.items {
		if t.id(v) == id {
			return v, true
		}
	}
	var zero T
	return zero, false
}

func (t *refTable[T]) put(v T) {
	for i, old := range t.items {
		if t.id(old) == t.id(v) {
			t.items[i] = v
			return
		}
	}
	t.items = append(t.items, v)
}

func (t *refTable[T]) del(id string) {
	t.items = slices.DeleteFunc(t.items, func(v T) bool { return t.id(v) == id })
}

// newestFirst returns the items as every list shows them.
func (t *refTable[T]) newestFirst() []T {
	out := slices.Clone(t.items)
	slices.Reverse(out)
	if out == nil {
		out = []T{}
	}
	return out
}

func (t *refTable[T]) ids() []string {
	out := make([]string, len(t.items))
	for i, v := range t.items {
		out[i] = t.id(v)
	}
	return out
}

// refAccount is one account in the model.
type refAccount struct {
	id, user string
	mainKey  string            // the id of the key the account's clients use
	tokens   map[string]string // API key id → token, for keys made by the test
	users    refTable[account.ServiceUser]
	keys     refTable[account.APIKey]
	hrs      refTable[backends.HTTPResponse]
	fos      refTable[backends.Failover]
	tgs      refTable[backends.TunnelGroup]
	tunnels  refTable[fake.Tunnel]
	dsts     refTable[events.Destination]
	subs     refTable[events.Subscription]
	cas      refTable[account.CertificateAuthority]
	ops      refTable[k8sop.Operator]
	eps      refTable[k8sop.Endpoint]
}

// refModel is the whole fake as the model sees it.
type refModel struct {
	base  string
	accts []*refAccount
}

func newRefModel(base string) *refModel { return &refModel{base: base} }

func (m *refModel) addAccount(id, user string) *refAccount {
	a := &refAccount{id: id, user: user, tokens: map[string]string{}}
	a.users.id = func(v account.ServiceUser) string { return v.ID }
	a.keys.id = func(v account.APIKey) string { return v.ID }
	a.hrs.id = func(v backends.HTTPResponse) string { return v.ID }
	a.fos.id = func(v backends.Failover) string { return v.ID }
	a.tgs.id = func(v backends.TunnelGroup) string { return v.ID }
	a.tunnels.id = func(v fake.Tunnel) string { return v.ID }
	a.dsts.id = func(v events.Destination) string { return v.ID }
	a.subs.id = func(v events.Subscription) string { return v.ID }
	a.cas.id = func(v account.CertificateAuthority) string { return v.ID }
	a.ops.id = func(v k8sop.Operator) string { return v.ID }
	a.eps.id = func(v k8sop.Endpoint) string { return v.ID }
	m.accts = append(m.accts, a)
	return a
}

// uri is the absolute uri of a resource: the base, then each segment
// escaped.
func (m *refModel) uri(segs ...string) string {
	var b strings.Builder
	b.WriteString(m.base)
	for _, s := range segs {
		b.WriteString("/" + url.PathEscape(s))
	}
	return b.String()
}

// stamp is what the API writes for a moment: UTC, whole seconds.
func stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// ---- rules shared by every resource ----------------------------------------

const base62Chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// wellFormedID reports whether id is "<prefix>_" and 27 base-62 characters.
func wellFormedID(prefix, id string) bool {
	suffix, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(suffix) != 27 {
		return false
	}
	for _, r := range suffix {
		if !strings.ContainsRune(base62Chars, r) {
			return false
		}
	}
	return true
}

// annotated is the first failure of a description and metadata.
func annotated(desc, meta string) *refFail {
	switch {
	case len(desc) > 255:
		return failRule(acctapi.CodeDescriptionTooLong)
	case len(meta) > 4096:
		return failRule(acctapi.CodeMetadataTooLong)
	}
	return nil
}

func annotatedPtr(desc, meta *string) *refFail {
	return annotated(deref(desc), deref(meta))
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// sent reports whether an update sends a list or map member: the client
// sends a pointer to a nil one as an empty one, which removes every
// element (see TestUpdateWithPointerToNil), as a pointer to an empty one
// does; only a nil pointer leaves the member out. (The model had read a
// pointer to nil as absent, as JSON null would be, which a long run found.)
func sent[P interface{ ~*S }, S any](p P) bool {
	return p != nil
}

// first returns the first non-nil failure.
// setAnnotations sets a description and metadata to those an update
// request sends (nil: unchanged).
func setAnnotations(desc, meta *string, inDesc, inMeta *string) {
	if inDesc != nil {
		*desc = *inDesc
	}
	if inMeta != nil {
		*meta = *inMeta
	}
}

// refInsert stores a created value under its new id and uri, which at
// points to in a value.
func refInsert[T any](t *refTable[T], v T, id, uri string, at func(v *T) (id, uri *string)) T {
	pid, puri := at(&v)
	*pid, *puri = id, uri
	t.put(v)
	return v
}

// refUpdate is the update every resource shares: the client's own check
// of the path id, then the body's rules (bad, which the caller works out),
// then 404 for an id the account lacks; apply changes the stored value, or
// fails and nothing is stored.
func refUpdate[T any](t *refTable[T], id string, bad *refFail, apply func(v *T) *refFail) (T, *refFail) {
	var zero T
	if f := first(localPathFail(prefixOf[T](), id), bad); f != nil {
		return zero, f
	}
	v, ok := t.get(id)
	if !ok {
		return zero, failNotFound
	}
	if f := apply(&v); f != nil {
		return zero, f
	}
	t.put(v)
	return v, nil
}

func first(fails ...*refFail) *refFail {
	for _, f := range fails {
		if f != nil {
			return f
		}
	}
	return nil
}

// hasDup reports whether a list repeats an element.
func hasDup[T comparable](list []T) bool {
	seen := map[T]bool{}
	for _, v := range list {
		if seen[v] {
			return true
		}
		seen[v] = true
	}
	return false
}

// localPathFail is the client's own refusal of an id it cannot put in a
// path.
func localPathFail(prefix, id string) *refFail {
	if id == "" || id == "." || id == ".." || prefix != "" && foreignID(prefix, id) {
		return failLocal
	}
	return nil
}

// foreignID reports an id that is plainly another resource's, which the
// client refuses to put in a path of prefix's collection: it starts with
// another known prefix and "_".
func foreignID(prefix, id string) bool {
	for _, p := range []string{"service", "ak", "ca", "bkdfo", "bkdhr", "bkdtg", "tn", "ed", "esb", "k8sop", "ep", "usr", "op"} {
		if p != prefix && strings.HasPrefix(id, p+"_") {
			return true
		}
	}
	return false
}

// prefixOf is the id prefix of the resource T.
func prefixOf[T any]() string {
	switch any(*new(T)).(type) {
	case account.ServiceUser:
		return "service"
	case account.APIKey:
		return "ak"
	case account.CertificateAuthority:
		return "ca"
	case backends.HTTPResponse:
		return "bkdhr"
	case backends.Failover:
		return "bkdfo"
	case backends.TunnelGroup:
		return "bkdtg"
	case events.Destination:
		return "ed"
	case events.Subscription:
		return "esb"
	case k8sop.Operator:
		return "k8sop"
	}
	panic(fmt.Sprintf("no prefix for %T", *new(T)))
}

// ---- service users ----------------------------------------------------------

func checkName(name string) *refFail {
	switch {
	case name == "":
		return failRule(acctapi.CodeNameRequired)
	case len(name) > 255:
		return failRule(acctapi.CodeNameTooLong)
	}
	return nil
}

func (a *refAccount) nameTaken(name, except string) bool {
	for _, u := range a.users.items {
		if u.Name == name && u.ID != except {
			return true
		}
	}
	return false
}

// createUser returns the service user in would create (without id and
// uri), or the failure.
func (m *refModel) createUser(a *refAccount, in account.ServiceUserCreate, now time.Time) (account.ServiceUser, *refFail) {
	if f := checkName(in.Name); f != nil {
		return account.ServiceUser{}, f
	}
	if a.nameTaken(in.Name, "") {
		return account.ServiceUser{}, failNameUsed
	}
	active := true
	if in.Active != nil {
		active = *in.Active
	}
	return account.ServiceUser{Name: in.Name, Active: active, CreatedAt: stamp(now)}, nil
}

func (m *refModel) insertUser(a *refAccount, v account.ServiceUser, id string) account.ServiceUser {
	return refInsert(&a.users, v, id, m.uri("service_users", id), func(v *account.ServiceUser) (*string, *string) { return &v.ID, &v.URI })
}

func (m *refModel) updateUser(a *refAccount, in account.ServiceUserUpdate) (account.ServiceUser, *refFail) {
	var f *refFail
	if in.Name != nil {
		f = checkName(*in.Name)
	}
	return refUpdate(&a.users, in.ID, f, func(v *account.ServiceUser) *refFail {
		if in.Name != nil {
			if a.nameTaken(*in.Name, v.ID) {
				return failNameUsed
			}
			v.Name = *in.Name
		}
		if in.Active != nil {
			v.Active = *in.Active
		}
		return nil
	})
}

// deleteUser deletes a service user and, with it, its API keys.
func (m *refModel) deleteUser(a *refAccount, id string) *refFail {
	if f := deleteRef(a, &a.users, id); f != nil { // no one references a service user
		return f
	}
	for _, k := range slices.Clone(a.keys.items) {
		if k.OwnerID == id {
			a.keys.del(k.ID)
		}
	}
	return nil
}

// ---- API keys -----------------------------------------------------------------

// createKey: the owner defaults to the caller's owner (here always the
// account's user) and must be the account's user or one of its service
// users.
func (m *refModel) createKey(a *refAccount, in account.APIKeyCreate, now time.Time) (account.APIKey, *refFail) {
	if f := annotated(in.Description, in.Metadata); f != nil {
		return account.APIKey{}, f
	}
	owner := in.OwnerID
	if owner == "" {
		owner = a.user
	}
	if _, ok := a.users.get(owner); owner != a.user && !ok {
		return account.APIKey{}, failInvalid
	}
	return account.APIKey{Description: in.Description, Metadata: in.Metadata, CreatedAt: stamp(now), OwnerID: owner}, nil
}

// insertKey stores a created key; the stored copy (what gets and lists
// show) has no token.
func (m *refModel) insertKey(a *refAccount, v account.APIKey, id, token string) account.APIKey {
	v.ID, v.URI, v.Token = id, m.uri("api_keys", id), nil
	a.keys.put(v)
	a.tokens[id] = token
	v.Token = &token
	return v
}

func (m *refModel) updateKey(a *refAccount, in account.APIKeyUpdate) (account.APIKey, *refFail) {
	f := annotatedPtr(in.Description, in.Metadata)
	return refUpdate(&a.keys, in.ID, f, func(v *account.APIKey) *refFail {
		setAnnotations(&v.Description, &v.Metadata, in.Description, in.Metadata)
		return nil
	})
}

func (m *refModel) deleteKey(a *refAccount, id string) *refFail {
	return deleteRef(a, &a.keys, id) // no one references a key
}

// authenticate is the answer to a request made with token: 401 when no
// key of any account has it (or its key is gone), 403 when its owner is an
// inactive service user; otherwise the account it acts in.
func (m *refModel) authenticate(token string) (*refAccount, *refFail) {
	for _, a := range m.accts {
		for id, tok := range a.tokens {
			if tok != token {
				continue
			}
			k, ok := a.keys.get(id)
			if !ok {
				return nil, &refFail{status: http.StatusUnauthorized, code: acctapi.CodeInvalidToken}
			}
			if k.OwnerID != a.user {
				if u, ok := a.users.get(k.OwnerID); !ok || !u.Active {
					return nil, &refFail{status: http.StatusForbidden, code: acctapi.CodeInactivePrincipal}
				}
			}
			return a, nil
		}
	}
	return nil, &refFail{status: http.StatusUnauthorized, code: acctapi.CodeInvalidToken}
}

// ---- backends ---------------------------------------------------------------------

// isBackend reports whether id is a backend of the account, of any kind.
func (a *refAccount) isBackend(id string) bool {
	_, hr := a.hrs.get(id)
	_, fo := a.fos.get(id)
	_, tg := a.tgs.get(id)
	return hr || fo || tg
}

// referenced reports whether a failover or subscription of the account
// references id.
func (a *refAccount) referenced(id string) bool {
	for _, f := range a.fos.items {
		if slices.Contains(f.Backends, id) {
			return true
		}
	}
	for _, s := range a.subs.items {
		for _, d := range s.Destinations {
			if d.ID == id {
				return true
			}
		}
	}
	return false
}

// deleteRef is the answer to deleting id from table: 404 when absent,
// 409 while referenced.
func deleteRef[T any](a *refAccount, t *refTable[T], id string) *refFail {
	if f := localPathFail(prefixOf[T](), id); f != nil {
		return f
	}
	if _, ok := t.get(id); !ok {
		return failNotFound
	}
	if a.referenced(id) {
		return failInUse
	}
	t.del(id)
	return nil
}

func isHeaderToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r > '~' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

func checkHeaders(h map[string]string) *refFail {
	for k, v := range h {
		if !isHeaderToken(k) || strings.ContainsAny(v, "\r\n\x00") {
			return failBroken
		}
	}
	return nil
}

func checkStatus(code int) *refFail {
	if code < 100 || code > 599 {
		return failBroken
	}
	return nil
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (m *refModel) createHR(a *refAccount, in backends.HTTPResponseCreate, now time.Time) (backends.HTTPResponse, *refFail) {
	if f := first(annotated(in.Description, in.Metadata), checkHeaders(in.Headers), checkStatus(in.StatusCode)); f != nil {
		return backends.HTTPResponse{}, f
	}
	return backends.HTTPResponse{CreatedAt: stamp(now), Description: in.Description, Metadata: in.Metadata,
		Body: in.Body, Headers: cloneMap(in.Headers), StatusCode: in.StatusCode}, nil
}

func (m *refModel) insertHR(a *refAccount, v backends.HTTPResponse, id string) backends.HTTPResponse {
	return refInsert(&a.hrs, v, id, m.uri("backends", "http_response", id), func(v *backends.HTTPResponse) (*string, *string) { return &v.ID, &v.URI })
}

func (m *refModel) updateHR(a *refAccount, in backends.HTTPResponseUpdate) (backends.HTTPResponse, *refFail) {
	f := annotatedPtr(in.Description, in.Metadata)
	if sent(in.Headers) {
		f = first(f, checkHeaders(*in.Headers))
	}
	if in.StatusCode != nil {
		f = first(f, checkStatus(*in.StatusCode))
	}
	return refUpdate(&a.hrs, in.ID, f, func(v *backends.HTTPResponse) *refFail {
		setAnnotations(&v.Description, &v.Metadata, in.Description, in.Metadata)
		if in.Body != nil {
			v.Body = *in.Body
		}
		if sent(in.Headers) {
			v.Headers = cloneMap(*in.Headers)
		}
		if in.StatusCode != nil {
			v.StatusCode = *in.StatusCode
		}
		return nil
	})
}

// checkBackendList is a failover's own rules for its backends: no empty
// id, no repeat, never itself.
func checkBackendList(ids []string, self string) *refFail {
	for _, id := range ids {
		if id == "" || id == self {
			return failBroken
		}
	}
	if hasDup(ids) {
		return failBroken
	}
	return nil
}

// backendsExist is the reference check: every id a backend of the account.
func (a *refAccount) backendsExist(ids []string) *refFail {
	for _, id := range ids {
		if !a.isBackend(id) {
			return failBad(acctapi.CodeUnknownBackend)
		}
	}
	return nil
}

// loopsBack is the reference rule that a failover may not contain itself
// through other failovers: a walk of every failover reachable from ids.
func (a *refAccount) loopsBack(self string, ids []string) *refFail {
	todo, seen := append([]string{}, ids...), map[string]bool{}
	for len(todo) > 0 {
		id := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if id == self {
			return failInvalid
		}
		if !seen[id] {
			seen[id] = true
			if fo, ok := a.fos.get(id); ok {
				todo = append(todo, fo.Backends...)
			}
		}
	}
	return nil
}

func (m *refModel) createFO(a *refAccount, in backends.FailoverCreate, now time.Time) (backends.Failover, *refFail) {
	if f := first(annotated(in.Description, in.Metadata), checkBackendList(in.Backends, "\x00none"), a.backendsExist(in.Backends)); f != nil {
		return backends.Failover{}, f
	}
	return backends.Failover{CreatedAt: stamp(now), Description: in.Description, Metadata: in.Metadata,
		Backends: append([]string{}, in.Backends...)}, nil
}

func (m *refModel) insertFO(a *refAccount, v backends.Failover, id string) backends.Failover {
	return refInsert(&a.fos, v, id, m.uri("backends", "failover", id), func(v *backends.Failover) (*string, *string) { return &v.ID, &v.URI })
}

func (m *refModel) updateFO(a *refAccount, in backends.FailoverUpdate) (backends.Failover, *refFail) {
	f := annotatedPtr(in.Description, in.Metadata)
	if sent(in.Backends) {
		f = first(f, checkBackendList(*in.Backends, in.ID))
	}
	return refUpdate(&a.fos, in.ID, f, func(v *backends.Failover) *refFail {
		if sent(in.Backends) {
			if f := first(a.backendsExist(*in.Backends), a.loopsBack(in.ID, *in.Backends)); f != nil {
				return f
			}
			v.Backends = append([]string{}, *in.Backends...)
		}
		setAnnotations(&v.Description, &v.Metadata, in.Description, in.Metadata)
		return nil
	})
}

func checkLabels(l map[string]string) *refFail {
	if len(l) == 0 {
		return failBroken
	}
	for k, v := range l {
		if k == "" || v == "" {
			return failBroken
		}
	}
	return nil
}

// carriesAll reports whether have has every label of want.
func carriesAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// tunnelRefs are the refs of the account's tunnels that carry labels,
// oldest first.
func (m *refModel) tunnelRefs(a *refAccount, labels map[string]string) []acctapi.Ref {
	refs := []acctapi.Ref{}
	for _, t := range a.tunnels.items {
		if carriesAll(t.Labels, labels) {
			refs = append(refs, acctapi.Ref{ID: t.ID, URI: m.uri("tunnels", t.ID)})
		}
	}
	return refs
}

func (m *refModel) createTG(a *refAccount, in backends.TunnelGroupCreate, now time.Time) (backends.TunnelGroup, *refFail) {
	if f := first(annotated(in.Description, in.Metadata), checkLabels(in.Labels)); f != nil {
		return backends.TunnelGroup{}, f
	}
	return backends.TunnelGroup{CreatedAt: stamp(now), Description: in.Description, Metadata: in.Metadata,
		Labels: cloneMap(in.Labels), Tunnels: m.tunnelRefs(a, in.Labels)}, nil
}

func (m *refModel) insertTG(a *refAccount, v backends.TunnelGroup, id string) backends.TunnelGroup {
	return refInsert(&a.tgs, v, id, m.uri("backends", "tunnel_group", id), func(v *backends.TunnelGroup) (*string, *string) { return &v.ID, &v.URI })
}

func (m *refModel) updateTG(a *refAccount, in backends.TunnelGroupUpdate) (backends.TunnelGroup, *refFail) {
	f := annotatedPtr(in.Description, in.Metadata)
	if sent(in.Labels) {
		f = first(f, checkLabels(*in.Labels))
	}
	return refUpdate(&a.tgs, in.ID, f, func(v *backends.TunnelGroup) *refFail {
		setAnnotations(&v.Description, &v.Metadata, in.Description, in.Metadata)
		if sent(in.Labels) {
			v.Labels = cloneMap(*in.Labels)
			v.Tunnels = m.tunnelRefs(a, v.Labels)
		}
		return nil
	})
}

// seedTunnel adds a tunnel; it joins, at the end, every tunnel group of
// the account whose labels it carries.
func (m *refModel) seedTunnel(a *refAccount, labels map[string]string, id string, now time.Time) fake.Tunnel {
	t := fake.Tunnel{ID: id, URI: m.uri("tunnels", id), Labels: cloneMap(labels), CreatedAt: stamp(now)}
	a.tunnels.put(t)
	for _, g := range a.tgs.items {
		if carriesAll(t.Labels, g.Labels) {
			g.Tunnels = append(slices.Clone(g.Tunnels), acctapi.Ref{ID: id, URI: m.uri("tunnels", id)})
			a.tgs.put(g)
		}
	}
	return t
}

// ---- event destinations and subscriptions -----------------------------------------

// contractEventTypes are the event types contract §5 lists.
var contractEventTypes = func() []string {
	var out []string
	for _, name := range []string{"api_key", "certificate_authority", "event_destination", "event_subscription",
		"domain", "ip_policy", "ip_policy_rule", "ip_restriction", "secret", "ssh_certificate_authority",
		"ssh_host_certificate", "ssh_public_key", "ssh_user_certificate", "tcp_address", "tls_certificate",
		"tunnel_credential", "vault"} {
		for _, op := range []string{"created", "updated", "deleted"} {
			out = append(out, name+"_"+op+".v0")
		}
	}
	return append(out, "agent_session_start.v0", "agent_session_stop.v0", "http_request_complete.v0", "tcp_connection_closed.v0")
}()

// checkFormat: JSON in any letter case; never "".
func checkFormat(f string) *refFail {
	if strings.ToUpper(f) == "JSON" {
		return nil
	}
	return failRule(acctapi.CodeBadFormat)
}

// checkTarget covers the targets the test sends: exactly one member set,
// with role auth and an ARN.
func checkTarget(t events.Target) *refFail {
	n := 0
	var auth *events.CloudAuth
	arn, cloud := "", false
	if t.Kinesis != nil {
		n, auth, arn, cloud = n+1, t.Kinesis.Auth, t.Kinesis.StreamARN, true
	}
	if t.CloudWatchLogs != nil {
		n, auth, arn, cloud = n+1, t.CloudWatchLogs.Auth, t.CloudWatchLogs.LogGroupARN, true
	}
	if t.Firehose != nil {
		n, auth, arn, cloud = n+1, t.Firehose.Auth, t.Firehose.DeliveryStreamARN, true
	}
	for _, other := range []bool{t.S3 != nil, t.Monitoring != nil, t.CloudLogsIngestion != nil} {
		if other {
			n++
		}
	}
	switch {
	case n == 0:
		return failRule(acctapi.CodeNoTarget)
	case n > 1:
		return failRule(acctapi.CodeManyTargets)
	case !cloud:
		return failBroken // s3, monitoring or cloud_logs_ingestion: not sent
	case auth == nil:
		return failRule(acctapi.CodeNoAuthField)
	}
	// The auth first, then the ARN, as the validator joins them.
	switch {
	case auth.Role != nil && auth.Creds != nil:
		return failRule(acctapi.CodeManyAuths)
	case auth.Role == nil && auth.Creds == nil:
		return failRule(acctapi.CodeNoAuth)
	case auth.Role != nil && auth.Role.RoleARN != "arn:aws:iam::123456789012:role/r":
		return failRule(acctapi.CodeBadRoleARN) // the one valid ARN the test sends
	case arn == "" || auth.Creds != nil:
		return failBroken
	}
	return nil
}

func (m *refModel) createDst(a *refAccount, in events.DestinationCreate, now time.Time) (events.Destination, *refFail) {
	if f := first(annotated(in.Description, in.Metadata), checkFormat(in.Format), checkTarget(in.Target)); f != nil {
		return events.Destination{}, f
	}
	return events.Destination{CreatedAt: stamp(now), Description: in.Description, Metadata: in.Metadata,
		Format: "JSON", Target: in.Target}, nil
}

func (m *refModel) insertDst(a *refAccount, v events.Destination, id string) events.Destination {
	return refInsert(&a.dsts, v, id, m.uri("event_destinations", id), func(v *events.Destination) (*string, *string) { return &v.ID, &v.URI })
}

func (m *refModel) updateDst(a *refAccount, in events.DestinationUpdate) (events.Destination, *refFail) {
	f := annotatedPtr(in.Description, in.Metadata)
	if in.Format != nil {
		f = first(f, checkFormat(*in.Format))
	}
	if in.Target != nil {
		f = first(f, checkTarget(*in.Target))
	}
	return refUpdate(&a.dsts, in.ID, f, func(v *events.Destination) *refFail {
		setAnnotations(&v.Description, &v.Metadata, in.Description, in.Metadata)
		if in.Format != nil {
			v.Format = "JSON"
		}
		if in.Target != nil {
			v.Target = *in.Target
		}
		return nil
	})
}

// checkSources reports the first source's error in order: an unknown
// type, or a repeat of an earlier source, as the validator does.
func checkSources(list []events.SubscriptionSource) *refFail {
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		switch {
		case !slices.Contains(contractEventTypes, s.Type):
			return failRule(acctapi.CodeBadEventType)
		case seen[s.Type]:
			return failBroken
		}
		seen[s.Type] = true
	}
	return nil
}

func checkDestIDs(ids []string) *refFail {
	if slices.Contains(ids, "") || hasDup(ids) {
		return failBroken
	}
	return nil
}

// destRefs checks that every id is a destination of the account and makes
// the refs.
func (m *refModel) destRefs(a *refAccount, ids []string) ([]acctapi.Ref, *refFail) {
	refs := []acctapi.Ref{}
	for _, id := range ids {
		if _, ok := a.dsts.get(id); !ok {
			return nil, failBad(acctapi.CodeUnknownDestination)
		}
		refs = append(refs, acctapi.Ref{ID: id, URI: m.uri("event_destinations", id)})
	}
	return refs, nil
}

// sourcesOf renders sources; their uris need the subscription's id, so
// insertSub and updateSub fill them.
func (m *refModel) sourcesOf(subID string, list []events.SubscriptionSource) []events.Source {
	out := []events.Source{}
	for _, s := range list {
		out = append(out, events.Source{Type: s.Type, URI: m.uri("event_subscriptions", subID, "sources", s.Type)})
	}
	return out
}

func (m *refModel) createSub(a *refAccount, in events.SubscriptionCreate, now time.Time) (events.Subscription, []events.SubscriptionSource, *refFail) {
	if f := first(annotated(in.Description, in.Metadata), checkSources(in.Sources), checkDestIDs(in.DestinationIDs)); f != nil {
		return events.Subscription{}, nil, f
	}
	refs, f := m.destRefs(a, in.DestinationIDs)
	if f != nil {
		return events.Subscription{}, nil, f
	}
	return events.Subscription{CreatedAt: stamp(now), Description: in.Description, Metadata: in.Metadata, Destinations: refs}, in.Sources, nil
}

func (m *refModel) insertSub(a *refAccount, v events.Subscription, sources []events.SubscriptionSource, id string) events.Subscription {
	v.ID, v.URI = id, m.uri("event_subscriptions", id)
	v.Sources = m.sourcesOf(id, sources)
	a.subs.put(v)
	return v
}

func (m *refModel) updateSub(a *refAccount, in events.SubscriptionUpdate) (events.Subscription, *refFail) {
	f := annotatedPtr(in.Description, in.Metadata)
	if sent(in.Sources) {
		f = first(f, checkSources(*in.Sources))
	}
	if sent(in.DestinationIDs) {
		f = first(f, checkDestIDs(*in.DestinationIDs))
	}
	return refUpdate(&a.subs, in.ID, f, func(v *events.Subscription) *refFail {
		if sent(in.DestinationIDs) {
			refs, f := m.destRefs(a, *in.DestinationIDs)
			if f != nil {
				return f
			}
			v.Destinations = refs
		}
		if sent(in.Sources) {
			v.Sources = m.sourcesOf(v.ID, *in.Sources)
		}
		setAnnotations(&v.Description, &v.Metadata, in.Description, in.Metadata)
		return nil
	})
}

// ---- lists ------------------------------------------------------------------------

// refFilter is one of the simple filters the model evaluates in Go. The
// test renders it as CEL with cel().
type refFilter struct {
	field string    // a string field (description, metadata, owner_id, id, subject_common_name) or a timestamp one (created_at, not_before, not_after)
	op    string    // "==", "!=", "startsWith", "endsWith", "contains", ">=", "<", "recent" (created_at only)
	lit   string    // the literal, for string operators
	at    time.Time // the moment, for ">=" and "<" on a timestamp field
	not   bool      // negate the whole expression
}

// cel renders the filter as the CEL expression the server evaluates.
func (f refFilter) cel() string {
	var e string
	switch f.op {
	case "==", "!=":
		e = "obj." + f.field + " " + f.op + " " + celString(f.lit)
	case "startsWith", "endsWith", "contains":
		e = "obj." + f.field + "." + f.op + "(" + celString(f.lit) + ")"
	case ">=", "<":
		e = "obj." + f.field + " " + f.op + ` timestamp("` + f.at.UTC().Format(time.RFC3339) + `")`
	case "recent":
		e = `obj.created_at > time.now.subtract("1h")`
	}
	if f.not {
		e = "!(" + e + ")"
	}
	return e
}

// celString quotes s as a CEL string literal (the test's literals hold no
// quote, backslash or control character).
func celString(s string) string { return `"` + s + `"` }

// match evaluates the filter on an item's string fields and timestamp
// fields, at now.
func (f refFilter) match(fields map[string]string, times map[string]time.Time, now time.Time) bool {
	v, at := fields[f.field], times[f.field]
	var ok bool
	switch f.op {
	case "==":
		ok = v == f.lit
	case "!=":
		ok = v != f.lit
	case "startsWith":
		ok = strings.HasPrefix(v, f.lit)
	case "endsWith":
		ok = strings.HasSuffix(v, f.lit)
	case "contains":
		ok = strings.Contains(v, f.lit)
	case ">=":
		ok = !at.Before(f.at)
	case "<":
		ok = at.Before(f.at)
	case "recent":
		ok = at.After(stamp(now).Add(-time.Hour))
	}
	return ok != f.not
}

// refPage is one expected page: its items and whether another follows.
type refPage[T any] struct {
	items []T
	more  bool
}

// pages splits all (newest first, already filtered) into the pages a walk
// from before_id with limit sees: items whose id sorts before beforeID
// ("" for none), limit at a time.
func pages[T any](all []T, id func(T) string, beforeID string, limit int) []refPage[T] {
	var rest []T
	for _, v := range all {
		if beforeID == "" || id(v) < beforeID {
			rest = append(rest, v)
		}
	}
	var out []refPage[T]
	for {
		n := min(limit, len(rest))
		out = append(out, refPage[T]{items: append([]T{}, rest[:n]...), more: len(rest) > n})
		rest = rest[n:]
		if len(rest) == 0 {
			return out
		}
	}
}

// ---- more of the reference model ---------------------------------------------------
//
// Certificate authorities, event sources, Kubernetes operators and their
// bound endpoints, written again from the contract (§3, §5, §6).

// ---- certificate authorities -------------------------------------------------------

// refCAPEM is a PEM text the test sends as ca_pem, with what the server
// must read from it (nil when it is not exactly one CA certificate). The
// test builds the certificates itself, so it knows their contents without
// parsing them back.
type refCAPEM struct {
	name string
	pem  string
	info *account.CAInfo
}

func (m *refModel) createCA(a *refAccount, in account.CertificateAuthorityCreate, info *account.CAInfo, now time.Time) (account.CertificateAuthority, *refFail) {
	if f := annotated(in.Description, in.Metadata); f != nil {
		return account.CertificateAuthority{}, f
	}
	if info == nil { // missing, or not exactly one CA certificate
		return account.CertificateAuthority{}, failBroken
	}
	ci := *info
	ci.KeyUsages, ci.ExtendedKeyUsages = slices.Clone(info.KeyUsages), slices.Clone(info.ExtendedKeyUsages)
	return account.CertificateAuthority{CreatedAt: stamp(now), Description: in.Description, Metadata: in.Metadata,
		CAPEM: in.CAPEM, CAInfo: ci}, nil
}

func (m *refModel) insertCA(a *refAccount, v account.CertificateAuthority, id string) account.CertificateAuthority {
	return refInsert(&a.cas, v, id, m.uri("certificate_authorities", id), func(v *account.CertificateAuthority) (*string, *string) { return &v.ID, &v.URI })
}

func (m *refModel) updateCA(a *refAccount, in account.CertificateAuthorityUpdate) (account.CertificateAuthority, *refFail) {
	f := annotatedPtr(in.Description, in.Metadata)
	return refUpdate(&a.cas, in.ID, f, func(v *account.CertificateAuthority) *refFail {
		setAnnotations(&v.Description, &v.Metadata, in.Description, in.Metadata)
		return nil
	})
}

// ---- event sources ----------------------------------------------------------------

func (m *refModel) sourceOf(subID, typ string) events.Source {
	return events.Source{Type: typ, URI: m.uri("event_subscriptions", subID, "sources", typ)}
}

func hasSource(v events.Subscription, typ string) bool {
	return slices.ContainsFunc(v.Sources, func(s events.Source) bool { return s.Type == typ })
}

// createSource adds a source of type typ to subscription subID; bodySub
// is the subscription_id member of the body ("" when not sent).
func (m *refModel) createSource(a *refAccount, subID, bodySub, typ string) (events.Source, *refFail) {
	if bodySub != "" && bodySub != subID {
		return events.Source{}, failBroken // a body naming another subscription than the path
	}
	if !slices.Contains(contractEventTypes, typ) {
		if localPathFail("", subID) != nil {
			return events.Source{}, failBroken // subscription_id's error comes first
		}
		return events.Source{}, failRule(acctapi.CodeBadEventType)
	}
	if f := localPathFail("esb", subID); f != nil {
		return events.Source{}, f
	}
	v, ok := a.subs.get(subID)
	if !ok {
		return events.Source{}, failNotFound
	}
	if hasSource(v, typ) {
		return events.Source{}, &refFail{status: 409, code: acctapi.CodeSourceTypeTaken}
	}
	v.Sources = append(slices.Clone(v.Sources), m.sourceOf(subID, typ))
	a.subs.put(v)
	return m.sourceOf(subID, typ), nil
}

// getSource is the answer to GET and, when check is set, to PATCH (whose
// body only names the source again, so it changes nothing).
func (m *refModel) getSource(a *refAccount, subID, typ string) (events.Source, *refFail) {
	// The client refuses a type that is no event type.
	if subID == "" {
		return events.Source{}, failBroken
	}
	if f := first(localPathFail("esb", subID), localPathFail("", typ)); f != nil {
		return events.Source{}, f
	}
	if !slices.Contains(contractEventTypes, typ) {
		return events.Source{}, failRule(acctapi.CodeBadEventType)
	}
	v, ok := a.subs.get(subID)
	if !ok || !hasSource(v, typ) {
		return events.Source{}, failNotFound
	}
	return m.sourceOf(subID, typ), nil
}

func (m *refModel) listSources(a *refAccount, subID string) (events.SourceList, *refFail) {
	if f := localPathFail("esb", subID); f != nil {
		return events.SourceList{}, f
	}
	v, ok := a.subs.get(subID)
	if !ok {
		return events.SourceList{}, failNotFound
	}
	return events.SourceList{Sources: append([]events.Source{}, v.Sources...), URI: m.uri("event_subscriptions", subID, "sources")}, nil
}

func (m *refModel) deleteSource(a *refAccount, subID, typ string) *refFail {
	// The client refuses a type that is no event type, as for get.
	if subID == "" {
		return failBroken
	}
	if f := first(localPathFail("esb", subID), localPathFail("", typ)); f != nil {
		return f
	}
	if !slices.Contains(contractEventTypes, typ) {
		return failRule(acctapi.CodeBadEventType)
	}
	v, ok := a.subs.get(subID)
	if !ok || !hasSource(v, typ) {
		return failNotFound
	}
	v.Sources = slices.DeleteFunc(slices.Clone(v.Sources), func(s events.Source) bool { return s.Type == typ })
	a.subs.put(v)
	return nil
}

// ---- Kubernetes operators and endpoints --------------------------------------------

// modelIngress is the ingress endpoint the test configures the fake with.
const modelIngress = "ingress.model.test:443"

// refSelector is an endpoint selector the test sends, as the model reads
// it: nil when it is not a valid selector, else whether it matches an
// endpoint.
var refSelectors = map[string]func(e k8sop.Endpoint) bool{
	`true`:                 func(k8sop.Endpoint) bool { return true },
	`false`:                func(k8sop.Endpoint) bool { return false },
	`endpoint.name == "a"`: func(e k8sop.Endpoint) bool { return e.Name == "a" },
	`endpoint.name == "b"`: func(e k8sop.Endpoint) bool { return e.Name == "b" },
	`endpoint.nope == "x"`: nil, // no such member
	`endpoint.name`:        nil, // not boolean
	`endpoint.name ==`:     nil, // syntax
}

func checkSelectors(list []string) *refFail {
	for _, s := range list {
		if refSelectors[s] == nil {
			return failBroken
		}
	}
	return nil
}

// checkFeatures: bindings, ingress and gateway in any letter case.
func checkFeatures(list []string) *refFail {
	for _, f := range list {
		if !slices.Contains([]string{"bindings", "ingress", "gateway"}, strings.ToLower(f)) {
			return failBroken
		}
	}
	return nil
}

// normalFeatures lower-cases features and drops repeats, keeping the first.
func normalFeatures(list []string) []string {
	out := []string{}
	for _, f := range list {
		if f = strings.ToLower(f); !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func hasBindings(list []string) bool {
	return slices.ContainsFunc(list, func(f string) bool { return strings.ToLower(f) == "bindings" })
}

func cloneKeepNil(list []string) []string {
	if list == nil {
		return nil
	}
	return append([]string{}, list...)
}

func (m *refModel) createOp(a *refAccount, in k8sop.OperatorCreate, now time.Time) (k8sop.Operator, *refFail) {
	f := first(annotated(in.Description, in.Metadata), checkFeatures(in.EnabledFeatures))
	if in.Binding != nil && f == nil {
		if !hasBindings(in.EnabledFeatures) {
			f = failBroken
		}
		f = first(f, checkSelectors(in.Binding.EndpointSelectors))
	}
	if f != nil {
		return k8sop.Operator{}, f
	}
	v := k8sop.Operator{CreatedAt: stamp(now), UpdatedAt: stamp(now), Description: in.Description, Metadata: in.Metadata,
		Principal: acctapi.Ref{ID: a.user}, EnabledFeatures: normalFeatures(in.EnabledFeatures), Region: in.Region,
		Deployment: in.Deployment, Binding: &k8sop.Binding{}}
	if v.Region == "" {
		v.Region = "global"
	}
	if b := in.Binding; b != nil {
		v.Binding.EndpointSelectors = cloneKeepNil(b.EndpointSelectors)
		v.Binding.IngressEndpoint = b.IngressEndpoint
	}
	defaultIngress(&v)
	return v, nil
}

// defaultIngress: an operator with bindings has an ingress endpoint.
func defaultIngress(v *k8sop.Operator) {
	if hasBindings(v.EnabledFeatures) && v.Binding.IngressEndpoint == "" {
		v.Binding.IngressEndpoint = modelIngress
	}
}

func (m *refModel) insertOp(a *refAccount, v k8sop.Operator, id string) k8sop.Operator {
	return refInsert(&a.ops, v, id, m.uri("kubernetes_operators", id), func(v *k8sop.Operator) (*string, *string) { return &v.ID, &v.URI })
}

func (m *refModel) updateOp(a *refAccount, in k8sop.OperatorUpdate, now time.Time) (k8sop.Operator, *refFail) {
	f := annotatedPtr(in.Description, in.Metadata)
	if in.EnabledFeatures != nil {
		f = first(f, checkFeatures(*in.EnabledFeatures))
		if in.Binding != nil && f == nil && !hasBindings(*in.EnabledFeatures) {
			f = failBroken
		}
	}
	if in.Binding != nil && in.Binding.EndpointSelectors != nil {
		f = first(f, checkSelectors(*in.Binding.EndpointSelectors))
	}
	return refUpdate(&a.ops, in.ID, f, func(v *k8sop.Operator) *refFail {
		// Whether a binding may be sent, when the request does not set the
		// features, depends on the stored ones: only the server can tell.
		if in.Binding != nil && in.EnabledFeatures == nil && !hasBindings(v.EnabledFeatures) {
			return failInvalid
		}
		setAnnotations(&v.Description, &v.Metadata, in.Description, in.Metadata)
		if in.Region != nil {
			v.Region = *in.Region
			if v.Region == "" {
				v.Region = "global"
			}
		}
		if in.EnabledFeatures != nil {
			v.EnabledFeatures = normalFeatures(*in.EnabledFeatures)
		}
		if !hasBindings(v.EnabledFeatures) {
			// Bindings off: the binding goes with it (contract §6; the model
			// had kept it, which a long run found).
			v.Binding = &k8sop.Binding{}
		}
		if d := in.Deployment; d != nil {
			if d.Name != nil {
				v.Deployment.Name = *d.Name
			}
			if d.Version != nil {
				v.Deployment.Version = *d.Version
			}
		}
		b := *v.Binding
		if u := in.Binding; u != nil {
			if u.EndpointSelectors != nil {
				b.EndpointSelectors = cloneKeepNil(*u.EndpointSelectors)
			}
			if u.IngressEndpoint != nil {
				b.IngressEndpoint = *u.IngressEndpoint
			}
		}
		v.Binding = &b
		defaultIngress(v)
		v.UpdatedAt = stamp(now)
		return nil
	})
}

// seedEndpoint adds a seeded endpoint (endpoints have no API path).
func (m *refModel) seedEndpoint(a *refAccount, in k8sop.Endpoint, id string, now time.Time) k8sop.Endpoint {
	in.ID, in.URI = id, m.uri("endpoints", id)
	in.CreatedAt, in.UpdatedAt = stamp(now), stamp(now)
	if in.Principal.ID == "" {
		in.Principal.ID = a.user // who seeds it
	}
	in.Bindings = cloneKeepNil(in.Bindings)
	a.eps.put(in)
	return in
}

// boundEndpoints are the endpoints of the account, newest first, that
// carry the kubernetes binding and that one of the operator's selectors
// matches.
func (m *refModel) boundEndpoints(a *refAccount, opID string) ([]k8sop.Endpoint, *refFail) {
	if f := localPathFail("k8sop", opID); f != nil {
		return nil, f
	}
	op, ok := a.ops.get(opID)
	if !ok {
		return nil, failNotFound
	}
	out := []k8sop.Endpoint{}
	for _, e := range a.eps.newestFirst() {
		if !slices.Contains(e.Bindings, "kubernetes") {
			continue
		}
		if slices.ContainsFunc(op.Binding.EndpointSelectors, func(s string) bool { return refSelectors[s](e) }) {
			out = append(out, e)
		}
	}
	return out, nil
}
