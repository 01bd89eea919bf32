//lint:file-ignore SA1019 the model drives the deprecated bot-user alias on purpose.

package fake_test

// More steps of TestModel (model_test.go): certificate authorities, the
// deprecated bot-user paths, event sources, Kubernetes operators with their
// seeded endpoints and bound endpoints, deletes of referenced resources and
// invalid list limits. The answers are checked against
// model_ref_more_test.go.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// ---- certificate authority PEMs ------------------------------------------------------

// modelCAs are the ca_pem texts the test sends, built once: valid CA
// certificates of various names, validity periods (around t0, so that
// filters on not_before and not_after split them) and key usages, and
// texts that are not exactly one CA certificate.
var modelCAs = sync.OnceValue(func() []refCAPEM {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	day := 24 * time.Hour
	type spec struct {
		name, cn string
		nb, na   time.Time
		ca       bool
		ku       x509.KeyUsage
		eku      []x509.ExtKeyUsage
		unknown  []asn1.ObjectIdentifier
		kuNames  []string
		ekuNames []string
	}
	specs := []spec{
		{name: "alpha", cn: "alpha-ca", nb: t0.Add(-30 * day), na: t0.Add(365 * day), ca: true,
			ku: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, kuNames: []string{"cert_sign", "crl_sign"}},
		{name: "beta", cn: "beta", nb: t0.Add(100 * day), na: t0.Add(200 * day), ca: true,
			ku: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, kuNames: []string{"digital_signature", "cert_sign"},
			eku: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, ekuNames: []string{"server_auth", "client_auth"}},
		{name: "no-cn", cn: "", nb: t0.Add(300 * day), na: t0.Add(1000 * day), ca: true,
			ku: x509.KeyUsageCertSign, kuNames: []string{"cert_sign"}},
		{name: "unicode", cn: "ünï root", nb: t0.Add(-1000 * day), na: t0.Add(50 * day), ca: true,
			eku:     []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
			unknown: []asn1.ObjectIdentifier{{1, 2, 3, 4}}, ekuNames: []string{"any", "1.2.3.4"}},
		{name: "prod", cn: "prod-1 meta", nb: t0.Add(10 * day), na: t0.Add(11 * day), ca: true,
			ku: x509.KeyUsageCertSign | x509.KeyUsageKeyEncipherment, kuNames: []string{"key_encipherment", "cert_sign"}},
		{name: "leaf", cn: "leaf", nb: t0, na: t0.Add(day)}, // not a CA
	}
	var out []refCAPEM
	pems := map[string]string{}
	for i, s := range specs {
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 1)), Subject: pkix.Name{CommonName: s.cn},
			NotBefore: s.nb, NotAfter: s.na, KeyUsage: s.ku, ExtKeyUsage: s.eku, UnknownExtKeyUsage: s.unknown,
			BasicConstraintsValid: true, IsCA: s.ca,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			panic(err)
		}
		p := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
		pems[s.name] = p
		var info *account.CAInfo
		if s.ca {
			info = &account.CAInfo{SubjectCommonName: s.cn, NotBefore: s.nb, NotAfter: s.na,
				KeyUsages: orEmptySlice(s.kuNames), ExtendedKeyUsages: orEmptySlice(s.ekuNames)}
		}
		out = append(out, refCAPEM{name: s.name, pem: p, info: info})
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	return append(out,
		refCAPEM{name: "empty", pem: ""},
		refCAPEM{name: "not pem", pem: "nope"},
		refCAPEM{name: "two", pem: pems["alpha"] + pems["beta"]},
		refCAPEM{name: "text before", pem: "x\n" + pems["alpha"]},
		refCAPEM{name: "public key", pem: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))},
	)
})

// genCAPEM draws a ca_pem: a CA four times in five.
var genCAPEM = rapid.Custom(func(rt *rapid.T) refCAPEM {
	var valid, invalid []refCAPEM
	for _, c := range modelCAs() {
		if c.info != nil {
			valid = append(valid, c)
		} else {
			invalid = append(invalid, c)
		}
	}
	return mostly(valid, invalid).Draw(rt, "ca_pem")
})

// caBounds are the validity bounds of the CAs the test sends, the
// moments a filter on not_before or not_after is drawn near.
func caBounds() []time.Time {
	var out []time.Time
	for _, c := range modelCAs() {
		if c.info != nil {
			out = append(out, c.info.NotBefore, c.info.NotAfter)
		}
	}
	return out
}

// ---- certificate authorities --------------------------------------------------------

func (mc *machine) createCA(rt *rapid.T) {
	a := mc.acct(rt)
	ca := genCAPEM.Draw(rt, "ca")
	in := account.CertificateAuthorityCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"), CAPEM: ca.pem}
	want, f := mc.m.createCA(a.ref, in, ca.info, mc.now())
	c, v := mc.client(rt, a)
	got, err := account.NewCertificateAuthorities(c).Create(mc.ctx, &in)
	if expect(rt, "create certificate_authority ("+ca.name+")", err, f, v) {
		want = mc.m.insertCA(a.ref, want, mc.noteID(rt, "ca", got.ID))
		same(rt, "created certificate authority", want, *got)
	}
}

func (mc *machine) updateCA(rt *rapid.T) {
	a := mc.acct(rt)
	in := account.CertificateAuthorityUpdate{ID: mc.pickID(rt, a.ref.cas.ids(), "ca"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata")}
	want, f := mc.m.updateCA(a.ref, in)
	c, v := mc.client(rt, a)
	got, err := account.NewCertificateAuthorities(c).Update(mc.ctx, &in)
	if expect(rt, "update certificate_authority "+in.ID, err, f, v) {
		same(rt, "updated certificate authority", want, *got)
	}
}

// ---- bot users: the deprecated alias of service users ------------------------------------

// createBotUser creates a service user through /bot_users.
func (mc *machine) createBotUser(rt *rapid.T) {
	a := mc.acct(rt)
	in := account.ServiceUserCreate{Name: mc.drawName(rt, a), Active: optional(rt, rapid.Bool(), "active")}
	want, f := mc.m.createUser(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	got, err := account.NewBotUsers(c).Create(mc.ctx, &in)
	if expect(rt, "create bot_user", err, f, v) {
		want = mc.m.insertUser(a.ref, want, mc.noteID(rt, "service", got.ID))
		same(rt, "created bot user", want, *got)
	}
}

func (mc *machine) updateBotUser(rt *rapid.T) {
	a := mc.acct(rt)
	in := account.ServiceUserUpdate{ID: mc.pickID(rt, a.ref.users.ids(), "service"),
		Active: optional(rt, rapid.Bool(), "active")}
	if rapid.Bool().Draw(rt, "name_set") {
		name := mc.drawName(rt, a)
		in.Name = &name
	}
	want, f := mc.m.updateUser(a.ref, in)
	c, v := mc.client(rt, a)
	got, err := account.NewBotUsers(c).Update(mc.ctx, &in)
	if expect(rt, "update bot_user "+in.ID, err, f, v) {
		same(rt, "updated bot user", want, *got)
	}
}

// drawName draws a service user name, one of a's own names a third of
// the time (taken: 409 on create, and on update unless it is the user's
// own).
func (mc *machine) drawName(rt *rapid.T, a *mAcct) string {
	if len(a.ref.users.items) > 0 && rapid.IntRange(0, 2).Draw(rt, "name_taken") == 0 {
		return rapid.SampledFrom(a.ref.users.items).Draw(rt, "taken_user").Name
	}
	return genName.Draw(rt, "name")
}

// ---- event sources ------------------------------------------------------------------

var genSourceType = mostly([]string{"api_key_created.v0", "vault_deleted.v0", "http_request_complete.v0",
	"agent_session_start.v0", "tcp_connection_closed.v0", "certificate_authority_updated.v0"},
	[]string{"bogus.v0", "API_KEY_CREATED.V0", "", "a/b"})

// pickSource draws a subscription and a type: mostly one of its own
// sources, so that gets, updates and deletes find something.
func (mc *machine) pickSource(rt *rapid.T, a *mAcct) (string, string) {
	sub := mc.pickID(rt, a.ref.subs.ids(), "esb")
	if v, ok := a.ref.subs.get(sub); ok && len(v.Sources) > 0 && rapid.Bool().Draw(rt, "own_source") {
		return sub, rapid.SampledFrom(v.Sources).Draw(rt, "source").Type
	}
	return sub, genSourceType.Draw(rt, "type")
}

// asSent turns the model's failure for a rule into what the raw client
// meets: a path it cannot build fails before the server can judge the rule.
func asSent(f *refFail, validating bool, segs ...string) *refFail {
	if f != nil && f.rule && !validating {
		for _, s := range segs {
			if lf := localPathFail(s); lf != nil {
				return lf
			}
		}
	}
	return f
}

func (mc *machine) createSource(rt *rapid.T) {
	a := mc.acct(rt)
	sub, typ := mc.pickSource(rt, a)
	body := ""
	switch rapid.IntRange(0, 4).Draw(rt, "subscription_id") {
	case 0:
		body = sub
	case 1:
		body = mc.pickID(rt, a.ref.subs.ids(), "esb")
	}
	want, f := mc.m.createSource(a.ref, sub, body, typ)
	c, v := mc.client(rt, a)
	f = asSent(f, v, sub)
	got, err := events.NewSources(c).Create(mc.ctx, sub, &events.SourceCreate{SubscriptionID: body, Type: typ})
	if expect(rt, "create event_source "+sub+" "+typ, err, f, v) {
		same(rt, "created event source", want, *got)
	}
}

func (mc *machine) getSource(rt *rapid.T) {
	a := mc.acct(rt)
	sub, typ := mc.pickSource(rt, a)
	want, f := mc.m.getSource(a.ref, sub, typ, false)
	got, err := events.NewSources(a.checked).Get(mc.ctx, sub, typ)
	if expect(rt, "get event_source "+sub+" "+typ, err, f, true) {
		same(rt, "got event source", want, *got)
	}
}

func (mc *machine) updateSource(rt *rapid.T) {
	a := mc.acct(rt)
	sub, typ := mc.pickSource(rt, a)
	want, f := mc.m.getSource(a.ref, sub, typ, true)
	c, v := mc.client(rt, a)
	f = asSent(f, v, sub, typ)
	got, err := events.NewSources(c).Update(mc.ctx, &events.SourceUpdate{SubscriptionID: sub, Type: typ})
	if expect(rt, "update event_source "+sub+" "+typ, err, f, v) {
		same(rt, "updated event source", want, *got)
	}
}

func (mc *machine) listSources(rt *rapid.T) {
	a := mc.acct(rt)
	sub := mc.pickID(rt, a.ref.subs.ids(), "esb")
	want, f := mc.m.listSources(a.ref, sub)
	got, err := events.NewSources(a.checked).List(mc.ctx, sub)
	if expect(rt, "list event_sources "+sub, err, f, true) {
		same(rt, "listed event sources", want, *got)
	}
}

func (mc *machine) deleteSource(rt *rapid.T) {
	a := mc.acct(rt)
	sub, typ := mc.pickSource(rt, a)
	f := mc.m.deleteSource(a.ref, sub, typ)
	err := events.NewSources(a.checked).Delete(mc.ctx, sub, typ)
	expect(rt, "delete event_source "+sub+" "+typ, err, f, true)
}

// ---- Kubernetes operators ------------------------------------------------------------

var (
	genFeatures = mostly([][]string{{}, {"bindings"}, {"ingress"}, {"Bindings", "GATEWAY"}, {"gateway", "ingress", "gateway"},
		{"bindings", "ingress", "BINDINGS"}}, [][]string{{"teleport"}, {"bindings", ""}})
	// genSelectors has no empty list: whether one is sent as [] or
	// omitted is the client's business, not the contract's.
	genSelectors = mostly([][]string{nil, {`true`}, {`false`}, {`endpoint.name == "a"`}, {`endpoint.name == "b"`},
		{`endpoint.name == "a"`, `endpoint.name == "b"`}, {`false`, `endpoint.name == "b"`}},
		[][]string{{`endpoint.nope == "x"`}, {`true`, `endpoint.name`}, {`endpoint.name ==`}})
	genRegion     = rapid.SampledFrom([]string{"", "global", "eu", "us"})
	genIngress    = rapid.SampledFrom([]string{"", "", "mine:443"})
	genDeployment = rapid.Custom(func(rt *rapid.T) k8sop.Deployment {
		return k8sop.Deployment{Name: rapid.SampledFrom([]string{"", "op", "op-2"}).Draw(rt, "dep_name"),
			Namespace: rapid.SampledFrom([]string{"", "ns"}).Draw(rt, "dep_ns"), Version: rapid.SampledFrom([]string{"", "1.0", "1.1"}).Draw(rt, "dep_version"),
			ClusterName: rapid.SampledFrom([]string{"", "c1"}).Draw(rt, "dep_cluster")}
	})
	genEndpointName     = rapid.SampledFrom([]string{"a", "b", "c", ""})
	genEndpointBindings = rapid.SampledFrom([][]string{nil, {"kubernetes"}, {"public"}, {"public", "kubernetes"}, {"internal"}})
)

func (mc *machine) createOp(rt *rapid.T) {
	a := mc.acct(rt)
	in := k8sop.OperatorCreate{Description: genDesc.Draw(rt, "description"), Metadata: genMeta.Draw(rt, "metadata"),
		EnabledFeatures: genFeatures.Draw(rt, "features"), Region: genRegion.Draw(rt, "region"), Deployment: genDeployment.Draw(rt, "deployment")}
	// A binding mostly goes with the bindings feature, now and then without.
	if hasBindings(in.EnabledFeatures) || rapid.IntRange(0, 5).Draw(rt, "stray_binding") == 0 {
		if rapid.IntRange(0, 4).Draw(rt, "binding_set") > 0 {
			in.Binding = &k8sop.BindingCreate{EndpointSelectors: genSelectors.Draw(rt, "selectors"), IngressEndpoint: genIngress.Draw(rt, "ingress")}
		}
	}
	want, f := mc.m.createOp(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	got, err := k8sop.NewOperators(c).Create(mc.ctx, &in)
	if expect(rt, "create kubernetes_operator", err, f, v) {
		want = mc.m.insertOp(a.ref, want, mc.noteID(rt, "k8sop", got.ID))
		same(rt, "created kubernetes operator", want, *got)
	}
}

func (mc *machine) updateOp(rt *rapid.T) {
	a := mc.acct(rt)
	in := k8sop.OperatorUpdate{ID: mc.pickID(rt, a.ref.ops.ids(), "k8sop"),
		Description: optional(rt, genDesc, "description"), Metadata: optional(rt, genMeta, "metadata"),
		EnabledFeatures: optional(rt, genFeatures, "features"), Region: optional(rt, genRegion, "region")}
	if rapid.Bool().Draw(rt, "binding_set") {
		in.Binding = &k8sop.BindingUpdate{IngressEndpoint: optional(rt, genIngress, "ingress")}
		if sel := genSelectors.Draw(rt, "selectors"); sel != nil {
			in.Binding.EndpointSelectors = &sel
		}
	}
	if rapid.Bool().Draw(rt, "deployment_set") {
		in.Deployment = &k8sop.DeploymentUpdate{Name: optional(rt, rapid.SampledFrom([]string{"", "op-3"}), "dep_name"),
			Version: optional(rt, rapid.SampledFrom([]string{"", "2.0"}), "dep_version")}
	}
	want, f := mc.m.updateOp(a.ref, in, mc.now())
	c, v := mc.client(rt, a)
	got, err := k8sop.NewOperators(c).Update(mc.ctx, &in)
	if expect(rt, "update kubernetes_operator "+in.ID, err, f, v) {
		same(rt, "updated kubernetes operator", want, *got)
	}
}

// seedEndpoint seeds an endpoint (endpoints have no API path).
func (mc *machine) seedEndpoint(rt *rapid.T) {
	a := mc.acct(rt)
	in := k8sop.Endpoint{Name: genEndpointName.Draw(rt, "endpoint_name"), Bindings: genEndpointBindings.Draw(rt, "endpoint_bindings"),
		Proto: "https", URL: "https://x.test"}
	got, err := fake.Seed[k8sop.Endpoint](mc.srv, a.ref.id, &in)
	if err != nil {
		rt.Fatalf("seed endpoint: %v", err)
	}
	want := mc.m.seedEndpoint(a.ref, in, mc.noteID(rt, "ep", got.ID), mc.now())
	same(rt, "seeded endpoint", want, got)
}

// unseedEndpoint removes a seeded endpoint with fake.Delete.
func (mc *machine) unseedEndpoint(rt *rapid.T) {
	a := mc.acct(rt)
	ids := a.ref.eps.ids()
	if len(ids) == 0 {
		rt.Skip("no endpoint")
	}
	id := rapid.SampledFrom(ids).Draw(rt, "endpoint")
	if err := fake.Delete[k8sop.Endpoint](mc.srv, a.ref.id, id); err != nil {
		rt.Fatalf("delete endpoint %s: %v", id, err)
	}
	a.ref.eps.del(id)
}

// boundEndpoints pages through an operator's bound endpoints.
func (mc *machine) boundEndpoints(rt *rapid.T) {
	a := mc.acct(rt)
	id := mc.pickID(rt, a.ref.ops.ids(), "k8sop")
	path := "/kubernetes_operators/" + url.PathEscape(id) + "/bound_endpoints"
	limit, ok := mc.drawLimit(rt, a, path, "bound_endpoints", localPathFail(id))
	if !ok {
		return
	}
	before := ""
	if rapid.Bool().Draw(rt, "before_set") {
		before = mc.pickID(rt, a.ref.eps.ids(), "ep")
	}
	all, f := mc.m.boundEndpoints(a.ref, id)
	ops := k8sop.NewOperators(a.checked)
	got, err := ops.BoundEndpointsPage(mc.ctx, id, &acctapi.ListOptions{Limit: limit, BeforeID: before})
	what := fmt.Sprintf("list bound_endpoints %s limit=%d before_id=%q", id, limit, before)
	if !expect(rt, what, err, f, true) {
		return
	}
	for i, want := range pages(all, func(e k8sop.Endpoint) string { return e.ID }, before, pageSize(limit)) {
		if i > 0 {
			got, err = getPage[k8sop.EndpointList](mc.ctx, a.checked, got.NextPage())
			if err != nil {
				rt.Fatalf("%s: page %d: %v", what, i, err)
			}
		}
		same(rt, fmt.Sprintf("%s: page %d", what, i), want.items, orEmptySlice(got.Endpoints))
		last := ""
		if want.more {
			last = want.items[len(want.items)-1].ID
		}
		mc.checkNext(rt, what, i, got.NextPage(), want.more, path, last, limit, "")
	}
}

// ---- lists: limits and next pages ----------------------------------------------------

// drawLimit draws a page size: mostly 1 to 5, now and then absent (0,
// the default of 100) or 100; and now and then an invalid one (0 or 101,
// which the typed clients will not send), sent raw to path, which must
// answer 400 ERR_NGROK_233 (or, when pathFail is set, fail as it says):
// then ok is false.
func (mc *machine) drawLimit(rt *rapid.T, a *mAcct, path, name string, pathFail *refFail) (limit int, ok bool) {
	switch rapid.IntRange(0, 11).Draw(rt, "limit_kind") {
	case 0:
		return 0, true
	case 1:
		return 100, true
	case 2:
		bad := rapid.SampledFrom([]string{"0", "101", "-1", "x"}).Draw(rt, "bad_limit")
		err := a.checked.Do(mc.ctx, http.MethodGet, path, url.Values{"limit": {bad}}, nil, nil)
		expect(rt, "list "+name+" limit="+bad, err, first(pathFail, failBad(acctapi.CodeBadLimit)), true)
		return 0, false
	}
	return rapid.IntRange(1, 5).Draw(rt, "limit"), true
}

// pageSize is the size of the pages a list sent with limit has: limit,
// or 100 without one.
func pageSize(limit int) int {
	if limit == 0 {
		return acctapi.MaxLimit
	}
	return limit
}

// checkNext checks a page's next_page_uri: none after the last page, else
// the list's own (escaped) path with before_id last, the page's last id,
// the same limit (when one was sent; without one, none or the default,
// 100) and the same filter.
func (mc *machine) checkNext(rt *rapid.T, what string, i int, next string, more bool, path, last string, limit int, filter string) {
	rt.Helper()
	if !more {
		if next != "" {
			rt.Fatalf("%s: page %d is the last but next_page_uri is %q", what, i, next)
		}
		return
	}
	u, err := url.Parse(next)
	if err != nil {
		rt.Fatalf("%s: page %d: next_page_uri %q: %v", what, i, next, err)
	}
	q := u.Query()
	wantLimit, n := strconv.Itoa(limit), 2+min(len(filter), 1)
	if limit == 0 {
		wantLimit = "100"
		if !q.Has("limit") {
			wantLimit, n = "", n-1
		}
	}
	wantURL := mc.srv.URL + path
	if got := u.Scheme + "://" + u.Host + u.EscapedPath(); got != wantURL || q.Get("before_id") != last ||
		q.Get("limit") != wantLimit || q.Get("filter") != filter || len(q) != n {
		rt.Fatalf("%s: page %d: next_page_uri %q, want %s with before_id=%s, limit=%s, filter=%q", what, i, next, wantURL, last, wantLimit, filter)
	}
}

// ---- references -------------------------------------------------------------------

// deleteReferenced deletes a backend or destination that a failover or
// subscription of the account references: 409 ERR_NGROK_6502.
func (mc *machine) deleteReferenced(rt *rapid.T) {
	a := mc.acct(rt)
	var ids []string
	for _, f := range a.ref.fos.items {
		ids = append(ids, f.Backends...)
	}
	for _, s := range a.ref.subs.items {
		for _, d := range s.Destinations {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) == 0 {
		rt.Skip("nothing referenced")
	}
	slices.Sort(ids)
	id := rapid.SampledFrom(slices.Compact(ids)).Draw(rt, "referenced")
	prefix, _, _ := strings.Cut(id, "_")
	for _, k := range mc.kinds {
		if k.idPrefix() == prefix && !k.isAlias() {
			k.delID(mc, rt, a, id)
			return
		}
	}
	rt.Fatalf("no kind for %s", id)
}

// validRefs draws a list of distinct ids from own: a list every rule
// accepts (as long as own holds only ids that exist).
func validRefs(rt *rapid.T, own []string, label string) []string {
	if len(own) == 0 {
		return []string{}
	}
	perm := rapid.Permutation(own).Draw(rt, label+"_order")
	return perm[:rapid.IntRange(0, min(3, len(perm))).Draw(rt, label+"_n")]
}
