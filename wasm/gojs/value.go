package gojs

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Value is a JavaScript value as the host sees it. Its dynamic type is one
// of:
//
//	nil           undefined (the zero Value)
//	NullValue     null (use Null)
//	bool          a boolean
//	float64       a number
//	string        a string (UTF-8; see RATIONALE.md for lone surrogates)
//	*Object       an object: plain, Error, Date, globalThis, …
//	*Array        an Array
//	*Uint8Array   a Uint8Array
//	*Function     a function: a host Func or a wrapper of a Go js.Func
//
// Identity follows JavaScript: two objects are the same value when they are
// the same pointer, strings and numbers compare by value. ValueOf converts
// ordinary Go values to these types.
type Value any

// NullValue is the type of Null.
type NullValue struct{}

// Null is the JavaScript value null.
var Null Value = NullValue{}

// Func is a host function callable from the module (valueCall, valueInvoke,
// valueNew). A non-nil error is thrown in the module: an *Exception throws
// its Value, any other error throws a new Error whose message is the error's
// text. A panic in a Func is thrown the same way, so a host bug surfaces as
// a js.Error in the module instead of tearing down the instance.
type Func func(this Value, args []Value) (Value, error)

// Exception is a JavaScript value thrown across the boundary. A Func
// returns one to throw a chosen value (an Error with a "code", say);
// Instance.Call returns it when the function it called threw one.
type Exception struct {
	Value Value
}

func (e *Exception) Error() string {
	return "JavaScript exception: " + describe(e.Value)
}

// describe gives the message of an Error-like value, else its String().
func describe(v Value) string {
	if o, ok := v.(*Object); ok && o.class == classError {
		name, _ := o.Get("name").(string)
		if name == "" {
			name = "Error"
		}
		msg, _ := o.Get("message").(string)
		code, _ := o.Get("code").(string)
		s := name
		if msg != "" {
			s += ": " + msg
		}
		if code != "" {
			s += " (" + code + ")"
		}
		return s
	}
	return ToString(v)
}

const (
	classObject = "Object"
	classError  = "Error"
	classDate   = "Date"
	classRegExp = "RegExp"
)

// Object is a JavaScript object with string-keyed properties kept in
// insertion order and a prototype (which makes instanceof and inherited
// methods work). Its class names the built-in it was made by: "Object",
// "Error", "Date"; Array, Uint8Array and Function embed an Object.
type Object struct {
	class string
	proto *Object // nil: the default prototype for the class (see protoOf)
	props []prop
	index map[string]int    // built once an object has many properties
	date  time.Time         // class Date
	test  func(string) bool // class RegExp
}

type prop struct {
	name  string
	value Value
}

// indexThreshold is the property count from which lookups go through a map;
// below it a linear scan is faster and allocates nothing.
const indexThreshold = 8

// NewObject returns a plain object with the given properties (each
// converted with ValueOf).
func NewObject(props map[string]any) *Object {
	o := &Object{class: classObject}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		o.Set(k, ValueOf(props[k]))
	}
	return o
}

// NewError returns an Error object with the given message, as new
// Error(message) would. Set "code" on it for errors the Go runtime maps to
// an errno (syscall/fs_js.go's mapJSError).
func NewError(message string) *Object {
	o := &Object{class: classError}
	o.Set("message", message)
	return o
}

func newTypedError(name, message string) *Object {
	o := NewError(message)
	o.Set("name", name)
	return o
}

// Class is the name of the built-in that made o: "Object", "Error", "Date",
// "RegExp", "Array", "Uint8Array" or "Function".
func (o *Object) Class() string { return o.class }

func (o *Object) lookup(name string) (int, bool) {
	if o.index != nil {
		i, ok := o.index[name]
		return i, ok
	}
	for i := range o.props {
		if o.props[i].name == name {
			return i, true
		}
	}
	return 0, false
}

// Own returns the own property name and whether it exists.
func (o *Object) Own(name string) (Value, bool) {
	if i, ok := o.lookup(name); ok {
		return o.props[i].value, true
	}
	return nil, false
}

// Get returns the own property name, or undefined. Inherited properties
// (methods on prototypes) are resolved by the instance, not here.
func (o *Object) Get(name string) Value {
	v, _ := o.Own(name)
	return v
}

// Set sets the own property name to ValueOf(v).
func (o *Object) Set(name string, v any) {
	o.set(name, ValueOf(v))
}

func (o *Object) set(name string, v Value) {
	if i, ok := o.lookup(name); ok {
		o.props[i].value = v
		return
	}
	o.props = append(o.props, prop{name, v})
	if o.index != nil {
		o.index[name] = len(o.props) - 1
	} else if len(o.props) > indexThreshold {
		o.reindex()
	}
}

func (o *Object) reindex() {
	if len(o.props) <= indexThreshold {
		o.index = nil
		return
	}
	o.index = make(map[string]int, len(o.props))
	for i, p := range o.props {
		o.index[p.name] = i
	}
}

// Delete removes the own property name.
func (o *Object) Delete(name string) {
	i, ok := o.lookup(name)
	if !ok {
		return
	}
	o.props = append(o.props[:i], o.props[i+1:]...)
	if o.index != nil {
		o.reindex()
	}
}

// Keys returns the own property names in JavaScript's order: array-index
// names ascending, then the others in insertion order.
func (o *Object) Keys() []string {
	keys := make([]string, len(o.props))
	indexed := false
	for i, p := range o.props {
		keys[i] = p.name
		if _, ok := arrayIndex(p.name); ok {
			indexed = true
		}
	}
	if indexed {
		slices.SortStableFunc(keys, func(a, b string) int {
			ia, aok := arrayIndex(a)
			ib, bok := arrayIndex(b)
			switch {
			case aok && bok:
				return ia - ib
			case aok:
				return -1
			case bok:
				return 1
			}
			return 0
		})
	}
	return keys
}

// Array is a JavaScript Array. Elems is its contents; its length is
// len(Elems).
type Array struct {
	Object
	Elems []Value
}

// NewArray returns an Array holding ValueOf of each element.
func NewArray(elems ...any) *Array {
	a := &Array{Object: Object{class: "Array"}, Elems: make([]Value, len(elems))}
	for i, e := range elems {
		a.Elems[i] = ValueOf(e)
	}
	return a
}

// Uint8Array is a JavaScript Uint8Array backed by Data. The module reads and
// writes Data with js.CopyBytesToGo and js.CopyBytesToJS.
type Uint8Array struct {
	Object
	Data []byte
}

// NewUint8Array returns a Uint8Array that uses data (not a copy).
func NewUint8Array(data []byte) *Uint8Array {
	return &Uint8Array{Object: Object{class: "Uint8Array"}, Data: data}
}

// Function is a callable JavaScript value: a host Func, a built-in
// constructor, or the wrapper JavaScript makes for a Go js.Func (see IsGo).
type Function struct {
	Object
	name      string
	fn        Func
	construct func(args []Value) (Value, error) // built-in constructors
	prototype *Object                           // F.prototype, made on demand

	goID  uint32    // != 0 for a wrapper of a Go js.Func
	owner *Instance // the instance whose Go code a wrapper calls
}

// NewFunc returns a host function named name.
func NewFunc(name string, fn Func) *Function {
	return &Function{Object: Object{class: "Function"}, name: name, fn: fn}
}

// Name is the function's name ("" for anonymous and Go wrappers).
func (f *Function) Name() string { return f.name }

// IsGo reports whether f wraps a Go js.Func of a module.
func (f *Function) IsGo() bool { return f.goID != 0 }

// Call calls f with this and args (each converted with ValueOf). It is the
// way for a Func that is running on an instance's behalf to call back into
// the module synchronously — for example to invoke a js.Func it received as
// an argument — which re-enters Go exactly as JavaScript would. Outside a
// Func use Instance.Call, which takes the instance's lock; calling a Go
// wrapper with Function.Call while its instance is idle is an error.
func (f *Function) Call(this Value, args ...any) (Value, error) {
	vals, err := valuesOf(args)
	if err != nil {
		return nil, err
	}
	if f.goID != 0 {
		if f.owner == nil || !f.owner.inEntry() {
			return nil, errors.New("gojs: Function.Call of a Go function outside a call on its instance; use Instance.Call")
		}
		return f.owner.invoke(f, this, vals)
	}
	return callHost(f, this, vals)
}

// callHost runs a host function, turning a panic into a thrown Error.
func callHost(f *Function, this Value, args []Value) (res Value, err error) {
	if f.fn == nil {
		if f.construct != nil {
			return f.construct(args)
		}
		return nil, &Exception{newTypedError("TypeError", "function is not callable")}
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &Exception{NewError(fmt.Sprintf("gojs: host function %q panicked: %v", f.name, r))}
		}
	}()
	res, err = f.fn(this, args)
	if err != nil {
		return nil, err
	}
	return normalize(res)
}

// ValueOf converts x to a Value, like syscall/js.ValueOf:
//
//	nil                          undefined
//	Value types (see Value)      themselves
//	int…, uint…, float32/64      float64
//	[]byte                       a new *Uint8Array over a copy
//	[]any, []Value, []string     a new *Array
//	map[string]any/Value/string  a new *Object
//	Func, func(Value, []Value) (Value, error)   a new *Function
//
// It panics on any other type; Instance.Call reports it as an error.
func ValueOf(x any) Value {
	v, err := valueOf(x)
	if err != nil {
		panic(err)
	}
	return v
}

func valueOf(x any) (Value, error) {
	switch x := x.(type) {
	case nil, NullValue, bool, float64, string, *Object, *Array, *Uint8Array, *Function:
		return x, nil
	case int:
		return float64(x), nil
	case int8:
		return float64(x), nil
	case int16:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	case uint8:
		return float64(x), nil
	case uint16:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case uintptr:
		return float64(x), nil
	case float32:
		return float64(x), nil
	case []byte:
		return NewUint8Array(append([]byte(nil), x...)), nil
	case []Value:
		return arrayOf(x)
	case []any:
		return arrayOf(x)
	case []string:
		a := &Array{Object: Object{class: "Array"}, Elems: make([]Value, len(x))}
		for i, e := range x {
			a.Elems[i] = e
		}
		return a, nil
	case map[string]any:
		return objectOf(x)
	case map[string]Value:
		return objectOf(x)
	case map[string]string:
		o := &Object{class: classObject}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			o.set(k, x[k])
		}
		return o, nil
	case Func:
		return NewFunc("", x), nil
	case func(Value, []Value) (Value, error):
		return NewFunc("", x), nil
	case error:
		return nil, fmt.Errorf("gojs: ValueOf: an error is not a value; use NewError(%q)", x.Error())
	}
	return nil, fmt.Errorf("gojs: ValueOf: unsupported type %s", reflect.TypeOf(x))
}

func arrayOf[E any](x []E) (Value, error) {
	a := &Array{Object: Object{class: "Array"}, Elems: make([]Value, len(x))}
	for i, e := range x {
		v, err := valueOf(e)
		if err != nil {
			return nil, err
		}
		a.Elems[i] = v
	}
	return a, nil
}

func objectOf[E any](x map[string]E) (Value, error) {
	o := &Object{class: classObject}
	for _, k := range slices.Sorted(maps.Keys(x)) {
		v, err := valueOf(x[k])
		if err != nil {
			return nil, err
		}
		o.set(k, v)
	}
	return o, nil
}

// normalize is valueOf for values coming back from host code.
func normalize(v Value) (Value, error) {
	switch v.(type) {
	case nil, NullValue, bool, float64, string, *Object, *Array, *Uint8Array, *Function:
		return v, nil
	}
	return valueOf(v)
}

func valuesOf(args []any) ([]Value, error) {
	vals := make([]Value, len(args))
	for i, a := range args {
		v, err := valueOf(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
		vals[i] = v
	}
	return vals, nil
}

// TypeOf returns what JavaScript's typeof operator returns for v.
func TypeOf(v Value) string {
	switch v.(type) {
	case nil:
		return "undefined"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case *Function:
		return "function"
	}
	return "object"
}

// ToString converts v as JavaScript's String(v) does.
func ToString(v Value) string {
	switch v := v.(type) {
	case nil:
		return "undefined"
	case NullValue:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return NumberToString(v)
	case string:
		return v
	case *Array:
		var b strings.Builder
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteByte(',')
			}
			switch e.(type) {
			case nil, NullValue:
			default:
				b.WriteString(ToString(e))
			}
		}
		return b.String()
	case *Uint8Array:
		var b strings.Builder
		for i, e := range v.Data {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(int(e)))
		}
		return b.String()
	case *Function:
		return "function " + v.name + "() { [native code] }"
	case *Object:
		switch v.class {
		case classError:
			name, ok := v.Get("name").(string)
			if !ok {
				name = "Error"
			}
			msg := ToString(v.Get("message"))
			if v.Get("message") == nil || msg == "" {
				return name
			}
			return name + ": " + msg
		case classDate:
			return v.date.Format("Mon Jan 02 2006 15:04:05 GMT-0700")
		}
		return "[object Object]"
	}
	return fmt.Sprint(v)
}

// NumberToString formats f as JavaScript's Number.prototype.toString() does
// (ECMA-262 Number::toString): the shortest round-trip digits, in plain
// notation for exponents up to 21, else in exponent notation.
func NumberToString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	case f < 0:
		return "-" + NumberToString(-f)
	}
	// FormatFloat 'e' gives the shortest digits d.ddd and the exponent.
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	k, n := len(digits), e+1
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	ex := strconv.Itoa(abs(n - 1))
	if k == 1 {
		return digits + "e" + sign + ex
	}
	return digits[:1] + "." + digits[1:] + "e" + sign + ex
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// jsLength is String.prototype.length: UTF-16 code units.
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// decodeUTF8 is what TextDecoder("utf-8") does to the bytes of a Go string:
// invalid sequences become U+FFFD.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		sb.WriteRune(r) // RuneError for an invalid byte
		b = b[size:]
	}
	return sb.String()
}

// toNumber is JavaScript's ToNumber for the values the environment needs.
func toNumber(v Value) float64 {
	switch v := v.(type) {
	case nil:
		return math.NaN()
	case NullValue:
		return 0
	case bool:
		if v {
			return 1
		}
		return 0
	case float64:
		return v
	case string:
		s := strings.TrimSpace(v)
		if s == "" {
			return 0
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

// toInt64 is what wasm_exec.js's setInt64 stores for a number: NaN and
// infinities store garbage there; we store 0.
func toInt64(f float64) int64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int64(math.Trunc(f))
}
