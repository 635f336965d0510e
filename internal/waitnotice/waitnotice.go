// Package waitnotice carries an in-process caller's hook for an invoke's
// notice that it waits for a person (runtime.Waiting) in the invoke's
// context: package agent puts its hook there, package runtime calls it
// beside the page's own (runtime.WithWaiting), and a transport that
// relays a page's notice calls it too (agent.ReportWaiting). A user of
// the runtime sets runtime.WithWaiting or agent.OnWaiting instead, so this
// is not part of either package's API (docs/style.md "A small public
// API").
//
// With is generic in the notice's type because this package cannot
// import package runtime, which imports it; Hook is not, so that the
// module (which links the runtime but not package agent) carries no
// instance of it.
package waitnotice

import "context"

type key struct{}

// With returns a context whose invokes call f with their notices (T is
// runtime.Waiting).
func With[T any](ctx context.Context, f func(T)) context.Context {
	return context.WithValue(ctx, key{}, f)
}

// Hook is the hook With put in ctx, a func(runtime.Waiting), or nil.
func Hook(ctx context.Context) any { return ctx.Value(key{}) }
