package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/npmtest"
	"github.com/pling-go/pling/internal/testing/require"
	"github.com/pling-go/pling/internal/testing/scripted"
)

// npmOpenAIVersion is the official JavaScript OpenAI client the gateway is
// tested with. It declares node >=22 and runs on the project's Node 20
// for everything the test uses (npm warns EBADENGINE at install).
const npmOpenAIVersion = "7.55.0"

// gatewayScript answers by the last user message, so one scripted
// upstream plays every upstream behaviour the clients meet.
func gatewayScript(r scripted.Request) scripted.Reply {
	last := ""
	if n := len(r.Messages); n > 0 {
		last = r.Messages[n-1].Text()
	}
	switch last {
	case "upstream 429":
		return scripted.Reply{Status: 429, Header: map[string][]string{"Retry-After": {"7"}}, Body: `{"error":{"message":"slow"}}`}
	case "upstream 500":
		return scripted.Reply{Status: 500, Body: `{"error":{"message":"boom"}}`}
	case "upstream hangs":
		return scripted.Reply{Hang: true}
	case "upstream resets":
		return scripted.Reply{Content: strings.Repeat("abcd", 40), ChunkSize: 4, ResetAfter: 5}
	}
	return scripted.Reply{Content: "Hello from the scripted upstream.", ChunkSize: 5}
}

// gatewaysForClients runs a scripted upstream and three gateways in front
// of it: a working one, one whose callers have a burst of 1, and one with
// no provider key.
func gatewaysForClients(t *testing.T) map[string]string {
	t.Helper()
	up, err := scripted.Start(gatewayScript)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	run := func(edit func(*gateway.Config)) string {
		cfg := gateway.Config{Upstream: up.URL, UpstreamKey: "sk-test", Models: []string{"scripted-small"},
			SiteKeys: []string{"site-key-js"}, MaxBodyBytes: 32 << 10, UpstreamTimeout: 500 * time.Millisecond,
			RatePerSecond: 100, Burst: 100, Logger: slog.New(slog.DiscardHandler)}
		edit(&cfg)
		hs := httptest.NewServer(gateway.New(cfg).Handler())
		t.Cleanup(hs.Close)
		return hs.URL + "/v1"
	}
	return map[string]string{
		"main":     run(func(*gateway.Config) {}),
		"limited":  run(func(c *gateway.Config) { c.RatePerSecond, c.Burst = 0.01, 1 }),
		"misconf":  run(func(c *gateway.Config) { c.UpstreamKey = "" }),
		"upstream": up.URL,
	}
}

// jsGatewayClient drives the gateways with the official client: plain and
// streamed completions, then each gateway code, printing what the
// client's own error type says.
const jsGatewayClient = `
import OpenAI from "openai";
const urls = JSON.parse(process.argv[2]);
const out = { errors: {} };
// A fetch that lets a case replace the body the client serialized, for
// the bodies no typed call can make (not JSON at all).
const rawFetch = (url, init) => {
  const h = new Headers(init.headers);
  if (h.has("x-test-raw-body")) { init = { ...init, body: h.get("x-test-raw-body") }; }
  return fetch(url, init);
};
const client = (url, key = "site-key-js") => new OpenAI({ baseURL: url, apiKey: key, maxRetries: 0, fetch: rawFetch });
const say = (text, model = "scripted-small") => ({ model, messages: [{ role: "user", content: text }] });
const main = client(urls.main);
const plain = await main.chat.completions.create(say("hi"));
out.plain = plain.choices[0].message.content;
let streamed = "", chunks = 0;
for await (const c of await main.chat.completions.create({ ...say("hi"), stream: true })) {
  if (c.choices.length) { streamed += c.choices[0].delta.content ?? ""; chunks++; }
}
out.streamed = streamed; out.chunks = chunks;
const record = (name, e) => {
  if (!(e instanceof OpenAI.APIError)) { out.errors[name] = { cls: String(e) }; return; }
  const h = e.headers;
  out.errors[name] = { cls: e.constructor.name, status: e.status ?? 0, code: e.code ?? "", type: e.type ?? "",
    retryAfter: (h && h.get ? h.get("retry-after") : h?.["retry-after"]) ?? "" };
};
const attempt = async (name, fn) => { try { await fn(); out.errors[name] = { cls: "none" }; } catch (e) { record(name, e); } };
await attempt("PAYLOAD_TOO_LARGE", () => client(urls.main, "wrong").chat.completions.create(say("x".repeat(40000))));
await attempt("INVALID_JSON", () => client(urls.main, "wrong").chat.completions.create(say("hi"), { headers: { "x-test-raw-body": "{\"model\":" } }));
await attempt("MODEL_REQUIRED", () => client(urls.main, "wrong").chat.completions.create(say("hi", "")));
await attempt("MODEL_NOT_ALLOWED", () => client(urls.main, "wrong").chat.completions.create(say("hi", "gpt-unlisted")));
await attempt("UNAUTHORIZED", () => client(urls.main, "wrong").chat.completions.create(say("hi")));
await attempt("UPSTREAM_RATE_LIMITED", () => main.chat.completions.create(say("upstream 429")));
await attempt("UPSTREAM_TIMEOUT", () => main.chat.completions.create(say("upstream hangs")));
await attempt("UPSTREAM_UNAVAILABLE", () => main.chat.completions.create(say("upstream 500")));
await attempt("GATEWAY_MISCONFIGURED", () => client(urls.misconf).chat.completions.create(say("hi")));
const limited = client(urls.limited);
await limited.chat.completions.create(say("hi"));
await attempt("GATEWAY_RATE_LIMITED", () => limited.chat.completions.create(say("hi")));
await attempt("stream reset", async () => {
  for await (const c of await main.chat.completions.create({ ...say("upstream resets"), stream: true })) { void c; }
});
process.stdout.write(JSON.stringify(out));
`

// npmPackage installs an npm package once into the user's cache dir (so
// later runs reuse it, internal/testing/npmtest) and returns node and a
// new directory of the test's own to run it and its scripts in (its
// node_modules holds the package). It skips when node or npm is missing
// or the registry cannot be reached, unless PLING_REQUIRE_NPM=1.
func npmPackage(t *testing.T, name, version string) (node, dir string) {
	t.Helper()
	node, _ = require.NPM(t)
	return node, npmtest.Project(t, npmtest.Install(t, npmtest.Package{Name: name, Version: version}))
}

// TestGatewayJSClient runs the official JavaScript client against the
// gateway: completions plain and streamed, and every gateway code as the
// client's own APIError subclass with the right status and code.
func TestGatewayJSClient(t *testing.T) {
	node, dir := npmPackage(t, "openai", npmOpenAIVersion)
	urls := gatewaysForClients(t)
	script := filepath.Join(dir, "gateway-client.mjs")
	if err := os.WriteFile(script, []byte(jsGatewayClient), 0o644); err != nil {
		t.Fatal(err)
	}
	u, _ := json.Marshal(urls)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, string(u))
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, b)
	}
	type jsErr struct {
		Cls, Code, Type, RetryAfter string
		Status                      int
	}
	var got struct {
		Plain, Streamed string
		Chunks          int
		Errors          map[string]jsErr
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if got.Plain != "Hello from the scripted upstream." || got.Streamed != got.Plain || got.Chunks < 5 {
		t.Errorf("completions: plain %q, streamed %q in %d chunks", got.Plain, got.Streamed, got.Chunks)
	}
	want := map[string]jsErr{
		"PAYLOAD_TOO_LARGE":     {Cls: "APIError", Status: 413, Code: "PAYLOAD_TOO_LARGE", Type: "invalid_request_error"},
		"INVALID_JSON":          {Cls: "BadRequestError", Status: 400, Code: "INVALID_JSON", Type: "invalid_request_error"},
		"MODEL_REQUIRED":        {Cls: "BadRequestError", Status: 400, Code: "MODEL_REQUIRED", Type: "invalid_request_error"},
		"MODEL_NOT_ALLOWED":     {Cls: "PermissionDeniedError", Status: 403, Code: "MODEL_NOT_ALLOWED", Type: "permission_error"},
		"UNAUTHORIZED":          {Cls: "AuthenticationError", Status: 401, Code: "UNAUTHORIZED", Type: "authentication_error"},
		"UPSTREAM_RATE_LIMITED": {Cls: "RateLimitError", Status: 429, Code: "UPSTREAM_RATE_LIMITED", Type: "rate_limit_error", RetryAfter: "7"},
		"UPSTREAM_TIMEOUT":      {Cls: "InternalServerError", Status: 504, Code: "UPSTREAM_TIMEOUT", Type: "timeout_error"},
		"UPSTREAM_UNAVAILABLE":  {Cls: "InternalServerError", Status: 502, Code: "UPSTREAM_UNAVAILABLE", Type: "server_error"},
		"GATEWAY_MISCONFIGURED": {Cls: "InternalServerError", Status: 500, Code: "GATEWAY_MISCONFIGURED", Type: "server_error"},
		"GATEWAY_RATE_LIMITED":  {Cls: "RateLimitError", Status: 429, Code: "GATEWAY_RATE_LIMITED", Type: "rate_limit_error", RetryAfter: "100"},
		// A stream cut upstream ends with the gateway's error event,
		// which the client raises as an APIError without a status.
		"stream reset": {Cls: "APIError", Code: "UPSTREAM_UNAVAILABLE", Type: "server_error"},
	}
	if diff := cmp.Diff(want, got.Errors); diff != "" {
		t.Errorf("errors as the JS client reports them (-want +got):\n%s", diff)
	}
}
