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
const sessionHelp = `The session token: --session TOKEN, or --session-file PATH (a file only its owner can
read: chmod 600), or the environment variable ` + sessionEnv + `. A flag wins over
the environment; --session and --session-file together are a usage error. Prefer the
file or the environment: a token on the command line shows in the process list.`

// sessionFlags are the --session and --session-file flags of a command.
type sessionFlags struct{ token, file *string }

// addSessionFlags registers --session and --session-file on fl.
func addSessionFlags(fl *flag.FlagSet) sessionFlags {
	return sessionFlags{
		token: fl.String("session", "", "the session token to send (visible in the process list: prefer --session-file or $"+sessionEnv+")"),
		file:  fl.String("session-file", "", "read the session token from this file (only its owner may read it)"),
	}
}

// resolve returns the session token ("" for none): --session, else
// --session-file, else $PLING_SESSION. An error is a usage error (exit
// status 2) and never contains the token.
func (s sessionFlags) resolve(getenv func(string) string) (string, error) {
	switch {
	case *s.token != "" && *s.file != "":
		return "", errors.New("give --session or --session-file, not both")
	case *s.token != "":
		return *s.token, nil
	case *s.file != "":
		return readSessionFile(*s.file)
	}
	return strings.TrimSpace(getenv(sessionEnv)), nil
}

// readSessionFile reads a token file: one token, surrounding white space
// ignored. A file that group or others may read is refused, as ssh refuses
// such a private key: the token in it is no secret any more.
func readSessionFile(path string) (string, error) {
	f, err := os.Open(path)
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
func sessionToken(s sessionFlags, cmd string, stderr io.Writer) (token string, ok bool) {
	tok, err := s.resolve(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "pling %s: %v\n", cmd, err)
		return "", false
	}
	return tok, true
}
