// Package chromium finds the Chromium binary every launcher in the
// repository starts (agent/cdp's NewAllocator, the conformance host, the
// benchmarks, the tests): one lookup, one default, one headless shell.
// The paths are Debian's, where the project's machines get Chromium; they
// are not API, so a launch on another system names its browser
// (PLING_CHROMIUM, --chromium).
package chromium

import "os"

// Default is Debian's chromium binary.
const Default = "/usr/bin/chromium"

// Path names the browser binary to launch: path when it is set, else
// $PLING_CHROMIUM, else Default. Every launcher in the repository
// looks the browser up here.
func Path(path string) string {
	if path != "" {
		return path
	}
	if p := os.Getenv("PLING_CHROMIUM"); p != "" {
		return p
	}
	return Default
}

// DebianHeadlessShell is where Debian's chromium-headless-shell package
// puts the headless shell: the same Chromium build as Default,
// without the browser's UI layers, so it starts faster (about 0.6× of
// /usr/bin/chromium's time to a page target on the project's machines;
// RATIONALE "Why does a headless launch use Debian's headless shell?").
const DebianHeadlessShell = "/usr/lib/chromium/chromium-headless-shell"

// Headless is the binary a headless launch of bin starts: Debian's
// headless shell when bin is Default and the shell is installed,
// else bin. A browser named any other way (PLING_CHROMIUM, --chromium,
// /usr/lib/chromium/chromium itself) is launched as named.
func Headless(bin string) string { return headlessFor(bin, DebianHeadlessShell) }

func headlessFor(bin, shell string) string {
	if bin != Default {
		return bin
	}
	if st, err := os.Stat(shell); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return bin
	}
	return shell
}
