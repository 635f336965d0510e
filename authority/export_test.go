package authority

// What the external tests (package authority_test) need that is not
// public API.

// UseInstanceClock makes lease decisions on PostgreSQL use the time the
// server passes (its Config.Now) instead of the database's clock: for
// tests that drive a fake clock, never for instances sharing a store.
func UseInstanceClock(st Store) { st.(*sqlStore).instanceClock.Store(true) }
