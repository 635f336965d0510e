package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// The token store: where pling delegate keeps a collected session token
// and where describe, invoke and mcp find it again. One file per page
// origin under $XDG_CONFIG_HOME/pling/tokens (os.UserConfigDir), mode
// 0600 in a 0700 directory.

// tokenDirEnv overrides the token directory (tests, or a shared machine
// where the config directory is not private).
const tokenDirEnv = "PLING_TOKEN_DIR"

// tokenDir is the directory of stored tokens.
func tokenDir() (string, error) {
	if d := os.Getenv(tokenDirEnv); d != "" {
		return d, nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no place for tokens (%v): give --token-file", err)
	}
	return filepath.Join(d, "pling", "tokens"), nil
}

// pageOrigin is the origin of a page URL as a browser spells
// location.origin: scheme://host[:port], lower case, the default port
// dropped. Only http and https pages have one.
func pageOrigin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) page URL", raw)
	}
	host := strings.ToLower(u.Host)
	if (u.Scheme == "http" && strings.HasSuffix(host, ":80")) || (u.Scheme == "https" && strings.HasSuffix(host, ":443")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	return u.Scheme + "://" + host, nil
}

// tokenFileFor is the stored token's path for a page origin:
// http://127.0.0.1:8080 → <dir>/http_127.0.0.1%3A8080.token. The name is
// the scheme, '_', and the host and port with every byte but [a-z0-9.-]
// written %XX: one origin, one name, and no two origins share one
// (localhost:8080 and localhost_8080, [::1]:8080 and [::1:8080] did).
func tokenFileFor(origin string) (string, error) {
	d, err := tokenDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, tokenFileName(origin)), nil
}

// tokenFileName is the file name of origin's token (see tokenFileFor).
func tokenFileName(origin string) string {
	scheme, host, ok := strings.Cut(origin, "://")
	if !ok {
		scheme, host = "", origin
	}
	var b strings.Builder
	b.WriteString(escapeName(scheme) + "_")
	b.WriteString(escapeName(host))
	return b.String() + ".token"
}

func escapeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// writeTokenFile stores tok at path with mode 0600, atomically (a
// temporary file in the same directory, synced, renamed over the old
// one), so a reader sees the old token or the new one, never half. It
// refuses to replace a symbolic link, a non-regular file or a file that
// group or others may read: whoever made such a file meant something else.
func writeTokenFile(path, tok string) error {
	if st, err := os.Lstat(path); err == nil {
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: not replacing it", path)
		case !st.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file: not replacing it", path)
		case runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0:
			return fmt.Errorf("%s is open to group or others (mode %04o): not replacing it", path, st.Mode().Perm())
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".token-*") // mode 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.WriteString(tok + "\n")
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
