package errors

// Surface protocol codes: carried as ok:false (docs/protocol.md §5.1,
// docs/protocol.md §5.1). The set is fixed by the protocol.
const (
	InvalidRequest             Code = "INVALID_REQUEST"
	ProtocolVersionUnsupported Code = "PROTOCOL_VERSION_UNSUPPORTED"
	MethodNotSupported         Code = "METHOD_NOT_SUPPORTED"
	CapabilityNotExposed       Code = "CAPABILITY_NOT_EXPOSED"
	SessionRequired            Code = "SESSION_REQUIRED"
	SessionInvalid             Code = "SESSION_INVALID"
	SessionExpired             Code = "SESSION_EXPIRED"
	SessionRevoked             Code = "SESSION_REVOKED"
	RateLimited                Code = "RATE_LIMITED"
	RateLimitUnavailable       Code = "RATE_LIMIT_UNAVAILABLE"
	ReplayDetected             Code = "REPLAY_DETECTED"
	ReplayGuardUnavailable     Code = "REPLAY_GUARD_UNAVAILABLE"
	InternalError              Code = "INTERNAL_ERROR"
)

// Action (business) codes: carried in result.error of an ok:true response
// (docs/protocol.md §5.2). The set is fixed by the protocol.
const (
	DuplicateActionID    Code = "DUPLICATE_ACTION_ID"
	DuplicateStateKey    Code = "DUPLICATE_STATE_KEY"
	DuplicateGuideTarget Code = "DUPLICATE_GUIDE_TARGET"
	ActionNotFound       Code = "ACTION_NOT_FOUND"
	InvalidArgs          Code = "INVALID_ARGS"
	InvalidParams        Code = "INVALID_PARAMS"
	PermissionDenied     Code = "PERMISSION_DENIED"
	ActionUnavailable    Code = "ACTION_UNAVAILABLE"
	ExecutionFailed      Code = "EXECUTION_FAILED"
	ExpectationFailed    Code = "EXPECTATION_FAILED"
	HandoffCancelled     Code = "HANDOFF_CANCELLED"
	HandoffTimeout       Code = "HANDOFF_TIMEOUT"
	HandoffFailed        Code = "HANDOFF_FAILED"
	StepFailed           Code = "STEP_FAILED"
	HookBlocked          Code = "HOOK_BLOCKED"
	LoopDetected         Code = "LOOP_DETECTED"
)

// Delegation codes. The source of the protocol describes the frozen map by meaning (request
// invalid, credential invalid, binding mismatch, not found, revoked,
// expired, internal) without spelling the codes; the names are ours and
// carry the namespace as a prefix so that no code appears in two
// namespaces (RATIONALE.md).
const (
	DelegationRequestInvalid    Code = "DELEGATION_REQUEST_INVALID"
	DelegationCredentialInvalid Code = "DELEGATION_CREDENTIAL_INVALID"
	DelegationBindingMismatch   Code = "DELEGATION_BINDING_MISMATCH"
	DelegationNotFound          Code = "DELEGATION_NOT_FOUND"
	DelegationRevoked           Code = "DELEGATION_REVOKED"
	DelegationExpired           Code = "DELEGATION_EXPIRED"
	DelegationInternal          Code = "DELEGATION_INTERNAL"

	// DelegationAudienceMismatch is reserved: a finer binding mismatch
	// (token minted for another origin). Until it ships,
	// DelegationBindingMismatch is produced.
	DelegationAudienceMismatch Code = "DELEGATION_AUDIENCE_MISMATCH"
)

// Continuity authority codes, named by us from docs/protocol.md §5.4.
const (
	ContinuityTaskExists         Code = "CONTINUITY_TASK_EXISTS"
	ContinuityTaskNotFound       Code = "CONTINUITY_TASK_NOT_FOUND"
	ContinuityRevisionConflict   Code = "CONTINUITY_REVISION_CONFLICT"
	ContinuityLeaseHeld          Code = "CONTINUITY_LEASE_HELD"
	ContinuityLeaseExpired       Code = "CONTINUITY_LEASE_EXPIRED"
	ContinuityLeaseRevoked       Code = "CONTINUITY_LEASE_REVOKED"
	ContinuityOwnerMismatch      Code = "CONTINUITY_OWNER_MISMATCH"
	ContinuityUnauthorized       Code = "CONTINUITY_UNAUTHORIZED"
	ContinuityStorageUnavailable Code = "CONTINUITY_STORAGE_UNAVAILABLE"
	ContinuityInvalidState       Code = "CONTINUITY_INVALID_STATE"

	// ContinuityStorageTimeout is reserved: a storage call that timed out,
	// as distinct from storage that is down. Until it ships,
	// ContinuityStorageUnavailable is produced.
	ContinuityStorageTimeout Code = "CONTINUITY_STORAGE_TIMEOUT"
)

// Gateway codes (docs/protocol.md §5.5), rendered as an OpenAI-compatible body.
const (
	GatewayInvalidJSON         Code = "INVALID_JSON"
	GatewayModelRequired       Code = "MODEL_REQUIRED"
	GatewayModelNotAllowed     Code = "MODEL_NOT_ALLOWED"
	GatewayUnauthorized        Code = "UNAUTHORIZED"
	GatewayPayloadTooLarge     Code = "PAYLOAD_TOO_LARGE"
	GatewayUpstreamTimeout     Code = "UPSTREAM_TIMEOUT"
	GatewayUpstreamRateLimited Code = "UPSTREAM_RATE_LIMITED"
	GatewayMisconfigured       Code = "GATEWAY_MISCONFIGURED"
	// GatewayRateLimited is the gateway's own per-caller limit; RATE_LIMITED
	// is a Surface code and never crosses into this namespace.
	GatewayRateLimited Code = "GATEWAY_RATE_LIMITED"
	// GatewayUpstreamUnavailable is an upstream that answered 5xx, reset the
	// connection or could not be reached (RATIONALE.md "Why does an
	// upstream 5xx become UPSTREAM_UNAVAILABLE?").
	GatewayUpstreamUnavailable Code = "UPSTREAM_UNAVAILABLE"
)

// historicalAliases are codes once written and now read only. No Pling
// version has shipped a renamed code yet, so the table is empty; the
// mechanism is tested with a registry of its own (registry_test.go).
var historicalAliases = map[string]Code{}

// SurfaceHTTPStatus maps a Surface protocol code to the HTTP status of a
// Surface response carried over HTTP. Action codes always travel in a 200
// response, because the protocol call itself succeeded.
func SurfaceHTTPStatus(c Code) int {
	switch c {
	case InvalidRequest:
		return 400
	case ProtocolVersionUnsupported:
		return 400
	case MethodNotSupported:
		return 400
	case CapabilityNotExposed:
		return 403
	case SessionRequired:
		return 401
	case SessionInvalid:
		return 401
	case SessionExpired:
		return 401
	case SessionRevoked:
		return 401
	case RateLimited:
		return 429
	case RateLimitUnavailable:
		return 503
	case ReplayDetected:
		return 409
	case ReplayGuardUnavailable:
		return 503
	case InternalError:
		return 500
	}
	return 0
}

// SurfaceExecuted is the "executed" flag of docs/protocol.md §5.1 for protocol codes.
func SurfaceExecuted(c Code) Executed {
	switch c {
	case InternalError:
		return ExecutedUnconfirmed
	case InvalidRequest, ProtocolVersionUnsupported, MethodNotSupported, CapabilityNotExposed,
		SessionRequired, SessionInvalid, SessionExpired, SessionRevoked,
		RateLimited, RateLimitUnavailable, ReplayDetected, ReplayGuardUnavailable:
		return ExecutedNo
	}
	return ExecutedNotApplicable
}

// DelegationHTTPStatus is the frozen map of the delegation service.
func DelegationHTTPStatus(c Code) int {
	switch c {
	case DelegationRequestInvalid:
		return 400
	case DelegationCredentialInvalid:
		return 401
	case DelegationBindingMismatch:
		return 403
	case DelegationAudienceMismatch:
		return 403
	case DelegationNotFound:
		return 404
	case DelegationRevoked:
		return 410
	case DelegationExpired:
		return 410
	case DelegationInternal:
		return 500
	}
	return 0
}

// ContinuityHTTPStatus is the continuity-http mapping.
func ContinuityHTTPStatus(c Code) int {
	switch c {
	case ContinuityTaskExists:
		return 409
	case ContinuityTaskNotFound:
		return 404
	case ContinuityRevisionConflict:
		return 409
	case ContinuityLeaseHeld:
		return 423
	case ContinuityLeaseExpired:
		return 409
	case ContinuityLeaseRevoked:
		return 409
	case ContinuityOwnerMismatch:
		return 403
	case ContinuityUnauthorized:
		return 401
	case ContinuityStorageUnavailable:
		return 503
	case ContinuityStorageTimeout:
		return 504
	case ContinuityInvalidState:
		return 409
	}
	return 0
}

// GatewayHTTPStatus maps gateway codes to the status of the OpenAI-compatible
// error response.
func GatewayHTTPStatus(c Code) int {
	switch c {
	case GatewayInvalidJSON:
		return 400
	case GatewayModelRequired:
		return 400
	case GatewayModelNotAllowed:
		return 403
	case GatewayUnauthorized:
		return 401
	case GatewayPayloadTooLarge:
		return 413
	case GatewayUpstreamTimeout:
		return 504
	case GatewayUpstreamRateLimited:
		return 429
	case GatewayMisconfigured:
		return 500
	case GatewayRateLimited:
		return 429
	case GatewayUpstreamUnavailable:
		return 502
	}
	return 0
}

// The recovery texts shared by several codes.
var (
	actionReauth = Text{
		En: "Reauthenticate or obtain a new delegation.",
		Zh: "重新认证或取得新委托。",
	}
	actionFixEnvelope = Text{
		En: "Fix the envelope; never retry it unchanged.",
		Zh: "修正包络，不得原样重试。",
	}
)

var surfaceEntries = []Entry{
	{Code: InvalidRequest, Recovery: RecoverFixRequest,
		Message: Text{"Invalid envelope, field, type or value", "包络、字段、类型或取值不合法"},
		Action:  actionFixEnvelope},
	{Code: ProtocolVersionUnsupported, Recovery: RecoverUpgrade,
		Message: Text{"The protocol version is not supported", "不支持该协议版本"},
		Action:  Text{"Resend with a version listed in details.supported.", "改用 details.supported 中列出的版本重新发送。"}},
	{Code: MethodNotSupported, Recovery: RecoverUpgrade,
		Message: Text{"The method is not describe or invoke", "方法不是 describe 或 invoke"},
		Action:  Text{"Use describe or invoke.", "使用 describe 或 invoke。"}},
	{Code: CapabilityNotExposed, Recovery: RecoverDescribe,
		Message: Text{"The capability is outside what this site and session expose", "能力不在站点与会话的交集内"},
		Action:  Text{"Describe again; do not try a similar id.", "重新描述；不要尝试相似 id。"}},
	{Code: SessionRequired, Recovery: RecoverReauthenticate,
		Message: Text{"A session is required", "实现要求会话但未提供"},
		Action:  actionReauth},
	{Code: SessionInvalid, Recovery: RecoverReauthenticate,
		Message: Text{"The session is malformed or unbound", "会话格式或绑定无效"},
		Action:  actionReauth},
	{Code: SessionExpired, Recovery: RecoverReauthenticate,
		Message: Text{"The session has expired", "会话已过有效期"},
		Action:  actionReauth},
	{Code: SessionRevoked, Recovery: RecoverReauthenticate,
		Message: Text{"The session was revoked", "会话已撤销"},
		Action:  actionReauth},
	{Code: RateLimited, Recovery: RecoverWait, Retriable: true,
		Message: Text{"Too many requests", "超出限流窗口"},
		Action:  Text{"Wait for retryAfterMs, then resend the same request.", "等待 retryAfterMs 后重新发送同一请求。"}},
	{Code: RateLimitUnavailable, Recovery: RecoverRetryLater, Retriable: true,
		Message: Text{"The rate limiter is unavailable; the request was refused", "限流器故障，已 fail-closed"},
		Action:  Text{"Retry the same request later.", "稍后重试同一请求。"}},
	{Code: ReplayDetected, Recovery: RecoverCheckPrevious,
		Message: Text{"This request id was already used in this session", "同一会话复用了已消费的 request.id"},
		Action:  Text{"Do not mint a new id for the same intent; check the previous result first.", "不要生成新 id 来重复同一业务意图；先查询前次结果。"}},
	{Code: ReplayGuardUnavailable, Recovery: RecoverRetryLater, Retriable: true,
		Message: Text{"The replay guard is unavailable; the request was refused", "防重放服务故障，已 fail-closed"},
		Action:  Text{"Retry the same request later.", "稍后重试同一请求。"}},
	{Code: InternalError, Recovery: RecoverObserve,
		Message: Text{"Internal error; business success is unknown", "协议实现内部异常；不得推断业务成功"},
		Action:  Text{"Do not resend a write; observe the business state through a read path or ask a person to verify.", "不得自动重发写入；先用只读方式观察业务状态，或请求人工确认。"}},
}

var actionEntries = []Entry{
	{Code: DuplicateActionID, Recovery: RecoverFixDeclaration,
		Message: Text{"Two different actions were declared under one id", "声明了重复动作 id"},
		Action:  Text{"The page must fix its declarations; do not invoke this id until it does.", "页面需修正声明；修正前不要调用该 id。"}},
	{Code: DuplicateStateKey, Recovery: RecoverFixDeclaration,
		Message: Text{"Two different states were declared under one key", "声明了重复状态键"},
		Action:  Text{"The page must fix its declarations.", "页面需修正声明。"}},
	{Code: DuplicateGuideTarget, Recovery: RecoverFixDeclaration,
		Message: Text{"Two different guide targets were declared under one name", "声明了重复指引目标"},
		Action:  Text{"The page must fix its declarations.", "页面需修正声明。"}},
	{Code: ActionNotFound, Recovery: RecoverDescribe,
		Message: Text{"The current page has no such action", "当前页面没有该动作"},
		Action:  Text{"The page or declaration changed; describe again.", "页面或声明已经变化，重新描述。"}},
	{Code: InvalidArgs, Recovery: RecoverFixParams,
		Message: Text{"Tool arguments are not a valid JSON object", "工具参数不是合法 JSON 或结构错误"},
		Action:  Text{"Send the arguments as one JSON object.", "以一个 JSON 对象发送参数。"}},
	{Code: InvalidParams, Recovery: RecoverFixParams,
		Message: Text{"The arguments do not satisfy the schema", "参数不符合 schema"},
		Action:  Text{"Correct the values against the schema.", "按 schema 修正。"}},
	{Code: PermissionDenied, Recovery: RecoverStop,
		Message: Text{"Business policy denied the action", "业务策略拒绝了该动作"},
		Action:  Text{"Stop and involve a person; an agent cannot authorize itself.", "停止并转人工；Agent 不能自授权限。"}},
	{Code: ActionUnavailable, Recovery: RecoverSatisfyPreconditions,
		Message: Text{"The action's preconditions are not met", "前置条件不满足"},
		Action:  Text{"Satisfy the preconditions; do not bypass the gate.", "满足前置条件，不能绕过闸门。"}},
	{Code: ExecutionFailed, Recovery: RecoverObserve,
		Message: Text{"The handler failed or business logic rejected the action", "处理函数抛错或业务拒绝"},
		Action:  Text{"Observe the page and read the message before trying again.", "先观察页面并阅读消息，再决定是否重试。"}},
	{Code: ExpectationFailed, Recovery: RecoverObserve,
		Message: Text{"The declared success condition was not observed", "动作执行后成功判据未成立"},
		Action:  Text{"Observe the page first; a partial success may exist.", "先观察页面，可能存在部分成功。"}},
	{Code: HandoffCancelled, Recovery: RecoverStop,
		Message: Text{"The person cancelled the handoff", "用户取消人工接力"},
		Action:  Text{"Respect the person's choice; ask before trying again.", "尊重用户的选择；再次尝试前先询问。"}},
	{Code: HandoffTimeout, Recovery: RecoverObserve, Retriable: true,
		Message: Text{"The handoff timed out", "人工接力超时"},
		Action:  Text{"Observe the page, then ask the person whether to try again.", "先观察页面，再询问用户是否重试。"}},
	{Code: HandoffFailed, Recovery: RecoverObserve,
		Message: Text{"The person reported completion but the result did not occur", "用户声称完成，但结果未出现"},
		Action:  Text{"Observe the page first; tell the person what was not observed.", "先观察页面，并告知用户未观察到的结果。"}},
	{Code: StepFailed, Recovery: RecoverResume,
		Message: Text{"A step of the composite action failed", "复合动作中的某一步失败"},
		Action:  Text{"Fix the cause, then invoke again with the resume token; it continues from the failed step once.", "排除原因后携带 resume 令牌重新调用；它只能从失败的步骤继续一次。"}},
	{Code: HookBlocked, Recovery: RecoverStop,
		Message: Text{"A lifecycle hook blocked the action", "生命周期钩子阻止执行"},
		Action:  Text{"Read the reason; do not retry until it no longer applies.", "阅读原因；在原因消除前不要重试。"}},
	{Code: LoopDetected, Recovery: RecoverObserve,
		Message: Text{"The same call repeated without any observed change", "运行时检测到重复循环"},
		Action:  Text{"Stop repeating the call; describe the page and choose a different step.", "停止重复调用；重新描述页面并选择其他步骤。"}},
}

var delegationEntries = []Entry{
	{Code: DelegationRequestInvalid, Recovery: RecoverFixRequest,
		Message: Text{"The delegation request is invalid", "委托请求无效"},
		Action:  Text{"Fix the request; never retry it unchanged.", "修正请求，不得原样重试。"}},
	{Code: DelegationCredentialInvalid, Recovery: RecoverReauthenticate,
		Message: Text{"The credential is invalid", "凭证无效"},
		Action:  actionReauth},
	{Code: DelegationBindingMismatch, Recovery: RecoverStop,
		Message: Text{"The delegation is bound to something else", "委托绑定不匹配"},
		Action:  Text{"Request a delegation bound to this page and subject.", "为当前页面与主体申请新的委托。"}},
	{Code: DelegationAudienceMismatch, Parent: DelegationBindingMismatch, Recovery: RecoverStop,
		Message: Text{"The delegation was issued for another origin", "委托签发给了其他来源"},
		Action:  Text{"Request a delegation for this page's origin.", "为当前页面的来源申请新的委托。"}},
	{Code: DelegationNotFound, Recovery: RecoverReauthenticate,
		Message: Text{"No such delegation", "未找到委托"},
		Action:  actionReauth},
	{Code: DelegationRevoked, Recovery: RecoverReauthenticate,
		Message: Text{"The delegation was revoked", "委托已撤销"},
		Action:  actionReauth},
	{Code: DelegationExpired, Recovery: RecoverReauthenticate,
		Message: Text{"The delegation has expired", "委托已过期"},
		Action:  actionReauth},
	{Code: DelegationInternal, Recovery: RecoverRetryLater, Retriable: true,
		Message: Text{"The delegation service failed", "委托服务内部错误"},
		Action:  Text{"Retry later.", "稍后重试。"}},
}

var continuityEntries = []Entry{
	{Code: ContinuityTaskExists, Recovery: RecoverObserve,
		Message: Text{"The task already exists", "任务已存在"},
		Action:  Text{"Read the existing task instead of creating it again.", "读取已有任务，不要重复创建。"}},
	{Code: ContinuityTaskNotFound, Recovery: RecoverObserve,
		Message: Text{"No such task", "未找到任务"},
		Action:  Text{"Check the task id.", "检查任务 id。"}},
	{Code: ContinuityRevisionConflict, Recovery: RecoverObserve,
		Message: Text{"The task changed since the revision you read", "revision 冲突"},
		Action:  Text{"Read the task again and reapply the change to the new revision.", "重新读取任务，并基于新 revision 再次提交。"}},
	{Code: ContinuityLeaseHeld, Recovery: RecoverWait, Retriable: true,
		Message: Text{"Another owner holds the lease", "租约被占用"},
		Action:  Text{"Wait for the lease to be released or to expire.", "等待租约释放或过期。"}},
	{Code: ContinuityLeaseExpired, Recovery: RecoverObserve,
		Message: Text{"The lease has expired", "租约已过期"},
		Action:  Text{"Acquire a new lease and read the task again.", "重新获取租约并读取任务。"}},
	{Code: ContinuityLeaseRevoked, Recovery: RecoverStop,
		Message: Text{"The lease was revoked", "租约已撤销"},
		Action:  Text{"Stop working on the task; it was taken away.", "停止处理该任务；它已被收回。"}},
	{Code: ContinuityOwnerMismatch, Recovery: RecoverStop,
		Message: Text{"The caller does not own the task or lease", "owner 不匹配"},
		Action:  Text{"Act only on tasks you own.", "只处理自己拥有的任务。"}},
	{Code: ContinuityUnauthorized, Recovery: RecoverReauthenticate,
		Message: Text{"The caller is not authorized", "未授权"},
		Action:  actionReauth},
	{Code: ContinuityStorageUnavailable, Recovery: RecoverRetryLater, Retriable: true,
		Message: Text{"Task storage is unavailable", "存储不可用"},
		Action:  Text{"Retry later.", "稍后重试。"}},
	{Code: ContinuityStorageTimeout, Parent: ContinuityStorageUnavailable, Recovery: RecoverRetryLater, Retriable: true,
		Message: Text{"Task storage timed out", "存储超时"},
		Action:  Text{"Retry later.", "稍后重试。"}},
	{Code: ContinuityInvalidState, Recovery: RecoverObserve,
		Message: Text{"The task is not in a state that allows this", "任务状态无效"},
		Action:  Text{"Read the task's state before acting.", "操作前先读取任务状态。"}},
}

var gatewayEntries = []Entry{
	{Code: GatewayInvalidJSON, Recovery: RecoverFixRequest,
		Message: Text{"The request body is not valid JSON", "请求体不是合法 JSON"},
		Action:  Text{"Send a valid JSON body.", "发送合法的 JSON 请求体。"}},
	{Code: GatewayModelRequired, Recovery: RecoverFixRequest,
		Message: Text{"The request names no model", "请求未指定模型"},
		Action:  Text{"Name a model in the request.", "在请求中指定模型。"}},
	{Code: GatewayModelNotAllowed, Recovery: RecoverStop,
		Message: Text{"The model is not allowed here", "该模型不被允许"},
		Action:  Text{"Use a model this gateway allows.", "使用网关允许的模型。"}},
	{Code: GatewayUnauthorized, Recovery: RecoverReauthenticate,
		Message: Text{"Missing or invalid credentials", "凭证缺失或无效"},
		Action:  Text{"Send valid credentials.", "提供有效凭证。"}},
	{Code: GatewayPayloadTooLarge, Recovery: RecoverFixRequest,
		Message: Text{"The request body is too large", "请求体过大"},
		Action:  Text{"Send a smaller request.", "缩小请求体。"}},
	{Code: GatewayUpstreamTimeout, Recovery: RecoverRetryLater, Retriable: true,
		Message: Text{"The upstream model did not answer in time", "上游模型超时"},
		Action:  Text{"Retry later.", "稍后重试。"}},
	{Code: GatewayUpstreamRateLimited, Recovery: RecoverWait, Retriable: true,
		Message: Text{"The upstream model is rate limited", "上游模型限流"},
		Action:  Text{"Wait, then retry.", "等待后重试。"}},
	{Code: GatewayMisconfigured, Recovery: RecoverStop,
		Message: Text{"The gateway is misconfigured", "网关配置错误"},
		Action:  Text{"Tell the operator; retrying will not help.", "联系运维；重试无效。"}},
	{Code: GatewayRateLimited, Recovery: RecoverWait, Retriable: true,
		Message: Text{"Too many requests to this gateway", "请求过于频繁"},
		Action:  Text{"Wait for Retry-After, then retry.", "等待 Retry-After 后重试。"}},
	{Code: GatewayUpstreamUnavailable, Recovery: RecoverRetryLater, Retriable: true,
		Message: Text{"The upstream model failed to answer", "上游模型出错"},
		Action:  Text{"Retry later.", "稍后重试。"}},
}
