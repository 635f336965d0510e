//go:build plinggen

package wire

// Under the plinggen tag (the generator's build) request_gen.go, which may
// be stale, is left out; the generator never decodes a request.

var describeMembers, invokeMembers []string

func decodeDescribeMembers(map[string]any, *Request) (string, string) {
	panic("wire: built with plinggen")
}

func decodeInvokeMembers(map[string]any, *Request) (string, string) {
	panic("wire: built with plinggen")
}
