//go:build js && wasm

// Command wasm is the Pling module: the runtime compiled with GOOS=js
// GOARCH=wasm into pling.wasm. It registers globalThis.__plingBridge, then
// calls globalThis.__plingReady(bridge) if the loader set it, and serves
// until the page goes away. The same module runs in browsers (js-shim), in
// Node (js-shim/node.js) and in Go programs on wazero (wasm/gojs).
//
// The bridge (every value crosses as JSON text):
//
//	version                          the Surface protocol string
//	init(configJSON, hooks)          build the page runtime once
//	declare(kind, specJSON, fns)     → {handle, code?, message?, error?}
//	dispose(handle)
//	handle(request[, cb])            → responseText or Promise<responseText>;
//	                                 request is text or its bytes (a Uint8Array)
//	cancel(id[, session])            → true when the invoke in flight stopped before it ran
//	tools(session[, cb])             → toolsJSON or Promise<toolsJSON>
//	callTool(session, name, args[, cb]) → responseText or Promise<responseText>
//	messages(lang)                   → JSON text: i18n key → text (errors.*, ui.*)
//	toolText(responseText)           → an invoke's response written for a model (modeltool.Text)
//	lint([cb])                       → Promise<JSON list of the page's declaration mistakes> (pagebridge.Lint)
//	places()                         → JSON list of the markup declarations and where each sits (pagebridge.MarkupPlaces)
//	fixture.{load, handle, advance, calls, declare, dispose, callTool, close}
//	                                 the conformance entry (synchronous), only in
//	                                 the test module built with -tags plingfixture
//	                                 (pling-conform.wasm); pling.wasm has none
//
// handle, tools and callTool give the text at once when the work finishes
// without waiting for JS (a handler that returns a plain value), else a
// Promise of it; the shim takes either through then.
package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hack-pad/safejs"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/internal/pagebridge"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

func main() {
	if err := initJS(); err != nil {
		panic(err)
	}
	bridge, err := newObject(map[string]any{
		"version":  schema.Protocol,
		"init":     fnOf("init", initPage).Value(),
		"declare":  fnOf("declare", declareNoting).Value(),
		"dispose":  fnOf("dispose", dispose).Value(),
		"messages": fnOf("messages", messages).Value(),
		"cancel":   fnOf("cancel", cancelRequest).Value(),
		"toolText": fnOf("toolText", func(args []safejs.Value) (any, error) {
			resp, tooLarge, err := argStringMax(args, 0, 4*schema.MaxRequestBytes)
			if err != nil || tooLarge {
				return "INTERNAL_ERROR: the page's answer could not be read.", nil
			}
			return modeltool.Text([]byte(resp)), nil
		}).Value(),
		// handle(text, windowMs?): windowMs, when a positive number, is
		// how long the caller waits for the answer (the WebMCP mirror's
		// window): an approval the invoke asks for lapses with it.
		"handle": fnOf("handle", func(args []safejs.Value) (any, error) {
			req, refused, err := argText(args, 0, schema.MaxRequestBytes)
			if err != nil {
				return nil, err
			}
			ctx := context.Background()
			if len(args) > 1 && args[1].Type() == safejs.TypeNumber {
				if w, err := args[1].Float(); err == nil && w > 0 && w < 1e9 {
					ctx = runtime.WithCallWindow(ctx, time.Now().UnixMilli()+int64(w))
				}
			}
			return promise(args[1:], func() (string, error) {
				rt, err := pageRuntime()
				if err != nil {
					return "", err
				}
				if refused != "" {
					return string(pagebridge.Refuse(rt, refused)), nil
				}
				return handleGuarded(ctx, rt, req), nil
			})
		}).Value(),
		"tools": fnOf("tools", func(args []safejs.Value) (any, error) {
			session, tooLarge, _ := argStringMax(args, 0, schema.MaxRequestBytes)
			return promise(args[min(1, len(args)):], func() (string, error) {
				rt, err := pageRuntime()
				if err != nil {
					return "", err
				}
				if tooLarge { // what Tools gives such a session, unread
					return "", perr.New(perr.SessionInvalid, "", nil)
				}
				tools, err := modeltool.List(rt, context.Background(), session)
				if err != nil {
					return "", err
				}
				b, err := json.Marshal(tools)
				return string(b), err
			})
		}).Value(),
		// lint() → a promise of the JSON list of the page's declaration
		// mistakes for its author (pagebridge.Lint): pling check, and the
		// console report on development origins.
		"lint": fnOf("lint", func(args []safejs.Value) (any, error) {
			return promise(args, func() (string, error) {
				rt, err := pageRuntime()
				if err != nil {
					return "", err
				}
				page.Lock()
				out := append([]string{}, page.refused...)
				page.Unlock()
				b, err := json.Marshal(append(out, pagebridge.Lint(rt, context.Background())...))
				return string(b), err
			})
		}).Value(),
		// places() → the JSON list of the page's markup declarations,
		// each with where it sits, its status and whether its place looks
		// like the site's users wrote it (pagebridge.MarkupPlaces): pling
		// describe, for the page's author.
		"places": fnOf("places", func(args []safejs.Value) (any, error) {
			rt, err := pageRuntime()
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(pagebridge.MarkupPlaces(rt))
			return string(b), err
		}).Value(),
		"callTool": fnOf("callTool", func(args []safejs.Value) (any, error) {
			// Each text is judged by its length before it is copied:
			// CallTool refuses any longer than MaxRequestBytes unread.
			session, big0, _ := argStringMax(args, 0, schema.MaxRequestBytes)
			name, big1, err := argStringMax(args, 1, schema.MaxRequestBytes)
			if err != nil {
				return nil, err
			}
			arguments, big2, _ := argStringMax(args, 2, schema.MaxRequestBytes)
			return promise(args[min(3, len(args)):], func() (string, error) {
				rt, err := pageRuntime()
				if err != nil {
					return "", err
				}
				if big0 || big1 || big2 {
					return string(pagebridge.Refuse(rt, wire.ReasonTooLarge)), nil
				}
				return string(modeltool.Call(rt, context.Background(), session, name, arguments)), nil
			})
		}).Value(),
	})
	if err != nil {
		panic(err)
	}
	if err := setTestEntries(bridge); err != nil {
		panic(err)
	}
	if err := global.Set("__plingBridge", bridge); err != nil {
		panic(err)
	}
	// Signal readiness explicitly instead of relying on the order of
	// output (docs/hosts.md §2 "Register before you print").
	if ready, err := global.Get("__plingReady"); err == nil && ready.Type() == safejs.TypeFunction {
		_, _ = ready.Invoke(bridge)
	}
	select {}
}

// handleGuarded answers a request; a panic anywhere on the way (the bridge
// included) is an INTERNAL_ERROR response, and the module keeps serving.
// globalThis.__plingTestPanic, when true, panics on purpose: the seam the
// tests use to prove this.
func handleGuarded(ctx context.Context, rt *runtime.Runtime, req []byte) (out string) {
	defer func() {
		if r := recover(); r != nil {
			var id *string
			if d, rej := wire.DecodeRequest(req); rej == nil {
				id = &d.ID
			}
			b, _ := schema.Encode(wire.FailureResponse(id, perr.New(perr.InternalError, "", nil)))
			out = string(b)
		}
	}()
	if v, err := global.Get("__plingTestPanic"); err == nil {
		if b, _ := v.Truthy(); b {
			panic("pling: test panic in the bridge")
		}
	}
	return string(rt.Handle(ctx, req))
}

// newObject makes a JS object with the given properties.
func newObject(props map[string]any) (safejs.Value, error) {
	ctor, err := global.Get("Object")
	if err != nil {
		return safejs.Undefined(), err
	}
	obj, err := ctor.New()
	if err != nil {
		return safejs.Undefined(), err
	}
	for k, v := range props {
		if err := obj.Set(k, v); err != nil {
			return safejs.Undefined(), err
		}
	}
	return obj, nil
}

func tokenVerifier(keys map[string]string, origin string) (runtime.SessionVerifier, error) {
	ks := map[string]ed25519.PublicKey{}
	for kid, k := range keys {
		b, err := base64.RawURLEncoding.DecodeString(k)
		if err != nil || len(b) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("pling: key %q is not a base64url Ed25519 public key", kid)
		}
		ks[kid] = b
	}
	return runtime.NewTokenVerifier(ks, origin, nil)
}
