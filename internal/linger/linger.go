// Package linger answers a request whose body is too large the way
// nginx's lingering close does: the refusal is written and flushed, then
// the rest of the body is read and discarded for a bounded time and
// number of bytes before the connection closes. A client that sends its
// whole body before it reads (Python's urllib, curl without
// Expect: 100-continue) then sees the 413 instead of a connection reset:
// closing a socket with unread data in it makes the kernel send RST,
// which discards the answer on the client's side.
package linger

import (
	"io"
	"net/http"
	"time"
)

// Bounds of the discard: what a client may still send after the refusal.
const (
	MaxBytes = 64 << 20
	MaxTime  = 5 * time.Second
)

// Prepare is called before the handler writes the refusal: the
// connection closes after it, and the body stays readable after the
// answer is written (HTTP/1's server otherwise stops reading it).
func Prepare(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).EnableFullDuplex()
}

// Discard flushes the answer written to w, then reads and drops up to
// MaxBytes of body (the request's own body, not a MaxBytesReader over it,
// which refuses every read after the cap) for at most MaxTime.
func Discard(w http.ResponseWriter, body io.Reader) {
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	_ = rc.SetReadDeadline(time.Now().Add(MaxTime))
	_, _ = io.CopyN(io.Discard, body, MaxBytes)
}
