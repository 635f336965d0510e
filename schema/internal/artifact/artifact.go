// Package artifact generates the schema artifacts of the Surface protocol,
// surface.schema.json (JSON Schema 2020-12) and pling.d.ts (TypeScript
// declarations), from the Go wire types of package schema (docs/protocol.md §3, §6).
//
// The Go types are the one source: the generator reflects over them, reads
// the constraints in their `pling` struct tags (documented in package
// schema) and takes each description from the Go doc comment. Nothing here is
// hand-written schema; what a tag cannot say is in the small special-case
// table of jsonschema.go, keyed by type name.
//
// The functions take the directory of package schema, whose non-test Go
// files hold the doc comments: "." both for schema/internal/gen run by
// go generate and for the drift test in package schema_test.
package artifact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
	"github.com/pling-go/pling/schema/pagespec"
)

// Roots are the types a walk starts from: the request and response envelopes,
// the two results a response's result may hold (named by a oneOf tag, so no
// field type reaches them), and the types of §3.6 that no envelope carries.
// Every struct type reachable from them is emitted; Types lists the set.
var Roots = []reflect.Type{
	reflect.TypeFor[schema.SurfaceDescribeRequest](),
	reflect.TypeFor[schema.SurfaceInvokeRequest](),
	reflect.TypeFor[schema.SurfaceResponse](),
	reflect.TypeFor[schema.SurfaceDescription](),
	reflect.TypeFor[schema.SurfaceInvokeResult](),
	reflect.TypeFor[schema.SurfaceSession](),
	reflect.TypeFor[schema.SurfaceAuditEvent](),
	reflect.TypeFor[schema.SurfaceApprovalBinding](),
	reflect.TypeFor[schema.SurfaceApprovalChallenge](),
	reflect.TypeFor[schema.SurfaceApprovalDecision](),
}

// The names of the definitions that are not Go struct types.
const (
	// RequestName is the union of the two request envelopes.
	RequestName = "SurfaceRequest"
	// SurfaceCodeName is the Surface namespace's codes (enum=@surface).
	SurfaceCodeName = "SurfaceErrorCode"
	// ActionCodeName is the Action namespace's codes (enum=@action).
	ActionCodeName = "ActionErrorCode"
	// MethodName is the union of the method names (TypeScript only: each
	// request fixes its method with const).
	MethodName = "SurfaceMethod"
)

// requestUnion lists the request envelopes of RequestName.
var requestUnion = []string{"SurfaceDescribeRequest", "SurfaceInvokeRequest"}

// Types returns the struct types the artifacts define, sorted by name: every
// struct type reachable from Roots through field types and ref/oneOf tags.
func Types() ([]reflect.Type, error) {
	m, err := build(&docs{}, Roots)
	if err != nil {
		return nil, err
	}
	out := make([]reflect.Type, 0, len(m.names))
	for _, n := range m.names {
		out = append(out, m.defs[n].typ)
	}
	return out, nil
}

// Schema returns surface.schema.json. dir is the directory of package schema.
func Schema(dir string) ([]byte, error) {
	return SchemaFor(dir, Roots)
}

// SchemaFor returns the JSON Schema of the types reachable from roots,
// which are the Roots of a copy of package schema in dir (the test that
// adds a field to a copy of the types).
func SchemaFor(dir string, roots []reflect.Type) ([]byte, error) {
	m, err := load(dir, roots)
	if err != nil {
		return nil, err
	}
	return m.jsonSchema()
}

// DTS returns pling.d.ts. dir is the directory of package schema.
func DTS(dir string) ([]byte, error) {
	b, err := DTSFor(dir, Roots)
	if err != nil {
		return nil, err
	}
	ns, err := PageDTSFor(filepath.Join(dir, "pagespec"), PageRoots)
	if err != nil {
		return nil, err
	}
	return append(b, ns...), nil
}

// PageDTSFor returns the TypeScript namespace PageNamespace of the page
// types reachable from roots (PageRoots, or those of a copy of package
// pagespec), as DTS appends it. dir is the package's directory.
func PageDTSFor(dir string, roots []reflect.Type) ([]byte, error) {
	pm, err := load(dir, roots)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	pm.tsNamespace(&buf, PageNamespace, pageDoc)
	return buf.Bytes(), nil
}

// PageRoots are the types of package schema/pagespec: what a page sends the
// module as JSON text. They are declared in pling.d.ts in the namespace
// PageNamespace, and their decoders are generated (PageDecoders).
var PageRoots = []reflect.Type{
	reflect.TypeFor[pagespec.Config](),
	reflect.TypeFor[pagespec.Records](),
	reflect.TypeFor[pagespec.State](),
	reflect.TypeFor[pagespec.Guide](),
	reflect.TypeFor[pagespec.Region](),
	reflect.TypeFor[pagespec.Action](),
	reflect.TypeFor[pagespec.Row](),
}

// PageNamespace is the TypeScript namespace of PageRoots.
const PageNamespace = "Page"

const pageDoc = "What a page sends the module as JSON text: the data members of pling.configure's argument (Page.Config) and of the action, state, guide, region and records declarations (Page.Row: a records reader's rows). Members are read by these names exactly; one spelled in another case is refused."

// PageDecoders returns the Go source of package page's decoders.
func PageDecoders() ([]byte, error) {
	return DecoderOf("pagespec", PageRoots)
}

// DTSFor returns the TypeScript declarations of the types reachable from
// roots, as SchemaFor.
func DTSFor(dir string, roots []reflect.Type) ([]byte, error) {
	m, err := load(dir, roots)
	if err != nil {
		return nil, err
	}
	return m.typeScript(), nil
}

func load(dir string, roots []reflect.Type) (*model, error) {
	d, err := readDocs(dir)
	if err != nil {
		return nil, err
	}
	return build(d, roots)
}

// kind is the JSON shape of a Go type.
type kind int

const (
	kAny kind = iota // no type constraint
	kString
	kBool
	kInteger
	kNumber
	kArray // elem
	kMap   // object with values elem
	kRef   // the definition ref
	kUnion // one of the definitions union
)

// shape is a field's JSON value: its kind and, at the top level of a field,
// the constraints of its pling tag.
type shape struct {
	kind  kind
	elem  *shape
	ref   string
	union []string

	constVal any
	enum     []any
	codes    string // SurfaceCodeName or ActionCodeName
	pattern  string
	min, max json.Number
	nullable bool
}

// field is one struct field as it appears on the wire.
type field struct {
	goName   string
	name     string // JSON member name
	doc      string
	required bool // pling:"required"
	optional bool // TypeScript "?": not required, and omitempty or a pointer
	shape    *shape
}

// publishedNames maps the Go name of a wire type to the name it has in
// surface.schema.json's $defs and in pling.d.ts where the two differ. Go
// spells the initialism JSON in capitals; TypeScript code imports the
// interface JsonSchema from pling.d.ts (pling-page.d.ts does) and schema
// consumers reference $defs/JsonSchema, so the published name stays as
// those readers know it.
var publishedNames = map[string]string{"JSONSchema": "JsonSchema"}

// PublishedName is the name the artifacts define the Go type goName as
// (the drift tests look definitions up by it).
func PublishedName(goName string) string {
	if n, ok := publishedNames[goName]; ok {
		return n
	}
	return goName
}

// publishedDoc is the doc comment of the Go type goName with its leading
// name, as Go doc comments start, replaced by the published one.
func publishedDoc(goName, doc string) string {
	if n := PublishedName(goName); n != goName {
		if rest, ok := strings.CutPrefix(doc, goName+" "); ok {
			return n + " " + rest
		}
	}
	return doc
}

// def is one struct type.
type def struct {
	typ    reflect.Type
	name   string
	doc    string
	fields []field
}

// model is the set of definitions the artifacts are written from.
type model struct {
	docs  *docs
	defs  map[string]*def
	names []string // sorted
	codes map[string][]string
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	schemaPkgPath  = reflect.TypeFor[schema.SurfaceResponse]().PkgPath()
)

// isRawJSON reports a struct type named RawJSON with the fields Set bool
// and Value any (pagespec.RawJSON, or the same type in a copy of the
// package): a member of any JSON value whose decoder keeps the value as
// parsed and tells an absent member from null.
func isRawJSON(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.Name() == "RawJSON" && t.NumField() == 2 &&
		t.Field(0).Name == "Set" && t.Field(0).Type == reflect.TypeFor[bool]() &&
		t.Field(1).Name == "Value" && t.Field(1).Type == reflect.TypeFor[any]()
}

// build walks roots (Roots, or those of a copy of package schema) and
// resolves every ref and oneOf name.
func build(d *docs, roots []reflect.Type) (*model, error) {
	if len(roots) == 0 {
		return nil, fmt.Errorf("artifact: no roots")
	}
	pkgPath := roots[0].PkgPath()
	m := &model{docs: d, defs: map[string]*def{}, codes: map[string][]string{
		SurfaceCodeName: canonicalCodes(perr.Surface),
		ActionCodeName:  canonicalCodes(perr.Action),
	}}
	var named []string // names from ref and oneOf tags
	var walk func(t reflect.Type) error
	walk = func(t reflect.Type) error {
		if t.Kind() != reflect.Struct || t.Name() == "" || t.PkgPath() != pkgPath {
			return fmt.Errorf("artifact: %v is not a named struct type of package schema", t)
		}
		name := PublishedName(t.Name())
		if _, seen := m.defs[name]; seen {
			return nil
		}
		df := &def{typ: t, name: name, doc: publishedDoc(t.Name(), d.types[t.Name()])}
		m.defs[df.name] = df
		var nested []reflect.Type
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			if sf.Anonymous {
				return fmt.Errorf("artifact: %s.%s: embedded fields are not supported", t.Name(), sf.Name)
			}
			f, structs, err := newField(sf, d.fields[t.Name()][sf.Name])
			if err != nil {
				return fmt.Errorf("artifact: %s.%s: %w", t.Name(), sf.Name, err)
			}
			if f == nil {
				continue
			}
			df.fields = append(df.fields, *f)
			nested = append(nested, structs...)
			named = append(named, f.shape.refs()...)
		}
		for _, n := range nested {
			if err := walk(n); err != nil {
				return err
			}
		}
		return nil
	}
	for _, t := range roots {
		if err := walk(t); err != nil {
			return nil, err
		}
	}
	if _, wire := m.defs["SurfaceResponse"]; wire {
		named = append(named, requestUnion...) // the wire's union of requests
	}
	for _, n := range named {
		if _, ok := m.defs[n]; !ok {
			return nil, fmt.Errorf("artifact: %s is named in a tag but reached from no root; add it to Roots", n)
		}
	}
	for n := range m.defs {
		// Record is TypeScript's built-in that maps are written with.
		if n == RequestName || n == SurfaceCodeName || n == ActionCodeName || n == MethodName || n == "Record" {
			return nil, fmt.Errorf("artifact: struct type %s clashes with a generated or built-in name", n)
		}
		m.names = append(m.names, n)
	}
	sort.Strings(m.names)
	return m, nil
}

// canonicalCodes is a namespace's codes in registry order, reserved codes
// left out: they are never produced (a reserved code travels as its parent).
func canonicalCodes(ns perr.Namespace) []string {
	var out []string
	for _, c := range perr.Codes(ns) {
		if e, ok := perr.Lookup(c); ok && e.Reserved() {
			continue
		}
		out = append(out, string(c))
	}
	return out
}

// refs lists the definitions a tag names directly.
func (s *shape) refs() []string {
	if s.kind == kUnion {
		return s.union
	}
	if s.kind == kRef {
		return []string{s.ref}
	}
	return nil
}

// newField reads one struct field, or returns nil for json:"-". structs are
// the struct types its type names, to walk next.
func newField(sf reflect.StructField, doc string) (*field, []reflect.Type, error) {
	jtag := sf.Tag.Get("json")
	if jtag == "-" {
		return nil, nil, nil
	}
	name, rest, _ := strings.Cut(jtag, ",")
	if name == "" {
		name = sf.Name
	}
	omitempty := false
	for _, o := range strings.Split(rest, ",") {
		if o == "omitempty" || o == "omitzero" {
			omitempty = true
		}
	}
	opts, err := parseTag(sf.Tag.Get("pling"))
	if err != nil {
		return nil, nil, err
	}
	var structs []reflect.Type
	sh, ptr, err := fieldShape(sf.Type, opts, &structs)
	if err != nil {
		return nil, nil, err
	}
	f := &field{goName: sf.Name, name: name, doc: doc, required: opts.required, shape: sh}
	f.optional = !opts.required && (omitempty || ptr)
	return f, structs, nil
}

// tagOptions are the parsed options of a pling tag.
type tagOptions struct {
	required, nullable, any bool
	// text: no control characters (C0, DEL, C1), which the request
	// decoder checks; the JSON Schema and TypeScript do not say it.
	text                bool
	pattern, ref, codes string
	constVal            *string
	enum, oneOf         []string
	min, max            json.Number
}

// parseTag parses a pling tag: options separated by commas, where "\," is a
// comma inside a value (a pattern's {1,128}). Other backslashes are kept, so
// a pattern's \d survives.
func parseTag(tag string) (tagOptions, error) {
	var o tagOptions
	if tag == "" {
		return o, nil
	}
	for _, opt := range splitTag(tag) {
		key, val, hasVal := strings.Cut(opt, "=")
		switch {
		case key == "required" && !hasVal:
			o.required = true
		case key == "nullable" && !hasVal:
			o.nullable = true
		case key == "any" && !hasVal:
			o.any = true
		case key == "text" && !hasVal:
			o.text = true
		case key == "pattern" && hasVal:
			o.pattern = val
		case key == "const" && hasVal:
			v := val
			o.constVal = &v
		case key == "enum" && val == "@surface":
			o.codes = SurfaceCodeName
		case key == "enum" && val == "@action":
			o.codes = ActionCodeName
		case key == "enum" && val != "":
			o.enum = strings.Split(val, "|")
		case key == "ref" && val != "":
			o.ref = val
		case key == "oneOf" && val != "":
			o.oneOf = strings.Split(val, "|")
		case key == "min" || key == "max":
			if _, err := strconv.ParseFloat(val, 64); err != nil || !hasVal {
				return o, fmt.Errorf("pling tag %q: %s needs a number", tag, key)
			}
			if key == "min" {
				o.min = json.Number(val)
			} else {
				o.max = json.Number(val)
			}
		default:
			return o, fmt.Errorf("pling tag %q: unknown option %q", tag, opt)
		}
	}
	return o, nil
}

func splitTag(tag string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(tag); i++ {
		switch {
		case tag[i] == '\\' && i+1 < len(tag) && tag[i+1] == ',':
			cur.WriteByte(',')
			i++
		case tag[i] == ',':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(tag[i])
		}
	}
	return append(out, cur.String())
}

// fieldShape maps a field's Go type and tag to its JSON shape. ptr reports
// a pointer field (optional in TypeScript unless required).
func fieldShape(t reflect.Type, o tagOptions, structs *[]reflect.Type) (sh *shape, ptr bool, err error) {
	if t.Kind() == reflect.Pointer {
		t, ptr = t.Elem(), true
	}
	opaque := t == rawMessageType || isRawJSON(t) || t.Kind() == reflect.Interface
	switch {
	case o.ref != "" || len(o.oneOf) > 0:
		if !opaque {
			return nil, ptr, fmt.Errorf("ref and oneOf need a json.RawMessage or interface field, not %v", t)
		}
		if o.ref != "" && len(o.oneOf) > 0 {
			return nil, ptr, fmt.Errorf("ref and oneOf exclude each other")
		}
		sh = &shape{kind: kRef, ref: o.ref}
		if len(o.oneOf) > 0 {
			sh = &shape{kind: kUnion, union: o.oneOf}
		}
	case o.any:
		sh = &shape{kind: kAny}
	default:
		if sh, err = typeShape(t, structs); err != nil {
			return nil, ptr, err
		}
	}
	return sh, ptr, sh.constrain(o)
}

// typeShape maps a Go type without tag constraints.
func typeShape(t reflect.Type, structs *[]reflect.Type) (*shape, error) {
	if t == rawMessageType || isRawJSON(t) {
		return &shape{kind: kAny}, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeShape(t.Elem(), structs)
	case reflect.String:
		return &shape{kind: kString}, nil
	case reflect.Bool:
		return &shape{kind: kBool}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &shape{kind: kInteger}, nil
	case reflect.Float32, reflect.Float64:
		return &shape{kind: kNumber}, nil
	case reflect.Interface:
		return &shape{kind: kAny}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, fmt.Errorf("%v: byte slices are not supported", t)
		}
		e, err := typeShape(t.Elem(), structs)
		if err != nil {
			return nil, err
		}
		return &shape{kind: kArray, elem: e}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%v: map keys must be strings", t)
		}
		e, err := typeShape(t.Elem(), structs)
		if err != nil {
			return nil, err
		}
		return &shape{kind: kMap, elem: e}, nil
	case reflect.Struct:
		if t.Name() == "" {
			return nil, fmt.Errorf("anonymous struct types are not supported")
		}
		*structs = append(*structs, t)
		return &shape{kind: kRef, ref: PublishedName(t.Name())}, nil
	}
	return nil, fmt.Errorf("%v: unsupported kind %v", t, t.Kind())
}

// constrain applies a tag's value constraints, refusing those that do not
// fit the shape so a mistyped tag fails generation instead of vanishing.
func (s *shape) constrain(o tagOptions) error {
	scalar := s.kind == kString || s.kind == kBool || s.kind == kInteger || s.kind == kNumber
	if o.constVal != nil {
		if !scalar {
			return fmt.Errorf("const needs a scalar field")
		}
		v, err := s.literal(*o.constVal)
		if err != nil {
			return err
		}
		s.constVal = v
	}
	for _, e := range o.enum {
		if !scalar {
			return fmt.Errorf("enum needs a scalar field")
		}
		v, err := s.literal(e)
		if err != nil {
			return err
		}
		s.enum = append(s.enum, v)
	}
	if o.codes != "" {
		if s.kind != kString {
			return fmt.Errorf("enum=@… needs a string field")
		}
		s.codes = o.codes
	}
	if o.pattern != "" {
		if s.kind != kString {
			return fmt.Errorf("pattern needs a string field")
		}
		s.pattern = o.pattern
	}
	if o.min != "" || o.max != "" {
		switch s.kind {
		case kString:
			for _, n := range []json.Number{o.min, o.max} {
				if _, err := strconv.ParseUint(string(n), 10, 64); n != "" && err != nil {
					return fmt.Errorf("string length bounds must be whole numbers, not %s", n)
				}
			}
		case kInteger, kNumber:
		default:
			return fmt.Errorf("min and max need a string or number field")
		}
		s.min, s.max = o.min, o.max
	}
	if o.text && s.kind != kString {
		return fmt.Errorf("text needs a string field")
	}
	if o.nullable {
		if !scalar && s.kind != kRef {
			return fmt.Errorf("nullable needs a scalar or struct field")
		}
		if s.constVal != nil || s.codes != "" {
			return fmt.Errorf("nullable cannot be combined with const or enum=@…")
		}
		s.nullable = true
	}
	return nil
}

// literal converts a tag value to the shape's JSON type.
func (s *shape) literal(v string) (any, error) {
	switch s.kind {
	case kString:
		return v, nil
	case kBool:
		return strconv.ParseBool(v)
	case kInteger:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return nil, err
		}
		return json.Number(v), nil
	case kNumber:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return nil, err
		}
		return json.Number(v), nil
	}
	return nil, fmt.Errorf("no literal for this field")
}
