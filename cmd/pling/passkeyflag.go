package main

import (
	"flag"

	"github.com/pling-go/pling/authority"
)

// passkeyFlags are the flags that turn on passkeys in an authority that
// this process runs: pling authority's, and pling serve --authority
// embedded's (docs/authority.md "Passkeys").
type passkeyFlags struct {
	origin    *string
	approvals audienceFlag
}

func addPasskeyFlags(fl *flag.FlagSet) passkeyFlags {
	p := passkeyFlags{approvals: audienceFlag{}}
	p.origin = fl.String("passkey-origin", "", "this authority's origin as people's browsers open its screens (https://…; localhost for a test): turns on passkeys, registered at /passkeys")
	fl.Var(p.approvals, "passkey-approvals", "an audience and the capabilities whose approvals need the person's passkey, e.g. https://shop.example=refund@*,delete@* (repeatable; needs --passkey-origin)")
	return p
}

// set reports whether any passkey flag was given.
func (p passkeyFlags) set() bool { return *p.origin != "" || len(p.approvals) > 0 }

func (p passkeyFlags) config() authority.PasskeyConfig {
	return authority.PasskeyConfig{Origin: *p.origin, Approvals: p.approvals}
}
