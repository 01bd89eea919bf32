package anylanguage_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// tsClientFiles are what ts-client/ holds besides its README: the npm
// project (pinning @ngrok/ngrok-api 0.11.0 with its lockfile), the script
// and the fixtures the script starts acctfake with.
var tsClientFiles = []string{"package.json", "package-lock.json", "check.js", "fixtures.json"}

// TestTSClient runs ts-client/check.js: the real service's published
// TypeScript client, @ngrok/ngrok-api 0.11.0 from npm, unchanged, against
// acctfake, every operation of it that maps onto the fake. It runs only
// when ACCTAPI_TS_CLIENT=1 (it needs node, npm with the npm registry or its
// cache, and openssl), so the default test command needs none of them:
//
//	ACCTAPI_TS_CLIENT=1 go test ./examples/anylanguage -run TestTSClient -v
//
// It builds acctfake, copies ts-client/ into a temporary directory (the
// checkout gets no node_modules), runs npm ci there and then the script,
// which starts acctfake on a free port and exits 0 only when every
// operation passed; a failure prints each failed operation's requests and
// answers.
func TestTSClient(t *testing.T) {
	if os.Getenv("ACCTAPI_TS_CLIENT") != "1" {
		t.Skip("set ACCTAPI_TS_CLIENT=1 to run the real service's TypeScript client (@ngrok/ngrok-api 0.11.0, from npm) against acctfake; it needs node, npm and openssl")
	}
	for _, tool := range []string{"go", "node", "npm", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("ACCTAPI_TS_CLIENT=1 but %s is not on PATH", tool)
		}
	}
	dir := t.TempDir()
	for _, name := range tsClientFiles {
		b, err := os.ReadFile(filepath.Join("ts-client", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "acctfake")
	// No deadline of the test's own (building, npm ci and the script take
	// what they take on a loaded machine): go test -timeout guards a hang.
	run(t, "", "go", "build", "-o", bin, "github.com/acctapi/acctapi/cmd/acctfake")
	run(t, dir, "npm", "ci", "--no-audit", "--no-fund")
	out := run(t, dir, "node", "check.js", bin)
	t.Logf("check.js:\n%s", out)
}

// run runs a command in dir (the package's directory when empty) and
// returns its output; it fails the test with the output when the command
// fails.
func run(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return out
}

// TestTSClientFixtures loads ts-client/fixtures.json into an in-process
// fake, in the default test run, so that the fixtures check.js starts
// acctfake with keep loading: check.js counts on two tunnels labelled
// env=ci (one also team=edge) besides one env=prod, and two endpoints with
// the kubernetes binding besides a public one.
func TestTSClientFixtures(t *testing.T) {
	srv, err := fake.New(fake.WithoutListener())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f, err := os.Open(filepath.Join("ts-client", "fixtures.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := srv.LoadFixtures(f); err != nil {
		t.Fatal(err)
	}
	ci, edge := 0, 0
	tunnels := fake.List[fake.Tunnel](srv, "")
	for _, tn := range tunnels {
		if tn.Labels["env"] == "ci" {
			ci++
			if tn.Labels["team"] == "edge" {
				edge++
			}
		}
	}
	if len(tunnels) != 3 || ci != 2 || edge != 1 {
		t.Errorf("tunnels: %d, %d env=ci, %d of them team=edge; want 3, 2, 1", len(tunnels), ci, edge)
	}
	kube := 0
	endpoints := fake.List[k8sop.Endpoint](srv, "")
	for _, e := range endpoints {
		for _, b := range e.Bindings {
			if b == "kubernetes" {
				kube++
			}
		}
	}
	if len(endpoints) != 3 || kube != 2 {
		t.Errorf("endpoints: %d, %d with the kubernetes binding; want 3, 2", len(endpoints), kube)
	}
}
