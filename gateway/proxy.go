package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/linger"
	"github.com/pling-go/pling/internal/tracing"
)

// topLevel splits a JSON object into its members, refusing anything else
// and any key given twice: the body is forwarded as it came, so the model
// the gateway allows must be the only one the provider can read. "Twice"
// includes keys equal but for case (as encoding/json folds them, "ſ" and
// "K" too): a provider written in Go reads {"model":"a","Model":"b"} as b.
func topLevel(body []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	folded := map[string]struct{}{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		fk := strings.ToLower(strings.ToUpper(k))
		if _, dup := folded[fk]; dup {
			return nil, false
		}
		folded[fk] = struct{}{}
		out[k] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // trailing data
	}
	return out, true
}

// chat is POST /v1/chat/completions, in the order of docs/gateway.md.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	// 1. Size: MaxBytesReader refuses the read that crosses the cap, so an
	// oversized body is never held whole.
	orig := r.Body
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	body, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		// The refusal, then the rest of the body read and dropped for a
		// bounded time, so the caller sees the 413 (internal/linger).
		linger.Prepare(w)
		fail(w, perr.GatewayPayloadTooLarge, "")
		linger.Discard(w, orig)
		return
	}
	if err != nil {
		fail(w, perr.GatewayInvalidJSON, "") // a body that broke off is not JSON
		return
	}
	// 2. JSON: one object, no key twice.
	fields, ok := topLevel(body)
	if !ok || !json.Valid(body) {
		fail(w, perr.GatewayInvalidJSON, "")
		return
	}
	// 3, 4. Model present (a non-empty string), then allowed.
	var model string
	if json.Unmarshal(fields["model"], &model) != nil || model == "" {
		fail(w, perr.GatewayModelRequired, "")
		return
	}
	if !slices.Contains(s.models, model) {
		fail(w, perr.GatewayModelNotAllowed, "")
		return
	}
	// 5. Caller, then its rate.
	c := s.authenticate(r.Context(), r)
	if c == "" {
		fail(w, perr.GatewayUnauthorized, "")
		return
	}
	if ok, wait := s.allow(r.Context(), c); !ok {
		fail(w, perr.GatewayRateLimited, strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second))))
		return
	}
	if s.Misconfigured() != "" {
		fail(w, perr.GatewayMisconfigured, "")
		return
	}
	if sw, ok := w.(*statusWriter); ok {
		sw.model = model
	}
	s.forward(w, r, body, string(fields["stream"]) == "true")
}

// forward calls the upstream and passes its answer on. The upstream
// request ends with the caller's: a caller that goes away cancels it.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte, stream bool) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// One timer watches the upstream: until its headers, then (streams)
	// each gap between chunks, or (not streamed) the whole answer.
	var timedOut atomic.Bool
	watch := time.AfterFunc(s.cfg.UpstreamTimeout, func() { timedOut.Store(true); cancel() })
	defer watch.Stop()
	deadline := time.Now().Add(s.cfg.UpstreamTimeout) // of the timer as armed now

	up, err := http.NewRequestWithContext(ctx, http.MethodPost, s.upstream, bytes.NewReader(body))
	if err != nil {
		fail(w, perr.GatewayMisconfigured, "")
		return
	}
	up.Header.Set("Content-Type", "application/json")
	up.Header.Set("Authorization", "Bearer "+s.cfg.UpstreamKey)
	tracing.Inject(ctx, up.Header) // the caller's trace goes on upstream
	if stream {
		up.Header.Set("Accept", "text/event-stream")
	} else {
		up.Header.Set("Accept", "application/json")
	}
	start := time.Now()
	resp, err := s.cfg.Client.Do(up)
	s.metrics.upstream.Observe(time.Since(start).Seconds())
	if err != nil {
		if r.Context().Err() != nil {
			return // the caller went away; nobody to answer
		}
		// The error names the upstream's address, never the key (it is a
		// header) or the body.
		s.cfg.Logger.Warn("upstream", "err", err.Error())
		fail(w, upstreamErrCode(err, timedOut.Load()), "")
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.upstreamFailed(w, resp)
		return
	}
	if stream {
		watch.Reset(s.cfg.UpstreamTimeout)
	}
	uw := &upstreamWatch{t: watch, timeout: s.cfg.UpstreamTimeout, stream: stream, deadline: deadline}
	h := w.Header()
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	h.Set("Content-Type", ct)
	h.Set("Cache-Control", "no-store")
	if stream {
		h.Set("X-Accel-Buffering", "no")
	}
	w.WriteHeader(http.StatusOK)
	s.pass(r.Context(), w, resp.Body, stream, uw, &timedOut)
}

// pass copies the upstream's answer to the caller one read at a time,
// flushing each, so nothing holds more than one buffer of it. A write that
// the caller does not take within WriteIdleTimeout ends the copy. A stream
// that breaks off upstream ends with an OpenAI-style error event, which
// the client libraries raise as an error rather than a short answer.
func (s *Server) pass(caller context.Context, w http.ResponseWriter, src io.Reader, stream bool, watch *upstreamWatch, timedOut *atomic.Bool) {
	rc := http.NewResponseController(w)
	if stream {
		s.metrics.streams.Inc()
		defer s.metrics.streams.Dec()
	}
	buf := make([]byte, 32<<10)
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			// The timer counts the upstream's silence only: it stands
			// still while the caller takes the bytes (a slow reader is
			// WriteIdleTimeout's, not the upstream's fault).
			watch.pause()
			_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteIdleTimeout))
			if _, werr := w.Write(buf[:n]); werr != nil {
				return // the caller is gone or stalled: the deferred cancel ends the upstream call
			}
			if err := rc.Flush(); err != nil {
				return
			}
			s.metrics.bytes.Add(float64(n))
			watch.resume()
		}
		if rerr == io.EOF {
			return
		}
		if rerr != nil {
			if stream && caller.Err() == nil { // a caller that left is told nothing
				code := perr.GatewayUpstreamUnavailable
				if timedOut.Load() {
					code = perr.GatewayUpstreamTimeout
				}
				_, b := perr.RenderGateway(perr.New(code, "", nil))
				_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteIdleTimeout))
				_, _ = io.WriteString(w, "\n\ndata: "+string(b)+"\n\n")
				_ = rc.Flush()
				if sw, ok := w.(*statusWriter); ok {
					sw.errCode = code
				}
			}
			return
		}
	}
}

// upstreamFailed maps an upstream refusal (RATIONALE.md "Why does an
// upstream 5xx become UPSTREAM_UNAVAILABLE?"). Its body is never passed
// on except for the 4xx that describe the caller's own request.
func (s *Server) upstreamFailed(w http.ResponseWriter, resp *http.Response) {
	switch st := resp.StatusCode; {
	case st == http.StatusTooManyRequests:
		fail(w, perr.GatewayUpstreamRateLimited, retryAfter(resp.Header.Get("Retry-After")))
	case st == http.StatusRequestTimeout || st == http.StatusGatewayTimeout:
		fail(w, perr.GatewayUpstreamTimeout, "")
	case st == http.StatusUnauthorized || st == http.StatusForbidden || st == http.StatusNotFound ||
		st == http.StatusProxyAuthRequired:
		// The provider refused our key or does not know the route: the
		// gateway's setup, not the caller, is wrong.
		fail(w, perr.GatewayMisconfigured, "")
	case st >= 400 && st < 500:
		// The provider found fault with the request itself (bad messages,
		// unknown parameter): the caller needs its explanation.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(st)
		_, _ = w.Write(b)
	default:
		fail(w, perr.GatewayUpstreamUnavailable, "")
	}
}

// retryAfter keeps an upstream Retry-After that is a number of seconds
// (capped at an hour) or an HTTP date, and otherwise says 1.
func retryAfter(v string) string {
	v = strings.TrimSpace(v)
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return strconv.Itoa(min(n, 3600))
	}
	if _, err := http.ParseTime(v); err == nil {
		return v
	}
	return "1"
}

// listModels is GET /v1/models: the allowlist in the OpenAI list shape.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	if s.authenticate(r.Context(), r) == "" {
		fail(w, perr.GatewayUnauthorized, "")
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, m := range s.models {
		out.Data = append(out.Data, model{ID: m, Object: "model", OwnedBy: "pling-gateway"})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(out)
}

// upstreamWatch is the upstream's inactivity timer while an answer is
// passed on: a stream's timer starts again after each write (it times
// each gap of the upstream's), a whole answer's keeps what was left of
// its time across the writes.
type upstreamWatch struct {
	t        *time.Timer
	timeout  time.Duration
	stream   bool
	deadline time.Time     // when the timer fires (not streamed)
	left     time.Duration // what was left at the pause; <0: fired
}

func (u *upstreamWatch) pause() {
	if !u.t.Stop() {
		u.left = -1 // fired already: the upstream call is cancelled
		return
	}
	u.left = max(time.Until(u.deadline), 0) // 0: fires at the resume
}

func (u *upstreamWatch) resume() {
	switch {
	case u.left < 0:
	case u.stream:
		u.t.Reset(u.timeout)
	default:
		u.deadline = time.Now().Add(u.left)
		u.t.Reset(u.left)
	}
}

// allow asks the caller's limiter. A limiter whose store fails refuses
// (fail closed); the failure is logged without the store's address.
func (s *Server) allow(ctx context.Context, c caller) (bool, time.Duration) {
	el, ok := s.limits.(errLimiter)
	if !ok {
		return s.limits.Allow(string(c))
	}
	allowed, wait, err := el.AllowErr(ctx, string(c))
	if err != nil {
		s.cfg.Logger.Warn("rate limit store unavailable: call refused", "err_type", fmt.Sprintf("%T", err))
		return false, time.Second
	}
	return allowed, wait
}
