package runtime

import (
	"fmt"
	"strings"
)

// refuseMarkup is why a declaration read from the page's markup is not
// declared at all, or nil: it sits inside content the site marked as its
// users' (data-pling-user-content), or it is a form whose submission
// would leave the page's origin or its window (docs/markup.md). origin is
// the page's origin (WithOrigin); without one, no form that names where
// it sends is trusted.
func refuseMarkup(kind, key string, m *MarkupRef, origin string) error {
	if m == nil {
		return nil
	}
	where := ""
	if m.Path != "" {
		where = " at " + cutBytes(m.Path, 200)
	}
	if m.UserContent {
		return declErr(kind, key, "markup", "it sits inside user content (data-pling-user-content)"+where+", where the page's markup declares nothing; move it out if it is the site's own")
	}
	if t := strings.ToLower(m.SubmitTarget); t != "" && t != "_self" {
		return declErr(kind, key, "markup", fmt.Sprintf("the form%s submits into another window (target %q), where the agent's input could not be followed; remove the target", where, cutBytes(m.SubmitTarget, 64)))
	}
	if m.SubmitTo != "" && !sameOrigin(m.SubmitTo, origin) {
		return declErr(kind, key, "markup", fmt.Sprintf("the form%s sends its fields to %s, not to this page's origin, so the agent's input would leave the site; a markup form may only submit to its own origin", where, originText(m.SubmitTo)))
	}
	return nil
}

// sameOrigin reports whether the absolute URL u is on origin (scheme://host[:port]).
func sameOrigin(u, origin string) bool {
	o, ok := urlOrigin(u)
	return ok && origin != "" && strings.EqualFold(o, origin)
}

// originText names the origin of u for a message, never its path or
// query (which may carry what the page prefilled).
func originText(u string) string {
	o, ok := urlOrigin(u)
	if !ok {
		return "a URL without an origin"
	}
	return cutBytes(o, 200)
}

// urlOrigin is scheme://host[:port] of an absolute URL as a browser
// serializes it (form.action resolves and normalizes it), without its
// user info; ok is false for anything else, so an odd URL is never taken
// for the page's origin. (net/url would do, but it adds about 300 KB to
// the module for this one question.)
func urlOrigin(u string) (string, bool) {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || scheme == "" {
		return "", false
	}
	for i := 0; i < len(scheme); i++ {
		c := scheme[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", false
		}
	}
	host := rest
	if i := strings.IndexAny(host, "/?#\\"); i >= 0 {
		host = host[:i]
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	if host == "" {
		return "", false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; c <= ' ' || c >= 0x7f {
			return "", false
		}
	}
	return strings.ToLower(scheme) + "://" + strings.ToLower(host), true
}

// markupWhere names where a markup declaration sits, for the page's
// author: " (markup at PATH)", or "" for a script declaration.
func markupWhere(m *MarkupRef) string {
	if m == nil {
		return ""
	}
	if m.Path == "" {
		return " (markup)"
	}
	return " (markup at " + cutBytes(m.Path, 200) + ")"
}
