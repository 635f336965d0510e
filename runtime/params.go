package runtime

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/pling-go/pling/internal/jsontree"
	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/internal/jspattern"
	"github.com/pling-go/pling/runtime/internal/canon"
	"github.com/pling-go/pling/schema"
)

func riskOf(a *Action) schema.Risk {
	if a.Risk == "" {
		return schema.RiskWrite
	}
	return a.Risk
}

// propertySchema renders a Param as the wire's PropertySchema.
func propertySchema(p *Param) *schema.PropertySchema {
	ps := &schema.PropertySchema{
		Type: p.Type, Description: p.Description, Enum: p.Enum,
		Minimum: p.Minimum, Maximum: p.Maximum, MinLength: p.MinLength, MaxLength: p.MaxLength,
		Pattern: p.Pattern, MinItems: p.MinItems, MaxItems: p.MaxItems, Default: p.Default,
	}
	if p.Items != nil {
		ps.Items = propertySchema(p.Items)
	}
	return ps
}

var falseVal = false

// inputSchema is the capability's JSONSchema: properties by name, the
// required names sorted, and no additional properties (unknown params are
// rejected). A folded capability's record is not in it (docs/protocol.md §4.1).
func inputSchema(params map[string]Param) schema.JSONSchema {
	js := schema.JSONSchema{Type: "object", AdditionalProperties: &falseVal}
	if len(params) > 0 {
		js.Properties = make(map[string]*schema.PropertySchema, len(params))
	}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		p := params[name]
		js.Properties[name] = propertySchema(&p)
		if p.Required {
			js.Required = append(js.Required, name)
		}
	}
	return js
}

// violation is one way an input fails its schema; Path is a JSON Pointer
// into the input.
type violation struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// maxViolations bounds the list reported in INVALID_PARAMS details.
const maxViolations = 20

// validateInput checks input against params: every violation, with its
// path, in path order. It returns the input with defaults applied.
func validateInput(params map[string]Param, input map[string]any) (map[string]any, []violation) {
	var vs []violation
	out := make(map[string]any, len(input)+len(params))
	for _, k := range slices.Sorted(maps.Keys(input)) {
		if _, ok := params[k]; !ok {
			vs = append(vs, violation{Path: pointer("", k), Reason: "unknown parameter"})
			continue
		}
		out[k] = input[k]
	}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		p := params[name]
		v, ok := input[name]
		if !ok {
			if p.Required {
				vs = append(vs, violation{Path: pointer("", name), Reason: "is required"})
			} else if p.Default != nil {
				out[name] = p.Default
			}
			continue
		}
		vs = checkValue(&p, v, pointer("", name), vs)
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Path < vs[j].Path })
	return out, vs
}

func pointer(base, key string) string {
	esc := make([]byte, 0, len(key))
	for i := 0; i < len(key); i++ {
		switch key[i] {
		case '~':
			esc = append(esc, '~', '0')
		case '/':
			esc = append(esc, '~', '1')
		default:
			esc = append(esc, key[i])
		}
	}
	return base + "/" + string(esc)
}

func checkValue(p *Param, v any, path string, vs []violation) []violation {
	add := func(reason string) { vs = append(vs, violation{Path: path, Reason: reason}) }
	switch p.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			add("must be a string")
			return vs
		}
		n := utf8.RuneCountInString(s)
		if p.MinLength != nil && n < *p.MinLength {
			add(fmt.Sprintf("must be at least %d characters", *p.MinLength))
		}
		if p.MaxLength != nil && n > *p.MaxLength {
			add(fmt.Sprintf("must be at most %d characters", *p.MaxLength))
		}
		if p.Pattern != "" {
			if match, err := compilePattern(p.Pattern); err != nil || !match(s) {
				add(patternReason(p))
			}
		}
	case "number", "integer":
		f, ok := jsontree.Number(v)
		if !ok {
			add("must be a number")
			return vs
		}
		if p.Type == "integer" && f != math.Trunc(f) {
			add("must be an integer")
			return vs
		}
		if p.Minimum != nil && f < *p.Minimum {
			add("must be at least " + formatNum(*p.Minimum))
		}
		if p.Maximum != nil && f > *p.Maximum {
			add("must be at most " + formatNum(*p.Maximum))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			add("must be a boolean")
			return vs
		}
	case "object":
		if _, ok := v.(map[string]any); !ok {
			add("must be an object")
			return vs
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			add("must be an array")
			return vs
		}
		if p.MinItems != nil && len(a) < *p.MinItems {
			add(fmt.Sprintf("must have at least %d items", *p.MinItems))
		}
		if p.MaxItems != nil && len(a) > *p.MaxItems {
			add(fmt.Sprintf("must have at most %d items", *p.MaxItems))
		}
		if p.Items != nil {
			for i, e := range a {
				if len(vs) >= maxViolations {
					break
				}
				vs = checkValue(p.Items, e, path+"/"+strconv.Itoa(i), vs)
			}
		}
	}
	if len(p.Enum) > 0 && !inEnum(p.Enum, v) {
		add("must be one of the allowed values")
	}
	return vs
}

// maxHintLen bounds, in characters, the pattern and the parameter's own
// words that a pattern violation quotes, so that a violation or two fit
// in an error's details (errors.MaxDetailsChars).
const maxHintLen = 100

// patternReason is a pattern violation's reason: the pattern, and the
// parameter's description (its hint; in markup the control's label and
// its title, the HTML convention for a pattern's hint). Both are the
// page's words, so each is quoted as a JSON string and cut, and the agent
// can tell them from the runtime's own.
func patternReason(p *Param) string {
	b := jsonvalue.AppendQuoted([]byte("does not match the pattern "), cut(p.Pattern, maxHintLen), false)
	if p.Description != "" {
		b = append(b, "; the parameter says "...)
		b = jsonvalue.AppendQuoted(b, cut(p.Description, maxHintLen), false)
	}
	return string(b)
}

func formatNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func inEnum(enum []any, v any) bool {
	b, err := canon.Marshal(v)
	if err != nil {
		return false
	}
	for _, e := range enum {
		eb, err := canon.Marshal(e)
		if err == nil && string(eb) == string(b) {
			return true
		}
	}
	return false
}

var patternCache sync.Map // string → func(string) bool

// compilePattern compiles a parameter pattern once: an ECMA-262 regular
// expression with the u flag, unanchored, as JSON Schema's pattern is,
// within the subset every host evaluates alike (internal/jspattern; in
// the module the host's own RegExp evaluates it).
func compilePattern(p string) (func(string) bool, error) {
	if m, ok := patternCache.Load(p); ok {
		return m.(func(string) bool), nil
	}
	m, err := jspattern.Compile(p)
	if err != nil {
		return nil, err
	}
	patternCache.Store(p, m)
	return m, nil
}
