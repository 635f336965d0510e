package authority

import "context"

// leaseNow is the time lease decisions are made at: on PostgreSQL the
// database's clock (one clock for every instance, so that an instance
// whose clock runs ahead cannot take a lease that is still live by
// everyone else's), elsewhere nowMs, the instance's (SQLite is one
// machine, one clock).
func (s *sqlStore) leaseNow(ctx context.Context, nowMs int64) (int64, error) {
	if s.dialect != PostgreSQL || s.instanceClock.Load() {
		return nowMs, nil
	}
	var ms int64
	err := s.db.QueryRowContext(ctx, `SELECT `+dbNowMs).Scan(&ms)
	return ms, err
}
