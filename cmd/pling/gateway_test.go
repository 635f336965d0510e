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
	up, keys := gatewayRig(t, func(r scripted.Request) scripted.Reply {
		return scripted.Reply{Content: content, ChunkSize: 4, Gap: 100 * time.Millisecond}
	})
	gw := startCmd(t, runGateway, "--addr", "127.0.0.1:0", "--upstream", up.URL, "--models", "m1,m2",
		"--site-keys", keys, "--grace", "5s")
	base := gw.url(t)

	res := chatAsSite(t, base, `{"model":"m2","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
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

// gatewayRig readies a pling gateway test: a scripted upstream answering
// with reply (closed when the test ends), the provider key
// "sk-from-env" in PLING_UPSTREAM_KEY, and a --site-keys file holding
// "site-key-1".
func gatewayRig(t *testing.T, reply scripted.Script) (up *scripted.Server, siteKeys string) {
	t.Helper()
	up, err := scripted.Start(reply)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	siteKeys = filepath.Join(t.TempDir(), "sites")
	if err := os.WriteFile(siteKeys, []byte("# sites\nsite-key-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PLING_UPSTREAM_KEY", "sk-from-env")
	return up, siteKeys
}

// chatAsSite posts a chat completion to the gateway at base with the
// site key of gatewayRig.
func chatAsSite(t *testing.T, base, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer site-key-1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
