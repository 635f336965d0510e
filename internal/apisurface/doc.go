// Package apisurface holds the golden lists of the exported API of every
// public package (testdata/*.api) and the test that keeps them current,
// so that growing or changing what users import is a decision made in a
// diff, not an accident.
package apisurface
