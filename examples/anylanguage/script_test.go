package anylanguage_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestScript runs acctfake.sh with bash and checks what it prints, so the
// script keeps working as acctfake changes. It is skipped when bash, curl
// or the go command (which the script builds acctfake with) is missing,
// and in -short mode.
func TestScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs cmd/acctfake")
	}
	for _, tool := range []string{"bash", "curl", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	t.Parallel()
	// No deadline of the test's own (the script builds acctfake, which on
	// a loaded machine takes what it takes): go test -timeout guards a hang.
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join(".", "acctfake.sh"))
	cmd.Env = append(os.Environ(), "ADDR=127.0.0.1:0", "API_KEY=test-key", "ADMIN_TOKEN=test-admin")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("acctfake.sh: %v\n%s", err, out)
	}
	want := []string{
		"acctfake is listening",
		"admin health: ok",
		"created service user ci (service_...)",
		"service users: ci fixture-bot",
		"the other account's: other-team",
		"delete: HTTP 204",
		"get after delete: HTTP 404 ERR_ACCTAPI_NOT_FOUND",
		"without a key: HTTP 401",
		"after restoring the snapshot: fixture-bot",
		"with the fault: HTTP 503 ERR_ACCTAPI_UNAVAILABLE",
		"then: HTTP 200",
		"journal: 1 GET /service_users answered 503",
		"created at 2030-01-03T00:00:00Z",
		"after reset: fixture-bot",
		"stopped: exit status 0",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(string(out)), "\n")); diff != "" {
		t.Errorf("acctfake.sh output (-want +got):\n%s", diff)
	}
}
