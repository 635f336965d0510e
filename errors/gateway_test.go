package errors

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRenderGateway(t *testing.T) {
	tests := []struct {
		name       string
		err        *Error
		wantStatus int
		wantBody   string
	}{
		{"INVALID_JSON", New(GatewayInvalidJSON, "", nil), 400,
			`{"error":{"message":"The request body is not valid JSON","type":"invalid_request_error","param":null,"code":"INVALID_JSON"}}`},
		{"MODEL_REQUIRED", New(GatewayModelRequired, "", nil), 400,
			`{"error":{"message":"The request names no model","type":"invalid_request_error","param":null,"code":"MODEL_REQUIRED"}}`},
		{"MODEL_NOT_ALLOWED", New(GatewayModelNotAllowed, "", nil), 403,
			`{"error":{"message":"The model is not allowed here","type":"permission_error","param":null,"code":"MODEL_NOT_ALLOWED"}}`},
		{"UNAUTHORIZED", New(GatewayUnauthorized, "", nil), 401,
			`{"error":{"message":"Missing or invalid credentials","type":"authentication_error","param":null,"code":"UNAUTHORIZED"}}`},
		{"PAYLOAD_TOO_LARGE", New(GatewayPayloadTooLarge, "", nil), 413,
			`{"error":{"message":"The request body is too large","type":"invalid_request_error","param":null,"code":"PAYLOAD_TOO_LARGE"}}`},
		{"UPSTREAM_TIMEOUT", New(GatewayUpstreamTimeout, "", nil), 504,
			`{"error":{"message":"The upstream model did not answer in time","type":"timeout_error","param":null,"code":"UPSTREAM_TIMEOUT"}}`},
		{"UPSTREAM_RATE_LIMITED", New(GatewayUpstreamRateLimited, "", nil), 429,
			`{"error":{"message":"The upstream model is rate limited","type":"rate_limit_error","param":null,"code":"UPSTREAM_RATE_LIMITED"}}`},
		{"GATEWAY_MISCONFIGURED", New(GatewayMisconfigured, "", nil), 500,
			`{"error":{"message":"The gateway is misconfigured","type":"server_error","param":null,"code":"GATEWAY_MISCONFIGURED"}}`},
		{"GATEWAY_RATE_LIMITED", New(GatewayRateLimited, "", nil), 429,
			`{"error":{"message":"Too many requests to this gateway","type":"rate_limit_error","param":null,"code":"GATEWAY_RATE_LIMITED"}}`},
		{"UPSTREAM_UNAVAILABLE", New(GatewayUpstreamUnavailable, "", nil), 502,
			`{"error":{"message":"The upstream model failed to answer","type":"server_error","param":null,"code":"UPSTREAM_UNAVAILABLE"}}`},
		{"message given", New(GatewayModelNotAllowed, "model gpt-x is not allowed", nil), 403,
			`{"error":{"message":"model gpt-x is not allowed","type":"permission_error","param":null,"code":"MODEL_NOT_ALLOWED"}}`},
		{"details and retry stay off the body", New(GatewayUpstreamRateLimited, "", map[string]any{"upstream": "x"}).WithRetryAfter(900), 429,
			`{"error":{"message":"The upstream model is rate limited","type":"rate_limit_error","param":null,"code":"UPSTREAM_RATE_LIMITED"}}`},
		// A code of another namespace is not leaked through the gateway,
		// nor is its message (docs/protocol.md: never reuse Surface codes).
		{"surface code", New(RateLimited, "session s-1 over its limit", nil), 500,
			`{"error":{"message":"The gateway is misconfigured","type":"server_error","param":null,"code":"GATEWAY_MISCONFIGURED"}}`},
		{"action code", New(PermissionDenied, "", nil), 500,
			`{"error":{"message":"The gateway is misconfigured","type":"server_error","param":null,"code":"GATEWAY_MISCONFIGURED"}}`},
		{"delegation code", New(DelegationExpired, "", nil), 500,
			`{"error":{"message":"The gateway is misconfigured","type":"server_error","param":null,"code":"GATEWAY_MISCONFIGURED"}}`},
		{"unknown code", New("QUOTA_EXCEEDED", "over quota", nil), 500,
			`{"error":{"message":"The gateway is misconfigured","type":"server_error","param":null,"code":"GATEWAY_MISCONFIGURED"}}`},
		{"wrapped cause never rendered", Wrap(GatewayUpstreamTimeout, "", errorString("dial 10.0.0.7:443: i/o timeout")), 504,
			`{"error":{"message":"The upstream model did not answer in time","type":"timeout_error","param":null,"code":"UPSTREAM_TIMEOUT"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := RenderGateway(tt.err)
			if status != tt.wantStatus {
				t.Errorf("%s: status %d, want %d", tt.name, status, tt.wantStatus)
			}
			if string(body) != tt.wantBody {
				t.Errorf("%s: body\n got %s\nwant %s", tt.name, body, tt.wantBody)
			}
			// The body has exactly the OpenAI-compatible shape.
			var shape map[string]map[string]any
			if err := json.Unmarshal(body, &shape); err != nil {
				t.Fatalf("%s: body is not JSON: %v", tt.name, err)
			}
			inner, ok := shape["error"]
			if !ok || len(shape) != 1 {
				t.Fatalf("%s: body is not {\"error\":{…}}: %s", tt.name, body)
			}
			keys := slices.Sorted(func(yield func(string) bool) {
				for k := range inner {
					if !yield(k) {
						return
					}
				}
			})
			if diff := cmp.Diff([]string{"code", "message", "param", "type"}, keys); diff != "" {
				t.Errorf("%s: error object keys (-want +got):\n%s", tt.name, diff)
			}
			if inner["param"] != nil {
				t.Errorf("%s: param = %v, want null", tt.name, inner["param"])
			}
		})
	}
	t.Run("every gateway code renders with its own status", func(t *testing.T) {
		for _, c := range Codes(Gateway) {
			status, body := RenderGateway(New(c, "", nil))
			var b GatewayBody
			if err := json.Unmarshal(body, &b); err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			if status != GatewayHTTPStatus(c) || b.Error.Code != c || b.Error.Type != GatewayErrorType(c) {
				t.Errorf("%s: rendered %d %+v", c, status, b.Error)
			}
		}
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }

func TestGatewayErrorType(t *testing.T) {
	tests := []struct {
		code Code
		want string
	}{
		{"INVALID_JSON", "invalid_request_error"},
		{"MODEL_REQUIRED", "invalid_request_error"},
		{"MODEL_NOT_ALLOWED", "permission_error"},
		{"UNAUTHORIZED", "authentication_error"},
		{"PAYLOAD_TOO_LARGE", "invalid_request_error"},
		{"UPSTREAM_TIMEOUT", "timeout_error"},
		{"UPSTREAM_RATE_LIMITED", "rate_limit_error"},
		{"GATEWAY_MISCONFIGURED", "server_error"},
		{"RATE_LIMITED", "server_error"},
		{"NOT_A_CODE", "server_error"},
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			if got := GatewayErrorType(tt.code); got != tt.want {
				t.Errorf("GatewayErrorType(%s) = %q, want %q", tt.code, got, tt.want)
			}
		})
	}
}
