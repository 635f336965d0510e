package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// The session token of describe, invoke and mcp. A token on the command
// line shows in the process list (ps, /proc/PID/cmdline) to every user of
// the machine, so it may also come from a file or the environment.

// sessionEnv is the environment variable that holds a session token.
const sessionEnv = "PLING_SESSION"

// maxSessionFile bounds what --session-file reads: a token is at most
// runtime.MaxTokenLen (4096) bytes; a longer file is not a token.
const maxSessionFile = 8 << 10

// sessionHelp is the usage text on where the token comes from.
const sessionHelp = `The session token: --session TOKEN, or --session-file PATH (or its other name
--token-file; a file only its owner can read: chmod 600), or the environment variable
` + sessionEnv + `, or else the token pling delegate stored for the page's origin, when
there is one. A flag wins over the environment; two flags together are a usage error.
Prefer a file or the environment: a token on the command line shows in the process list.`

// sessionFlags are the --session and --session-file flags of a command.
type sessionFlags struct{ token, file, tokenFile *string }

// addSessionFlags registers --session and --session-file on fl.
func addSessionFlags(fl *flag.FlagSet) sessionFlags {
	return sessionFlags{
		token: fl.String("session", "", "the session token to send (visible in the process list: prefer --session-file or $"+sessionEnv+")"),
		file:  fl.String("session-file", "", "read the session token from this file (only its owner may read it)"),
		// The name pling delegate --token-file writes under.
		tokenFile: fl.String("token-file", "", "the same as --session-file (the file pling delegate wrote)"),
	}
}

// resolve returns the session token ("" for none) and where it came
// from ("" unless the stored one): --session, else --session-file or
// --token-file, else $PLING_SESSION, else the token pling delegate stored
// for target's origin when target is a page URL and that file exists. An
// error is a usage error (exit status 2) and never contains the token.
func (s sessionFlags) resolve(getenv func(string) string, target string) (tok, stored string, err error) {
	file := *s.file
	if *s.tokenFile != "" {
		if file != "" {
			return "", "", errors.New("give --session-file or --token-file, not both")
		}
		file = *s.tokenFile
	}
	switch {
	case *s.token != "" && file != "":
		return "", "", errors.New("give --session or --session-file, not both")
	case *s.token != "":
		return *s.token, "", nil
	case file != "":
		tok, err := readSessionFile(file)
		return tok, "", err
	}
	if tok := strings.TrimSpace(getenv(sessionEnv)); tok != "" {
		return tok, "", nil
	}
	origin, err := pageOrigin(target)
	if err != nil {
		return "", "", nil // fixture:PATH or no target: nothing stored for it
	}
	path, err := tokenFileFor(origin)
	if err != nil {
		return "", "", nil
	}
	if _, err := os.Lstat(path); err != nil {
		return "", "", nil
	}
	tok, err = readSessionFile(path)
	return tok, path, err
}

// readSessionFile reads a token file: one token, surrounding white space
// ignored. A file that group or others may read is refused, as ssh refuses
// such a private key: the token in it is no secret any more.
// openNoFollow opens path for reading without following a symbolic
// link at its end (where the system can refuse one).
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
}

func readSessionFile(path string) (string, error) {
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&os.ModeSymlink != 0 {
		return "", fmt.Errorf("session file %s is a symbolic link: give the file itself", path)
	}
	f, err := openNoFollow(path)
	if err != nil {
		return "", fmt.Errorf("session file: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("session file: %v", err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("session file %s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("session file %s is open to group or others (mode %04o): chmod 600 %s", path, st.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSessionFile+1))
	if err != nil {
		return "", fmt.Errorf("session file: %v", err)
	}
	if len(b) > maxSessionFile {
		return "", fmt.Errorf("session file %s is longer than %d bytes: not a token", path, maxSessionFile)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("session file %s is empty", path)
	}
	return tok, nil
}

// sessionToken resolves the command's token, printing a failure as
// "pling CMD: …"; ok false means exit with status 2.
func sessionToken(s sessionFlags, cmd, target string, stderr io.Writer) (token string, ok bool) {
	tok, stored, err := s.resolve(os.Getenv, target)
	if err != nil {
		fmt.Fprintf(stderr, "pling %s: %v\n", cmd, err)
		return "", false
	}
	if stored != "" {
		fmt.Fprintf(stderr, "pling %s: using the session stored in %s\n", cmd, stored)
	}
	return tok, true
}

// firstArg is the first positional argument, or "".
func firstArg(pos []string) string {
	if len(pos) == 0 {
		return ""
	}
	return pos[0]
}
