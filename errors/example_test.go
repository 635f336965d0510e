package errors_test

import (
	"encoding/json"
	"fmt"

	perr "github.com/pling-go/pling/errors"
)

func ExampleNew() {
	// An empty message takes the code's default English message; details
	// are redacted when the error is made.
	e := perr.New(perr.RateLimited, "", map[string]any{
		"window":        "1m",
		"authorization": "Bearer abcdefghijklmnop",
	}).WithRetryAfter(1500)

	fmt.Println(e)
	b, _ := json.Marshal(e)
	fmt.Println(string(b))
	// Output:
	// RATE_LIMITED: Too many requests
	// {"code":"RATE_LIMITED","message":"Too many requests","retryAfterMs":1500,"details":{"authorization":"[REDACTED]","window":"1m"}}
}

func ExampleLookup() {
	e, _ := perr.Lookup(perr.InternalError)
	fmt.Println(e.Namespace, e.HTTPStatus, e.Executed, e.Recovery, e.Retriable)
	fmt.Println(e.Message.In("en"))
	fmt.Println(e.Message.In("zh-CN"))
	fmt.Println(e.MessageKey(), e.ActionKey())
	// Output:
	// surface 500 unconfirmed observe false
	// Internal error; business success is unknown
	// 协议实现内部异常；不得推断业务成功
	// errors.INTERNAL_ERROR errors.INTERNAL_ERROR.action
}

func ExampleParseCode() {
	// Decoding is lenient: a newer peer's code is kept, not rejected.
	c, known := perr.ParseCode("QUOTA_EXCEEDED")
	fmt.Println(c, known)
	// A reserved code is read as itself and written as its parent.
	c, known = perr.ParseCode("DELEGATION_AUDIENCE_MISMATCH")
	b, _ := c.MarshalText()
	fmt.Println(c, known, string(b))
	// Output:
	// QUOTA_EXCEEDED false
	// DELEGATION_AUDIENCE_MISMATCH true DELEGATION_BINDING_MISMATCH
}

func ExampleRedact() {
	d := perr.Redact(map[string]any{
		"headers": []any{
			map[string]any{"name": "Authorization", "value": "Basic dXNlcjpwYXNz"},
			map[string]any{"name": "Accept", "value": "application/json"},
		},
		"note":     "upstream rejected key sk-proj-abcdefghijklmnop",
		"password": "hunter2",
		"attempt":  2,
	})
	b, _ := json.Marshal(d)
	fmt.Println(string(b))
	// Output:
	// {"attempt":2,"headers":[{"name":"Authorization","value":"[REDACTED]"},{"name":"Accept","value":"application/json"}],"note":"upstream rejected key [REDACTED]","password":"[REDACTED]"}
}

func ExampleRenderGateway() {
	status, body := perr.RenderGateway(perr.New(perr.GatewayModelNotAllowed, "", nil))
	fmt.Println(status, string(body))

	// A code of another namespace never leaks through the gateway.
	status, body = perr.RenderGateway(perr.New(perr.RateLimited, "", nil))
	fmt.Println(status, string(body))
	// Output:
	// 403 {"error":{"message":"The model is not allowed here","type":"permission_error","param":null,"code":"MODEL_NOT_ALLOWED"}}
	// 500 {"error":{"message":"The gateway is misconfigured","type":"server_error","param":null,"code":"GATEWAY_MISCONFIGURED"}}
}
