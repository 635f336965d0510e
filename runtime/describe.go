package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/schema"
)

// Limits bound a description (docs/protocol.md §3.4: everything is bounded and says
// when it was cut).
type Limits struct {
	// MaxCapabilities is the most capabilities listed.
	MaxCapabilities int
	// MaxBytes bounds the encoded description.
	MaxBytes int
	// MaxRecordIDs is the default number of record ids listed per fold
	// and per record kind (describe's options.maxRecords overrides it).
	MaxRecordIDs int
	// MaxStates, MaxFeedback, MaxUnavailable, MaxGuides and MaxRegions bound
	// the lists of the context.
	MaxStates      int
	MaxFeedback    int
	MaxUnavailable int
	MaxGuides      int
	MaxRegions     int
	// MaxStateBytes bounds one state value's encoding; a longer value is
	// replaced by a truncation marker.
	MaxStateBytes int
	// MaxTextLen bounds labels, messages, reasons and page text, in
	// characters.
	MaxTextLen int
}

// DefaultLimits are the bounds used unless WithLimits says otherwise.
func DefaultLimits() Limits {
	return Limits{
		MaxCapabilities: 1000,
		MaxBytes:        512 << 10,
		MaxRecordIDs:    50,
		MaxStates:       100,
		MaxFeedback:     20,
		MaxUnavailable:  100,
		MaxGuides:       100,
		MaxRegions:      50,
		MaxStateBytes:   1024,
		MaxTextLen:      200,
	}
}

// describeCache keeps the snapshot of the current generation and the last
// capabilities encoding, so that a repeated describe of an unchanged
// registry for the same exposure reuses its bytes and revision.
type describeCache struct {
	snap atomic.Pointer[snapshot]
	mu   sync.Mutex
	last map[string]*capsEncoding // by exposure key
	rev  map[string]*revEntry     // by exposure key
}

type capsEncoding struct {
	gen        uint64
	maxRecords int
	listed     []*capEntry
	foldMeta   [][]byte
	bytes      []byte
	omitted    int
	reasons    []string
}

// exposure decides which capability ids a describe lists and an invoke may
// reach: the site allowlist ∩ the session scope (docs/protocol.md §3.6).
type exposure interface {
	allows(id string) bool
	// key identifies the exposure for caching; equal keys expose equally.
	key() string
}

// regionView is the evaluated state of the regions for one request.
type regionView struct {
	active map[string]bool
	modal  map[string]bool // active modal regions
	// scriptModal: an active modal region is the site script's; a modal
	// read from markup hides only markup actions (docs/markup.md).
	scriptModal bool
	list        []schema.Region
}

func (rt *Runtime) regions(ctx context.Context, s *snapshot) regionView {
	if len(s.regions) == 0 {
		return regionView{} // nil maps read as empty
	}
	v := regionView{active: map[string]bool{}, modal: map[string]bool{}}
	for _, r := range s.regions {
		act := r.Active == nil || r.Active(ctx)
		v.active[r.ID] = act
		if act && r.Modal {
			v.modal[r.ID] = true
			v.scriptModal = v.scriptModal || r.Markup == nil
		}
		v.list = append(v.list, schema.Region{ID: r.ID, Title: r.Title, Active: act, Modal: r.Modal})
	}
	return v
}

// blocked says why a region keeps an action from running: hidden by an open
// modal (the action is not described at all), or its region is inactive.
// Only a modal the site's script declared hides a script action (markup
// false).
func (v regionView) blocked(region string, markup bool) (hidden bool, reason string) {
	if len(v.modal) > 0 && !v.modal[region] && (markup || v.scriptModal) {
		return true, "A modal dialog is open"
	}
	if region != "" {
		if act, ok := v.active[region]; ok && !act {
			return false, "Its region is not active"
		}
	}
	return false, ""
}

// describe builds the SurfaceDescription, encoded.
func (rt *Runtime) describe(ctx context.Context, exp exposure, maxRecords int) ([]byte, error) {
	parts, err := rt.describeParts(ctx, exp, maxRecords)
	if err != nil {
		return nil, err
	}
	return bytes.Join(parts, nil), nil
}

// describeParts builds the SurfaceDescription as the pieces of its
// encoding, in order. The capabilities piece is the cached encoding
// itself: joined once into the response (resultBytes), a repeated describe
// copies it once and allocates no buffer it has to zero.
func (rt *Runtime) describeParts(ctx context.Context, exp exposure, maxRecords int) ([][]byte, error) {
	lim := rt.cfg.limits
	if maxRecords < 0 {
		maxRecords = lim.MaxRecordIDs
	}
	snap := rt.snapshot()
	regions := rt.regions(ctx, snap)
	records := newRowReader(snap, maxRecords)

	rowsAvailable := map[*capEntry]int{}
	listed, unavailable := rt.listing(ctx, snap, exp, regions, records, rowsAvailable)
	foldMeta := make([][]byte, len(listed))
	for i, c := range listed {
		if c.fold == nil {
			continue
		}
		rows, err := records.fold(ctx, c.fold)
		if err != nil {
			return nil, err
		}
		t := recordTemplate(c, rows, maxRecords)
		if n, ok := rowsAvailable[c]; ok {
			t.Available = &n
		}
		if foldMeta[i], err = wire.AppendRecordTemplate(nil, &t); err != nil {
			return nil, err
		}
	}
	for _, k := range snap.stateConflicts {
		unavailable = append(unavailable, schema.Unavailable{ID: k, Code: string(perr.DuplicateStateKey), Reason: "Two different states are declared under this key"})
	}
	for _, k := range snap.guideConflicts {
		unavailable = append(unavailable, schema.Unavailable{ID: k, Code: string(perr.DuplicateGuideTarget), Reason: "Two different guides are declared under this target"})
	}

	var reasons []string
	ctxJSON, ctxReasons, err := rt.describeContext(ctx, snap, regions, unavailable, records, maxRecords)
	if err != nil {
		return nil, err
	}
	reasons = append(reasons, ctxReasons...)
	budget := lim.MaxBytes - len(ctxJSON) - 200
	caps := rt.encodeCaps(snap.gen, exp.key(), maxRecords, listed, foldMeta, budget)
	reasons = append(reasons, caps.reasons...)
	revision := rt.revision(exp.key(), snap.gen, listed)

	parts := [][]byte{[]byte(`{"revision":"` + revision + `","capabilities":`), caps.bytes, []byte(`,"context":`), ctxJSON}
	if len(reasons) > 0 {
		t, err := schema.Encode(schema.Truncation{Reasons: reasons, OmittedCapabilities: caps.omitted})
		if err != nil {
			return nil, err
		}
		parts = append(parts, []byte(`,"truncated":`), t)
	}
	return append(parts, []byte{'}'}), nil
}

// listing returns the capabilities this exposure lists now, sorted by id,
// and the exposed ones that cannot run now with their reasons. Actions
// hidden by an open modal are in neither. With rows, it also counts, for
// each listed row action checked row by row, the rows it can run on
// (capAvailable). Records are read through records, so a request that
// also lists the rows reads each kind once.
func (rt *Runtime) listing(ctx context.Context, snap *snapshot, exp exposure, regions regionView, records *rowReader, rows map[*capEntry]int) ([]*capEntry, []schema.Unavailable) {
	lim := rt.cfg.limits
	var listed []*capEntry
	var unavailable []schema.Unavailable
	for _, c := range snap.exposedCaps(exp) {
		if c.conflict {
			unavailable = append(unavailable, schema.Unavailable{ID: c.id, Code: string(perr.DuplicateActionID),
				Reason: "Two different actions are declared under this id"})
			continue
		}
		hidden, reason := regions.blocked(c.action.Region, c.action.Markup != nil)
		if hidden {
			continue
		}
		if reason == "" && c.fold != nil {
			if _, err := records.read(ctx, c.fold.kind); err != nil {
				reason = fmt.Sprintf("Its records (%s) could not be read: the records reader failed", c.fold.kind)
			}
		}
		if reason == "" {
			av, n := rt.capAvailable(ctx, records, c, rows != nil)
			if n >= 0 && av.OK {
				rows[c] = n
			}
			if !av.OK {
				reason = av.Reason
				if reason == "" {
					reason = "Not available now"
				}
			}
		}
		if reason != "" {
			a := &c.action
			in := inputSchema(a.Params)
			unavailable = append(unavailable, schema.Unavailable{ID: c.id, Reason: cut(reason, lim.MaxTextLen), InputSchema: &in,
				Title: a.Title, Description: a.Description, Risk: riskOf(a), Approval: a.Approval, Handoff: a.Handoff != nil})
			continue
		}
		listed = append(listed, c)
	}
	return listed, unavailable
}

// revision identifies the listed set: it changes exactly when a capability
// enters or leaves the listing or its declaration changes. It is computed
// over the whole listing, before any truncation, and cached per exposure.
func (rt *Runtime) revision(key string, gen uint64, listed []*capEntry) string {
	d := rt.desc
	d.mu.Lock()
	last := d.rev[key]
	d.mu.Unlock()
	if last != nil && last.gen == gen && samePtrs(last.listed, listed) {
		return last.revision
	}
	h := sha256.New()
	for _, c := range listed {
		h.Write([]byte(c.id))
		h.Write([]byte{0})
		h.Write([]byte(c.shape))
		h.Write([]byte{0})
	}
	rev := "r" + hex.EncodeToString(h.Sum(nil))[:16]
	d.mu.Lock()
	if d.rev == nil || len(d.rev) > 64 {
		d.rev = map[string]*revEntry{}
	}
	d.rev[key] = &revEntry{gen: gen, listed: listed, revision: rev}
	d.mu.Unlock()
	return rev
}

type revEntry struct {
	gen      uint64
	listed   []*capEntry
	revision string
}

func samePtrs(a, b []*capEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// encodeCaps returns the capabilities array, reusing the last encoding for
// this exposure when nothing listed changed.
func (rt *Runtime) encodeCaps(gen uint64, key string, maxRecords int, listed []*capEntry, foldMeta [][]byte, budget int) *capsEncoding {
	d := rt.desc
	d.mu.Lock()
	last := d.last[key]
	d.mu.Unlock()
	if last != nil && last.gen == gen && last.maxRecords == maxRecords && sameListing(last, listed, foldMeta) {
		return last
	}
	lim := rt.cfg.limits
	enc := &capsEncoding{gen: gen, maxRecords: maxRecords, listed: listed, foldMeta: foldMeta}
	var b bytes.Buffer
	b.WriteByte('[')
	n := 0
	for i, c := range listed {
		size := len(c.static) + len(foldMeta[i]) + 16
		if n >= lim.MaxCapabilities || b.Len()+size > budget {
			enc.omitted = len(listed) - i
			if n >= lim.MaxCapabilities {
				enc.reasons = append(enc.reasons, "capabilities")
			} else {
				enc.reasons = append(enc.reasons, "bytes")
			}
			break
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(c.static)
		if foldMeta[i] != nil {
			b.WriteString(`,"record":`)
			b.Write(foldMeta[i])
		}
		b.WriteByte('}')
		n++
	}
	b.WriteByte(']')
	enc.bytes = b.Bytes()
	d.mu.Lock()
	if d.last == nil {
		d.last = map[string]*capsEncoding{}
	}
	if len(d.last) > 64 {
		clear(d.last) // many exposures: keep the cache bounded
	}
	d.last[key] = enc
	d.mu.Unlock()
	return enc
}

func sameListing(e *capsEncoding, listed []*capEntry, foldMeta [][]byte) bool {
	if len(e.listed) != len(listed) {
		return false
	}
	for i := range listed {
		if e.listed[i] != listed[i] || !bytes.Equal(e.foldMeta[i], foldMeta[i]) {
			return false
		}
	}
	return true
}

// revisionOf returns the revision a describe with this exposure would
// report now. Invoke uses it for the observation.
func (rt *Runtime) revisionOf(ctx context.Context, exp exposure) string {
	snap := rt.snapshot()
	key := exp.key()
	static := snap.listingStatic()
	if static {
		if v, ok := snap.revs.Load(key); ok {
			return v.(string)
		}
	}
	listed, _ := rt.listing(ctx, snap, exp, rt.regions(ctx, snap), newRowReader(snap, 0), nil)
	rev := rt.revision(key, snap.gen, listed)
	if static && snap.nrevs.Add(1) <= 64 { // many distinct scopes: stop caching
		snap.revs.Store(key, rev)
	}
	return rev
}

// listingStatic reports whether listing s asks no page code: no region has
// an Active check, no capability an Available one, and no row action a
// records reader. Its listing for an exposure is then the same for the
// whole generation, and so is its revision.
func (s *snapshot) listingStatic() bool {
	s.staticOnce.Do(func() {
		s.static = true
		for _, r := range s.regions {
			if r.Active != nil {
				s.static = false
			}
		}
		for _, c := range s.caps {
			// A row action is unavailable while its records cannot be
			// read, so its listing asks the page's records reader.
			if c.action.Available != nil || c.fold != nil && len(s.records[c.fold.kind]) > 0 {
				s.static = false
			}
		}
	})
	return s.static
}

// encodeStatic encodes everything of a capability but a fold's record
// metadata, without the closing brace.
func encodeStatic(c *capEntry) []byte {
	a := &c.action
	sc := schema.SurfaceCapability{
		ID: c.id, Title: a.Title, Description: a.Description, Risk: riskOf(a),
		InputSchema: inputSchema(a.Params), Approval: a.Approval, Handoff: a.Handoff != nil, Steps: len(a.Steps),
	}
	b, err := wire.AppendCapability(nil, &sc)
	if err != nil {
		// Declarations were checked to encode; keep the id at least.
		b, _ = schema.Encode(schema.SurfaceCapability{ID: c.id, Title: a.Title, Risk: riskOf(a), InputSchema: schema.JSONSchema{Type: "object"}})
	}
	return b[:len(b)-1]
}

func recordTemplate(c *capEntry, rows *foldedRows, maxRecords int) schema.RecordTemplate {
	rt := schema.RecordTemplate{
		Kind: c.fold.kind, Template: c.fold.base + ":{record}", Total: len(rows.all),
		Visible: []string{}, AllowOffscreen: c.action.Record != nil && c.action.Record.AllowOffscreen,
		Offscreen: rows.offscreen,
		Truncated: len(rows.inView) > maxRecords || rows.moreInView,
	}
	for _, r := range rows.inView[:min(len(rows.inView), maxRecords)] {
		rt.Visible = append(rt.Visible, r.ID)
	}
	return rt
}

func (rt *Runtime) describeContext(ctx context.Context, snap *snapshot, regions regionView, unavailable []schema.Unavailable,
	records *rowReader, maxRecords int) ([]byte, []string, error) {
	lim := rt.cfg.limits
	var reasons []string
	truncated := func(r string) { reasons = append(reasons, r) }
	var sc schema.SurfaceContext
	p, feedback := rt.readPage(ctx)
	if rt.cfg.unexposedFeedback {
		if f, ok := rt.unexposedFeedback(snap); ok {
			feedback = append([]schema.Feedback{f}, feedback...)
		}
	}
	p.URL, p.Title = cut(p.URL, 2048), cut(p.Title, lim.MaxTextLen)
	if p.URL != "" || p.Title != "" {
		sc.Page = &p
	}
	sc.Regions = regions.list
	if len(sc.Regions) > lim.MaxRegions {
		sc.Regions = sc.Regions[:lim.MaxRegions]
		truncated("regions")
	}
	var mistakes []schema.Feedback // declarations whose reader failed
	if len(snap.records) > 0 {
		sc.Records = map[string]schema.RecordSet{}
		for _, kind := range slices.Sorted(maps.Keys(snap.records)) {
			rs, err := records.read(ctx, kind)
			if err != nil {
				mistakes = append(mistakes, schema.Feedback{Level: "error", Message: recordsFailed(kind, err)})
				continue
			}
			set := schema.RecordSet{Total: len(rs), Items: []schema.RecordItem{}}
			// The rows in view first, then the offscreen ones, each in
			// the page's order, up to maxRecords.
		list:
			for _, offscreen := range []bool{false, true} {
				for _, r := range rs {
					if r.Offscreen != offscreen {
						continue
					}
					if len(set.Items) >= maxRecords {
						set.Truncated = true
						break list
					}
					set.Items = append(set.Items, schema.RecordItem{ID: r.ID, Label: cut(r.Label, lim.MaxTextLen), Offscreen: r.Offscreen})
				}
			}
			sc.Records[kind] = set
		}
	}
	if len(snap.states) > 0 {
		sc.States = map[string]any{}
		for i, s := range snap.states {
			if i >= lim.MaxStates {
				truncated("states")
				break
			}
			v, err := rt.boundedStateErr(ctx, s)
			if err != nil {
				mistakes = append(mistakes, schema.Feedback{Level: "error", Message: stateFailed(s.Key, err)})
			}
			sc.States[s.Key] = v
		}
	}
	// The page's own mistakes come first: the feedback list is bounded.
	feedback = append(mistakes, feedback...)
	for i, f := range feedback {
		if i >= lim.MaxFeedback {
			truncated("feedback")
			break
		}
		sc.Feedback = append(sc.Feedback, schema.Feedback{Level: f.Level, Message: cut(f.Message, lim.MaxTextLen)})
	}
	if len(unavailable) > lim.MaxUnavailable {
		unavailable = unavailable[:lim.MaxUnavailable]
		truncated("unavailable")
	}
	sc.Unavailable = unavailable
	for i, g := range snap.guides {
		if i >= lim.MaxGuides {
			truncated("guides")
			break
		}
		sc.Guides = append(sc.Guides, schema.Guide{Target: g.Target, Label: g.Label})
	}
	b, err := wire.AppendContext(nil, &sc)
	if err != nil {
		return nil, nil, err
	}
	// The context gets at most half of MaxBytes; the capabilities are what
	// an agent needs first. Cut the longest list by half until it fits.
	budget := lim.MaxBytes / 2
	cutBytes := false
	for len(b) > budget && shrinkContext(&sc) {
		cutBytes = true
		if b, err = wire.AppendContext(b[:0], &sc); err != nil {
			return nil, nil, err
		}
	}
	if cutBytes {
		truncated("bytes")
	}
	return b, reasons, nil
}

// shrinkContext drops the input schemas and descriptions of the
// unavailable capabilities first (an agent can do without them until they
// are available), then
// halves the longest list of the context (states count as a list of keys,
// record items across kinds); it reports false when nothing is left to
// cut.
func shrinkContext(sc *schema.SurfaceContext) bool {
	dropped := false
	for i := range sc.Unavailable {
		if u := &sc.Unavailable[i]; u.InputSchema != nil || u.Description != "" {
			u.InputSchema, u.Description, dropped = nil, "", true
		}
	}
	if dropped {
		return true
	}
	items := 0
	for _, rs := range sc.Records {
		items += len(rs.Items)
	}
	lens := []int{len(sc.States), items, len(sc.Unavailable), len(sc.Guides), len(sc.Feedback), len(sc.Regions), len(sc.Records)}
	longest := 0
	for i, n := range lens {
		if n > lens[longest] {
			longest = i
		}
	}
	if lens[longest] == 0 {
		if sc.Page != nil {
			sc.Page = nil
			return true
		}
		return false
	}
	half := lens[longest] / 2
	switch longest {
	case 0:
		keys := slices.Sorted(maps.Keys(sc.States))
		for _, k := range keys[half:] {
			delete(sc.States, k)
		}
	case 1:
		for k, rs := range sc.Records {
			rs.Items = rs.Items[:len(rs.Items)/2]
			rs.Truncated = true
			sc.Records[k] = rs
		}
	case 2:
		sc.Unavailable = sc.Unavailable[:half]
	case 3:
		sc.Guides = sc.Guides[:half]
	case 4:
		sc.Feedback = sc.Feedback[:half]
	case 5:
		sc.Regions = sc.Regions[:half]
	case 6:
		keys := slices.Sorted(maps.Keys(sc.Records))
		for _, k := range keys[half:] {
			delete(sc.Records, k)
		}
	}
	return true
}

// stateTruncated replaces a state value whose encoding is over the bound.
type stateTruncated struct {
	Truncated bool `json:"$truncated"`
	Bytes     int  `json:"bytes"`
}

// boundedState reads a state for describe or an observation: a read that
// fails is null, a value over MaxStateBytes is a marker.
func (rt *Runtime) boundedState(ctx context.Context, s State) any {
	v, _ := rt.boundedStateErr(ctx, s)
	return v
}

// boundedStateErr is boundedState, with the error of a read that failed.
// A value that does not encode (a Go reader's channel) is null, not a
// failure of the page's reader.
func (rt *Runtime) boundedStateErr(ctx context.Context, s State) (any, error) {
	v, err := readState(ctx, s)
	if err != nil {
		return nil, err
	}
	b, err := schema.AppendValue(nil, v)
	if err != nil {
		return nil, nil
	}
	if len(b) > rt.cfg.limits.MaxStateBytes {
		return stateTruncated{Truncated: true, Bytes: len(b)}, nil
	}
	return v, nil
}

func readState(ctx context.Context, s State) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, panicError(r)
		}
	}()
	return s.Read(ctx)
}

// cut bounds s to max characters, marking the cut with an ellipsis.
func cut(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
