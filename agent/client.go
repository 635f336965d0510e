// Package agent is the agent side of the Surface protocol pling.surface/0.1
// (docs/agent.md): a Client that describes a page and invokes its
// capabilities through a Transport, and applies the recovery rules of
// docs/protocol.md §5 as code.
//
// The client checks ok, then result.error (docs/protocol.md §5), and decides what to do
// next from the registry's Recovery hint of the code (errors.Lookup), never
// from a message:
//
//	RecoverWait         RATE_LIMITED: wait retryAfterMs (bounded by
//	                    WithMaxRetryWait) and resend the same request, same
//	                    id — a request refused at step 7 consumed no id
//	RecoverObserve      INTERNAL_ERROR: never resend; *UnconfirmedError,
//	                    whose Observe describes the page. Business codes
//	                    (EXPECTATION_FAILED, …): describe before anything
//	                    else, return the failure with the observation, and
//	                    do not retry
//	RecoverDescribe     CAPABILITY_NOT_EXPOSED, ACTION_NOT_FOUND: describe
//	                    again, once, and retry only if the same capability
//	                    is now listed; never a similar id
//	RecoverStop         PERMISSION_DENIED, …: stop, no retry
//	RecoverReauthenticate  SESSION_*: stop, no retry
//	RecoverCheckPrevious   REPLAY_DETECTED: *ReplayError with the previous
//	                    outcome; no new id for the same intent
//	RecoverResume       STEP_FAILED: the error carries the resume token;
//	                    Client.Resume continues
//
// Everything else is returned as it came, typed (*ProtocolError,
// *BusinessError), and never retried.
package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/waitnotice"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// Client speaks the Surface protocol to one page through a Transport. It is
// safe for concurrent use.
type Client struct {
	t     Transport
	cfg   config
	nonce string
	seq   atomic.Uint64
}

type config struct {
	session      string
	idPrefix     string
	maxRetryWait time.Duration
	maxWaits     int
	sleep        func(ctx context.Context, d time.Duration) error
	logger       *slog.Logger
	random       io.Reader
}

// Option configures a Client. Options are applied once, by New.
type Option func(*config)

// WithSession sets the session token sent with every request.
func WithSession(token string) Option { return func(c *config) { c.session = token } }

// WithIDPrefix sets the prefix of the request ids the client mints (default
// "agent"). Characters outside [A-Za-z0-9._:-] become '-' and the prefix is
// cut to 64 bytes, so every minted id is valid.
func WithIDPrefix(prefix string) Option { return func(c *config) { c.idPrefix = prefix } }

// WithMaxRetryWait bounds how long the client waits out one RATE_LIMITED
// (default 10 s). A retryAfterMs beyond the bound is returned as the error
// at once, without waiting; 0 never waits.
func WithMaxRetryWait(d time.Duration) Option { return func(c *config) { c.maxRetryWait = d } }

// WithMaxWaits bounds how many RATE_LIMITED answers one call waits out
// (default 3).
func WithMaxWaits(n int) Option { return func(c *config) { c.maxWaits = n } }

// WithSleep replaces the wait used for RATE_LIMITED (tests use a fake). It
// must return early with ctx's error when ctx is done.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *config) { c.sleep = sleep }
}

// WithLogger sets where the client logs its exchanges and recovery
// decisions: code, request id, capability, duration — never inputs or
// response bodies (docs/protocol.md §5, "Logging and presentation").
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithRandom sets the source of the id nonce (default crypto/rand).
func WithRandom(r io.Reader) Option { return func(c *config) { c.random = r } }

// New returns a client that sends its requests through t.
func New(t Transport, opts ...Option) *Client {
	cfg := config{
		idPrefix:     "agent",
		maxRetryWait: 10 * time.Second,
		maxWaits:     3,
		sleep:        sleepCtx,
		random:       rand.Reader,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	cfg.idPrefix = cleanPrefix(cfg.idPrefix)
	var b [6]byte
	if _, err := io.ReadFull(cfg.random, b[:]); err != nil {
		// Without randomness two clients of one session could mint the
		// same ids; the time keeps them apart well enough.
		nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
		return &Client{t: t, cfg: cfg, nonce: nonce}
	}
	return &Client{t: t, cfg: cfg, nonce: hex.EncodeToString(b[:])}
}

// sleepCtx waits d, or until ctx is done (its error), with the runtime's
// system clock: the waits here (Retry-After, a poll interval) are whole
// milliseconds.
func sleepCtx(ctx context.Context, d time.Duration) error {
	return runtime.SystemClock{}.Sleep(ctx, d.Milliseconds())
}

func cleanPrefix(p string) string {
	if p == "" {
		p = "agent"
	}
	if len(p) > 64 {
		p = p[:64]
	}
	b := []byte(p)
	for i, c := range b {
		if !wire.ValidID(string(c)) {
			b[i] = '-'
		}
	}
	return string(b)
}

// NewID mints a request id: unique for this client (a random nonce and a
// counter) and valid per wire.ValidID. Invoke mints one per intent; a
// caller that wants to resend an intent safely mints it once and passes it
// with WithRequestID every time — the replay guard then runs it at most
// once.
func (c *Client) NewID() string {
	return c.cfg.idPrefix + "-" + c.nonce + "-" + strconv.FormatUint(c.seq.Add(1), 10)
}

// Session returns the session token the client sends ("" for none).
func (c *Client) Session() string { return c.cfg.session }

// Result is a successful invoke.
type Result struct {
	// RequestID is the id the successful request carried.
	RequestID  string
	Capability string
	// Value is the handler's value as JSON (nil when it returned none).
	Value json.RawMessage
	// Evidence is what proves the outcome.
	Evidence *schema.Evidence
	// Observation is the bounded change after the call; its Revision is
	// the page's revision now.
	Observation *schema.SurfaceObservation
	// Raw is the whole result object as it came.
	Raw json.RawMessage
}

// InvokeOption configures one invoke.
type InvokeOption func(*invokeConfig)

type invokeConfig struct {
	id        string
	resume    string
	onWaiting func(Waiting)
}

// OnWaiting sets what this invoke calls when the page says it waits for a
// person (see Waiting). It is a setting of the invoke, not of the client:
// a caller that wants one hook for every invoke passes the same option to
// each (docs/style.md "Configuration: options for libraries").
func OnWaiting(f func(Waiting)) InvokeOption { return func(o *invokeConfig) { o.onWaiting = f } }

// Waiting is a page's notice that an invoke waits for a person before it
// answers: an approval or a handoff. Timeout is the longest the page waits
// for the person; a transport that knows it waits as long (the CDP
// transport extends its deadline by it), so an agent does not give up
// while the person is still deciding.
type Waiting struct {
	RequestID  string
	Capability string
	// Kind is "approval" or "handoff".
	Kind    string
	Timeout time.Duration
	// Outside says a person approves outside the page, on its
	// authority's approval screen: whether anyone sees the browser the
	// agent drives does not matter.
	Outside bool
	// Approval is the id the page's authority gave the approval once it
	// holds the request (a page with approvals "authority"; a second
	// notice for the same request): the authority's approval screen,
	// ApprovalPath?id=… on the authority's origin, shows it to the
	// person. The page says it: an agent builds the screen's address from
	// an authority it knows, never from the page's words.
	Approval string
}

// ReportWaiting passes a page's Waiting notice to the invoke whose context
// ctx is: a transport that carries the notice from the page calls it. The
// notice reaches the invoke's OnWaiting only for the request id it sent.
func ReportWaiting(ctx context.Context, w Waiting) {
	if f, _ := waitnotice.Hook(ctx).(func(runtime.Waiting)); f != nil {
		f(runtime.Waiting{RequestID: w.RequestID, Capability: w.Capability, Kind: w.Kind,
			TimeoutMs: w.Timeout.Milliseconds(), Outside: w.Outside, Approval: w.Approval})
	}
}

// withWaiting is ctx with the invoke's waiting hook for the request id.
func (c *Client) withWaiting(ctx context.Context, f func(Waiting), id string) context.Context {
	log := c.cfg.logger
	return waitnotice.With(ctx, func(w runtime.Waiting) {
		if w.RequestID != id {
			return
		}
		aw := Waiting{RequestID: w.RequestID, Capability: w.Capability, Kind: w.Kind, Timeout: time.Duration(w.TimeoutMs) * time.Millisecond,
			Outside: w.Outside, Approval: w.Approval}
		log.LogAttrs(ctx, slog.LevelInfo, "pling: a person is asked", slog.String("id", id),
			slog.String("kind", aw.Kind), slog.Duration("timeout", aw.Timeout))
		if f != nil {
			f(aw)
		}
	})
}

// WithRequestID sends the invoke under id instead of a fresh one: the
// caller's idempotency key for an intent. Resending an intent under the
// id it first used is safe (the replay guard runs it at most once and
// answers REPLAY_DETECTED with the earlier outcome).
func WithRequestID(id string) InvokeOption { return func(o *invokeConfig) { o.id = id } }

// WithResume continues a composite action from its failed step with the
// token of a STEP_FAILED failure: a new request that starts at the failed
// step, once, for the same session and capability.
func WithResume(token string) InvokeOption { return func(o *invokeConfig) { o.resume = token } }

// Describe asks for a bounded snapshot of what this session may do
// (docs/protocol.md §3.4). opts may be nil. RATE_LIMITED is waited out as for
// Invoke; every other failure is returned typed.
func (c *Client) Describe(ctx context.Context, opts *schema.DescribeOptions) (*schema.SurfaceDescription, error) {
	id := c.NewID()
	req := schema.SurfaceDescribeRequest{Protocol: schema.Protocol, ID: id, Method: schema.MethodDescribe,
		Session: c.cfg.session, Options: opts}
	resp, err := c.call(ctx, schema.MethodDescribe, id, "", req)
	if err != nil {
		var xe *exchangeError
		if errors.As(err, &xe) {
			return nil, fmt.Errorf("pling: describe (request %s): %w", id, xe.err)
		}
		return nil, err
	}
	if !resp.OK {
		pe := resp.protocolError(id)
		if pe.Recovery() == perr.RecoverCheckPrevious {
			return nil, &ReplayError{ProtocolError: pe, Previous: previousOf(pe.Details)}
		}
		return nil, pe
	}
	var d schema.SurfaceDescription
	if err := decodeJSON(resp.Result, &d); err != nil {
		return nil, fmt.Errorf("pling: describe (request %s): %w: result: %v", id, ErrBadResponse, err)
	}
	return &d, nil
}

// Invoke runs one capability with input (which carries "record" for a
// folded capability) and applies the recovery rules (see the package
// documentation). It returns the result, or a *ProtocolError,
// *BusinessError, *UnconfirmedError, *ReplayError or *NotSentError (the
// transport knew the request never reached the page). A ctx that ends
// while the page works is the agent giving up: a transport that can cancels
// the call in the page, and returns the page's answer to that.
func (c *Client) Invoke(ctx context.Context, capability string, input map[string]any, opts ...InvokeOption) (*Result, error) {
	var o invokeConfig
	for _, f := range opts {
		f(&o)
	}
	id := o.id
	if id == "" {
		id = c.NewID()
	} else if !wire.ValidID(id) {
		return nil, fmt.Errorf("pling: request id %q is not 1–128 chars of [A-Za-z0-9._:-]", id)
	}
	described := false
	for {
		req := schema.SurfaceInvokeRequest{Protocol: schema.Protocol, ID: id, Method: schema.MethodInvoke,
			Session: c.cfg.session, Capability: capability, Input: input, Resume: o.resume}
		resp, err := c.call(c.withWaiting(ctx, o.onWaiting, id), schema.MethodInvoke, id, capability, req)
		if err != nil {
			var xe *exchangeError
			if errors.As(err, &xe) && errors.Is(xe.err, ErrNotSent) {
				// The transport knows the request never left: nothing ran.
				return nil, &NotSentError{RequestID: id, Capability: capability, Cause: xe.err}
			}
			if errors.As(err, &xe) {
				// The request may have reached the page: as unconfirmed as
				// INTERNAL_ERROR, and never resent.
				return nil, &UnconfirmedError{RequestID: id, Capability: capability, Cause: xe.err, client: c}
			}
			return nil, err
		}
		if !resp.OK {
			pe := resp.protocolError(id)
			switch pe.Recovery() {
			case perr.RecoverObserve: // INTERNAL_ERROR: the call may have run.
				c.log(ctx, slog.LevelWarn, "unconfirmed; not resending", id, capability, pe.Code)
				return nil, &UnconfirmedError{RequestID: id, Capability: capability, Protocol: pe, client: c}
			case perr.RecoverCheckPrevious: // REPLAY_DETECTED
				return nil, &ReplayError{ProtocolError: pe, Previous: previousOf(pe.Details)}
			case perr.RecoverDescribe: // CAPABILITY_NOT_EXPOSED
				if !described {
					described = true
					if d, _ := c.describeAgain(ctx, id, capability, pe.Code); listed(d, capability, input) {
						id = c.NewID() // the refused request consumed its id
						continue
					}
				}
				return nil, pe
			}
			// RecoverReauthenticate (SESSION_*), RecoverFixRequest,
			// RecoverUpgrade, RecoverRetryLater, RATE_LIMITED beyond the
			// bound, unknown codes: stop.
			return nil, pe
		}

		var r wireInvokeResult
		if err := decodeJSON(resp.Result, &r); err != nil {
			return nil, &UnconfirmedError{RequestID: id, Capability: capability,
				Cause: fmt.Errorf("%w: result: %v", ErrBadResponse, err), client: c}
		}
		if r.Error == nil {
			c.log(ctx, slog.LevelDebug, "invoked", id, capability, "")
			return &Result{RequestID: id, Capability: capability, Value: r.Value, Evidence: r.Evidence,
				Observation: r.Observation, Raw: resp.Result}, nil
		}
		code, _ := perr.ParseCode(r.Error.Code)
		be := &BusinessError{Code: code, Message: r.Error.Message, Details: r.Error.Details, Resume: r.Error.Resume,
			RequestID: id, Capability: capability, Observation: r.Observation}
		switch be.Recovery() {
		case perr.RecoverDescribe: // ACTION_NOT_FOUND: the page changed.
			if !described {
				described = true
				d, derr := c.describeAgain(ctx, id, capability, code)
				if listed(d, capability, input) {
					id = c.NewID()
					continue
				}
				be.Observed, be.ObserveErr = d, derr
			}
		case perr.RecoverObserve: // EXPECTATION_FAILED, …: look before anything else.
			c.log(ctx, slog.LevelInfo, "observing after the failure", id, capability, code)
			be.Observed, be.ObserveErr = c.Describe(ctx, nil)
		}
		return nil, be
	}
}

// describeAgain is the describe of RecoverDescribe.
func (c *Client) describeAgain(ctx context.Context, id, capability string, code perr.Code) (*schema.SurfaceDescription, error) {
	c.log(ctx, slog.LevelInfo, "describing again", id, capability, code)
	d, err := c.Describe(ctx, nil)
	if err != nil {
		c.cfg.logger.LogAttrs(ctx, slog.LevelWarn, "pling: describe again failed", slog.String("error", err.Error()))
	}
	return d, err
}

// listed reports whether a description lists the capability — for a folded
// capability, with the record the input names — so that a retry of the
// same call can succeed. Nothing similar is ever tried.
func listed(d *schema.SurfaceDescription, capability string, input map[string]any) bool {
	if d == nil {
		return false
	}
	for _, c := range d.Capabilities {
		if c.ID != capability {
			continue
		}
		if c.Record == nil {
			return true
		}
		rec, ok := input["record"].(string)
		if !ok {
			return true // the executor says what is wrong with the input
		}
		for _, v := range c.Record.Visible {
			if v == rec {
				return true
			}
		}
		for _, it := range d.Context.Records[c.Record.Kind].Items {
			if it.ID == rec {
				return true
			}
		}
		return false
	}
	return false
}

// call sends one request and waits out RATE_LIMITED, resending the same
// bytes under the same id: a request refused at step 7 consumed no id
// (docs/protocol.md §3.3). It returns the response (ok or not), an *exchangeError
// when the exchange failed, or ctx's error when nothing was sent.
func (c *Client) call(ctx context.Context, method schema.Method, id, capability string, req any) (*wireResponse, error) {
	body, err := schema.Encode(req)
	if err != nil {
		return nil, fmt.Errorf("pling: %s: the request cannot be encoded: %w", method, err)
	}
	for waits := 0; ; waits++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		raw, err := c.t.RoundTrip(ctx, body)
		if err != nil {
			c.logExchange(ctx, method, id, capability, "", start, err)
			return nil, &exchangeError{err}
		}
		resp, err := decodeResponse(raw, id)
		if err != nil {
			c.logExchange(ctx, method, id, capability, "", start, err)
			return nil, &exchangeError{err}
		}
		code := perr.Code("")
		if !resp.OK {
			code, _ = perr.ParseCode(resp.Error.Code)
		}
		c.logExchange(ctx, method, id, capability, code, start, nil)
		if resp.OK || recoveryOf(code) != perr.RecoverWait {
			return resp, nil
		}
		pe := resp.protocolError(id)
		wait := time.Duration(pe.RetryAfterMs) * time.Millisecond
		if pe.RetryAfterMs <= 0 {
			wait = time.Second // no hint: a modest pause
		}
		if wait > c.cfg.maxRetryWait || waits >= c.cfg.maxWaits {
			return resp, nil
		}
		c.cfg.logger.LogAttrs(ctx, slog.LevelInfo, "pling: rate limited; waiting, then resending the same id",
			slog.String("id", id), slog.String("method", string(method)), slog.Duration("wait", wait))
		if err := c.cfg.sleep(ctx, wait); err != nil {
			return nil, errors.Join(pe, err)
		}
	}
}

func (c *Client) log(ctx context.Context, level slog.Level, msg, id, capability string, code perr.Code) {
	c.cfg.logger.LogAttrs(ctx, level, "pling: "+msg, slog.String("id", id), slog.String("capability", capability),
		slog.String("code", string(code)))
}

func (c *Client) logExchange(ctx context.Context, method schema.Method, id, capability string, code perr.Code, start time.Time, err error) {
	attrs := []slog.Attr{slog.String("id", id), slog.String("method", string(method)),
		slog.Duration("duration", time.Since(start))}
	if capability != "" {
		attrs = append(attrs, slog.String("capability", capability))
	}
	if code != "" {
		attrs = append(attrs, slog.String("code", string(code)))
	}
	level := slog.LevelDebug
	if err != nil {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	c.cfg.logger.LogAttrs(ctx, level, "pling: exchange", attrs...)
}

// ErrBadResponse is wrapped by errors about response text that is not a
// Surface response to the request sent.
var ErrBadResponse = errors.New("not a Surface response to this request")

// exchangeError is a failed exchange: the transport failed or the answer
// was unusable.
type exchangeError struct{ err error }

func (e *exchangeError) Error() string { return e.err.Error() }
func (e *exchangeError) Unwrap() error { return e.err }

type wireResponse struct {
	Protocol string                 `json:"protocol"`
	ID       *string                `json:"id"`
	OKp      *bool                  `json:"ok"`
	Result   json.RawMessage        `json:"result"`
	Error    *schema.SurfaceFailure `json:"error"`
	OK       bool                   `json:"-"`
}

func (r *wireResponse) protocolError(id string) *ProtocolError {
	code, _ := perr.ParseCode(r.Error.Code)
	rid := id
	if r.ID == nil {
		rid = ""
	}
	return &ProtocolError{Code: code, Message: r.Error.Message, RetryAfterMs: r.Error.RetryAfterMs,
		Details: r.Error.Details, RequestID: rid}
}

type wireInvokeResult struct {
	Value       json.RawMessage            `json:"value"`
	Evidence    *schema.Evidence           `json:"evidence"`
	Error       *schema.ActionFailure      `json:"error"`
	Observation *schema.SurfaceObservation `json:"observation"`
}

// decodeResponse reads response text leniently (unknown fields are
// ignored, docs/protocol.md §6) but checks what a client relies on: the protocol,
// ok, the id it echoes, and a result or an error with a code.
func decodeResponse(raw []byte, id string) (*wireResponse, error) {
	var r wireResponse
	if err := decodeJSON(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	switch {
	case r.Protocol != schema.Protocol:
		return nil, fmt.Errorf("%w: protocol %q", ErrBadResponse, r.Protocol)
	case r.OKp == nil:
		return nil, fmt.Errorf("%w: no ok", ErrBadResponse)
	case r.ID != nil && *r.ID != id:
		return nil, fmt.Errorf("%w: id %q answers another request", ErrBadResponse, *r.ID)
	}
	r.OK = *r.OKp
	if r.OK {
		if len(r.Result) == 0 || bytes.Equal(r.Result, []byte("null")) {
			return nil, fmt.Errorf("%w: ok without a result", ErrBadResponse)
		}
		if r.ID == nil {
			return nil, fmt.Errorf("%w: ok with id null", ErrBadResponse)
		}
		return &r, nil
	}
	if r.Error == nil || r.Error.Code == "" {
		return nil, fmt.Errorf("%w: ok:false without an error code", ErrBadResponse)
	}
	return &r, nil
}

// decodeJSON decodes exactly one JSON value, keeping numbers' text;
// unknown fields are ignored.
func decodeJSON(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}
