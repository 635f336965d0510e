//go:build !unix

package main

// oNoFollow is 0 where the system has no O_NOFOLLOW: the Lstat check
// before the open is all there is.
const oNoFollow = 0
