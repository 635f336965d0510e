package errors

import (
	"fmt"
	"sync"
)

// registry is a closed code set with its metadata. The package holds one,
// built from the tables in table.go; tests build others to exercise the
// mechanism (aliases, reserved codes, validation).
type registry struct {
	entries map[Code]Entry
	order   []Code
	aliases map[string]Code
}

// newRegistry builds and checks a registry: every code unique across all
// namespaces, every alias pointing at a canonical (not reserved) code and not
// shadowing one, every reserved parent canonical and of the same namespace.
func newRegistry(entries []Entry, aliases map[string]Code) (*registry, error) {
	r := &registry{entries: make(map[Code]Entry, len(entries)), aliases: make(map[string]Code, len(aliases))}
	for _, e := range entries {
		if e.Code == "" {
			return nil, fmt.Errorf("errors: empty code in namespace %v", e.Namespace)
		}
		if prev, dup := r.entries[e.Code]; dup {
			return nil, fmt.Errorf("errors: code %s in namespaces %v and %v", e.Code, prev.Namespace, e.Namespace)
		}
		r.entries[e.Code] = e
		r.order = append(r.order, e.Code)
	}
	for _, e := range entries {
		if !e.Reserved() {
			continue
		}
		p, ok := r.entries[e.Parent]
		switch {
		case !ok:
			return nil, fmt.Errorf("errors: reserved %s has unknown parent %s", e.Code, e.Parent)
		case p.Reserved():
			return nil, fmt.Errorf("errors: reserved %s has reserved parent %s", e.Code, e.Parent)
		case p.Namespace != e.Namespace:
			return nil, fmt.Errorf("errors: reserved %s and parent %s in different namespaces", e.Code, e.Parent)
		}
	}
	for alias, c := range aliases {
		if _, clash := r.entries[Code(alias)]; clash {
			return nil, fmt.Errorf("errors: alias %s shadows a code", alias)
		}
		e, ok := r.entries[c]
		if !ok || e.Reserved() {
			return nil, fmt.Errorf("errors: alias %s must point at a canonical code, not %s", alias, c)
		}
		r.aliases[alias] = c
	}
	return r, nil
}

func (r *registry) parse(s string) (Code, bool) {
	if c, ok := r.aliases[s]; ok {
		return c, true
	}
	_, ok := r.entries[Code(s)]
	return Code(s), ok
}

func (r *registry) canonical(c Code) Code {
	c, _ = r.parse(string(c))
	if e, ok := r.entries[c]; ok && e.Reserved() {
		return e.Parent
	}
	return c
}

// defaultRegistry is built on first use rather than at init: a page's
// module starts sooner, and a page meets no error code before its first
// failure.
var defaultRegistry = sync.OnceValue(func() *registry { return mustRegistry(allEntries(), historicalAliases) })

func mustRegistry(entries []Entry, aliases map[string]Code) *registry {
	r, err := newRegistry(entries, aliases)
	if err != nil {
		panic(err)
	}
	return r
}

// allEntries joins the namespace tables, filling in what is derived: the
// namespace, the HTTP status from the namespace's one mapping function, and
// the Executed column of protocol codes.
func allEntries() []Entry {
	var out []Entry
	add := func(ns Namespace, status func(Code) int, es []Entry) {
		for _, e := range es {
			e.Namespace = ns
			if status != nil {
				e.HTTPStatus = status(e.Code)
			}
			if ns == Surface {
				e.Executed = SurfaceExecuted(e.Code)
			}
			out = append(out, e)
		}
	}
	add(Surface, SurfaceHTTPStatus, surfaceEntries)
	add(Action, nil, actionEntries)
	add(Delegation, DelegationHTTPStatus, delegationEntries)
	add(Continuity, ContinuityHTTPStatus, continuityEntries)
	add(Gateway, GatewayHTTPStatus, gatewayEntries)
	return out
}
