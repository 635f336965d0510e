package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pling-go/pling/authority"
)

// runAuthorityRestore is pling authority restore: it puts a SQLite backup
// in the store's place (--from), or takes a PostgreSQL database that
// pg_restore filled, and ends the past the backup does not know
// (authority.Restore): every signing key of the backup stops being
// published, a new one signs, every session of the backup is revoked,
// every delegation not collected ends, and the store's epoch changes so
// that running followers re-read the feed and fetch the keys.
func runAuthorityRestore(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := newFlags("authority restore", stderr,
		"Usage: pling authority restore --store sqlite:PATH|postgres://… [--from BACKUP.db] [--kek-file FILE]",
		"Ends everything a restored store does not know (docs/operations.md \"Restoring\"). With --from (SQLite),",
		"the backup is copied into the store's place first; stop every instance before. On PostgreSQL,",
		"pg_restore the dump into a new database first and name that database in --store.",
		"The new signing key is sealed with the KEK of --kek-file or PLING_AUTHORITY_KEK (the one the",
		"instances will start with; on SQLite without either, PATH.kek, made when absent).",
	)
	store := fl.String("store", "", "the store to restore: sqlite:PATH, or postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=… (a database pg_restore filled)")
	from := fl.String("from", "", "SQLite only: the backup (a VACUUM INTO copy) to put in the store's place")
	kekFile := fl.String("kek-file", "", "the key-encryption key the instances start with (base64 of 32 bytes, mode 0600); or PLING_AUTHORITY_KEK")
	if exit, ok := parseNoArgs(fl, args, stderr); !ok {
		return exit
	}
	if *store == "" {
		fmt.Fprintln(stderr, "pling authority restore: --store is required (the store the instances will use)")
		return 2
	}
	spec := authority.StoreSpec(*store)
	dialect, path, err := spec.Parse()
	if err != nil {
		fmt.Fprintf(stderr, "pling authority restore: --store: %v\n", err)
		return 2
	}
	if *from != "" && dialect == authority.PostgreSQL {
		fmt.Fprintln(stderr, "pling authority restore: --from is for SQLite; on PostgreSQL run pg_restore into a new database, then restore --store naming it")
		return 2
	}
	kek, _, err := authorityKEK(spec, *kekFile, "", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "pling authority restore: %v\n", err)
		return 2
	}
	if *from != "" {
		if err := copyIntoPlace(*from, path); err != nil {
			fmt.Fprintf(stderr, "pling authority restore: %v\n", err)
			return 1
		}
	}
	st, err := authority.Open(ctx, spec)
	if err != nil {
		fmt.Fprintf(stderr, "pling authority restore: %v\n", err)
		return 1
	}
	defer st.Close()
	res, err := authority.Restore(ctx, st, kek, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "pling authority restore: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "pling authority restore: store %s restored: epoch %s; %d signing keys unpublished, new key %s; %d sessions revoked; %d delegations ended\n",
		spec, res.Epoch, res.KeysRetired, res.Kid, res.SessionsEnded, res.DelegationsEnded)
	fmt.Fprintln(stdout, "Start the instances: followers re-read the feed and fetch the keys within their freshness bound; agents ask for new tokens.")
	return 0
}

// copyIntoPlace copies the SQLite backup from into path: through a
// temporary file beside it, synced and renamed over it, with the old
// file's -wal and -shm removed (a stale WAL would be replayed onto the
// copy).
func copyIntoPlace(from, path string) error {
	src, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".restoring-*")
	if err != nil {
		return err
	}
	_, cerr := io.Copy(tmp, src)
	serr := tmp.Sync()
	if err := errors.Join(cerr, serr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("copying the backup: %w", err)
	}
	for _, side := range []string{path + "-wal", path + "-shm"} {
		if err := os.Remove(side); err != nil && !errors.Is(err, os.ErrNotExist) {
			os.Remove(tmp.Name())
			return err
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
