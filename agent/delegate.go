package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/runtime"
)

// Delegation: how an agent gets a session token for a page from the
// site's authority (docs/authority.md), in the manner of the OAuth device
// authorization grant (RFC 8628). RequestDelegation asks; the agent shows
// its person UserCode and VerificationURI; a person on the site consents;
// Wait collects the token.

// DelegationRequest is what an agent asks the authority for.
type DelegationRequest struct {
	// Audience is the page origin the token is for (scheme://host[:port]).
	Audience string
	// Scope is the capability patterns asked for (the person may narrow
	// them).
	Scope []string
	// TTL is how long the token should live (whole seconds; the authority
	// caps it).
	TTL time.Duration
	// Agent names the agent to the person who consents. The authority and
	// the consent screen treat it as untrusted text.
	Agent string
}

// DelegationOption configures RequestDelegation and the Wait that
// follows it.
type DelegationOption func(*delegationConfig)

type delegationConfig struct {
	client *http.Client
	sleep  func(ctx context.Context, d time.Duration) error
}

// WithHTTPClient sets the HTTP client that talks to the authority
// (default: one with a 30 s timeout per request).
func WithHTTPClient(c *http.Client) DelegationOption {
	return func(o *delegationConfig) { o.client = c }
}

// WithPollSleep replaces the wait between two token polls (tests use a
// fake clock). It must return early with ctx's error when ctx is done.
func WithPollSleep(sleep func(ctx context.Context, d time.Duration) error) DelegationOption {
	return func(o *delegationConfig) { o.sleep = sleep }
}

// PendingDelegation is a delegation waiting for a person's consent.
type PendingDelegation struct {
	// ID names the delegation at the authority (operators approve by it).
	ID string
	// UserCode is what the person confirms on the consent screen.
	UserCode string
	// VerificationURI is where the person goes to consent.
	VerificationURI string
	// ExpiresAt is when the request lapses unless decided.
	ExpiresAt time.Time
	// Interval is the least time between two polls, as the authority
	// said (Wait honours it and any slow_down).
	Interval time.Duration

	base       *url.URL
	pollSecret string
	cfg        delegationConfig
}

// Delegated is a collected session.
type Delegated struct {
	// Token is the pl1 session token: a secret. String and LogValue
	// never show it.
	Token     string
	SessionID string
	ExpiresAt time.Time
	// Scope is what the token carries, read from its (unverified)
	// payload: the scope the person approved, maybe narrower than asked.
	Scope []string
}

// String describes the session without its token.
func (d Delegated) String() string {
	return fmt.Sprintf("session %s, scope %s, expires %s", d.SessionID, strings.Join(d.Scope, ","), d.ExpiresAt.Format(time.RFC3339))
}

// DelegationError is a refusal of the authority, by its code
// (DELEGATION_REVOKED when the person denied, DELEGATION_EXPIRED when
// nobody decided in time, …). Programs branch on Code, never on Message.
type DelegationError struct {
	Status  int
	Code    perr.Code
	Message string
}

func (e *DelegationError) Error() string {
	return fmt.Sprintf("authority: %s (HTTP %d): %s", e.Code, e.Status, e.Message)
}

// Is matches a *DelegationError with the same code, or a *perr.Error of
// that code, so errors.Is(err, perr.New(perr.DelegationRevoked, "", nil))
// works as it does for the Surface errors.
func (e *DelegationError) Is(target error) bool {
	var d *DelegationError
	if errors.As(target, &d) {
		return d.Code == e.Code
	}
	var p *perr.Error
	if errors.As(target, &p) {
		return p.Code() == e.Code
	}
	return false
}

// maxAuthorityBody bounds what the client reads of an authority answer
// (a token is at most 4 KiB).
const maxAuthorityBody = 64 << 10

// RequestDelegation asks the authority at authorityURL (its base URL, e.g.
// http://127.0.0.1:8090) for a delegation. The returned PendingDelegation
// says what to show the person; its Wait collects the token.
func RequestDelegation(ctx context.Context, authorityURL string, req DelegationRequest, opts ...DelegationOption) (*PendingDelegation, error) {
	cfg := delegationConfig{client: &http.Client{Timeout: 30 * time.Second}, sleep: sleepCtx}
	for _, o := range opts {
		o(&cfg)
	}
	base, err := url.Parse(strings.TrimRight(authorityURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("authority URL %q: want http(s)://HOST[:PORT]", authorityURL)
	}
	ttl := int64((req.TTL + time.Second - 1) / time.Second)
	var out struct {
		ID              string `json:"id"`
		UserCode        string `json:"userCode"`
		VerificationURI string `json:"verificationUri"`
		PollSecret      string `json:"pollSecret"`
		IntervalSeconds int64  `json:"intervalSeconds"`
		ExpiresAt       string `json:"expiresAt"`
	}
	st, err := postJSON(ctx, cfg.client, base.JoinPath("v1", "delegations"), map[string]any{
		"audience": req.Audience, "scope": req.Scope, "ttlSeconds": ttl, "agent": req.Agent}, &out)
	if err != nil {
		return nil, err
	}
	if st != http.StatusCreated || out.ID == "" || out.PollSecret == "" || out.UserCode == "" {
		return nil, fmt.Errorf("authority: unexpected answer to a delegation request (HTTP %d)", st)
	}
	exp, err := time.Parse(time.RFC3339, out.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("authority: expiresAt %q is not a time", out.ExpiresAt)
	}
	return &PendingDelegation{ID: out.ID, UserCode: out.UserCode, VerificationURI: out.VerificationURI,
		ExpiresAt: exp, Interval: interval(out.IntervalSeconds), base: base, pollSecret: out.PollSecret, cfg: cfg}, nil
}

// interval is the poll interval the authority named, at least 1 s and
// 5 s when it named none (RFC 8628 §3.2).
func interval(seconds int64) time.Duration {
	switch {
	case seconds <= 0:
		return 5 * time.Second
	case seconds > 300:
		return 300 * time.Second
	}
	return time.Duration(seconds) * time.Second
}

// slowDownStep is what each slow_down adds to the interval (RFC 8628 §3.5).
const slowDownStep = 5 * time.Second

// maxTransient is how many polls in a row may fail for a transient reason
// (the network, DELEGATION_INTERNAL, a 5xx) before Wait gives up.
const maxTransient = 3

// Wait polls the authority until the person decided, the delegation
// expired or ctx is done. It waits Interval between polls and adds 5 s to
// it on each slow_down. It returns the token once; a denial is a
// *DelegationError with code DELEGATION_REVOKED, a lapse one with
// DELEGATION_EXPIRED.
func (p *PendingDelegation) Wait(ctx context.Context) (*Delegated, error) {
	every := p.Interval
	transient := 0
	for {
		if err := p.cfg.sleep(ctx, every); err != nil {
			return nil, err
		}
		var out struct {
			Status          string `json:"status"`
			IntervalSeconds int64  `json:"intervalSeconds"`
			Token           string `json:"token"`
			SessionID       string `json:"sessionId"`
			ExpiresAt       string `json:"expiresAt"`
		}
		st, err := postJSON(ctx, p.cfg.client, p.base.JoinPath("v1", "delegations", p.ID, "token"),
			map[string]string{"pollSecret": p.pollSecret}, &out)
		var de *DelegationError
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil && (!errors.As(err, &de) || de.Status >= 500 || retriable(de.Code)):
			if transient++; transient >= maxTransient {
				return nil, err
			}
			continue
		case err != nil:
			return nil, err
		}
		transient = 0
		switch {
		case st == http.StatusAccepted && out.Status == "slow_down":
			every = max(every+slowDownStep, interval(out.IntervalSeconds))
		case st == http.StatusAccepted:
			every = max(every, interval(out.IntervalSeconds))
		case st == http.StatusOK && out.Token != "":
			exp, err := time.Parse(time.RFC3339, out.ExpiresAt)
			if err != nil {
				return nil, fmt.Errorf("authority: expiresAt %q is not a time", out.ExpiresAt)
			}
			return &Delegated{Token: out.Token, SessionID: out.SessionID, ExpiresAt: exp, Scope: tokenScope(out.Token)}, nil
		default:
			return nil, fmt.Errorf("authority: unexpected answer to a token poll (HTTP %d)", st)
		}
	}
}

// tokenScope reads the scope of a pl1 token's payload without verifying
// it: the agent only reports it; the page verifies.
func tokenScope(tok string) []string {
	parts := strings.Split(tok, ".")
	if len(parts) != 4 || parts[0] != "pl1" {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil
	}
	var c runtime.Claims
	if json.Unmarshal(b, &c) != nil {
		return nil
	}
	return c.Scope
}

// postJSON posts body as JSON and decodes a 2xx answer into out; an error
// answer becomes a *DelegationError. Neither the body sent nor the answer
// appears in an error: both may hold secrets.
func postJSON(ctx context.Context, c *http.Client, u *url.URL, body, out any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return 0, fmt.Errorf("authority: %w", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAuthorityBody))
	if err != nil {
		return 0, fmt.Errorf("authority: reading the answer: %w", err)
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			return 0, fmt.Errorf("authority: the answer (HTTP %d) is not JSON", res.StatusCode)
		}
		return res.StatusCode, nil
	}
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(data, &e)
	de := &DelegationError{Status: res.StatusCode, Code: perr.Code(e.Error.Code), Message: e.Error.Message}
	if de.Code == "" {
		de.Code = perr.DelegationInternal
		de.Message = "the authority answered without an error code"
	}
	return res.StatusCode, de
}

func retriable(c perr.Code) bool {
	e, ok := perr.Lookup(c)
	return ok && e.Retriable
}
