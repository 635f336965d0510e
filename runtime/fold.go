package runtime

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pling-go/pling/internal/idchars"
)

// capEntry is one capability as describe and the executor see it: a plain
// action, or a fold of row actions (docs/protocol.md §4.1).
type capEntry struct {
	id       string
	action   Action // the current declaration (a fold's template, else its first row)
	conflict bool
	// places names where the declarations in conflict sit, for lint.
	places []string
	fold   *foldView
	// static is the encoded static part of the capability (everything but
	// a fold's record metadata), without the closing brace.
	static []byte
	// shape identifies the static part for the revision.
	shape string
}

type foldView struct {
	base, kind  string
	hasTemplate bool
	template    Action
	// rows are the per-row declarations by record id.
	rows map[string]Action
}

// checked reports whether the fold's action a, or any of its per-row
// declarations, has an availability check.
func (f *foldView) checked(a *Action) bool {
	if a.Available != nil {
		return true
	}
	for _, r := range f.rows {
		if r.Available != nil {
			return true
		}
	}
	return false
}

// snapshot is an immutable view of the registry at one generation.
type snapshot struct {
	gen            uint64
	caps           []*capEntry // sorted by id
	byID           map[string]*capEntry
	states         []State // sorted by key, conflicts left out
	stateConflicts []string
	guides         []Guide
	guideConflicts []string
	regions        []Region
	records        map[string][]Records
	hooks          []Hook
	// setAside is the markup declarations a script declaration under the
	// same key sets aside, for lint (at most maxLint).
	setAside []setAside

	// exposed caches, per exposure key, the capabilities the exposure's
	// patterns allow: patterns do not change within a generation.
	exposed  sync.Map // string → []*capEntry
	nexposed atomic.Int32

	// revs caches, per exposure key, the revision of a listing that asks
	// no page code (listingStatic).
	revs       sync.Map // string → string
	nrevs      atomic.Int32
	staticOnce sync.Once
	static     bool
}

// exposedCaps returns the capabilities exp allows, in id order.
func (s *snapshot) exposedCaps(exp exposure) []*capEntry {
	k := exp.key()
	if v, ok := s.exposed.Load(k); ok {
		return v.([]*capEntry)
	}
	out := make([]*capEntry, 0, len(s.caps))
	for _, c := range s.caps {
		if exp.allows(c.id) {
			out = append(out, c)
		}
	}
	if s.nexposed.Add(1) <= 64 { // many distinct scopes: stop caching
		s.exposed.Store(k, out)
	}
	return out
}

// snapshot returns the view of the current generation, built once per
// generation and shared by every describe and invoke that sees it.
func (rt *Runtime) snapshot() *snapshot {
	r := rt.reg
	r.mu.RLock()
	if s := rt.desc.snap.Load(); s != nil && s.gen == r.gen {
		r.mu.RUnlock()
		return s
	}
	s := &snapshot{gen: r.gen, byID: make(map[string]*capEntry, len(r.actions)+len(r.folds)), records: map[string][]Records{}}
	for id, sl := range r.actions {
		if len(sl.insts) == 0 {
			continue
		}
		e := &capEntry{id: id, action: sl.current(), conflict: sl.conflict(), shape: sl.shape()}
		if e.conflict {
			e.places = places(sl.live())
		}
		s.caps = append(s.caps, e)
		s.setAside = appendSetAside(s.setAside, "action", id, markupOf(sl.shadowed(), func(d Action) *MarkupRef { return d.Markup }))
	}
	for id, f := range r.folds {
		if f.empty() {
			continue
		}
		fv := &foldView{base: f.base, kind: f.kind, rows: make(map[string]Action, len(f.rows))}
		e := &capEntry{id: id, conflict: f.conflict(), fold: fv}
		script := f.hasScript()
		if e.conflict {
			if counts(f.template, script) {
				e.places = places(f.template.live())
			}
			for _, k := range slices.Sorted(maps.Keys(f.rows)) {
				if counts(f.rows[k], script) {
					e.places = append(e.places, places(f.rows[k].live())...)
				}
			}
		}
		if counts(f.template, script) {
			fv.hasTemplate = true
			fv.template = f.template.current()
			e.action = fv.template
			e.shape = f.template.shape()
		}
		for rec, sl := range f.rows {
			if counts(sl, script) {
				fv.rows[rec] = sl.current()
			}
		}
		s.setAside = appendSetAside(s.setAside, "action", id, markupOf(f.setAside(), func(d Action) *MarkupRef { return d.Markup }))
		if !fv.hasTemplate {
			first := slices.Sorted(maps.Keys(fv.rows))[0]
			e.action = fv.rows[first]
			e.shape = f.rows[first].shape()
		}
		s.caps = append(s.caps, e)
	}
	sort.Slice(s.caps, func(i, j int) bool { return s.caps[i].id < s.caps[j].id })
	for _, c := range s.caps {
		s.byID[c.id] = c
	}
	s.states, s.stateConflicts = settled(r.states)
	s.guides, s.guideConflicts = settled(r.guides)
	for _, k := range slices.Sorted(maps.Keys(r.states)) {
		s.setAside = appendSetAside(s.setAside, "state", k, markupOf(r.states[k].shadowed(), func(d State) *MarkupRef { return d.Markup }))
	}
	for _, k := range slices.Sorted(maps.Keys(r.guides)) {
		s.setAside = appendSetAside(s.setAside, "guide", k, markupOf(r.guides[k].shadowed(), func(d Guide) *MarkupRef { return d.Markup }))
	}
	for _, k := range slices.Sorted(maps.Keys(r.regions)) {
		s.setAside = appendSetAside(s.setAside, "region", k, markupOf(r.regions[k].shadowed(), func(d Region) *MarkupRef { return d.Markup }))
	}
	for _, k := range slices.Sorted(maps.Keys(r.regions)) {
		sl := r.regions[k]
		if sl.conflict() {
			// Two different regions under one id: it counts as inactive.
			s.regions = append(s.regions, Region{ID: k, Active: func(context.Context) bool { return false }})
			continue
		}
		s.regions = append(s.regions, sl.current())
	}
	for k, list := range r.records {
		for _, in := range list {
			s.records[k] = append(s.records[k], in.decl)
		}
	}
	for _, h := range r.hooks {
		s.hooks = append(s.hooks, h.decl)
	}
	r.mu.RUnlock()
	for _, c := range s.caps {
		c.static = encodeStatic(c)
	}
	rt.desc.snap.Store(s)
	return s
}

// readRecords reads every row of a kind, in declaration order, first
// occurrence of an id kept. Rows with an invalid id are skipped: a row id
// must be usable in a concrete action id.
func readRecords(ctx context.Context, decls []Records) ([]RecordItem, error) {
	rs, _, err := readRows(ctx, decls)
	return rs, err
}

// readRows is readRecords, also reporting whether the rows are in id
// order already (ascending).
func readRows(ctx context.Context, decls []Records) ([]RecordItem, bool, error) {
	if len(decls) == 1 {
		items, err := readOne(ctx, decls[0])
		if err != nil {
			return nil, false, err
		}
		rs, asc := uniqueRecords(items, len(items))
		return rs, asc, nil
	}
	var all []RecordItem
	for _, d := range decls {
		items, err := readOne(ctx, d)
		if err != nil {
			return nil, false, err
		}
		all = append(all, items...)
	}
	rs, asc := uniqueRecords(all, len(all))
	return rs, asc, nil
}

// readOne runs one records reader; a panic is a failed read.
func readOne(ctx context.Context, d Records) (items []RecordItem, err error) {
	defer func() {
		if r := recover(); r != nil {
			items, err = nil, panicError(r)
		}
	}()
	return d.Read(ctx)
}

// foldRows returns the rows a fold applies to, in id order, each with
// whether it is offscreen. A template applies to every record of its kind;
// per-row declarations apply to their own records, which count as visible
// unless the records of the kind say otherwise.
func foldRows(f *foldView, records []RecordItem) []RecordItem {
	if f.hasTemplate {
		out := append([]RecordItem(nil), records...)
		if len(f.rows) > 0 {
			known := make(map[string]bool, len(out))
			for _, r := range out {
				known[r.ID] = true
			}
			for id := range f.rows {
				if !known[id] {
					out = append(out, RecordItem{ID: id})
				}
			}
		}
		sortRecords(out)
		return out
	}
	byID := make(map[string]RecordItem, len(records))
	for _, r := range records {
		byID[r.ID] = r
	}
	out := make([]RecordItem, 0, len(f.rows))
	for id := range f.rows {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		} else {
			out = append(out, RecordItem{ID: id})
		}
	}
	sortRecords(out)
	return out
}

// sortRecords orders rows by id, numbers in numeric order (ord_2 before
// ord_10), so a fold lists rows the way people count them.
func sortRecords(rs []RecordItem) {
	// Pages usually list their rows in order already: one pass says so.
	if !slices.IsSortedFunc(rs, compareRecords) {
		// sort.Slice, not slices.SortFunc: the module carries sort.Slice's
		// one instance for every caller already, and slices.SortFunc on
		// RecordItem would add a copy of pdqsort of its own (19 KB of the
		// module). Both are generated from one template
		// (sort/gen_sort_variants.go) and compare and swap the same
		// elements in the same order, so ties come out alike too.
		sort.Slice(rs, func(i, j int) bool { return compareRecords(rs[i], rs[j]) < 0 })
	}
}

// compareRecords orders rows by id as naturalLess does.
func compareRecords(a, b RecordItem) int {
	if naturalLess(a.ID, b.ID) {
		return -1
	}
	if naturalLess(b.ID, a.ID) {
		return 1
	}
	return 0
}

func naturalLess(a, b string) bool {
	return naturalLessAt(a, b, commonPrefix(a, b))
}

// commonPrefix is how many bytes a and b begin with alike.
func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// naturalLessAt is naturalLess of a and b, which begin with i bytes
// alike and differ after them.
func naturalLessAt(a, b string, i int) bool {
	// Skip the common prefix back to where a digit run starts: the tokens
	// before it are the same in both, so the order is decided after it.
	// Ids of one kind share long prefixes (ord_1041, ord_1042), and a
	// describe compares thousands of them.
	s := i
	for s > 0 && isDigit(a[s-1]) {
		s--
	}
	// The usual pair: a number at s in both, without leading zeros, that
	// differs at i. The longer number is the larger; of two as long, the
	// first digit that differs decides. No token need be cut out.
	if s < len(a) && s < len(b) && isDigit(a[s]) && isDigit(b[s]) && a[s] != '0' && b[s] != '0' {
		ea, eb := i, i
		for ea < len(a) && isDigit(a[ea]) {
			ea++
		}
		for eb < len(b) && isDigit(b[eb]) {
			eb++
		}
		if ea != eb {
			return ea < eb
		}
		if i < ea {
			return a[i] < b[i]
		}
	}
	return naturalLessFrom(a[s:], b[s:])
}

// naturalLessFrom is naturalLess from the start of a token.
func naturalLessFrom(a, b string) bool {
	for a != "" && b != "" {
		ca, cb := a[0], b[0]
		if isDigit(ca) && isDigit(cb) {
			na, ra := digitRun(a)
			nb, rb := digitRun(b)
			ta, tb := na, nb
			if ca == '0' || cb == '0' {
				ta, tb = strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			}
			if len(ta) != len(tb) {
				return len(ta) < len(tb)
			}
			if ta != tb {
				return ta < tb
			}
			if na != nb {
				return na < nb
			}
			a, b = ra, rb
			continue
		}
		if ca != cb {
			return ca < cb
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitRun(s string) (string, string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// resolveRow finds the declaration that runs for a record of a fold: the
// row's own declaration, else the template.
func (f *foldView) resolveRow(record string) (Action, bool) {
	if a, ok := f.rows[record]; ok {
		return a, true
	}
	if f.hasTemplate {
		return f.template, true
	}
	return Action{}, false
}

// uniqueRecords keeps the first occurrence of each valid row id.
func uniqueRecords(items []RecordItem, n int) ([]RecordItem, bool) {
	if ascending(items) {
		return items, true // valid, and no id twice: no copy, no set
	}
	out := make([]RecordItem, 0, n)
	seen := make(map[string]struct{}, n)
	for _, it := range items {
		if _, dup := seen[it.ID]; dup || !validRecordID(it.ID) {
			continue
		}
		seen[it.ID] = struct{}{}
		out = append(out, it)
	}
	return out, false
}

// ascending reports whether every id is valid and each is after the one
// before it in id order (naturalLess), as pages usually list their rows;
// no id can then occur twice. It costs one pass, which reads each id
// about once: what an id shares with the one before it (ord_104 of
// ord_1041, ord_1042) was checked with that one, so only the rest is.
func ascending(items []RecordItem) bool {
	prev := ""
	for k := range items {
		id := items[k].ID
		if len(id) == 0 || len(id) > maxRecordID {
			return false
		}
		i := 0
		if k > 0 {
			i = commonPrefix(prev, id)
			if !naturalLessAt(prev, id, i) {
				return false
			}
		}
		if !idchars.Of(id[i:], 0, idchars.Unbounded, recordIDExtra) {
			return false
		}
		prev = id
	}
	return true
}

// places names where each of ins sits: "markup at PATH", or "script".
func places(ins []instance[Action]) []string {
	var out []string
	for _, in := range ins {
		if len(out) == 8 {
			break
		}
		if w := markupWhere(in.decl.Markup); w != "" {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(w, " ("), ")"))
		} else {
			out = append(out, "script")
		}
	}
	return out
}

// setAside is a markup declaration a script declaration under the same
// key sets aside.
type setAside struct {
	kind, key string
	markup    *MarkupRef
}

func markupOf[T any](ds []T, of func(T) *MarkupRef) []*MarkupRef {
	var out []*MarkupRef
	for _, d := range ds {
		out = append(out, of(d))
	}
	return out
}

func appendSetAside(list []setAside, kind, key string, ms []*MarkupRef) []setAside {
	for _, m := range ms {
		if len(list) < maxLint {
			list = append(list, setAside{kind: kind, key: key, markup: m})
		}
	}
	return list
}

// validRecordID is recordIDRe without the regexp: 1–128 chars of
// [A-Za-z0-9._~:-]. It runs once per row per describe.
func validRecordID(s string) bool {
	return idchars.Of(s, 1, maxRecordID, recordIDExtra)
}

// maxRecordID and recordIDExtra spell a record id (recordIDRe): at most
// 128 bytes, ASCII letters, digits and these.
const (
	maxRecordID   = 128
	recordIDExtra = "._~:-"
)

// settled reads m's slots in key order: the current declaration of each,
// and apart, the keys under which two different declarations stand.
func settled[T any](m map[string]*slot[T]) (decls []T, conflicts []string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if sl := m[k]; sl.conflict() {
			conflicts = append(conflicts, k)
		} else {
			decls = append(decls, sl.current())
		}
	}
	return decls, conflicts
}
