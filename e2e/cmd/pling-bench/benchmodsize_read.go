package main

import (
	"bytes"
	"errors"
	"fmt"
)

// The reader of a WebAssembly binary that pling-bench modsize needs: the
// sections and their sizes, the function names of the "name" custom
// section, and the size of every body of the code section. `go tool nm`
// does not read wasm, and the module's own name section is the one
// record of which function each body is.

// wasmSection is one section of a module: its id, its name (a custom
// section's own name, else the id's), and where its payload is.
type wasmSection struct {
	ID     byte
	Name   string
	Offset int // of the payload in the file
	Size   int // of the payload
	Header int // the id byte and the size's LEB128
}

// wasmFunc is one body of the code section: its function index (imports
// come first in the index space), its name from the name section ("" when
// the section names it not), and its size without its own size prefix.
type wasmFunc struct {
	Index int
	Name  string
	Size  int
}

// wasmModule is what modsize reads from a module.
type wasmModule struct {
	FileSize int
	Sections []wasmSection
	Imports  int // imported functions, the first indices
	Funcs    []wasmFunc
	// CodeHeaders are the code section's payload bytes that are no body:
	// the count's LEB128 and each body's size LEB128.
	CodeHeaders int
}

// section returns the first section with the id (and, for a custom one,
// the name).
func (m *wasmModule) section(id byte, name string) (wasmSection, bool) {
	for _, s := range m.Sections {
		if s.ID == id && (id != 0 || s.Name == name) {
			return s, true
		}
	}
	return wasmSection{}, false
}

var wasmSectionNames = map[byte]string{
	1: "type", 2: "import", 3: "function", 4: "table", 5: "memory", 6: "global",
	7: "export", 8: "start", 9: "element", 10: "code", 11: "data", 12: "datacount",
}

// wasmReader reads LEB128 numbers, names and bytes from a buffer and
// remembers the first error, so a caller checks once.
type wasmReader struct {
	b   []byte
	off int
	err error
}

func (r *wasmReader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("byte %d: %s", r.off, fmt.Sprintf(format, a...))
	}
}

func (r *wasmReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail("unexpected end")
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

// u32 reads an unsigned LEB128 of at most 32 bits (5 bytes).
func (r *wasmReader) u32() int {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if v > 1<<32-1 {
				r.fail("LEB128 over 32 bits")
				return 0
			}
			return int(v)
		}
	}
	r.fail("LEB128 longer than 5 bytes")
	return 0
}

func (r *wasmReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail("%d bytes past the end", n)
		return nil
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

func (r *wasmReader) name() string { return string(r.bytes(r.u32())) }

// limits skips a table's or memory's limits.
func (r *wasmReader) limits() {
	flags := r.byte()
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}

// parseWasm reads a module's sections, its imported functions' count, the
// code section's bodies and the name section's function names.
func parseWasm(b []byte) (*wasmModule, error) {
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return nil, errors.New("not a WebAssembly binary (no \\0asm magic)")
	}
	if v := b[4:8]; !bytes.Equal(v, []byte{1, 0, 0, 0}) {
		return nil, fmt.Errorf("WebAssembly binary version %v, not 1", v)
	}
	m := &wasmModule{FileSize: len(b)}
	r := &wasmReader{b: b, off: 8}
	var names map[int]string
	for r.err == nil && r.off < len(b) {
		start := r.off
		id := r.byte()
		size := r.u32()
		s := wasmSection{ID: id, Offset: r.off, Size: size, Header: r.off - start}
		payload := r.bytes(size)
		if r.err != nil {
			break
		}
		pr := &wasmReader{b: payload}
		if id == 0 {
			s.Name = pr.name()
		} else if s.Name = wasmSectionNames[id]; s.Name == "" {
			s.Name = fmt.Sprintf("unknown (%d)", id)
		}
		switch {
		case id == 0 && s.Name == "name":
			names = parseNameSection(pr)
		case id == 2:
			m.Imports = countFuncImports(pr)
		case id == 10:
			m.Funcs, m.CodeHeaders = parseCode(pr)
		}
		if pr.err != nil {
			return nil, fmt.Errorf("%s section: %v", s.Name, pr.err)
		}
		m.Sections = append(m.Sections, s)
	}
	if r.err != nil {
		return nil, r.err
	}
	if _, ok := m.section(10, ""); !ok {
		return nil, errors.New("no code section")
	}
	for i := range m.Funcs {
		m.Funcs[i].Index = m.Imports + i
		m.Funcs[i].Name = names[m.Funcs[i].Index]
	}
	return m, nil
}

// countFuncImports is how many of the imports are functions.
func countFuncImports(r *wasmReader) int {
	n := 0
	for range r.u32() {
		r.name()
		r.name()
		switch kind := r.byte(); kind {
		case 0: // a function: its type index
			r.u32()
			n++
		case 1: // a table: its element type, its limits
			r.byte()
			r.limits()
		case 2: // a memory
			r.limits()
		case 3: // a global: its type, its mutability
			r.byte()
			r.byte()
		default:
			r.fail("import of kind %d", kind)
		}
		if r.err != nil {
			return 0
		}
	}
	return n
}

// parseCode is the code section's bodies and the bytes of its payload that
// are no body.
func parseCode(r *wasmReader) ([]wasmFunc, int) {
	n := r.u32()
	headers := r.off
	var fs []wasmFunc
	for range n {
		at := r.off
		size := r.u32()
		headers += r.off - at
		r.bytes(size)
		if r.err != nil {
			return nil, 0
		}
		fs = append(fs, wasmFunc{Size: size})
	}
	if r.off != len(r.b) {
		r.fail("%d bytes after the last body", len(r.b)-r.off)
	}
	return fs, headers
}

// parseNameSection is the function names of a "name" section (its
// subsection 1); the other subsections are skipped.
func parseNameSection(r *wasmReader) map[int]string {
	names := map[int]string{}
	for r.err == nil && r.off < len(r.b) {
		id := r.byte()
		sub := &wasmReader{b: r.bytes(r.u32())}
		if id != 1 {
			continue
		}
		for range sub.u32() {
			i := sub.u32()
			names[i] = sub.name()
			if sub.err != nil {
				break
			}
		}
		if sub.err != nil && r.err == nil {
			r.err = fmt.Errorf("function names: %v", sub.err)
		}
	}
	return names
}
