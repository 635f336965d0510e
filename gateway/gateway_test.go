package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/httpcheck"
	"github.com/pling-go/pling/internal/testing/scripted"
	"github.com/pling-go/pling/internal/testing/syncbuf"
)

const (
	siteKey     = "site-key-0123456789"
	upstreamKey = "sk-upstream-secret-4242"
	model       = "scripted-small"
)

type env struct {
	up   *scripted.Server
	gw   *httptest.Server
	srv  *gateway.Server
	logs *syncbuf.Buffer
}

// start runs a scripted upstream and a gateway in front of it, on
// loopback; edit changes the gateway's config before it is built.
func start(t *testing.T, script scripted.Script, edit func(*gateway.Config)) *env {
	t.Helper()
	up, err := scripted.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	logs := &syncbuf.Buffer{}
	cfg := gateway.Config{Upstream: up.URL, UpstreamKey: upstreamKey, Models: []string{model, "scripted-large"},
		SiteKeys: []string{"other-site-key", siteKey}, MaxBodyBytes: 64 << 10, RatePerSecond: 1000, Burst: 1000,
		UpstreamTimeout: 2 * time.Second, Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	if edit != nil {
		edit(&cfg)
	}
	srv := gateway.New(cfg)
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return &env{up: up, gw: gw, srv: srv, logs: logs}
}

func (e *env) client(key string, opts ...option.RequestOption) *openai.Client {
	c := openai.NewClient(append([]option.RequestOption{option.WithBaseURL(e.gw.URL + "/v1"), option.WithAPIKey(key),
		option.WithMaxRetries(0)}, opts...)...)
	return &c
}

func say(text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}}
}

func answer(content string) scripted.Script {
	return func(scripted.Request) scripted.Reply { return scripted.Reply{Content: content} }
}

// apiError is the status, code and Retry-After the OpenAI client reports.
type apiError struct {
	Status     int
	Code, Type string
	RetryAfter string
}

func asAPIError(t *testing.T, err error) apiError {
	t.Helper()
	var ae *openai.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *openai.Error", err, err)
	}
	return apiError{Status: ae.StatusCode, Code: ae.Code, Type: ae.Type, RetryAfter: ae.Response.Header.Get("Retry-After")}
}

func TestCompletionThroughOpenAIClient(t *testing.T) {
	e := start(t, answer("Hello from the scripted upstream."), nil)
	c := e.client(siteKey)
	t.Run("plain", func(t *testing.T) {
		got, err := c.Chat.Completions.New(context.Background(), say("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("Hello from the scripted upstream.", got.Choices[0].Message.Content); diff != "" {
			t.Errorf("content (-want +got):\n%s", diff)
		}
		last := e.up.Last()
		if last.Authorization != "Bearer "+upstreamKey {
			t.Errorf("upstream got Authorization %q, want the provider key", last.Authorization)
		}
	})
	t.Run("streamed", func(t *testing.T) {
		s := c.Chat.Completions.NewStreaming(context.Background(), say("hi"))
		var b strings.Builder
		n := 0
		for s.Next() {
			if ch := s.Current(); len(ch.Choices) > 0 {
				b.WriteString(ch.Choices[0].Delta.Content)
				n++
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("Hello from the scripted upstream.", b.String()); diff != "" {
			t.Errorf("content (-want +got):\n%s", diff)
		}
		if n < 3 {
			t.Errorf("%d chunks: the stream was not passed on chunk by chunk", n)
		}
	})
	t.Run("models", func(t *testing.T) {
		page, err := c.Models.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		if diff := cmp.Diff([]string{model, "scripted-large"}, ids); diff != "" {
			t.Errorf("models (-want +got):\n%s", diff)
		}
	})
	t.Run("models needs a caller", func(t *testing.T) {
		_, err := e.client("wrong").Models.List(context.Background())
		if diff := cmp.Diff(apiError{401, "UNAUTHORIZED", "authentication_error", ""}, asAPIError(t, err)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestGatewayCodes has every gateway code surface through the official Go
// client's own error type, in the check order of docs/gateway.md: each
// case breaks the rules of its own step and of every later one, so a
// check run out of order answers with the wrong code.
func TestGatewayCodes(t *testing.T) {
	big := `{"model":"` + model + `","messages":[{"role":"user","content":"` + strings.Repeat("x", 70<<10) + `"}]}`
	tests := []struct {
		name   string
		key    string
		body   string // raw request body; "" sends say("hi")
		script scripted.Reply
		edit   func(*gateway.Config)
		want   apiError
	}{
		{name: "oversized body, no caller", key: "wrong", body: big,
			want: apiError{413, "PAYLOAD_TOO_LARGE", "invalid_request_error", ""}},
		{name: "not JSON, no caller", key: "wrong", body: `{"model":`,
			want: apiError{400, "INVALID_JSON", "invalid_request_error", ""}},
		{name: "JSON but not an object", key: siteKey, body: `["model"]`,
			want: apiError{400, "INVALID_JSON", "invalid_request_error", ""}},
		{name: "model given twice", key: siteKey, body: `{"model":"` + model + `","model":"gpt-expensive","messages":[]}`,
			want: apiError{400, "INVALID_JSON", "invalid_request_error", ""}},
		{name: "trailing data", key: siteKey, body: `{"model":"` + model + `"} {}`,
			want: apiError{400, "INVALID_JSON", "invalid_request_error", ""}},
		{name: "model not a string", key: "wrong", body: `{"model":42,"messages":[]}`,
			want: apiError{400, "MODEL_REQUIRED", "invalid_request_error", ""}},
		{name: "no model, no caller", key: "wrong", body: `{"messages":[]}`,
			want: apiError{400, "MODEL_REQUIRED", "invalid_request_error", ""}},
		{name: "model not allowed, no caller", key: "wrong", body: `{"model":"gpt-unlisted","messages":[]}`,
			want: apiError{403, "MODEL_NOT_ALLOWED", "permission_error", ""}},
		{name: "wrong key", key: "wrong",
			want: apiError{401, "UNAUTHORIZED", "authentication_error", ""}},
		{name: "a site key's prefix", key: siteKey[:len(siteKey)-1],
			want: apiError{401, "UNAUTHORIZED", "authentication_error", ""}},
		{name: "upstream 429", key: siteKey, script: scripted.Reply{Status: 429, Header: http.Header{"Retry-After": {"7"}},
			Body: `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`},
			want: apiError{429, "UPSTREAM_RATE_LIMITED", "rate_limit_error", "7"}},
		{name: "upstream hangs", key: siteKey, script: scripted.Reply{Hang: true},
			edit: func(c *gateway.Config) { c.UpstreamTimeout = 300 * time.Millisecond },
			want: apiError{504, "UPSTREAM_TIMEOUT", "timeout_error", ""}},
		{name: "upstream 500", key: siteKey, script: scripted.Reply{Status: 500, Body: `{"error":{"message":"boom at 10.1.2.3"}}`},
			want: apiError{502, "UPSTREAM_UNAVAILABLE", "server_error", ""}},
		{name: "upstream 503", key: siteKey, script: scripted.Reply{Status: 503, Body: `overloaded`},
			want: apiError{502, "UPSTREAM_UNAVAILABLE", "server_error", ""}},
		{name: "upstream refuses the provider key", key: siteKey, script: scripted.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key sk-up***"}}`},
			want: apiError{500, "GATEWAY_MISCONFIGURED", "server_error", ""}},
		{name: "no upstream key", key: siteKey, edit: func(c *gateway.Config) { c.UpstreamKey = "" },
			want: apiError{500, "GATEWAY_MISCONFIGURED", "server_error", ""}},
		{name: "no upstream URL", key: siteKey, edit: func(c *gateway.Config) { c.Upstream = "" },
			want: apiError{500, "GATEWAY_MISCONFIGURED", "server_error", ""}},
		{name: "no models, no caller", key: "wrong", edit: func(c *gateway.Config) { c.Models = nil },
			want: apiError{403, "MODEL_NOT_ALLOWED", "permission_error", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := start(t, func(scripted.Request) scripted.Reply { return tt.script }, tt.edit)
			var opts []option.RequestOption
			if tt.body != "" {
				opts = append(opts, option.WithRequestBody("application/json", []byte(tt.body)))
			}
			_, err := e.client(tt.key).Chat.Completions.New(context.Background(), say("hi"), opts...)
			if diff := cmp.Diff(tt.want, asAPIError(t, err)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.name, diff)
			}
			if strings.Contains(err.Error(), "10.1.2.3") || strings.Contains(err.Error(), "sk-up") {
				t.Errorf("%s: the upstream's body leaked: %v", tt.name, err)
			}
		})
	}
	t.Run("streamed request, upstream 429", func(t *testing.T) {
		e := start(t, func(scripted.Request) scripted.Reply {
			return scripted.Reply{Status: 429, Header: http.Header{"Retry-After": {"3"}}}
		}, nil)
		s := e.client(siteKey).Chat.Completions.NewStreaming(context.Background(), say("hi"))
		for s.Next() {
		}
		if diff := cmp.Diff(apiError{429, "UPSTREAM_RATE_LIMITED", "rate_limit_error", "3"}, asAPIError(t, s.Err())); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestCallerRateLimit(t *testing.T) {
	e := start(t, answer("ok"), func(c *gateway.Config) {
		c.RatePerSecond = 0.1
		c.Burst = 2
		c.SiteKeys = []string{siteKey, "second-site"}
	})
	c := e.client(siteKey)
	for i := range 2 {
		if _, err := c.Chat.Completions.New(context.Background(), say("hi")); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	_, err := c.Chat.Completions.New(context.Background(), say("hi"))
	if diff := cmp.Diff(apiError{429, "GATEWAY_RATE_LIMITED", "rate_limit_error", "10"}, asAPIError(t, err)); diff != "" {
		t.Errorf("over the burst (-want +got):\n%s", diff)
	}
	if calls := e.up.Calls(); calls != 2 {
		t.Errorf("upstream saw %d calls, want 2: a limited call must not reach it", calls)
	}
	// Another caller has a bucket of its own.
	if _, err := e.client("second-site").Chat.Completions.New(context.Background(), say("hi")); err != nil {
		t.Errorf("another caller: %v", err)
	}
}

// streamErr reads a stream to its end and returns the gateway code of the
// error event that ended it ("" when it ended cleanly) and the content.
func streamErr(t *testing.T, s *ssestream.Stream[openai.ChatCompletionChunk]) (code, content string) {
	t.Helper()
	var b strings.Builder
	for s.Next() {
		if ch := s.Current(); len(ch.Choices) > 0 {
			b.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	err := s.Err()
	if err == nil {
		return "", b.String()
	}
	var se *ssestream.StreamError
	if !errors.As(err, &se) {
		t.Fatalf("stream ended with %v (%T), want a StreamError", err, err)
	}
	var body struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(se.Event.Data, &body); err != nil {
		t.Fatalf("error event %q: %v", se.Event.Data, err)
	}
	return body.Error.Code, b.String()
}

// waitFor polls cond until it holds or the bounded wait is over.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 5s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// goroutines counts goroutines once the transient ones have settled.
func noLeak(t *testing.T, before int) {
	t.Helper()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := goruntime.NumGoroutine()
		if n <= before {
			t.Logf("goroutines: %d before, %d after", before, n)
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:goruntime.Stack(buf, true)]
			t.Fatalf("%d goroutines after, %d before:\n%s", n, before, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStreamFaults(t *testing.T) {
	long := strings.Repeat("abcdefghij", 100)
	tests := []struct {
		name     string
		reply    scripted.Reply
		edit     func(*gateway.Config)
		wantCode string
		wantText string
	}{
		{name: "reset mid-stream", reply: scripted.Reply{Content: long, ChunkSize: 10, ResetAfter: 5},
			wantCode: "UPSTREAM_UNAVAILABLE", wantText: long[:50]},
		{name: "stalls mid-stream", reply: scripted.Reply{Content: "abcdefgh", ChunkSize: 4, Gap: 600 * time.Millisecond},
			edit:     func(c *gateway.Config) { c.UpstreamTimeout = 300 * time.Millisecond },
			wantCode: "UPSTREAM_TIMEOUT"},
		{name: "slow but within the gap", reply: scripted.Reply{Content: "abcdefgh", ChunkSize: 2, Gap: 100 * time.Millisecond},
			edit:     func(c *gateway.Config) { c.UpstreamTimeout = 400 * time.Millisecond },
			wantText: "abcdefgh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := goruntime.NumGoroutine()
			func() {
				e := start(t, func(scripted.Request) scripted.Reply { return tt.reply }, tt.edit)
				defer e.gw.Close()
				defer e.up.Close()
				code, text := streamErr(t, e.client(siteKey).Chat.Completions.NewStreaming(context.Background(), say("hi")))
				if code != tt.wantCode {
					t.Errorf("%s: code %q, want %q", tt.name, code, tt.wantCode)
				}
				if tt.wantText != "" && text != tt.wantText {
					t.Errorf("%s: content %q, want %q", tt.name, text, tt.wantText)
				}
			}()
			noLeak(t, before)
		})
	}
}

// TestCallerGoneCancelsUpstream: a caller that goes away mid-stream ends
// the upstream request, and a caller that stops reading is dropped after
// the write idle timeout.
func TestCallerGoneCancelsUpstream(t *testing.T) {
	before := goruntime.NumGoroutine()
	func() {
		e := start(t, func(scripted.Request) scripted.Reply {
			return scripted.Reply{Content: strings.Repeat("x", 1<<20), ChunkSize: 1024, Gap: time.Millisecond}
		}, func(c *gateway.Config) { c.WriteIdleTimeout = 300 * time.Millisecond })
		defer e.gw.Close()
		defer e.up.Close()
		t.Run("cancelled", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			s := e.client(siteKey).Chat.Completions.NewStreaming(ctx, say("hi"))
			for i := 0; i < 3 && s.Next(); i++ {
			}
			waitFor(t, "upstream answering", func() bool { return e.up.Active() == 1 })
			cancel()
			s.Close()
			waitFor(t, "the upstream request to end after the caller left", func() bool { return e.up.Active() == 0 })
		})
		t.Run("stalled reader", func(t *testing.T) {
			conn, err := net.Dial("tcp", e.gw.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.(*net.TCPConn).SetReadBuffer(4096)
			body := `{"model":"` + model + `","stream":true,"messages":[]}`
			_, _ = io.WriteString(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+siteKey+
				"\r\nContent-Type: application/json\r\nContent-Length: "+itoa(len(body))+"\r\n\r\n"+body)
			// Read nothing: the gateway's writes fill the socket and stall.
			waitFor(t, "upstream answering", func() bool { return e.up.Active() == 1 })
			waitFor(t, "the stalled caller to be dropped and the upstream request ended", func() bool { return e.up.Active() == 0 })
		})
	}()
	noLeak(t, before)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestLogsHoldNoSecrets runs calls of every kind and checks that the log
// has none of the prompt, the answer, the keys or the token.
func TestLogsHoldNoSecrets(t *testing.T) {
	const prompt, reply = "my secret prompt about pineapples", "a secret answer about mangoes"
	e := start(t, answer(reply), nil)
	a := newAuthority(t)
	tok := a.token(t, "gateway:*")
	e2 := start(t, answer(reply), func(c *gateway.Config) {
		c.Tokens = a.tokenAuth(t)
		c.Logger = slog.New(slog.NewJSONHandler(e.logs, nil))
	})
	for _, c := range []*openai.Client{e.client(siteKey), e.client("wrong-key-visible"), e2.client(tok)} {
		_, _ = c.Chat.Completions.New(context.Background(), say(prompt))
		s := c.Chat.Completions.NewStreaming(context.Background(), say(prompt))
		for s.Next() {
		}
	}
	_, _ = e.client(siteKey).Chat.Completions.New(context.Background(), say(prompt),
		option.WithRequestBody("application/json", []byte(`{"model":"`+prompt+`"}`)))
	// A request's line is written once its handler returns, which may be
	// just after the client has read the end of the stream.
	waitFor(t, "a log line for each of the 7 requests", func() bool { return strings.Count(e.logs.String(), `"msg":"request"`) >= 7 })
	logs := e.logs.String()
	for _, secret := range []string{prompt, reply, "pineapples", "mangoes", siteKey, upstreamKey, "wrong-key-visible", tok, tok[len(tok)-20:]} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log contains %q:\n%s", secret, logs)
		}
	}
}

func TestHealthAndMetrics(t *testing.T) {
	e := start(t, answer("hello"), nil)
	_, _ = e.client(siteKey).Chat.Completions.New(context.Background(), say("hi"))
	s := e.client(siteKey).Chat.Completions.NewStreaming(context.Background(), say("hi"))
	for s.Next() {
	}
	_, _ = e.client("nope").Chat.Completions.New(context.Background(), say("hi"))
	get := func(path string) (int, string) { return httpcheck.Get(t, e.gw.URL+path) }
	if st, _ := get("/healthz"); st != 200 {
		t.Errorf("healthz %d", st)
	}
	if st, _ := get("/readyz"); st != 200 {
		t.Errorf("readyz %d", st)
	}
	wants := []string{
		`pling_gateway_requests_total{code="200",error="",route="POST /v1/chat/completions"} 2`,
		`pling_gateway_requests_total{code="401",error="UNAUTHORIZED",route="POST /v1/chat/completions"} 1`,
		`pling_gateway_streams_in_flight 0`,
		`pling_gateway_streamed_bytes_total `,
		`pling_gateway_upstream_seconds_count 2`,
	}
	// A request is counted once its handler returns, which may be just
	// after the client has read the end of the stream.
	waitFor(t, "the metrics of the 3 requests", func() bool {
		_, m := get("/metrics")
		for _, want := range wants {
			if !strings.Contains(m, want) {
				return false
			}
		}
		return true
	})
	t.Run("not ready when misconfigured", func(t *testing.T) {
		e := start(t, answer("x"), func(c *gateway.Config) { c.UpstreamKey = "" })
		code, b := httpcheck.Get(t, e.gw.URL+"/readyz")
		if code != 503 || !strings.Contains(b, "no upstream key") {
			t.Errorf("readyz %d %s", code, b)
		}
	})
}

// TestStreamFlushesEachChunk: the upstream holds its second chunk until
// the client has the first, which only a gateway that passes each chunk
// on at once lets happen.
func TestStreamFlushesEachChunk(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	e := start(t, func(scripted.Request) scripted.Reply {
		return scripted.Reply{Count: 2, Piece: func(i int) string {
			if i == 1 {
				<-release
			}
			return "chunk" + itoa(i)
		}}
	}, func(c *gateway.Config) { c.UpstreamTimeout = 10 * time.Second })
	s := e.client(siteKey).Chat.Completions.NewStreaming(context.Background(), say("hi"))
	first := make(chan string, 1)
	go func() {
		for s.Next() {
			if ch := s.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
				first <- ch.Choices[0].Delta.Content
				return
			}
		}
		first <- "stream ended: " + errString(s.Err())
	}()
	select {
	case got := <-first:
		if got != "chunk0" {
			t.Fatalf("first content %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first chunk did not reach the client while the upstream held the second: the gateway buffers")
	}
	once.Do(func() { close(release) })
	code, rest := streamErr(t, s)
	if code != "" || rest != "chunk1" {
		t.Errorf("rest of the stream: code %q, content %q", code, rest)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
