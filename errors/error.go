package errors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/pling-go/pling/internal/jsontree"
)

// Error is a failure with a registry code. Its fields are private: a value is
// made with New or Wrap, and its details are redacted and capped when it is
// made, so nothing sensitive can be attached later.
type Error struct {
	code    Code
	message string
	details map[string]any
	retryMs int64
	cause   error
}

// New returns an error with the given code. An empty message takes the
// code's default English message. Details are redacted and capped (Redact).
// A reserved code is replaced by its canonical parent.
func New(code Code, message string, details map[string]any) *Error {
	code = Canonical(code)
	if message == "" {
		if e, ok := Lookup(code); ok {
			message = e.Message.En
		} else {
			message = string(code)
		}
	}
	return &Error{code: code, message: message, details: Redact(details)}
}

// Wrap is New with a cause kept for errors.Is/As and logs on this side. The
// cause is never written to the wire: only the code, message and details
// are.
func Wrap(code Code, message string, cause error) *Error {
	e := New(code, message, nil)
	e.cause = cause
	return e
}

// WithRetryAfter returns a copy that carries a retry hint in milliseconds
// (RATE_LIMITED's retryAfterMs).
func (e *Error) WithRetryAfter(ms int64) *Error {
	c := *e
	c.retryMs = ms
	return &c
}

// WithDetails returns a copy with details replaced (redacted and capped).
func (e *Error) WithDetails(details map[string]any) *Error {
	c := *e
	c.details = Redact(details)
	return &c
}

// Code returns the error's code.
func (e *Error) Code() Code { return e.code }

// Message returns the message: for people, never a branching contract.
func (e *Error) Message() string { return e.message }

// Details returns a copy of the redacted details, or nil.
func (e *Error) Details() map[string]any {
	if e.details == nil {
		return nil
	}
	return copyJSON(e.details).(map[string]any)
}

// copyJSON copies a normalized JSON value deeply: a shallow copy would let a
// caller reach into nested objects and attach something after redaction.
func copyJSON(v any) any { return jsontree.Map(v, nil) }

// RetryAfterMs returns the retry hint, 0 when there is none.
func (e *Error) RetryAfterMs() int64 { return e.retryMs }

// Namespace returns the code's namespace (false for an unknown code).
func (e *Error) Namespace() (Namespace, bool) { return e.code.Namespace() }

// Error implements error as "CODE: message".
func (e *Error) Error() string { return string(e.code) + ": " + e.message }

// Unwrap returns the cause given to Wrap.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, perr.New(perr.RateLimited, "", nil)) matches on the code
// alone, whatever the message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.code == e.code
}

// wireError is the JSON shape shared by Surface failures and business
// errors: {"code","message","retryAfterMs"?,"details"?}.
type wireError struct {
	Code         Code           `json:"code"`
	Message      string         `json:"message"`
	RetryAfterMs int64          `json:"retryAfterMs,omitempty"`
	Details      map[string]any `json:"details,omitempty"`
}

// MarshalJSON writes the wire shape; the cause is left out.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireError{Code: e.code, Message: e.message, RetryAfterMs: e.retryMs, Details: e.details})
}

// UnmarshalJSON reads the wire shape leniently: unknown codes are kept,
// aliases resolved, details redacted again (they came from outside).
func (e *Error) UnmarshalJSON(b []byte) error {
	var w wireError
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // numbers in details keep their text, as New keeps them
	if err := d.Decode(&w); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return fmt.Errorf("errors: data after the error object")
	}
	*e = Error{code: w.Code, message: w.Message, retryMs: w.RetryAfterMs, details: Redact(w.Details)}
	return nil
}
