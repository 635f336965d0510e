package runtime

import (
	"fmt"
	"github.com/pling-go/pling/internal/pagebridge"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// maxPlaces bounds markupPlaces, and the refused declarations the
// registry keeps for it.
const maxPlaces = 500

// markupPlaces lists the declarations read from the page's markup, those
// refused when declared included (each place once, until maxPlaces), with
// where each sits and whether its place looks like the site's users
// wrote it. A refused declaration stays listed after its element left
// the page: nothing tells the runtime it left.
func (rt *Runtime) markupPlaces() []pagebridge.MarkupPlace {
	r := rt.reg
	r.mu.RLock()
	var out []pagebridge.MarkupPlace
	add := func(kind, key string, m *MarkupRef, status string) {
		if m != nil && len(out) < maxPlaces {
			out = append(out, pagebridge.MarkupPlace{Kind: kind, Key: key, Path: m.Path, Status: status, UserContent: m.UserContent})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.actions)) {
		placesOf(r.actions[id], "action", id, func(a Action) *MarkupRef { return a.Markup }, add)
	}
	for _, id := range slices.Sorted(maps.Keys(r.folds)) {
		f := r.folds[id]
		script := f.hasScript()
		conflict := f.conflict()
		each := func(s *slot[Action]) {
			for _, in := range s.insts {
				if in.markup {
					st := pagebridge.PlaceDeclared
					if script {
						st = pagebridge.PlaceSetAside
					} else if conflict {
						st = pagebridge.PlaceConflict
					}
					add("action", id, in.decl.Markup, st)
				}
			}
		}
		if f.template != nil {
			each(f.template)
		}
		for _, k := range slices.Sorted(maps.Keys(f.rows)) {
			each(f.rows[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.states)) {
		placesOf(r.states[k], "state", k, func(s State) *MarkupRef { return s.Markup }, add)
	}
	for _, k := range slices.Sorted(maps.Keys(r.guides)) {
		placesOf(r.guides[k], "guide", k, func(g Guide) *MarkupRef { return g.Markup }, add)
	}
	for _, k := range slices.Sorted(maps.Keys(r.regions)) {
		placesOf(r.regions[k], "region", k, func(g Region) *MarkupRef { return g.Markup }, add)
	}
	for _, p := range r.refused {
		if len(out) < maxPlaces {
			out = append(out, p)
		}
	}
	r.mu.RUnlock()
	likelyUserContent(out)
	return out
}

func placesOf[T any](s *slot[T], kind, key string, of func(T) *MarkupRef, add func(kind, key string, m *MarkupRef, status string)) {
	script, conflict := s.hasScript(), s.conflict()
	for _, in := range s.insts {
		if !in.markup {
			continue
		}
		st := pagebridge.PlaceDeclared
		if script {
			st = pagebridge.PlaceSetAside
		} else if conflict {
			st = pagebridge.PlaceConflict
		}
		add(kind, key, of(in.decl), st)
	}
}

// noteRefused keeps a markup declaration refused when declared, for
// markupPlaces: each place once, at most maxPlaces.
func (rt *Runtime) noteRefused(kind, key string, m *MarkupRef) {
	if m == nil {
		return
	}
	r := rt.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.refused {
		if p.Kind == kind && p.Key == key && p.Path == m.Path {
			return
		}
	}
	if len(r.refused) < maxPlaces {
		r.refused = append(r.refused, pagebridge.MarkupPlace{Kind: kind, Key: key, Path: m.Path, Status: pagebridge.PlaceRefused, UserContent: m.UserContent})
	}
}

// userWords are the words of an id that names where a site shows what
// its users wrote. An id is matched word by word (split at anything but
// a letter or digit, and at a lower-to-upper case change), so "reviews"
// and "comment-list" match and "preview" does not.
var userWords = map[string]bool{
	"comment": true, "comments": true, "review": true, "reviews": true,
	"reply": true, "replies": true, "testimonial": true, "testimonials": true,
	"guestbook": true, "ugc": true, "usercontent": true,
}

// segment is one step of a MarkupRef.Path as pling.js writes it: TAG,
// TAG:nth-of-type(N) or TAG#ID (where the path starts).
type segment struct {
	raw, tag, id string
	n            int // its place among its parent's children of its tag, from 1
}

func parsePath(p string) []segment {
	var out []segment
	for _, raw := range strings.Split(p, " > ") {
		s := segment{raw: raw, tag: raw, n: 1}
		if tag, id, ok := strings.Cut(raw, "#"); ok {
			s.tag, s.id = tag, id
		} else if tag, rest, ok := strings.Cut(raw, ":nth-of-type("); ok {
			if n, err := strconv.Atoi(strings.TrimSuffix(rest, ")")); err == nil && n > 1 && strings.HasSuffix(rest, ")") {
				s.tag, s.n = tag, n
			}
		}
		out = append(out, s)
	}
	return out
}

func join(ss []segment) string {
	var b strings.Builder
	for i, s := range ss {
		if i > 0 {
			b.WriteString(" > ")
		}
		b.WriteString(s.raw)
	}
	return b.String()
}

// runOf names the run of same-tagged siblings ss[j] is one of: the path
// to its parent and its tag.
func runOf(ss []segment, j int) string {
	if j == 0 {
		return ss[0].tag
	}
	return join(ss[:j]) + " > " + ss[j].tag
}

// userWord is the word of id in userWords, or "".
func userWord(id string) string {
	var words []string
	start := 0
	rs := []rune(id)
	for i := 0; i <= len(rs); i++ {
		split := i == len(rs) || !isAlnum(rs[i]) || i > start && isLower(rs[i-1]) && isUpper(rs[i])
		if !split {
			continue
		}
		if i > start {
			words = append(words, strings.ToLower(string(rs[start:i])))
		}
		start = i
		if i < len(rs) && !isAlnum(rs[i]) {
			start = i + 1
		}
	}
	for i, w := range words {
		if userWords[w] {
			return w
		}
		if i > 0 && words[i-1] == "user" && w == "content" {
			return "user content"
		}
	}
	return ""
}

func isLower(r rune) bool { return 'a' <= r && r <= 'z' }
func isUpper(r rune) bool { return 'A' <= r && r <= 'Z' }
func isAlnum(r rune) bool { return isLower(r) || isUpper(r) || '0' <= r && r <= '9' }

// likelyUserContent sets Suspect on each place that looks like content
// the site's users wrote, judged from the paths alone (RATIONALE "Why
// does pling check guess where users' content is?"). A place already
// inside the site's mark is not guessed at. Within a path, each ancestor
// of the element that the path names by its tag is a row candidate; the
// place is suspect when one of them is
//
//   - a <blockquote>: quoted words are someone else's;
//   - an <li> or <article> inside an element whose id names users'
//     writing (#reviews, #comment-list; userWords): an item of such a
//     list, unless it is one row of a template (below);
//   - an <article>, or any element inside such an id, that is one row of
//     a run of same-tagged siblings (the run counts at least as many
//     rows as the highest nth-of-type any place names in it) and not
//     every row of the run carries a declaration of the same kind and
//     key at the same place in the row. A site's row template repeats
//     its declarations in every row; a user's declaration is in the
//     rows that user wrote.
func likelyUserContent(places []pagebridge.MarkupPlace) {
	type sig struct{ kind, key, rel string }
	paths := make([][]segment, len(places))
	rows := map[string]int{}                      // run → the most rows it is known to have
	carriers := map[string]map[sig]map[int]bool{} // run → declaration → the rows it is in
	for i, p := range places {
		ss := parsePath(p.Path)
		paths[i] = ss
		for j := 0; j < len(ss)-1; j++ {
			if ss[j].id != "" {
				continue
			}
			run := runOf(ss, j)
			rows[run] = max(rows[run], ss[j].n)
			s := sig{p.Kind, p.Key, join(ss[j+1:])}
			if carriers[run] == nil {
				carriers[run] = map[sig]map[int]bool{}
			}
			if carriers[run][s] == nil {
				carriers[run][s] = map[int]bool{}
			}
			carriers[run][s][ss[j].n] = true
		}
	}
	for i := range places {
		p := &places[i]
		if p.UserContent || p.Path == "" {
			continue
		}
		ss := paths[i]
		word := ""
		if ss[0].id != "" {
			word = userWord(ss[0].id)
		}
		for j := 0; j < len(ss)-1 && p.Suspect == ""; j++ {
			r := ss[j]
			if r.id != "" {
				continue
			}
			run := runOf(ss, j)
			n := rows[run]
			in := len(carriers[run][sig{p.Kind, p.Key, join(ss[j+1:])}])
			switch {
			case r.tag == "blockquote":
				p.Suspect = "it sits in a quotation (<blockquote>)"
			case word != "" && (r.tag == "li" || r.tag == "article") && (n < 2 || in < n):
				p.Suspect = fmt.Sprintf("it sits in an item (<%s>) of #%s", cutBytes(r.tag, 40), cutBytes(ss[0].id, 100))
			case (word != "" || r.tag == "article") && n >= 2 && in < n:
				p.Suspect = fmt.Sprintf("it is in %d of at least %d sibling rows %s, where a site's row template would repeat it in every row", in, n, cutBytes(run, 200))
			}
		}
	}
}
