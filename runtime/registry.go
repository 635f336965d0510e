package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/pagebridge"
	"github.com/pling-go/pling/runtime/internal/canon"
)

// instance is one live declaration: identical declarations under one key
// share a slot, and the slot is one capability while all its instances
// have the same shape (docs/protocol.md §4.1 de-duplication). markup marks
// a declaration pling.js read from the page's markup.
type instance[T any] struct {
	handle uint64
	decl   T
	shape  string
	markup bool
}

type slot[T any] struct {
	insts []instance[T]
}

// live is the instances that count: while the site's script declares
// under the key, only its declarations; markup ones never displace them
// nor put the key in conflict (docs/markup.md). Without a script
// declaration, every instance counts.
func (s *slot[T]) live() []instance[T] {
	script, markup := 0, 0
	for _, in := range s.insts {
		if in.markup {
			markup++
		} else {
			script++
		}
	}
	if script == 0 || markup == 0 {
		return s.insts
	}
	out := make([]instance[T], 0, script)
	for _, in := range s.insts {
		if !in.markup {
			out = append(out, in)
		}
	}
	return out
}

// hasScript reports whether the site's script declares under the key.
func (s *slot[T]) hasScript() bool {
	for _, in := range s.insts {
		if !in.markup {
			return true
		}
	}
	return false
}

// shadowed is the markup declarations a script declaration under the same
// key sets aside.
func (s *slot[T]) shadowed() []T {
	if !s.hasScript() {
		return nil
	}
	var out []T
	for _, in := range s.insts {
		if in.markup {
			out = append(out, in.decl)
		}
	}
	return out
}

// conflict reports two different declarations under one key.
func (s *slot[T]) conflict() bool {
	ins := s.live()
	for _, in := range ins[1:] {
		if in.shape != ins[0].shape {
			return true
		}
	}
	return false
}

// current is the newest live declaration; its functions are the ones run
// (StrictMode remounts and HMR replace closures with equal ones).
func (s *slot[T]) current() T { ins := s.live(); return ins[len(ins)-1].decl }

// shape is the shape of the live declarations.
func (s *slot[T]) shape() string { return s.live()[0].shape }

func (s *slot[T]) add(in instance[T]) (conflict bool) {
	s.insts = append(s.insts, in)
	return s.conflict()
}

func (s *slot[T]) remove(handle uint64) bool {
	for i, in := range s.insts {
		if in.handle == handle {
			s.insts = append(s.insts[:i:i], s.insts[i+1:]...)
			return true
		}
	}
	return false
}

// fold groups the row actions of one base id and record kind: a template
// declared once for every record, and per-row declarations.
type fold struct {
	base, kind string
	template   *slot[Action]
	rows       map[string]*slot[Action]
}

func (f *fold) empty() bool {
	return (f.template == nil || len(f.template.insts) == 0) && len(f.rows) == 0
}

// hasScript reports whether the site's script declares in the fold
// (its template or any row).
func (f *fold) hasScript() bool {
	if f.template != nil && f.template.hasScript() {
		return true
	}
	for _, r := range f.rows {
		if r.hasScript() {
			return true
		}
	}
	return false
}

// setAside is the markup declarations of the fold that the script's set
// aside: every one, while the script declares in the fold.
func (f *fold) setAside() []Action {
	if !f.hasScript() {
		return nil
	}
	var out []Action
	add := func(s *slot[Action]) {
		for _, in := range s.insts {
			if in.markup {
				out = append(out, in.decl)
			}
		}
	}
	add(f.template)
	for _, k := range slices.Sorted(maps.Keys(f.rows)) {
		add(f.rows[k])
	}
	return out
}

// counts reports whether the slot s of the fold counts: while the site's
// script declares in the fold (script), a slot of markup declarations
// only does not (slot.live).
func counts[T any](s *slot[T], script bool) bool {
	return s != nil && len(s.insts) > 0 && (!script || s.hasScript())
}

// conflict reports declarations of the fold that differ: a slot in
// conflict, or rows (and template) whose shapes differ.
func (f *fold) conflict() bool {
	shape := ""
	script := f.hasScript()
	check := func(s *slot[Action]) bool {
		if !counts(s, script) {
			return false
		}
		if s.conflict() {
			return true
		}
		if shape == "" {
			shape = s.shape()
			return false
		}
		return s.shape() != shape
	}
	if check(f.template) {
		return true
	}
	for _, r := range f.rows {
		if check(r) {
			return true
		}
	}
	return false
}

type registry struct {
	mu         sync.RWMutex
	gen        uint64
	nextHandle uint64
	actions    map[string]*slot[Action]
	folds      map[string]*fold
	states     map[string]*slot[State]
	guides     map[string]*slot[Guide]
	regions    map[string]*slot[Region]
	records    map[string][]instance[Records]
	hooks      []instance[Hook]
	// refused is the markup declarations refused when declared, for
	// markupPlaces (noteRefused).
	refused []pagebridge.MarkupPlace
}

func newRegistry() *registry {
	return &registry{
		actions: map[string]*slot[Action]{},
		folds:   map[string]*fold{},
		states:  map[string]*slot[State]{},
		guides:  map[string]*slot[Guide]{},
		regions: map[string]*slot[Region]{},
		records: map[string][]instance[Records]{},
	}
}

// foldID is the folded capability id of a row action: base@kind.
func foldID(base, kind string) string { return base + "@" + kind }

// shapeDigest is the identity of a declaration's data.
func shapeDigest(v any) (string, error) { return canon.Digest(v) }

type expectShape struct {
	State     string `json:"state"`
	Change    string `json:"change,omitempty"`
	Equals    any    `json:"equals,omitempty"`
	HasEquals bool   `json:"hasEquals,omitempty"`
	Predicate bool   `json:"predicate,omitempty"`
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
}

func expectOf(e *Expectation) *expectShape {
	if e == nil {
		return nil
	}
	return &expectShape{State: e.State, Change: e.Change, Equals: e.Equals, HasEquals: e.HasEquals, Predicate: e.Predicate != nil, TimeoutMs: e.TimeoutMs}
}

func actionShape(a *Action) (string, error) {
	if v, ok := actionShapeValue(a); ok {
		return shapeDigest(v)
	}
	return actionShapeSlow(a)
}

// actionShapeSlow is actionShape by way of encoding/json; actionShapeValue
// gives the same digest without it when its values are plain.
func actionShapeSlow(a *Action) (string, error) {
	type stepShape struct {
		Title  string       `json:"title,omitempty"`
		Run    bool         `json:"run"`
		Expect *expectShape `json:"expect,omitempty"`
	}
	steps := make([]stepShape, len(a.Steps))
	for i, s := range a.Steps {
		steps[i] = stepShape{Title: s.Title, Run: s.Run != nil, Expect: expectOf(s.Expect)}
	}
	var rec any
	if a.Record != nil {
		rec = map[string]any{"kind": a.Record.Kind, "allowOffscreen": a.Record.AllowOffscreen}
	}
	return shapeDigest(map[string]any{
		"id": a.ID, "title": a.Title, "description": a.Description,
		"params": paramsShape(a.Params), "risk": riskOf(a), "available": a.Available != nil,
		"run": a.Run != nil, "expect": expectOf(a.Expect), "steps": steps,
		"handoff": a.Handoff, "approval": a.Approval, "region": a.Region, "record": rec,
		"identity": a.Identity,
	})
}

func paramsShape(ps map[string]Param) any {
	out := make(map[string]any, len(ps))
	for k, p := range ps {
		out[k] = propertySchema(&p)
	}
	return out
}

// declare adds a declaration and returns its handle and whether it
// conflicts with a different declaration under the same key.
func declare[T any](r *registry, m map[string]*slot[T], key string, decl T, shape string, markup bool) (uint64, bool) {
	r.nextHandle++
	h := r.nextHandle
	s := m[key]
	if s == nil {
		s = &slot[T]{}
		m[key] = s
	}
	c := s.add(instance[T]{handle: h, decl: decl, shape: shape, markup: markup})
	r.gen++
	return h, c
}

func undeclare[T any](r *registry, m map[string]*slot[T], key string, handle uint64) {
	s := m[key]
	if s == nil || !s.remove(handle) {
		return
	}
	if len(s.insts) == 0 {
		delete(m, key)
	}
	r.gen++
}

// Handle is a live declaration. Dispose removes it; with de-duplication,
// the capability stays while another identical declaration lives.
type Handle struct {
	once    sync.Once
	dispose func()
}

// Dispose removes the declaration. It is safe to call more than once.
func (h *Handle) Dispose() {
	if h == nil {
		return
	}
	h.once.Do(h.dispose)
}

// DeclareAction registers an action. A bad declaration returns a
// *DeclarationError and changes nothing. A declaration that differs from
// another under the same id is registered and returns the handle together
// with a DUPLICATE_ACTION_ID *perr.Error: the id is unavailable until one of
// them is disposed. A markup declaration (Markup set) under an id the
// site's script declares is registered and set aside while the script's
// stands, and the error says so; one inside user content, or a form that
// would send elsewhere, is refused (refuseMarkup).
func (rt *Runtime) DeclareAction(a Action) (*Handle, error) {
	a = cloneAction(a)
	if err := validateAction(&a); err != nil {
		return nil, err
	}
	if err := refuseMarkup("action", a.ID, a.Markup, rt.cfg.gate.origin); err != nil {
		rt.noteRefused("action", capabilityIDOf(&a), a.Markup)
		return nil, err
	}
	markup := a.Markup != nil
	if a.Title == "" {
		a.Title = a.ID
	}
	shape, err := actionShape(&a)
	if err != nil {
		return nil, declErr("action", a.ID, "shape", "is not JSON-encodable")
	}
	r := rt.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	var h uint64
	var conflict, shadowed bool
	var dispose func()
	if a.Record == nil {
		h, conflict = declare(r, r.actions, a.ID, a, shape, markup)
		shadowed = markup && r.actions[a.ID].hasScript()
		dispose = func() { r.mu.Lock(); undeclare(r, r.actions, a.ID, h); r.mu.Unlock() }
	} else {
		fid := foldID(a.ID, a.Record.Kind)
		f := r.folds[fid]
		if f == nil {
			f = &fold{base: a.ID, kind: a.Record.Kind, template: &slot[Action]{}, rows: map[string]*slot[Action]{}}
			r.folds[fid] = f
		}
		if a.Record.ID == "" {
			r.nextHandle++
			h = r.nextHandle
			f.template.add(instance[Action]{handle: h, decl: a, shape: shape, markup: markup})
			r.gen++
		} else {
			h, _ = declare(r, f.rows, a.Record.ID, a, shape, markup)
		}
		conflict = f.conflict()
		shadowed = markup && f.hasScript()
		rec := a.Record.ID
		dispose = func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if rec == "" {
				if f.template.remove(h) {
					r.gen++
				}
			} else {
				undeclare(r, f.rows, rec, h)
			}
			if f.empty() && r.folds[fid] == f {
				delete(r.folds, fid)
			}
		}
	}
	hd := &Handle{dispose: dispose}
	if shadowed {
		return hd, perr.New(perr.DuplicateActionID, fmt.Sprintf("The site's script declares the id %q; this markup declaration%s is ignored", capabilityIDOf(&a), markupWhere(a.Markup)), map[string]any{"id": capabilityIDOf(&a)})
	}
	if conflict {
		return hd, perr.New(perr.DuplicateActionID, fmt.Sprintf("Another, different action is declared under the id %q%s; both are unavailable until one is disposed", capabilityIDOf(&a), markupWhere(a.Markup)), map[string]any{"id": capabilityIDOf(&a)})
	}
	return hd, nil
}

func capabilityIDOf(a *Action) string {
	if a.Record != nil {
		return foldID(a.ID, a.Record.Kind)
	}
	return a.ID
}

// DeclareState registers a state; see DeclareAction for the outcomes
// (DUPLICATE_STATE_KEY).
func (rt *Runtime) DeclareState(s State) (*Handle, error) {
	if err := validateState(&s); err != nil {
		return nil, err
	}
	return declareSimple(rt, rt.reg.states, "state", s.Key, s, s.Markup, map[string]any{"key": s.Key, "description": s.Description, "identity": s.Identity},
		perr.DuplicateStateKey, "Another, different state is declared under this key")
}

// DeclareGuide registers a guide target (DUPLICATE_GUIDE_TARGET).
func (rt *Runtime) DeclareGuide(g Guide) (*Handle, error) {
	if err := validateGuide(&g); err != nil {
		return nil, err
	}
	return declareSimple(rt, rt.reg.guides, "guide", g.Target, g, g.Markup, map[string]any{"target": g.Target, "label": g.Label, "selector": g.Selector, "identity": g.Identity},
		perr.DuplicateGuideTarget, "Another, different guide is declared under this target")
}

// DeclareRegion registers a region. Two different regions under one id
// conflict; the region then counts as inactive.
func (rt *Runtime) DeclareRegion(g Region) (*Handle, error) {
	if err := validateRegion(&g); err != nil {
		return nil, err
	}
	return declareSimple(rt, rt.reg.regions, "region", g.ID, g, g.Markup, map[string]any{"id": g.ID, "title": g.Title, "modal": g.Modal, "active": g.Active != nil, "identity": g.Identity},
		"", "")
}

// declareSimple declares a valid state, guide or region (kind) under key:
// refused when it was read from markup in a place refuseMarkup refuses
// (and noted for markupPlaces), else registered with the digest of shape
// as what makes two declarations the same. A different declaration under
// key is a conflict, returned as code with msg when code is set.
func declareSimple[T any](rt *Runtime, m map[string]*slot[T], kind, key string, decl T, markup *MarkupRef, shape map[string]any, code perr.Code, msg string) (*Handle, error) {
	if err := refuseMarkup(kind, key, markup, rt.cfg.gate.origin); err != nil {
		rt.noteRefused(kind, key, markup)
		return nil, err
	}
	digest, _ := shapeDigest(shape)
	r := rt.reg
	r.mu.Lock()
	h, conflict := declare(r, m, key, decl, digest, markup != nil)
	r.mu.Unlock()
	hd := &Handle{dispose: func() { r.mu.Lock(); undeclare(r, m, key, h); r.mu.Unlock() }}
	if conflict && code != "" {
		return hd, perr.New(code, msg, map[string]any{"id": key})
	}
	return hd, nil
}

// DeclareRecords registers rows of a kind. Several declarations of one kind
// are joined in declaration order; a row id seen twice keeps its first
// occurrence.
func (rt *Runtime) DeclareRecords(rs Records) (*Handle, error) {
	if err := validateRecords(&rs); err != nil {
		return nil, err
	}
	r := rt.reg
	r.mu.Lock()
	r.nextHandle++
	h := r.nextHandle
	r.records[rs.Kind] = append(r.records[rs.Kind], instance[Records]{handle: h, decl: rs})
	r.gen++
	r.mu.Unlock()
	return &Handle{dispose: func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		list := r.records[rs.Kind]
		for i, in := range list {
			if in.handle == h {
				r.records[rs.Kind] = append(list[:i:i], list[i+1:]...)
				r.gen++
				break
			}
		}
		if len(r.records[rs.Kind]) == 0 {
			delete(r.records, rs.Kind)
		}
	}}, nil
}

// Hook is a lifecycle hook around invoke (docs/protocol.md §4.2).
type Hook struct {
	// Before runs after approval and before the run; a non-empty reason
	// blocks the invoke with HOOK_BLOCKED.
	Before func(ctx context.Context, call *Call) (block string)
	// After runs after a successful invoke; it observes and cannot change
	// the result.
	After func(ctx context.Context, call *Call, value any)
}

// AddHook registers a hook.
func (rt *Runtime) AddHook(hk Hook) (*Handle, error) {
	if hk.Before == nil && hk.After == nil {
		return nil, declErr("hook", "", "before", "a hook needs Before or After")
	}
	r := rt.reg
	r.mu.Lock()
	r.nextHandle++
	h := r.nextHandle
	r.hooks = append(r.hooks, instance[Hook]{handle: h, decl: hk})
	r.gen++ // snapshots carry the hooks
	r.mu.Unlock()
	return &Handle{dispose: func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i, in := range r.hooks {
			if in.handle == h {
				r.hooks = append(r.hooks[:i:i], r.hooks[i+1:]...)
				r.gen++
				break
			}
		}
	}}, nil
}

func cloneAction(a Action) Action {
	if a.Params != nil {
		ps := make(map[string]Param, len(a.Params))
		for k, v := range a.Params {
			ps[k] = v
		}
		a.Params = ps
	}
	a.Steps = append([]Step(nil), a.Steps...)
	if a.Record != nil {
		r := *a.Record
		a.Record = &r
	}
	if a.Handoff != nil {
		h := *a.Handoff
		a.Handoff = &h
	}
	if a.Expect != nil {
		e := *a.Expect
		a.Expect = &e
	}
	return a
}
