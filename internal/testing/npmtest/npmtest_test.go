package npmtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/hammer"
)

// The test binary stands in for npm when NPMTEST_FAKE_NPM names how
// (fakeNPM), and for an installer process of its own when
// NPMTEST_INSTALLER names a cache directory (TestInstallerProcess).
func TestMain(m *testing.M) {
	if mode := os.Getenv("NPMTEST_FAKE_NPM"); mode != "" {
		if err := fakeNPM(mode, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "fake npm:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeNPM does what `npm install --prefix DIR name@version…` does to DIR,
// slowly: each package's package.json first, the rest of it a moment
// later. mode "fail" exits after the package.json files; "killed" kills
// the process that ran it (the installer) there.
func fakeNPM(mode string, args []string) error {
	var prefix string
	var specs []string
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--prefix" && i+1 < len(args):
			prefix = args[i+1]
			i++
		case !strings.HasPrefix(a, "-"):
			specs = append(specs, a)
		}
	}
	if len(args) == 0 || args[0] != "install" || prefix == "" || len(specs) == 0 {
		return fmt.Errorf("not an install: %q", args)
	}
	for _, s := range specs {
		at := strings.LastIndex(s, "@")
		dir := PackageDir(prefix, s[:at])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		meta := fmt.Sprintf(`{"name":%q,"version":%q}`, s[:at], s[at+1:])
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(meta), 0o644); err != nil {
			return err
		}
	}
	switch mode {
	case "fail":
		return errors.New("the registry went away")
	case "killed":
		p, err := os.FindProcess(os.Getppid())
		if err == nil {
			err = p.Kill()
		}
		return fmt.Errorf("killed the installer: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	for _, s := range specs {
		dir := PackageDir(prefix, s[:strings.LastIndex(s, "@")])
		if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte("export {};\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// testPackages are what the installers here install: a scoped package
// and a plain one, into one folder.
var testPackages = []Package{{"@scope/a", "1.0.0"}, {"b", "2.0.0"}}

// cachedBy installs testPackages into cacheDir with the fake npm in mode.
func cachedBy(t testing.TB, cacheDir, mode string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return Cached(t.Context(), cacheDir, self, []string{"NPMTEST_FAKE_NPM=" + mode}, nil, testPackages...)
}

// whole reports what of testPackages a folder Cached returned lacks.
func whole(folder string) error {
	for _, p := range testPackages {
		for _, f := range []string{"package.json", "index.js"} {
			if _, err := os.Stat(filepath.Join(PackageDir(folder, p.Name), f)); err != nil {
				return fmt.Errorf("%s is not whole: %v", p, err)
			}
		}
	}
	return nil
}

// TestInstallerProcess is an installer process of
// TestCachedInstallersAtOnce and TestCachedNeverReusesAPartialInstall;
// run directly, it does nothing.
func TestInstallerProcess(t *testing.T) {
	cacheDir := os.Getenv("NPMTEST_INSTALLER")
	if cacheDir == "" {
		t.Skip("an installer process of the other tests")
	}
	folder, err := cachedBy(t, cacheDir, os.Getenv("NPMTEST_INSTALLER_MODE"))
	if err == nil {
		err = whole(folder)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// installerProcess is a test binary running TestInstallerProcess on
// cacheDir with the fake npm in mode.
func installerProcess(t *testing.T, cacheDir, mode string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestInstallerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NPMTEST_INSTALLER="+cacheDir, "NPMTEST_INSTALLER_MODE="+mode)
	return cmd
}

// TestCachedInstallersAtOnce: goroutines and processes that install the
// same packages into one cache at the same time each get a whole install,
// never one another's half-written folder, and leave no temporary folder.
func TestCachedInstallersAtOnce(t *testing.T) {
	cacheDir := t.TempDir()
	// Even ones are processes, odd ones goroutines of this one.
	hammer.Run(6, func(i int) {
		if i%2 == 0 {
			if out, err := installerProcess(t, cacheDir, "slow").CombinedOutput(); err != nil {
				t.Errorf("installer process: %v\n%s", err, out)
			}
			return
		}
		folder, err := cachedBy(t, cacheDir, "slow")
		if err == nil {
			err = whole(folder)
		}
		if err != nil {
			t.Error(err)
		}
	})
	left, _ := os.ReadDir(cacheDir)
	if len(left) != 1 {
		t.Errorf("the cache holds %d entries, want the one install: %v", len(left), left)
	}
}

// TestCachedNeverReusesAPartialInstall: an install that npm failed, or
// whose installer process was killed, half-way is not taken for a
// finished one: the next installer installs again.
func TestCachedNeverReusesAPartialInstall(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, cacheDir string)
	}{
		{"npm fails", func(t *testing.T, cacheDir string) {
			if _, err := cachedBy(t, cacheDir, "fail"); !errors.Is(err, ErrInstall) {
				t.Fatalf("a failing npm: %v, want ErrInstall", err)
			}
		}},
		{"the installer is killed", func(t *testing.T, cacheDir string) {
			if out, err := installerProcess(t, cacheDir, "killed").CombinedOutput(); err == nil {
				t.Fatalf("the installer process lived:\n%s", out)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cacheDir := t.TempDir()
			tc.spoil(t, cacheDir)
			folder, err := cachedBy(t, cacheDir, "slow")
			if err != nil {
				t.Fatal(err)
			}
			if err := whole(folder); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCachedRemovesWhatKilledInstallersLeft: an install removes the
// temporary folders of its entry that killed installers left a day ago,
// not those of installers that may still be at work.
func TestCachedRemovesWhatKilledInstallersLeft(t *testing.T) {
	cacheDir := t.TempDir()
	if out, err := installerProcess(t, cacheDir, "killed").CombinedOutput(); err == nil {
		t.Fatalf("the installer process lived:\n%s", out)
	}
	left, _ := filepath.Glob(filepath.Join(cacheDir, "*.tmp*"))
	if len(left) != 1 {
		t.Fatalf("the killed installer left %v, want its temporary folder", left)
	}
	old := strings.Replace(left[0], ".tmp", ".tmpold", 1)
	if err := os.Rename(left[0], old); err != nil {
		t.Fatal(err)
	}
	dayAgo := time.Now().Add(-staleAfter - time.Minute)
	if err := os.Chtimes(old, dayAgo, dayAgo); err != nil {
		t.Fatal(err)
	}
	if out, err := installerProcess(t, cacheDir, "killed").CombinedOutput(); err == nil {
		t.Fatalf("the installer process lived:\n%s", out)
	}
	if _, err := cachedBy(t, cacheDir, "slow"); err != nil {
		t.Fatal(err)
	}
	left, _ = filepath.Glob(filepath.Join(cacheDir, "*.tmp*"))
	if len(left) != 1 || left[0] == old {
		t.Errorf("left %v, want only the recent installer's folder (not %s)", left, old)
	}
}

// TestCachedRefusesWhatIsInTheWay: a folder in an entry's place that no
// installer finished is neither used nor removed.
func TestCachedRefusesWhatIsInTheWay(t *testing.T) {
	cacheDir := t.TempDir()
	folder, err := cachedBy(t, cacheDir, "slow")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(folder, finished)); err != nil {
		t.Fatal(err)
	}
	if _, err := cachedBy(t, cacheDir, "slow"); err == nil || !strings.Contains(err.Error(), "not a finished install") {
		t.Errorf("an unfinished folder in place: %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(PackageDir(folder, "b"), "index.js")); err != nil {
		t.Errorf("the folder in the way was touched: %v", err)
	}
}
