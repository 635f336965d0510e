//go:build unix

package main

import "syscall"

// oNoFollow makes opening a token file fail on a symbolic link, so a
// link swapped in after the Lstat check is not followed either.
const oNoFollow = syscall.O_NOFOLLOW
