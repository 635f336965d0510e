// Package jspattern reads a JSON Schema pattern as the ECMA-262 regular
// expression it is (with the u flag, as JSON Schema recommends), within the
// subset every Pling host evaluates alike.
//
// The module hands a pattern that Check accepts to the host's own RegExp
// (a browser's or Node's); native Go and the wazero host evaluate
// Regexp2's rewrite of it with github.com/dlclark/regexp2, in which every
// construct whose meaning differs between .NET and ECMAScript (., ^, $,
// \b, \d, \s, \w, classes, backreferences) is spelled out. Check refuses,
// on every host, what that rewrite could not give the same answer for:
// named groups, property escapes (\p{…}), a backreference to a group that
// is repeated, inside a lookaround or not yet closed, a backreference
// inside a lookbehind, and a repetition bound over maxBound.
package jspattern

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxBound is the largest {n,m} a pattern may carry: ECMAScript allows up
// to 2^53-1, regexp2 an int32, and no form field needs more.
const maxBound = 1000

// Check reports whether p is a pattern Pling accepts: valid ECMA-262 with
// the u flag and inside the subset every host evaluates alike. Its error
// says what is wrong for the page's author.
func Check(p string) error {
	_, err := parse(p)
	return err
}

// ForRegExp returns the source to give the host's RegExp, with the u flag,
// for a pattern Check accepts. V8 tries a match at every UTF-16 position,
// between the two halves of a surrogate pair too, where an assertion such
// as \B holds that no code point boundary offers (/\B/u matches "_😀A" at
// index 2); ECMAScript, and regexp2, try code point boundaries only. The
// prefix, which consumes whole code points, starts the pattern only there.
func ForRegExp(p string) string { return "^[^]*?(?:" + p + ")" }

type group struct {
	closed   bool // its ")" came before the current position
	repeated bool // it is inside a quantified atom
	look     bool // it is inside a lookaround
}

type backref struct {
	n      int
	closed bool // group n had closed where the backreference stands
	behind bool // the backreference is inside a lookbehind
}

type parser struct {
	src    []rune
	i      int
	out    strings.Builder
	groups []group
	refs   []backref
	look   int // lookarounds open
	behind int // lookbehinds open
}

func parse(p string) (string, error) {
	if !utf8.ValidString(p) {
		return "", errors.New("is not valid UTF-8")
	}
	ps := &parser{src: []rune(p)}
	// Capture groups are counted first: ECMAScript lets a backreference
	// name a group that opens later, and \N is only a backreference when
	// the pattern has N groups.
	ngroups := countGroups(ps.src)
	ps.groups = make([]group, 0, ngroups)
	if err := ps.disjunction(); err != nil {
		return "", err
	}
	if ps.i < len(ps.src) {
		return "", errors.New("has an unmatched )")
	}
	for _, r := range ps.refs {
		if r.n > len(ps.groups) {
			return "", errors.New("refers to group " + strconv.Itoa(r.n) + ", which does not exist")
		}
		g := ps.groups[r.n-1]
		if !r.closed || g.repeated || g.look || r.behind {
			return "", errors.New("has a backreference Pling does not support (to a group that is repeated, in a lookaround or not yet closed, or inside a lookbehind)")
		}
	}
	return ps.out.String(), nil
}

// countGroups counts the capturing groups: "(" not followed by "?",
// outside classes and escapes. Named groups are refused later anyway.
func countGroups(src []rune) int {
	n, inClass := 0, false
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(' && (i+1 >= len(src) || src[i+1] != '?'):
			n++
		}
	}
	return n
}

// w writes to the rewrite, which only a build that evaluates patterns
// itself makes (emitRegexp2); in the module it compiles to nothing.
func (ps *parser) w(s string) {
	if emitRegexp2 {
		ps.out.WriteString(s)
	}
}

func (ps *parser) set(set []rng) {
	if emitRegexp2 {
		writeSet(&ps.out, set)
	}
}

func (ps *parser) peek() (rune, bool) {
	if ps.i < len(ps.src) {
		return ps.src[ps.i], true
	}
	return 0, false
}

func (ps *parser) eat(s string) bool {
	r := []rune(s)
	if ps.i+len(r) > len(ps.src) {
		return false
	}
	for k, c := range r {
		if ps.src[ps.i+k] != c {
			return false
		}
	}
	ps.i += len(r)
	return true
}

func (ps *parser) disjunction() error {
	ps.w("(?:")
	for {
		if err := ps.alternative(); err != nil {
			return err
		}
		if !ps.eat("|") {
			break
		}
		ps.w("|")
	}
	ps.w(")")
	return nil
}

func (ps *parser) alternative() error {
	for {
		c, ok := ps.peek()
		if !ok || c == '|' || c == ')' {
			return nil
		}
		if err := ps.term(); err != nil {
			return err
		}
	}
}

const wordClass = `[0-9A-Z_a-z]`

func (ps *parser) term() error {
	start := ps.out.Len()
	firstGroup := len(ps.groups)
	quantifiable := true
	c, _ := ps.peek()
	switch c {
	case '^':
		ps.i++
		ps.w(`\A`)
		quantifiable = false
	case '$':
		ps.i++
		ps.w(`\z`)
		quantifiable = false
	case '(':
		ps.i++
		lookaround, behind := false, false
		switch {
		case ps.eat("?:"):
			ps.w("(?:")
		case ps.eat("?="):
			ps.w("(?=")
			lookaround = true
		case ps.eat("?!"):
			ps.w("(?!")
			lookaround = true
		case ps.eat("?<="):
			ps.w("(?<=")
			lookaround, behind = true, true
		case ps.eat("?<!"):
			ps.w("(?<!")
			lookaround, behind = true, true
		case ps.eat("?<"):
			return errors.New("has a named group, which Pling does not support")
		case ps.eat("?"):
			return errors.New("has an invalid group")
		default:
			ps.groups = append(ps.groups, group{look: ps.look > 0})
			ps.w("(")
		}
		// ECMAScript with the u flag does not repeat a lookaround.
		quantifiable = !lookaround
		if lookaround {
			ps.look++
		}
		if behind {
			ps.behind++
		}
		capture := len(ps.groups) > firstGroup
		if err := ps.disjunction(); err != nil {
			return err
		}
		if !ps.eat(")") {
			return errors.New("has an unterminated group")
		}
		if lookaround {
			ps.look--
		}
		if behind {
			ps.behind--
		}
		if capture {
			ps.groups[firstGroup].closed = true
		}
		ps.w(")")
	case '.':
		ps.i++
		if emitRegexp2 {
			ps.set(negate([]rng{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}))
		}
	case '[':
		ps.i++
		set, err := ps.class()
		if err != nil {
			return err
		}
		ps.set(set)
	case '\\':
		ps.i++
		d, ok := ps.peek()
		if !ok {
			return errors.New("ends with \\")
		}
		switch d {
		case 'b':
			ps.i++
			ps.w(`(?:(?<=` + wordClass + `)(?!` + wordClass + `)|(?<!` + wordClass + `)(?=` + wordClass + `))`)
			quantifiable = false
		case 'B':
			ps.i++
			ps.w(`(?:(?<=` + wordClass + `)(?=` + wordClass + `)|(?<!` + wordClass + `)(?!` + wordClass + `))`)
			quantifiable = false
		case 'k':
			return errors.New("has \\k, which needs a named group (Pling does not support them)")
		default:
			if d >= '1' && d <= '9' {
				n := 0
				for ps.i < len(ps.src) && ps.src[ps.i] >= '0' && ps.src[ps.i] <= '9' {
					n = n*10 + int(ps.src[ps.i]-'0')
					if n > 1<<20 {
						return errors.New("refers to a group that does not exist")
					}
					ps.i++
				}
				ref := backref{n: n, behind: ps.behind > 0}
				if n <= len(ps.groups) {
					ref.closed = ps.groups[n-1].closed
				}
				ps.refs = append(ps.refs, ref)
				// ECMAScript: a group that did not take part matches empty.
				ps.w("(?(" + strconv.Itoa(n) + `)\k<` + strconv.Itoa(n) + ">|)")
				break
			}
			set, _, err := ps.escape(false)
			if err != nil {
				return err
			}
			ps.set(set)
		}
	case '*', '+', '?', '{':
		return errors.New("has nothing to repeat")
	case ']', '}':
		return errors.New("has a lone " + string(c))
	default:
		ps.i++
		ps.set([]rng{{c, c}})
	}
	// Quantifier.
	q, ok, err := ps.quantifier()
	if err != nil || !ok {
		return err
	}
	if !quantifiable {
		return errors.New("has nothing to repeat")
	}
	for k := firstGroup; k < len(ps.groups); k++ {
		ps.groups[k].repeated = true
	}
	if !emitRegexp2 {
		return nil
	}
	// The atom is wrapped so the quantifier applies to all of it.
	atom := ps.out.String()[start:]
	rest := ps.out.String()[:start]
	ps.out.Reset()
	ps.w(rest)
	ps.w("(?:" + atom + ")" + q)
	return nil
}

// quantifier reads a quantifier after an atom, returned in regexp2's
// spelling (which for these forms is ECMAScript's).
func (ps *parser) quantifier() (string, bool, error) {
	c, ok := ps.peek()
	if !ok {
		return "", false, nil
	}
	var q string
	switch c {
	case '*', '+', '?':
		ps.i++
		q = string(c)
	case '{':
		ps.i++
		lo, ok := ps.number()
		if !ok {
			return "", false, errors.New("has an incomplete quantifier")
		}
		hi := lo
		open := false
		if ps.eat(",") {
			if d, _ := ps.peek(); d == '}' {
				open = true
			} else if hi, ok = ps.number(); !ok {
				return "", false, errors.New("has an incomplete quantifier")
			}
		}
		if !ps.eat("}") {
			return "", false, errors.New("has an incomplete quantifier")
		}
		if lo > maxBound || hi > maxBound {
			return "", false, errors.New("repeats more than " + strconv.Itoa(maxBound) + " times, which Pling does not support")
		}
		if !open && hi < lo {
			return "", false, errors.New("has numbers out of order in a {} quantifier")
		}
		switch {
		case open:
			q = "{" + strconv.Itoa(lo) + ",}"
		default:
			q = "{" + strconv.Itoa(lo) + "," + strconv.Itoa(hi) + "}"
		}
	default:
		return "", false, nil
	}
	if ps.eat("?") {
		q += "?"
	}
	if d, ok := ps.peek(); ok && (d == '*' || d == '+' || d == '?' || d == '{') {
		return "", false, errors.New("has nothing to repeat")
	}
	return q, true, nil
}

// number reads decimal digits; a value over maxBound is kept as
// maxBound+1 so the caller refuses it.
func (ps *parser) number() (int, bool) {
	n, any := 0, false
	for ps.i < len(ps.src) && ps.src[ps.i] >= '0' && ps.src[ps.i] <= '9' {
		if n <= maxBound {
			n = n*10 + int(ps.src[ps.i]-'0')
		}
		ps.i++
		any = true
	}
	return min(n, maxBound+1), any
}

// class reads a character class after its "[" up to and including its
// "]", as the set of code points it matches.
func (ps *parser) class() ([]rng, error) {
	neg := ps.eat("^")
	var set []rng
	for {
		c, ok := ps.peek()
		if !ok {
			return nil, errors.New("has an unterminated character class")
		}
		if c == ']' {
			ps.i++
			break
		}
		a, single, err := ps.classAtom()
		if err != nil {
			return nil, err
		}
		if ps.i+1 < len(ps.src) && ps.src[ps.i] == '-' && ps.src[ps.i+1] != ']' {
			ps.i++
			b, singleB, err := ps.classAtom()
			if err != nil {
				return nil, err
			}
			if !single || !singleB {
				return nil, errors.New("has a class escape in a character range")
			}
			if a[0].lo > b[0].lo {
				return nil, errors.New("has a character range out of order")
			}
			set = append(set, rng{a[0].lo, b[0].lo})
			continue
		}
		set = append(set, a...)
	}
	if !emitRegexp2 {
		return nil, nil
	}
	set = normalize(set)
	if neg {
		set = negate(set)
	}
	return set, nil
}

// classAtom reads one atom of a class: a code point (single) or a class
// escape such as \d.
func (ps *parser) classAtom() ([]rng, bool, error) {
	c := ps.src[ps.i]
	ps.i++
	if c != '\\' {
		return []rng{{c, c}}, true, nil
	}
	d, ok := ps.peek()
	if !ok {
		return nil, false, errors.New("ends with \\")
	}
	switch d {
	case 'b':
		ps.i++
		return []rng{{'\b', '\b'}}, true, nil
	case '-':
		ps.i++
		return []rng{{'-', '-'}}, true, nil
	}
	set, classEscape, err := ps.escape(true)
	return set, !classEscape, err
}

var (
	digit = []rng{{'0', '9'}}
	word  = []rng{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	space = []rng{{'\t', '\r'}, {' ', ' '}, {0xa0, 0xa0}, {0x1680, 0x1680}, {0x2000, 0x200a},
		{0x2028, 0x2029}, {0x202f, 0x202f}, {0x205f, 0x205f}, {0x3000, 0x3000}, {0xfeff, 0xfeff}}
)

// classSet is the set the class escape \c matches: \d, \w or \s, or the
// negation of one (\D, \W, \S).
func classSet(c rune) []rng {
	set := space
	switch c | 0x20 {
	case 'd':
		set = digit
	case 'w':
		set = word
	}
	if c < 'a' {
		return negate(set)
	}
	return set
}

// escape reads what follows a "\" (other than b, B, k and a
// backreference) as the set it matches, and whether it is a class escape
// (\d, \s, \w and their negations), which cannot end a range.
func (ps *parser) escape(inClass bool) ([]rng, bool, error) {
	if c := ps.src[ps.i]; strings.ContainsRune("dDwWsS", c) {
		ps.i++
		if !emitRegexp2 {
			return nil, true, nil // only the rewrite needs the set
		}
		return classSet(c), true, nil
	}
	s, err := ps.charEscape(inClass)
	return s, false, err
}

// charEscape reads a character escape (\n, \x41, \u{1F600}, \/ …) as
// the one code point it stands for.
func (ps *parser) charEscape(inClass bool) ([]rng, error) {
	d := ps.src[ps.i]
	ps.i++
	one := func(r rune) ([]rng, error) { return []rng{{r, r}}, nil }
	switch d {
	case 'f':
		return one('\f')
	case 'n':
		return one('\n')
	case 'r':
		return one('\r')
	case 't':
		return one('\t')
	case 'v':
		return one('\v')
	case 'c':
		if l, ok := ps.peek(); ok && (l >= 'a' && l <= 'z' || l >= 'A' && l <= 'Z') {
			ps.i++
			return one(l % 32)
		}
		return nil, errors.New("has an invalid \\c escape")
	case '0':
		if n, ok := ps.peek(); ok && n >= '0' && n <= '9' {
			return nil, errors.New("has an invalid escape \\0 followed by a digit")
		}
		return one(0)
	case 'x':
		v, ok := ps.hex(2)
		if !ok {
			return nil, errors.New("has an invalid \\x escape")
		}
		return one(v)
	case 'u':
		v, err := ps.unicodeEscape()
		if err != nil {
			return nil, err
		}
		return one(v)
	case 'p', 'P':
		return nil, errors.New("has a property escape \\" + string(d) + ", which Pling does not support")
	}
	if strings.ContainsRune(`^$\.*+?()[]{}|/`, d) {
		return one(d)
	}
	if d >= '1' && d <= '9' && inClass {
		return nil, errors.New("has a backreference in a character class")
	}
	return nil, errors.New("has an invalid escape \\" + string(d))
}

func (ps *parser) hex(n int) (rune, bool) {
	if ps.i+n > len(ps.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(ps.src[ps.i:ps.i+n]), 16, 32)
	if err != nil || strings.ContainsAny(string(ps.src[ps.i:ps.i+n]), "+-_") {
		return 0, false
	}
	ps.i += n
	return rune(v), true
}

// unicodeEscape reads \u{…}, \uXXXX or a surrogate pair \uXXXX\uXXXX
// after the "\u".
func (ps *parser) unicodeEscape() (rune, error) {
	bad := errors.New("has an invalid \\u escape")
	if ps.eat("{") {
		start := ps.i
		for ps.i < len(ps.src) && ps.src[ps.i] != '}' {
			ps.i++
		}
		digits := string(ps.src[start:ps.i])
		if !ps.eat("}") || digits == "" || strings.ContainsAny(digits, "+-_") {
			return 0, bad
		}
		v, err := strconv.ParseUint(digits, 16, 32)
		if err != nil || v > 0x10ffff {
			return 0, bad
		}
		return rune(v), nil
	}
	v, ok := ps.hex(4)
	if !ok {
		return 0, bad
	}
	if v >= 0xd800 && v <= 0xdbff && ps.i+6 <= len(ps.src) && ps.src[ps.i] == '\\' && ps.src[ps.i+1] == 'u' {
		save := ps.i
		ps.i += 2
		if lo, ok := ps.hex(4); ok && lo >= 0xdc00 && lo <= 0xdfff {
			return (v-0xd800)<<10 + (lo - 0xdc00) + 0x10000, nil
		}
		ps.i = save
	}
	return v, nil
}

// rng is an inclusive range of code points.
type rng struct{ lo, hi rune }

// normalize sorts and merges ranges.
func normalize(set []rng) []rng {
	// An insertion sort: a class has few ranges, and a generic sort would
	// add its own instance to every binary.
	s := append([]rng(nil), set...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].lo < s[j-1].lo; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	var out []rng
	for _, r := range s {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// negate returns every code point not in set.
func negate(set []rng) []rng {
	var out []rng
	next := rune(0)
	for _, r := range normalize(set) {
		if r.lo > next {
			out = append(out, rng{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, rng{next, utf8.MaxRune})
	}
	return out
}

// writeSet writes a set of code points as a regexp2 class; an empty set
// is a class that matches nothing.
func writeSet(b *strings.Builder, set []rng) {
	if len(set) == 0 {
		b.WriteString("(?!)")
		return
	}
	b.WriteByte('[')
	for _, r := range set {
		writeRune(b, r.lo)
		if r.hi != r.lo {
			b.WriteByte('-')
			writeRune(b, r.hi)
		}
	}
	b.WriteByte(']')
}

func writeRune(b *strings.Builder, r rune) {
	switch {
	case r >= '0' && r <= '9', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		b.WriteRune(r)
	case r < 0x10000:
		h := strconv.FormatUint(uint64(r), 16)
		b.WriteString(`\u` + strings.Repeat("0", 4-len(h)) + h)
	default:
		b.WriteRune(r)
	}
}
