package agent_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/authority"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/runtime"
)

const (
	delegOrigin = "https://shop.example"
	delegOpKey  = "operator-key-for-agent-tests"
)

// authorityFixture is a real authority.Server on loopback with a fake
// clock, so that waits cost no time.
type authorityFixture struct {
	t     *testing.T
	url   string
	clock *atomic.Int64
}

func newAuthority(t *testing.T) *authorityFixture {
	t.Helper()
	clock := new(atomic.Int64)
	clock.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli())
	a := authoritytest.Start(t, authority.Config{
		Audiences:    map[string][]string{delegOrigin: {"orders.*", "cart.view"}},
		OperatorKeys: []string{delegOpKey}, VerificationURI: "https://shop.example/pling/consent",
		Interval: 2 * time.Second, Now: func() time.Time { return time.UnixMilli(clock.Load()) }}, nil)
	return &authorityFixture{t: t, url: a.URL, clock: clock}
}

// operator calls the operator API as the site's backend would.
func (f *authorityFixture) operator(method, path string, body any) int {
	f.t.Helper()
	code, _ := authoritytest.Call(f.t, f.url, method, path, delegOpKey, body)
	return code
}

func (f *authorityFixture) publicKeys() map[string]ed25519.PublicKey {
	f.t.Helper()
	res, err := http.Get(f.url + "/v1/keys")
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var b struct {
		Keys []struct{ Kid, PublicKey string }
	}
	_ = json.NewDecoder(res.Body).Decode(&b)
	out := map[string]ed25519.PublicKey{}
	for _, k := range b.Keys {
		pk, _ := base64.RawURLEncoding.DecodeString(k.PublicKey)
		out[k.Kid] = pk
	}
	return out
}

// pollClock is a fake wait: it records each wait, advances the authority's
// clock by it (or by short, when set, to provoke slow_down) and runs the
// step for that poll, as the person would act meanwhile.
type pollClock struct {
	f     *authorityFixture
	waits []time.Duration
	short map[int]time.Duration // poll number → advance instead
	steps map[int]func()        // poll number → what happens before it
}

func (s *pollClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.waits = append(s.waits, d)
	n := len(s.waits)
	adv := d
	if v, ok := s.short[n]; ok {
		adv = v
	}
	s.f.clock.Add(adv.Milliseconds())
	if step := s.steps[n]; step != nil {
		step()
	}
	return nil
}

func TestDelegationWait(t *testing.T) {
	type outcome struct {
		Code  perr.Code
		Scope []string
		Waits []time.Duration
	}
	tests := []struct {
		name  string
		short map[int]time.Duration
		steps func(f *authorityFixture, id string) map[int]func()
		want  outcome
	}{
		{
			name: "approved as asked",
			steps: func(f *authorityFixture, id string) map[int]func() {
				return map[int]func(){2: func() { f.operator("POST", "/v1/delegations/"+id+"/approve", map[string]any{"subject": "alice"}) }}
			},
			want: outcome{Scope: []string{"orders.*", "cart.view"}, Waits: []time.Duration{2 * time.Second, 2 * time.Second}},
		},
		{
			name: "approved narrowed",
			steps: func(f *authorityFixture, id string) map[int]func() {
				return map[int]func(){1: func() {
					f.operator("POST", "/v1/delegations/"+id+"/approve", map[string]any{"subject": "alice", "scope": []string{"orders.list"}})
				}}
			},
			want: outcome{Scope: []string{"orders.list"}, Waits: []time.Duration{2 * time.Second}},
		},
		{
			name: "denied",
			steps: func(f *authorityFixture, id string) map[int]func() {
				return map[int]func(){3: func() { f.operator("POST", "/v1/delegations/"+id+"/deny", nil) }}
			},
			want: outcome{Code: perr.DelegationRevoked, Waits: []time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second}},
		},
		{
			name:  "slow_down adds five seconds",
			short: map[int]time.Duration{2: 500 * time.Millisecond},
			steps: func(f *authorityFixture, id string) map[int]func() {
				return map[int]func(){3: func() { f.operator("POST", "/v1/delegations/"+id+"/approve", map[string]any{"subject": "alice"}) }}
			},
			want: outcome{Scope: []string{"orders.*", "cart.view"}, Waits: []time.Duration{2 * time.Second, 2 * time.Second, 7 * time.Second}},
		},
		{
			name:  "nobody decides",
			short: map[int]time.Duration{2: 11 * time.Minute},
			steps: func(*authorityFixture, string) map[int]func() { return nil },
			want:  outcome{Code: perr.DelegationExpired, Waits: []time.Duration{2 * time.Second, 2 * time.Second}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAuthority(t)
			s := &pollClock{f: f, short: tt.short}
			p, err := agent.RequestDelegation(t.Context(), f.url, agent.DelegationRequest{Audience: delegOrigin,
				Scope: []string{"orders.*", "cart.view"}, TTL: 10 * time.Minute, Agent: "test agent"}, agent.WithPollSleep(s.sleep))
			if err != nil {
				t.Fatal(err)
			}
			if p.UserCode == "" || p.VerificationURI != "https://shop.example/pling/consent" || p.Interval != 2*time.Second {
				t.Fatalf("pending %+v", p)
			}
			s.steps = tt.steps(f, p.ID)
			d, err := p.Wait(t.Context())
			var got outcome
			got.Waits = s.waits
			var de *agent.DelegationError
			switch {
			case errors.As(err, &de):
				got.Code = de.Code
				if !errors.Is(err, perr.New(de.Code, "", nil)) {
					t.Errorf("errors.Is(%v, its code) is false", err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				got.Scope = d.Scope
				if strings.Contains(d.String(), d.Token) || strings.Contains(d.String(), "pl1.") {
					t.Errorf("String shows the token: %s", d)
				}
				v, err := runtime.NewTokenVerifier(f.publicKeys(), delegOrigin, nil)
				if err != nil {
					t.Fatal(err)
				}
				c, err := v.Verify(t.Context(), d.Token, f.clock.Load())
				if err != nil {
					t.Fatalf("the page would refuse the token: %v", err)
				}
				if c.Subject != "alice" || !cmp.Equal(c.Scope, d.Scope) { // the person who consented, not the agent
					t.Errorf("verified %+v, Wait said scope %v", c, d.Scope)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestDelegationRefused(t *testing.T) {
	f := newAuthority(t)
	tests := []struct {
		name string
		req  agent.DelegationRequest
		want perr.Code
	}{
		{"audience the authority does not issue for", agent.DelegationRequest{Audience: "https://evil.example", Scope: []string{"*"}, TTL: time.Minute, Agent: "a"}, perr.DelegationBindingMismatch},
		{"no scope", agent.DelegationRequest{Audience: delegOrigin, TTL: time.Minute, Agent: "a"}, perr.DelegationRequestInvalid},
		{"no agent name", agent.DelegationRequest{Audience: delegOrigin, Scope: []string{"orders.*"}, TTL: time.Minute}, perr.DelegationRequestInvalid},
		{"ttl beyond the cap", agent.DelegationRequest{Audience: delegOrigin, Scope: []string{"orders.*"}, TTL: 48 * time.Hour, Agent: "a"}, perr.DelegationRequestInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := agent.RequestDelegation(t.Context(), f.url, tt.req)
			var de *agent.DelegationError
			if !errors.As(err, &de) || de.Code != tt.want {
				t.Fatalf("err %v, want code %s", err, tt.want)
			}
		})
	}
}

// Wait stops when its context ends, and a cancelled wait returns the
// context's error.
func TestDelegationWaitCancelled(t *testing.T) {
	f := newAuthority(t)
	ctx, cancel := context.WithCancel(t.Context())
	s := &pollClock{f: f}
	p, err := agent.RequestDelegation(ctx, f.url, agent.DelegationRequest{Audience: delegOrigin, Scope: []string{"orders.*"},
		TTL: time.Minute, Agent: "a"}, agent.WithPollSleep(s.sleep))
	if err != nil {
		t.Fatal(err)
	}
	s.steps = map[int]func(){2: cancel}
	if _, err := p.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
