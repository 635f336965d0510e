package authority

import (
	"context"
	"testing"

	"github.com/pling-go/pling/internal/testing/pgtest"
)

// The PostgreSQL pool and session settings of docs/authority.md are the
// ones the server applies.
func TestPostgresSettings(t *testing.T) {
	opened, err := OpenPostgres(context.Background(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	st := opened.(*sqlStore)
	if st.Dialect() != PostgreSQL {
		t.Errorf("dialect %v", st.Dialect())
	}
	if n := st.db.db.Stats().MaxOpenConnections; n != pgMaxOpenConns {
		t.Errorf("MaxOpenConnections %d, want %d", n, pgMaxOpenConns)
	}
	for name, want := range map[string]string{"statement_timeout": "15s", "idle_in_transaction_session_timeout": "30s",
		"application_name": "pling-authority", "transaction_isolation": "read committed"} {
		var got string
		if err := st.db.db.QueryRowContext(context.Background(), "SHOW "+name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}
