package authority

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	perr "github.com/pling-go/pling/errors"
)

// Client text (docs/authority.md "Client text"): every string a client
// sends that can reach the store is refused with 400 when it is not
// valid UTF-8 or holds a NUL, before any store sees it, so that SQLite
// (which keeps any bytes) and PostgreSQL (which refuses them, and would
// answer 500 or 503) behave the same. Names a person reads or that
// identify something (agent, subject, lease holder, path segments, query
// values) also may not hold any other control character.

// validText reports whether s is 1–max bytes of valid UTF-8 without
// control characters (C0, DEL, C1).
func validText(s string, max int) bool {
	return s != "" && len(s) <= max && utf8.ValidString(s) && !hasControl(s)
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			return true
		}
	}
	return false
}

// cleanJSON reports whether body is valid UTF-8 and no string of it (key
// or value, at any depth) decodes to one holding a NUL. It assumes body
// is JSON that decoded already; a token error counts as unclean.
func cleanJSON(body []byte) bool {
	if !utf8.Valid(body) {
		return false
	}
	if !bytes.Contains(body, []byte(`\u`)) && !bytes.Contains(body, []byte(`\U`)) {
		return true // a NUL can only be spelled as an escape
	}
	d := json.NewDecoder(bytes.NewReader(body))
	for {
		t, err := d.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		if s, ok := t.(string); ok && strings.IndexByte(s, 0) >= 0 {
			return false
		}
	}
}

// cleanRequest checks what every route may pass to a store besides the
// body: the decoded path, the query values and the headers a route keeps.
// It answers 400 in the route's namespace and reports false when one is
// not clean text.
func (s *Server) cleanRequest(w http.ResponseWriter, r *http.Request) bool {
	ok := utf8.ValidString(r.URL.Path) && !hasControl(r.URL.Path)
	for _, vs := range r.URL.Query() {
		for _, v := range vs {
			ok = ok && utf8.ValidString(v) && !hasControl(v)
		}
	}
	for _, h := range []string{"Idempotency-Key", "If-Match"} {
		for _, v := range r.Header.Values(h) {
			ok = ok && utf8.ValidString(v) && !hasControl(v)
		}
	}
	if ok {
		return true
	}
	const msg = "The request holds bytes that are not text (invalid UTF-8 or a control character)"
	if strings.HasPrefix(r.URL.Path, "/v1/tasks") {
		s.notText(w, msg)
	} else {
		s.fail(w, perr.DelegationRequestInvalid, msg)
	}
	return false
}

// notText refuses a continuity request whose text is not clean: 400 (not
// the 409 of the registry's CONTINUITY_INVALID_STATE, which says the
// task's state forbids the step), with that code, as no Continuity code
// is closer.
func (s *Server) notText(w http.ResponseWriter, msg string) {
	s.failStatus(w, http.StatusBadRequest, perr.ContinuityInvalidState, msg)
}
