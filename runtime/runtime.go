// Package runtime is the Pling core: the registry of declarations (actions,
// states, guide targets, regions, records) with de-duplication and record
// folding, describe with its bounds, the invoke pipeline (params,
// loop detection, availability, approval, hooks, steps, handoff,
// expectations), and the gate in front of it (sessions, exposure, rate
// limits, replay guard, audit). See docs/protocol.md §3–§4.
//
// The Surface protocol enters at Runtime.Handle: request text in, response
// text out, the same on every host. The rooms:
//
//	decl.go, registry.go  declarations, validation, de-duplication
//	identity.go           the identity digest that tells "the same declaration"
//	fold.go               record-template folding
//	params.go             input schema and validation
//	describe.go           describe, bounds, revision, encoding cache
//	describerows.go       the records one describe reads, row actions' availability
//	invoke.go             the invoke pipeline
//	expect.go, steps.go, handoff.go, loop.go   its stages
//	approval.go, approvaldisplay.go   approval challenges and what they show
//	gate.go, token.go, ratelimit.go, replay.go, audit.go
//	                      the gate in front of the pipeline: sessions and
//	                      their tokens, exposure, rate limits, replay, audit
//	surface.go            Handle: decode → gate → executor → encode
//	inflight.go           invokes in flight: Cancel, Waiting notices
//	tools.go              model tool declarations and tool calls
//	clock.go              the clock, and the fake clock of fixture pages
package runtime

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/pling-go/pling/schema"
)

// Runtime is one page's Pling runtime. It is safe for concurrent use.
type Runtime struct {
	cfg   config
	reg   *registry
	loops *loopDetector
	steps *resumeStore
	gate  *gate
	desc  *describeCache

	runsMu sync.Mutex
	runs   map[string]int

	flightsMu sync.Mutex
	flights   map[flightKey]*flight // the invokes in flight (inflight.go)
}

type config struct {
	clock Clock
	// unexposedFeedback: describe names declared actions the site
	// allowlist hides (withUnexposedFeedback).
	unexposedFeedback bool
	limits            Limits
	loop              LoopConfig
	expectTimeoutMs   int64
	expectPollMs      int64
	handoffTimeoutMs  int64
	handoff           HandoffUI
	approver          Approver
	approvalTTLMs     int64
	resumeTTLMs       int64
	waiting           func(Waiting)
	policy            func(ctx context.Context, call *Call) (deny string)
	page              func(ctx context.Context) (schema.PageInfo, []schema.Feedback)
	gate              gateConfig
	random            io.Reader
	// handlerTimeoutMs is the default handler deadline (Action.TimeoutMs).
	handlerTimeoutMs int64
	// handlerTimeoutSet: WithHandlerTimeout was given (on a FakeClock
	// the default deadline is off; see runHandler).
	handlerTimeoutSet bool
	// warn tells the page's author (the console) what went wrong on the
	// page: a handler that missed its deadline.
	warn func(string)
}

// Option configures a Runtime. Options are applied once, by New; the
// configuration cannot change afterwards.
type Option func(*config)

// New returns a runtime configured by opts.
func New(opts ...Option) *Runtime {
	cfg := config{
		clock:            SystemClock{},
		limits:           DefaultLimits(),
		loop:             LoopConfig{Repeats: 5, Window: time.Minute},
		expectTimeoutMs:  2_000,
		expectPollMs:     50,
		handoffTimeoutMs: 300_000,
		approvalTTLMs:    300_000,
		resumeTTLMs:      600_000,
		handlerTimeoutMs: 30_000,
		gate:             defaultGateConfig(),
		random:           cryptoRandom,
	}
	for _, o := range opts {
		o(&cfg)
	}
	rt := &Runtime{cfg: cfg, reg: newRegistry()}
	rt.loops = newLoopDetector(cfg.loop)
	rt.steps = newResumeStore()
	rt.gate = newGate(&rt.cfg)
	rt.desc = &describeCache{}
	return rt
}

// WithClock sets the clock every time read goes through.
func WithClock(c Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithLimits sets the describe bounds.
func WithLimits(l Limits) Option { return func(cfg *config) { cfg.limits = l } }

// LoopConfig sets loop detection: after Repeats executions of the same call
// (session, capability, canonical input) with no state change between them,
// within Window of each other, the next identical call is LOOP_DETECTED.
// Repeats 0 turns detection off; Window 0 keeps repeats however far apart.
type LoopConfig struct {
	Repeats int
	Window  time.Duration
}

// WithLoop sets loop detection.
func WithLoop(l LoopConfig) Option { return func(cfg *config) { cfg.loop = l } }

// WithExpectTimeout sets the default bound and poll interval of
// expectations; a poll of 0 keeps the default (50ms).
func WithExpectTimeout(timeout, poll time.Duration) Option {
	return func(cfg *config) {
		cfg.expectTimeoutMs = durationMs(timeout)
		if poll > 0 {
			cfg.expectPollMs = durationMs(poll)
		}
	}
}

// WithHandoff sets the handoff UI and the default time a person has.
// A timeout of 0 keeps the default (5 minutes).
func WithHandoff(ui HandoffUI, timeout time.Duration) Option {
	return func(cfg *config) {
		cfg.handoff = ui
		if timeout > 0 {
			cfg.handoffTimeoutMs = durationMs(timeout)
		}
	}
}

// WithApprover sets the approval backend and how long a challenge lives.
// A ttl of 0 keeps the default (5 minutes).
func WithApprover(a Approver, ttl time.Duration) Option {
	return func(cfg *config) {
		cfg.approver = a
		if ttl > 0 {
			cfg.approvalTTLMs = durationMs(ttl)
		}
	}
}

// WithPolicy sets a business policy asked before every run; a non-empty
// answer denies the invoke with PERMISSION_DENIED.
func WithPolicy(p func(ctx context.Context, call *Call) (deny string)) Option {
	return func(cfg *config) { cfg.policy = p }
}

// WithPage sets the one reader of the page: its URL and title, and its
// feedback (alerts, toasts). A host with only one of the two returns the
// zero value of the other. Describe reads it once, for the context; invoke
// reads it once before the run and once for the observation (navigation and
// new feedback). One reader rather than two lets a host that reads both
// for less together than apart (the browser bridge: one call into JS) do so
// everywhere.
func WithPage(f func(ctx context.Context) (schema.PageInfo, []schema.Feedback)) Option {
	return func(cfg *config) { cfg.page = f }
}

// WithHandlerTimeout sets the default deadline of a handler (30 s); an
// action's TimeoutMs overrides it. A timeout of 0 or less keeps the
// default.
func WithHandlerTimeout(timeout time.Duration) Option {
	return func(cfg *config) {
		if timeout > 0 {
			cfg.handlerTimeoutMs = durationMs(timeout)
			cfg.handlerTimeoutSet = true
		}
	}
}

// withAuthorWarning sets where the runtime tells the page's author about
// a mistake it sees while running (a handler that missed its deadline);
// the page bridge writes them to the console.
func withAuthorWarning(f func(message string)) Option {
	return func(cfg *config) { cfg.warn = f }
}

// WithResumeTTL sets how long a STEP_FAILED resume token stays valid.
func WithResumeTTL(ttl time.Duration) Option {
	return func(cfg *config) { cfg.resumeTTLMs = durationMs(ttl) }
}

// durationMs is d in the whole milliseconds the clock counts in, rounded
// up, so that a positive duration under a millisecond is not 0 (which
// several options read as "the default" or "off").
func durationMs(d time.Duration) int64 {
	ms := d.Milliseconds()
	if d > 0 && time.Duration(ms)*time.Millisecond < d {
		ms++
	}
	return ms
}
