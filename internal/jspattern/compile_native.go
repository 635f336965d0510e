//go:build !js

package jspattern

import "github.com/dlclark/regexp2"

// Compile compiles a pattern for repeated tests: here, outside the module,
// as Regexp2's rewrite in regexp2 (the wazero host answers the module's
// RegExp the same way). A pattern Check refuses is an error.
func Compile(p string) (func(s string) bool, error) {
	q, err := Regexp2(p)
	if err != nil {
		return nil, err
	}
	re, err := regexp2.Compile(q, regexp2.None)
	if err != nil {
		return nil, err
	}
	return func(s string) bool {
		ok, err := re.MatchString(s)
		return err == nil && ok
	}, nil
}

// Regexp2 returns p rewritten for regexp2's default (.NET) mode with the
// meaning ECMAScript (u flag, no other flag) gives it, unanchored as
// RegExp.prototype.test is. A pattern Check refuses is an error.
func Regexp2(p string) (string, error) {
	return parse(p)
}
