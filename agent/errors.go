package agent

import (
	"context"
	"errors"
	"fmt"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

// The client's errors mirror the two result classes of docs/protocol.md §5: a
// *ProtocolError for ok:false, a *BusinessError for result.error. Both
// match registry values by code with errors.Is —
//
//	errors.Is(err, perr.New(perr.RateLimited, "", nil))
//
// — and errors.As turns either into a *perr.Error. Three refinements say
// what the recovery rules decided: *UnconfirmedError (INTERNAL_ERROR or a
// lost answer: the call may have run), *ReplayError (REPLAY_DETECTED, with
// the previous outcome) and the Observed description a *BusinessError
// carries after an observe.

// ProtocolError is a protocol failure (ok:false): the request did not enter
// business execution, except INTERNAL_ERROR, whose outcome is unconfirmed
// (and which Invoke reports as an *UnconfirmedError).
type ProtocolError struct {
	Code    perr.Code
	Message string
	// RetryAfterMs is RATE_LIMITED's hint, 0 when absent.
	RetryAfterMs int64
	Details      map[string]any
	// RequestID is the id the failed request carried.
	RequestID string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("pling: %s: %s (request %s)", e.Code, e.Message, e.RequestID)
}

// Is matches a *perr.Error or a *ProtocolError with the same code; the
// message is never compared (it may be localized).
func (e *ProtocolError) Is(target error) bool { return isCode(e, target) }

// As fills a **perr.Error with the registry value of the failure.
func (e *ProtocolError) As(target any) bool { return asRegistry(target, e.Err) }

func (e *ProtocolError) code() perr.Code { return e.Code }

// Err returns the failure as a registry error value.
func (e *ProtocolError) Err() *perr.Error {
	return perr.New(e.Code, e.Message, e.Details).WithRetryAfter(e.RetryAfterMs)
}

// Recovery is the registry's recovery hint for the code (RecoverNone for
// a code this build does not know).
func (e *ProtocolError) Recovery() perr.Recovery { return recoveryOf(e.Code) }

// Executed says whether the request entered business execution.
func (e *ProtocolError) Executed() perr.Executed { return perr.SurfaceExecuted(e.Code) }

// BusinessError is a business failure (ok:true with result.error): the
// call reached the executor, which refused or failed it.
type BusinessError struct {
	Code    perr.Code
	Message string
	Details map[string]any
	// Resume is STEP_FAILED's token: Client.Resume continues the composite
	// action from the failed step, once.
	Resume string
	// RequestID and Capability name the failed call.
	RequestID  string
	Capability string
	// Observation is the invoke's own observation: what changed during the
	// call.
	Observation *schema.SurfaceObservation
	// Observed is the description the client fetched after the failure,
	// when the recovery rule says to look before acting again
	// (RecoverObserve: EXPECTATION_FAILED, EXECUTION_FAILED, …; and the
	// describe-again of ACTION_NOT_FOUND). ObserveErr is set when that
	// describe failed.
	Observed   *schema.SurfaceDescription
	ObserveErr error
}

func (e *BusinessError) Error() string {
	return fmt.Sprintf("pling: %s failed: %s: %s (request %s)", e.Capability, e.Code, e.Message, e.RequestID)
}

// Is matches a *perr.Error or a *BusinessError with the same code.
func (e *BusinessError) Is(target error) bool { return isCode(e, target) }

// As fills a **perr.Error with the registry value of the failure.
func (e *BusinessError) As(target any) bool { return asRegistry(target, e.Err) }

func (e *BusinessError) code() perr.Code { return e.Code }

// Err returns the failure as a registry error value.
func (e *BusinessError) Err() *perr.Error { return perr.New(e.Code, e.Message, e.Details) }

// Recovery is the registry's recovery hint for the code.
func (e *BusinessError) Recovery() perr.Recovery { return recoveryOf(e.Code) }

// ErrUnconfirmed matches every *UnconfirmedError:
// errors.Is(err, agent.ErrUnconfirmed).
var ErrUnconfirmed = errors.New("pling: the outcome of the call is unconfirmed")

// UnconfirmedError reports an invoke whose outcome nobody knows: the
// runtime answered INTERNAL_ERROR (docs/protocol.md §5: "no inference of business
// success"), or the request went out and no usable answer came back. The
// client did not resend it and never will: a write may have happened.
// Observe the page (Observe) or ask a person before acting again.
type UnconfirmedError struct {
	RequestID  string
	Capability string
	// Protocol is the INTERNAL_ERROR failure, or nil when the exchange
	// itself failed (Cause).
	Protocol *ProtocolError
	Cause    error

	client *Client
}

func (e *UnconfirmedError) Error() string {
	why := "no usable answer"
	if e.Protocol != nil {
		why = string(e.Protocol.Code) + ": " + e.Protocol.Message
	} else if e.Cause != nil {
		why = e.Cause.Error()
	}
	return fmt.Sprintf("pling: %s is unconfirmed (request %s): %s; it may have run and was not resent — observe the page before acting again",
		e.Capability, e.RequestID, why)
}

// Is matches ErrUnconfirmed.
func (e *UnconfirmedError) Is(target error) bool { return target == ErrUnconfirmed }

// Unwrap returns the protocol failure and the cause, so that errors.Is
// matches INTERNAL_ERROR and errors.As finds a transport's error.
func (e *UnconfirmedError) Unwrap() []error {
	var out []error
	if e.Protocol != nil {
		out = append(out, e.Protocol)
	}
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	return out
}

// Observe describes the page, the read path docs/protocol.md §5 asks for before
// anything else is tried. It mints a new request id: a describe is a new
// intent, not a resend of the call.
func (e *UnconfirmedError) Observe(ctx context.Context) (*schema.SurfaceDescription, error) {
	if e.client == nil {
		return nil, errors.New("pling: no client to observe with")
	}
	return e.client.Describe(ctx, nil)
}

// ErrNotSent is wrapped by a transport's error when the request never
// reached the page: the transport knew before sending that it could not
// (the browser is gone, the page was closed). A transport that cannot tell
// must not wrap it: the call is then unconfirmed.
var ErrNotSent = errors.New("the request was not sent")

// NotSentError reports an invoke whose request never reached the page:
// nothing ran, and nothing about the page is known. It is not an
// unconfirmed call; the same intent may be sent again, under the same
// request id (WithRequestID), once the transport works again.
type NotSentError struct {
	RequestID  string
	Capability string
	// Cause is the transport's error; it wraps ErrNotSent.
	Cause error
}

func (e *NotSentError) Error() string {
	return fmt.Sprintf("pling: %s was not sent (request %s): %v; nothing ran", e.Capability, e.RequestID, e.Cause)
}

// Unwrap returns the transport's error, so that errors.Is matches
// ErrNotSent.
func (e *NotSentError) Unwrap() error { return e.Cause }

// ReplayError is REPLAY_DETECTED: the request id was already consumed in
// this session. The intent may have been carried out under that id;
// Previous says what the runtime remembers of it. The client never mints a
// new id for the same intent: check Previous (or observe) first.
type ReplayError struct {
	*ProtocolError
	Previous Previous
}

// Previous is what the replay guard remembers of the consumed id
// (details.previous).
type Previous struct {
	// Completed is false while the first request is still running, or
	// when it never finished (a page that navigated or reloaded mid-call):
	// it may have taken effect, so observe before acting.
	Completed bool
	// OK and Code describe how it completed: OK with no Code is a
	// success; OK with a Code is that business failure; not OK is a
	// protocol failure with Code.
	OK   bool
	Code perr.Code
}

func (e *ReplayError) Error() string {
	state := "has not completed (still running, or cut off by a navigation)"
	switch {
	case !e.Previous.Completed:
	case e.Previous.OK && e.Previous.Code == "":
		state = "succeeded"
	case e.Previous.Code != "":
		state = "ended with " + string(e.Previous.Code)
	default:
		state = "completed"
	}
	return fmt.Sprintf("pling: REPLAY_DETECTED: request %s was already used; the earlier call %s — do not retry this intent under a new id",
		e.RequestID, state)
}

// Unwrap returns the protocol failure.
func (e *ReplayError) Unwrap() error { return e.ProtocolError }

func previousOf(details map[string]any) Previous {
	var p Previous
	m, _ := details["previous"].(map[string]any)
	if m == nil {
		return p
	}
	p.Completed, _ = m["completed"].(bool)
	p.OK, _ = m["ok"].(bool)
	if c, ok := m["code"].(string); ok {
		p.Code, _ = perr.ParseCode(c)
	}
	return p
}

// recoveryOf is the registry's recovery hint; an unknown code has none,
// and nothing is retried for it.
func recoveryOf(c perr.Code) perr.Recovery {
	if e, ok := perr.Lookup(c); ok {
		return e.Recovery
	}
	return perr.RecoverNone
}

// isCode is Is for the client's coded errors (E is *ProtocolError,
// *BusinessError or *TaskError): target matches when it is a *perr.Error
// or an E with e's code. The message is never compared (it may be
// localized).
func isCode[E interface {
	comparable
	code() perr.Code
}](e E, target error) bool {
	switch t := target.(type) {
	case *perr.Error:
		return t != nil && t.Code() == e.code()
	case E:
		var nilE E
		return t != nilE && t.code() == e.code()
	}
	return false
}

// asRegistry is As for the client's coded errors: it fills a
// **perr.Error with the registry value err returns.
func asRegistry(target any, err func() *perr.Error) bool {
	if p, ok := target.(**perr.Error); ok {
		*p = err()
		return true
	}
	return false
}
