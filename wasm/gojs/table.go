package gojs

import "math"

// The reference table mirrors wasm_exec.js's _values, _goRefCounts, _ids and
// _idPool. Go holds a JavaScript value as a 32-bit id into values; every
// storeValue of a non-number counts one more Go reference, and every
// syscall/js.finalizeRef (run by the Go GC's finalizer of a js.Value) one
// less. At zero the slot is freed and its id reused, so the table is bounded
// by the number of js.Values the module keeps alive, not by the number of
// values that ever crossed.

// Predefined ids, in the order syscall/js's predefValue expects them.
const (
	idNaN    = 0
	idZero   = 1
	idNull   = 2
	idTrue   = 3
	idFalse  = 4
	idGlobal = 5
	idGo     = 6
)

// permanent is the reference count of the predefined values (Infinity in
// wasm_exec.js): never freed.
const permanent = math.MaxInt64

// nanHead marks a ref that is not a plain number (syscall/js nanHead).
const nanHead = 0x7FF80000

// Type flags of a ref, in sync with syscall/js.
const (
	typeFlagNone     = 0
	typeFlagObject   = 1
	typeFlagString   = 2
	typeFlagSymbol   = 3
	typeFlagFunction = 4
)

type table struct {
	values []Value
	refs   []int64
	ids    map[Value]uint32
	pool   []uint32

	allocated int // ids handed out for new values, for tests
}

func newTable(global, goObj *Object) *table {
	t := &table{
		values: []Value{math.NaN(), float64(0), Null, true, false, global, goObj},
		ids: map[Value]uint32{
			float64(0): idZero,
			Null:       idNull,
			true:       idTrue,
			false:      idFalse,
			global:     idGlobal,
			goObj:      idGo,
		},
	}
	t.refs = make([]int64, len(t.values))
	for i := range t.refs {
		t.refs[i] = permanent
	}
	return t
}

// ref encodes v for Go (storeValue), counting one more Go reference.
func (t *table) ref(v Value) uint64 {
	if f, ok := v.(float64); ok && f != 0 {
		if math.IsNaN(f) {
			return nanHead << 32 // id 0, typeFlagNone
		}
		return math.Float64bits(f)
	}
	if v == nil {
		return 0
	}
	id, ok := t.ids[v]
	if !ok {
		t.allocated++
		if n := len(t.pool); n > 0 {
			id = t.pool[n-1]
			t.pool = t.pool[:n-1]
			t.values[id] = v
			t.refs[id] = 0
		} else {
			id = uint32(len(t.values))
			t.values = append(t.values, v)
			t.refs = append(t.refs, 0)
		}
		t.ids[v] = id
	}
	if t.refs[id] != permanent {
		t.refs[id]++
	}
	return uint64(nanHead|typeFlag(v))<<32 | uint64(id)
}

func typeFlag(v Value) uint32 {
	switch v.(type) {
	case *Object, *Array, *Uint8Array:
		return typeFlagObject
	case string:
		return typeFlagString
	case *Function:
		return typeFlagFunction
	}
	return typeFlagNone // null, booleans, the number 0
}

// value decodes a ref from Go (loadValue).
func (t *table) value(r uint64) Value {
	f := math.Float64frombits(r)
	if f == 0 {
		return nil
	}
	if !math.IsNaN(f) {
		return f
	}
	id := uint32(r)
	if int(id) >= len(t.values) {
		return nil
	}
	return t.values[id]
}

// finalize drops one Go reference to id (finalizeRef).
func (t *table) finalize(id uint32) {
	if int(id) >= len(t.refs) || t.refs[id] == permanent || t.refs[id] <= 0 {
		return
	}
	t.refs[id]--
	if t.refs[id] == 0 {
		v := t.values[id]
		t.values[id] = nil
		delete(t.ids, v)
		t.pool = append(t.pool, id)
	}
}

// live is the number of occupied slots, predefined ones included.
func (t *table) live() int { return len(t.values) - len(t.pool) }
