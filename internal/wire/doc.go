// Package wire is what the module's own packages do with the wire types of
// package schema and no user of the docs calls: the result encoders
// generated from the types' json tags (encode_gen.go), the strict request
// decoder (steps 1–5 of the check order, docs/protocol.md §3.3) with the
// member checks generated from the request types' tags (request_gen.go),
// and the protocol's responses.
package wire
