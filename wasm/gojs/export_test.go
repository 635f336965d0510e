package gojs

// TableSlots is the length of the reference table, free slots included
// (wasm_exec.js's _values.length): the memory the table occupies.
func (i *Instance) TableSlots() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.tab == nil {
		return 0
	}
	return len(i.tab.values)
}

// IDsAllocated counts the ids ever handed out for new values, reused ones
// included: how many values crossed into Go and needed a slot.
func (i *Instance) IDsAllocated() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.tab == nil {
		return 0
	}
	return i.tab.allocated
}
