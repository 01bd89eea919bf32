package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startProgram runs the program on a free port and returns its base URL
// and API key; the program stops when the test ends, and must exit 0.
func startProgram(t *testing.T, args ...string) (base, key string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw, io.Discard)
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
	})
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "listening on "); ok {
			base = v
		}
		if v, ok := strings.CutPrefix(line, "api key: "); ok {
			key = v
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if base == "" || key == "" {
		t.Fatalf("program did not print its address and key")
	}
	return base, key
}

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Service-Version", "2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServesWithGivenKeyAndFixtures(t *testing.T) {
	dir := t.TempDir()
	fixtures := filepath.Join(dir, "fixtures.json")
	if err := os.WriteFile(fixtures, []byte(`[{"path": "/service_users", "body": {"name": "from-fixture"}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, key := startProgram(t, "-api-key", "secret-key-1", "-fixtures", fixtures)
	if key != "secret-key-1" {
		t.Errorf("key = %q", key)
	}
	status, body := get(t, base+"/service_users", key)
	if status != 200 || !strings.Contains(body, `"name":"from-fixture"`) || !strings.Contains(body, `"uri":"`+base+`/service_users"`) {
		t.Errorf("GET /service_users = %d %s", status, body)
	}
	if status, _ := get(t, base+"/service_users", "wrong"); status != 401 {
		t.Errorf("wrong key: status %d, want 401", status)
	}
}

func TestRandomKeyByDefault(t *testing.T) {
	base, key := startProgram(t)
	if len(key) < 20 {
		t.Errorf("key %q looks too short", key)
	}
	if status, body := get(t, base+"/api_keys", key); status != 200 {
		t.Errorf("GET /api_keys = %d %s", status, body)
	}
}

func TestBadArguments(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want int
	}{
		{"unknown flag", []string{"-nope"}, 2},
		{"extra argument", []string{"x"}, 2},
		{"missing fixtures file", []string{"-addr", "127.0.0.1:0", "-fixtures", "/no/such/file"}, 1},
		{"bad fixture", []string{"-addr", "127.0.0.1:0", "-fixtures", writeFile(t, `[{"path": "/service_users", "body": {"name": ""}}]`)}, 1},
		{"bad address", []string{"-addr", "256.0.0.1:99999"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var stderr strings.Builder
			if got := run(ctx, tt.args, io.Discard, &stderr); got != tt.want {
				t.Errorf("exit %d, want %d (stderr %q)", got, tt.want, stderr.String())
			}
			if stderr.Len() == 0 {
				t.Error("nothing on stderr")
			}
		})
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
