package gojs

import (
	"math"
	"strconv"
)

// The Reflect operations wasm_exec.js applies to values: get, set,
// deleteProperty, apply, construct, and instanceof.

func (i *Instance) get(v Value, name string) (Value, error) {
	switch x := v.(type) {
	case nil, NullValue:
		return nil, throwType("Cannot read properties of %s (reading '%s')", ToString(v), name)
	case string:
		if name == "length" {
			return float64(jsLength(x)), nil
		}
		return nil, nil
	case bool, float64:
		return nil, nil
	case *Array:
		if name == "length" {
			return float64(len(x.Elems)), nil
		}
		if k, ok := arrayIndex(name); ok {
			if k < len(x.Elems) {
				return x.Elems[k], nil
			}
			return nil, nil
		}
	case *Uint8Array:
		switch name {
		case "length", "byteLength":
			return float64(len(x.Data)), nil
		}
		if k, ok := arrayIndex(name); ok {
			if k < len(x.Data) {
				return float64(x.Data[k]), nil
			}
			return nil, nil
		}
	case *Function:
		if _, own := x.Own(name); !own {
			switch name {
			case "prototype":
				if x.goID == 0 {
					return x.prototypeObject(), nil
				}
			case "name":
				return x.name, nil
			}
		}
	}
	for o := header(v); o != nil; o = i.realm.protoOf(o) {
		if val, ok := o.Own(name); ok {
			return val, nil
		}
	}
	return nil, nil
}

func (i *Instance) set(v Value, name string, x Value) error {
	switch a := v.(type) {
	case nil, NullValue:
		return throwType("Cannot set properties of %s (setting '%s')", ToString(v), name)
	case *Array:
		if name == "length" {
			n := toNumber(x)
			if n < 0 || n != math.Trunc(n) || n > 1<<32-1 {
				return &Exception{newTypedError("RangeError", "Invalid array length")}
			}
			a.Elems = resize(a.Elems, int(n))
			return nil
		}
		if k, ok := arrayIndex(name); ok {
			return i.setIndex(a, int64(k), x)
		}
	case *Uint8Array:
		if k, ok := arrayIndex(name); ok {
			return i.setIndex(a, int64(k), x)
		}
		if name == "length" || name == "byteLength" {
			return nil // read-only
		}
	}
	h := header(v)
	if h == nil {
		return nil // a primitive: Reflect.set answers false
	}
	h.set(name, x)
	return nil
}

func resize(s []Value, n int) []Value {
	if n <= len(s) {
		clear(s[n:])
		return s[:n]
	}
	return append(s, make([]Value, n-len(s))...)
}

func (i *Instance) deleteProperty(v Value, name string) error {
	h := header(v)
	if h == nil {
		if v == nil || v == Null {
			return throwType("Cannot convert %s to object", ToString(v))
		}
		return nil
	}
	h.Delete(name)
	return nil
}

func (i *Instance) index(v Value, k int64) (Value, error) {
	switch a := v.(type) {
	case *Array:
		if k >= 0 && k < int64(len(a.Elems)) {
			return a.Elems[k], nil
		}
		return nil, nil
	case *Uint8Array:
		if k >= 0 && k < int64(len(a.Data)) {
			return float64(a.Data[k]), nil
		}
		return nil, nil
	}
	return i.get(v, strconv.FormatInt(k, 10))
}

func (i *Instance) setIndex(v Value, k int64, x Value) error {
	switch a := v.(type) {
	case *Array:
		if k < 0 || k >= 1<<32-1 {
			break
		}
		if k >= int64(len(a.Elems)) {
			a.Elems = resize(a.Elems, int(k)+1)
		}
		a.Elems[k] = x
		return nil
	case *Uint8Array:
		if k >= 0 && k < int64(len(a.Data)) {
			a.Data[k] = toUint8(x)
		}
		return nil // out of range writes are ignored on typed arrays
	}
	return i.set(v, strconv.FormatInt(k, 10), x)
}

// length is parseInt(v.length) as wasm_exec.js computes it for
// valueLength; a missing length is NaN, which setInt64 stores as 0.
func (i *Instance) length(v Value) (int64, error) {
	switch a := v.(type) {
	case *Array:
		return int64(len(a.Elems)), nil
	case *Uint8Array:
		return int64(len(a.Data)), nil
	}
	l, err := i.get(v, "length")
	if err != nil {
		return 0, err
	}
	switch l := l.(type) {
	case float64:
		return toInt64(l), nil
	case string:
		return toInt64(toNumber(l)), nil
	}
	return 0, nil
}

// callMethod is Reflect.apply(Reflect.get(v, name), v, args).
func (i *Instance) callMethod(v Value, name string, args []Value) (Value, error) {
	m, err := i.get(v, name)
	if err != nil {
		return nil, err
	}
	if _, ok := m.(*Function); !ok {
		return nil, throwType("%s is not a function", name)
	}
	return i.callValue(m, v, args)
}

// callValue is Reflect.apply(fn, this, args): a Go wrapper re-enters the
// module, a host function runs on the host.
func (i *Instance) callValue(fn Value, this Value, args []Value) (Value, error) {
	f, ok := fn.(*Function)
	if !ok {
		return nil, throwType("%s is not a function", TypeOf(fn))
	}
	if f.goID != 0 {
		return i.invoke(f, this, args)
	}
	return callHost(f, this, args)
}

// construct is Reflect.construct(fn, args).
func (i *Instance) construct(fn Value, args []Value) (Value, error) {
	f, ok := fn.(*Function)
	if !ok {
		return nil, throwType("%s is not a constructor", TypeOf(fn))
	}
	if f.construct != nil {
		return f.construct(args)
	}
	obj := &Object{class: classObject}
	if f.goID == 0 {
		obj.proto = f.prototypeObject()
	}
	res, err := i.callValue(f, obj, args)
	if err != nil {
		return nil, err
	}
	if header(res) != nil {
		return res, nil
	}
	return obj, nil
}

// instanceOf is v instanceof t: t's prototype is on v's prototype chain.
func (i *Instance) instanceOf(v, t Value) bool {
	f, ok := t.(*Function)
	if !ok {
		return false
	}
	target := f.prototype
	if target == nil {
		if f.goID != 0 {
			return false
		}
		target = f.prototypeObject()
	}
	h := header(v)
	if h == nil {
		return false
	}
	for p := i.realm.protoOf(h); p != nil; p = i.realm.protoOf(p) {
		if p == target {
			return true
		}
	}
	return false
}
