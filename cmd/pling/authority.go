package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/httpserver"
)

func init() {
	register(command{"authority", "run the authority (delegation device grant, revocations, keys; continuity tasks)", runAuthority})
}

// audienceFlag is a repeatable --audience ORIGIN=PATTERN[,PATTERN…].
type audienceFlag map[string][]string

func (a audienceFlag) String() string { return "" }
func (a audienceFlag) Set(v string) error {
	origin, pats, ok := strings.Cut(v, "=")
	if !ok || origin == "" || pats == "" {
		return errors.New("want ORIGIN=PATTERN[,PATTERN…]")
	}
	a[origin] = append(a[origin], strings.Split(pats, ",")...)
	return nil
}

// prefixFlag is a repeatable --trusted-proxy ADDRESS|CIDR.
type prefixFlag []netip.Prefix

func (p *prefixFlag) String() string { return "" }
func (p *prefixFlag) Set(v string) error {
	if a, err := netip.ParseAddr(v); err == nil {
		*p = append(*p, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		return nil
	}
	pr, err := netip.ParsePrefix(v)
	if err != nil {
		return errors.New("want an IP address or a CIDR, e.g. 10.0.0.0/8")
	}
	*p = append(*p, pr.Masked())
	return nil
}

// readKeys reads one key per line (blank lines and # comments skipped).
func readKeys(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// readKeysFile reads a file of keys, one per line (readKeys).
func readKeysFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readKeys(f), nil
}

func runAuthority(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "migrate" {
		return runAuthorityMigrate(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "restore" {
		return runAuthorityRestore(ctx, args[1:], stdout, stderr)
	}
	fl := newFlags("authority", stderr,
		"Usage: pling authority [--addr HOST:PORT] [--store sqlite:PATH|postgres://…] [--kek-file FILE] [--old-kek-file FILE] [--seal-plain-keys]",
		"                       [--operator-keys FILE] [--audience ORIGIN=PATTERNS]… [--verification-uri URL]",
		"                       [--delegation-burst N] [--delegation-rate R] [--trusted-proxy CIDR]… [--feed-polls-per-client N]",
		"                       [--retention 24h] [--task-idle 720h] [--sweep-every 1m] [--max-pending N] [--max-pending-per-address N]",
		"                       [--metrics-addr HOST:PORT] [--passkey-origin URL] [--passkey-approvals ORIGIN=PATTERNS]…",
		"       pling authority migrate status|up|down [--store …]",
		"       pling authority restore --store … [--from BACKUP.db] [--kek-file FILE]",
		"Runs the delegation authority (docs/authority.md). Operator keys come from --operator-keys",
		"(one per line) or PLING_OPERATOR_KEYS (one per line), never from a flag. The signing keys are",
		"encrypted in the store with the KEK of --kek-file or PLING_AUTHORITY_KEK (base64 of 32 bytes;",
		"required on PostgreSQL; on SQLite, PATH.kek is made (mode 0600) when neither is given).",
	)
	addr := fl.String("addr", "127.0.0.1:8090", "the address to listen on (port 0 picks a free port)")
	store := fl.String("store", string(authority.DefaultStore), "the store: sqlite:PATH, or postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=… (shared by any number of instances)")
	keysFile := fl.String("operator-keys", "", "a file of operator keys, one per line")
	verify := fl.String("verification-uri", "", "where a person enters the user code (default: this authority's own consent screen, /consent)")
	burst := fl.Int("delegation-burst", authority.DefaultCreateBurst, "POST /v1/delegations per client address: the burst (0 or less: no limit)")
	perSec := fl.Float64("delegation-rate", authority.DefaultCreatePerSecond, "POST /v1/delegations per client address: requests per second once the burst is spent")
	retention := fl.Duration("retention", authority.DefaultRetention, "how long delegations, sessions and request records are kept past their expiry")
	taskIdle := fl.Duration("task-idle", authority.DefaultTaskIdle, "how long a task nobody writes is kept")
	sweepEvery := fl.Duration("sweep-every", authority.DefaultSweepEvery, "the time between two background sweeps (one instance at a time sweeps)")
	maxPending := fl.Int64("max-pending", authority.DefaultMaxPendingPerAudience, "the most delegations one audience may have waiting for consent (0 or less: no bound)")
	maxPendingAddr := fl.Int64("max-pending-per-address", authority.DefaultMaxPendingPerAddress, "the most delegations one client address may have waiting for consent (0 or less: no bound)")
	metricsAddr := fl.String("metrics-addr", "", "serve GET /metrics on this admin address only, not on --addr (e.g. 127.0.0.1:9090)")
	kekFile := fl.String("kek-file", "", "the key-encryption key the signing keys are sealed with (base64 of 32 bytes, mode 0600); or PLING_AUTHORITY_KEK")
	oldKEKFile := fl.String("old-kek-file", "", "while rotating the KEK: the previous KEK; the keys are sealed again under --kek-file at start")
	sealPlain := fl.Bool("seal-plain-keys", false, "the signing keys stored plain are this authority's own, from before a KEK was set: seal them (without it, a plain key beside a KEK refuses the start)")
	feedPerClient := fl.Int("feed-polls-per-client", authority.DefaultMaxFeedWaitersPerClient, "the revocation feed's long-polls one client address may park on this instance")
	var proxies prefixFlag
	fl.Var(&proxies, "trusted-proxy", "a load balancer's address or CIDR (repeatable): its requests count against the X-Forwarded-For client, for the feed's per-client bound and --delegation-rate")
	aud := audienceFlag{}
	fl.Var(aud, "audience", "a page origin the authority issues for and the patterns it allows, e.g. https://shop.example=orders.*,cart.* (repeatable; default http://127.0.0.1:8080=*)")
	passkeys := addPasskeyFlags(fl)
	if exit, ok := parseNoArgs(fl, args, stderr); !ok {
		return exit
	}
	if len(aud) == 0 {
		aud["http://127.0.0.1:8080"] = []string{"*"}
	}
	spec := authority.StoreSpec(*store)
	if _, _, err := spec.Parse(); err != nil {
		fmt.Fprintf(stderr, "pling authority: --store: %v\n", err)
		return 2
	}
	var opKeys []string
	if *keysFile != "" {
		var err error
		if opKeys, err = readKeysFile(*keysFile); err != nil {
			fmt.Fprintf(stderr, "pling authority: --operator-keys: %v\n", err)
			return 2
		}
	}
	opKeys = append(opKeys, readKeys(strings.NewReader(os.Getenv("PLING_OPERATOR_KEYS")))...)
	if len(opKeys) == 0 {
		fmt.Fprintln(stderr, "pling authority: no operator keys (--operator-keys FILE or PLING_OPERATOR_KEYS): approvals will be impossible")
	}

	kek, oldKEKs, err := authorityKEK(spec, *kekFile, *oldKEKFile, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "pling authority: %v\n", err)
		return 2
	}

	ctx, log, stop, ok := startServerCmd(ctx, "authority", stderr)
	if !ok {
		return 1
	}
	defer stop()
	st, err := authority.Open(ctx, spec)
	if err != nil {
		fmt.Fprintf(stderr, "pling authority: %v\n", err)
		return 1
	}
	defer st.Close()
	srv, err := authority.NewServer(ctx, authority.Config{Store: st, Audiences: aud, OperatorKeys: opKeys,
		VerificationURI: *verify, Logger: log, CreateBurst: limitOff(*burst), CreatePerSecond: *perSec,
		Retention: authority.RetentionConfig{Retention: *retention, TaskIdle: *taskIdle, SweepEvery: *sweepEvery,
			MaxPendingPerAudience: int64(limitOff(int(*maxPending))), MaxPendingPerAddress: int64(limitOff(int(*maxPendingAddr)))},
		SeparateMetrics: *metricsAddr != "",
		KEK:             kek, OldKEKs: oldKEKs, SealPlainKeys: *sealPlain, TrustedProxies: proxies, MaxFeedWaitersPerClient: *feedPerClient,
		Passkeys: passkeys.config()})
	if err != nil {
		fmt.Fprintf(stderr, "pling authority: %v\n", err)
		return 1
	}
	ln, stopAdmin, ok := listenServerCmd("authority", *addr, *metricsAddr, srv.MetricsHandler(), stdout, stderr)
	if !ok {
		return 1
	}
	defer stopAdmin()
	hs := httpserver.Authority(srv.Handler())
	go srv.RunSweeper(ctx)
	log.Info("listening", "addr", ln.Addr().String(), "store", spec) // spec logs redacted
	fmt.Fprintf(stdout, "pling authority: listening on http://%s (store %s)\n", ln.Addr(), spec)
	return serveUntilDone(ctx, hs, ln, 10*time.Second, "authority", stderr)
}

// limitOff maps "0 or less" of a limit flag to Config's "off" (negative).
func limitOff(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// kekEnv holds the authority's key-encryption key (base64 of 32 bytes).
const kekEnv = "PLING_AUTHORITY_KEK"

// authorityKEK finds the KEK: --kek-file, else PLING_AUTHORITY_KEK; on
// PostgreSQL one of them is required; on SQLite without either, PATH.kek
// beside the database is used, made (mode 0600) when absent — a copy of
// the database alone then mints nothing, though a copy of the directory
// does (docs/authority.md "Signing keys at rest").
func authorityKEK(spec authority.StoreSpec, file, oldFile string, stderr io.Writer) (kek []byte, old [][]byte, err error) {
	dialect, path, err := spec.Parse()
	if err != nil {
		return nil, nil, err
	}
	env := os.Getenv(kekEnv)
	switch {
	case file != "" && env != "":
		return nil, nil, fmt.Errorf("both --kek-file and %s are set: give one", kekEnv)
	case file != "":
		if kek, err = authority.ReadKEKFile(file); err != nil {
			return nil, nil, fmt.Errorf("--kek-file: %w", err)
		}
	case env != "":
		if kek, err = authority.ParseKEK(env); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", kekEnv, err)
		}
	case dialect == authority.PostgreSQL:
		return nil, nil, fmt.Errorf("a PostgreSQL store needs a key-encryption key for the signing keys: --kek-file FILE or %s (make one: openssl rand -base64 32)", kekEnv)
	default:
		kf := path + ".kek"
		if _, err := os.Stat(kf); errors.Is(err, os.ErrNotExist) {
			f, err := os.OpenFile(kf, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return nil, nil, fmt.Errorf("making the KEK file: %w", err)
			}
			_, werr := f.WriteString(authority.NewKEK())
			if cerr := f.Close(); werr != nil || cerr != nil {
				return nil, nil, fmt.Errorf("making the KEK file %s: %v", kf, errors.Join(werr, cerr))
			}
			fmt.Fprintf(stderr, "pling authority: made the key-encryption key %s (mode 0600); keep it apart from database backups\n", kf)
		}
		if kek, err = authority.ReadKEKFile(kf); err != nil {
			return nil, nil, fmt.Errorf("KEK file: %w", err)
		}
	}
	if oldFile != "" {
		o, err := authority.ReadKEKFile(oldFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--old-kek-file: %w", err)
		}
		old = append(old, o)
	}
	return kek, old, nil
}
