package errors

import "encoding/json"

// GatewayErrorType maps a gateway code to the "type" of an OpenAI-compatible
// error body.
func GatewayErrorType(c Code) string {
	switch c {
	case GatewayInvalidJSON, GatewayModelRequired, GatewayPayloadTooLarge:
		return "invalid_request_error"
	case GatewayModelNotAllowed:
		return "permission_error"
	case GatewayUnauthorized:
		return "authentication_error"
	case GatewayUpstreamRateLimited, GatewayRateLimited:
		return "rate_limit_error"
	case GatewayUpstreamTimeout:
		return "timeout_error"
	case GatewayMisconfigured:
		return "server_error"
	}
	return "server_error"
}

// GatewayBody is the OpenAI-compatible error body:
//
//	{"error":{"message":…,"type":…,"param":null,"code":…}}
type GatewayBody struct {
	Error GatewayBodyError `json:"error"`
}

// GatewayBodyError is the inner object of GatewayBody.
type GatewayBodyError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    Code    `json:"code"`
}

// RenderGateway renders a gateway error as its HTTP status and an
// OpenAI-compatible JSON body. An error of another namespace is not leaked
// through the gateway: it renders as GATEWAY_MISCONFIGURED, because a
// gateway that lets a foreign code escape is misconfigured (docs/protocol.md: never
// reuse Surface codes for gateway failures).
func RenderGateway(e *Error) (status int, body []byte) {
	code, msg := e.Code(), e.Message()
	if ns, ok := code.Namespace(); !ok || ns != Gateway {
		code = GatewayMisconfigured
		msg = defaultRegistry().entries[code].Message.En
	}
	b, _ := json.Marshal(GatewayBody{Error: GatewayBodyError{Message: msg, Type: GatewayErrorType(code), Code: code}})
	return GatewayHTTPStatus(code), b
}
