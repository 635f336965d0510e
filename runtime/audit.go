package runtime

import (
	"sync"

	"github.com/pling-go/pling/schema"
)

// AuditSink receives one SurfaceAuditEvent per request: time, request id,
// method, capability id, outcome class, code and duration — never inputs,
// results, tokens or messages from page code (docs/protocol.md §3.6). Record must
// not block for long; it is called on the request path.
type AuditSink interface {
	Record(ev schema.SurfaceAuditEvent)
}

// AuditFunc adapts a function to AuditSink.
type AuditFunc func(ev schema.SurfaceAuditEvent)

// Record implements AuditSink.
func (f AuditFunc) Record(ev schema.SurfaceAuditEvent) { f(ev) }

// MemoryAudit keeps the last events in memory (tests, the conformance
// runner, a page's debug panel).
type MemoryAudit struct {
	mu     sync.Mutex
	max    int
	events []schema.SurfaceAuditEvent
}

// NewMemoryAudit keeps at most max events (at least the newest max/2).
func NewMemoryAudit(max int) *MemoryAudit { return &MemoryAudit{max: max} }

// Record implements AuditSink.
func (m *MemoryAudit) Record(ev schema.SurfaceAuditEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.events) >= m.max {
		// Drop the oldest half at once: amortized O(1) per event.
		n := copy(m.events, m.events[len(m.events)-m.max/2:])
		m.events = m.events[:n]
	}
	m.events = append(m.events, ev)
}

// Events returns a copy of the kept events.
func (m *MemoryAudit) Events() []schema.SurfaceAuditEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]schema.SurfaceAuditEvent(nil), m.events...)
}
