package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/scripted"
)

// TestGatewayCommand runs pling gateway in front of a scripted upstream
// and shuts it down while a stream is in flight: the stream finishes
// whole, then the command exits 0.
func TestGatewayCommand(t *testing.T) {
	const content = "one two three four five six"
	up, err := scripted.Start(func(r scripted.Request) scripted.Reply {
		return scripted.Reply{Content: content, ChunkSize: 4, Gap: 100 * time.Millisecond}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	dir := t.TempDir()
	keys := filepath.Join(dir, "sites")
	if err := os.WriteFile(keys, []byte("# sites\nsite-key-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PLING_UPSTREAM_KEY", "sk-from-env")
	gw := startCmd(t, runGateway, "--addr", "127.0.0.1:0", "--upstream", up.URL, "--models", "m1,m2",
		"--site-keys", keys, "--grace", "5s")
	base := gw.url(t)

	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"m2","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer site-key-1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("status %d %s", res.StatusCode, b)
	}
	if got := up.Last().Authorization; got != "Bearer sk-from-env" {
		t.Errorf("upstream got %q, want the key from PLING_UPSTREAM_KEY", got)
	}
	gw.cancel() // shut down with the stream in flight
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("the stream was cut at shutdown: %v", err)
	}
	var got strings.Builder
	for _, m := range regexp.MustCompile(`"content":"([^"]*)"`).FindAllStringSubmatch(string(body), -1) {
		got.WriteString(m[1])
	}
	if got.String() != content || !strings.Contains(string(body), "[DONE]") {
		t.Errorf("stream after shutdown began: %q", body)
	}
	if code := gw.stop(t); code != 0 {
		t.Errorf("exit %d; stderr %s", code, gw.stderr.String())
	}
	if logs := gw.stderr.String() + gw.stdout.String(); strings.Contains(logs, "sk-from-env") || strings.Contains(logs, "site-key-1") {
		t.Errorf("the output holds a key: %s", logs)
	}
}
