package authority

import (
	"net/http"
	"strings"
)

// CORS for the routes a page calls from the browser (docs/authority.md
// "Pages that follow the authority"): the keys, the revocation feed, the
// shared replay guard, the sessions' invoke limit and the approvals. Only
// the origins the authority issues for (its audiences) are allowed, each
// by its exact value; any other origin gets no CORS headers, so the browser keeps the answer from it. The operator
// and delegation routes are never offered to a browser origin.

// pageRoute reports whether the path is one a page calls, with the
// methods it may use.
func pageRoute(path string) (methods string, ok bool) {
	switch {
	case path == "/v1/keys", path == "/v1/revocations":
		return "GET", true
	case strings.HasPrefix(path, "/v1/sessions/") && strings.Contains(path, "/requests/"):
		return "POST, PUT", true
	case strings.HasPrefix(path, "/v1/sessions/") && strings.HasSuffix(path, "/invokes"):
		return "POST", true
	case path == "/v1/approvals", strings.HasPrefix(path, "/v1/approvals/") && strings.HasSuffix(path, "/token"):
		return "POST", true
	}
	return "", false
}

// cors writes the CORS headers of a page route for an allowed origin, and
// answers a preflight; it reports whether the request was answered.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	methods, ok := pageRoute(r.URL.Path)
	if !ok {
		return false
	}
	w.Header().Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	_, allowed := s.cfg.Audiences[origin]
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if origin == "" || !allowed {
		if preflight {
			w.WriteHeader(http.StatusForbidden)
			return true
		}
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	if preflight {
		h.Set("Access-Control-Allow-Methods", methods)
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}
