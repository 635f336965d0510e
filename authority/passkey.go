package authority

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	_ "embed" // the screens' passkey script
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/pling-go/pling/runtime"
)

// Passkeys (docs/authority.md "Passkeys"): the approvals a site marks as
// mattering (PasskeyConfig.Approvals, per audience and capability, set at
// the authority, never by the page) are approved only with a WebAuthn
// assertion of a passkey the person registered on the authority's screen
// (PasskeysPath), user verification required, whose challenge is derived
// from the approval's id and binding: a page script, an agent, the
// operator's route and a reader of the database hold no such assertion.
// The assertion is kept with the approval and verified again before the
// authority signs pa1 (collectApproval), so a row set to approved in the
// database signs nothing; the passkeys' rows carry an HMAC under a key
// derived from the KEK, so a public key written into the database is
// never used.

// PasskeysPath is the screen where a person registers a passkey.
const PasskeysPath = "/passkeys"

// passkeyScriptPath is the screens' only script: it asks the browser for
// the credential and puts its JSON into the form.
const passkeyScriptPath = "/passkey.js"

//go:embed passkey.js
var passkeyScript []byte

// passkeyCSP is the screens' policy with the authority's own script.
const passkeyCSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// PasskeyConfig turns on passkeys.
type PasskeyConfig struct {
	// Origin is the authority's origin as a person's browser opens its
	// screens (https://auth.example.com); its host is the WebAuthn
	// relying party id. "" turns passkeys off.
	Origin string
	// Approvals maps an audience to the capability patterns (as in
	// Audiences; "*" for every capability) whose approvals need the
	// person's passkey. A capability the page calls destructive is named
	// here by the site's operator: the page's own word for its risk is
	// not trusted.
	Approvals map[string][]string
}

// Passkey is one credential a person registered: whose it is, and its
// public part (webauthn.Credential as JSON, without the attestation).
type Passkey struct {
	ID         []byte
	Subject    string
	Credential string
	SignCount  int64
	// MAC is the row's HMAC under the key derived from the KEK (empty
	// without a KEK).
	MAC       []byte
	CreatedMs int64
	UsedMs    int64
}

// PasskeyStore keeps passkeys. The SQL store implements it.
type PasskeyStore interface {
	// AddPasskey stores p; ErrConflict when its id is registered already.
	AddPasskey(ctx context.Context, p Passkey) error
	// Passkeys returns subject's passkeys, oldest first.
	Passkeys(ctx context.Context, subject string) ([]Passkey, error)
	// ApproveWithPasskey approves a pending, unexpired approval, keeping
	// the assertion that decided it, and moves the sign counter of
	// credential credID from prev to next, in one transaction;
	// ErrConflict when the approval is not pending any more or the
	// counter moved meanwhile.
	ApproveWithPasskey(ctx context.Context, approvalID, assertion string, credID []byte, prev, next, nowMs int64) error
}

func (s *sqlStore) AddPasskey(ctx context.Context, p Passkey) error {
	r, err := s.db.ExecContext(ctx, `INSERT INTO passkeys (id, subject, credential, sign_count, mac, created_ms)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, p.ID, p.Subject, p.Credential, p.SignCount, p.MAC, p.CreatedMs)
	return oneRow(r, err)
}

func (s *sqlStore) Passkeys(ctx context.Context, subject string) ([]Passkey, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, subject, credential, sign_count, mac, created_ms, used_ms
		FROM passkeys WHERE subject = ? ORDER BY created_ms, id`, subject)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Passkey
	for rows.Next() {
		var p Passkey
		if err := rows.Scan(&p.ID, &p.Subject, &p.Credential, &p.SignCount, &p.MAC, &p.CreatedMs, &p.UsedMs); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func (s *sqlStore) ApproveWithPasskey(ctx context.Context, approvalID, assertion string, credID []byte, prev, next, nowMs int64) error {
	tx, ctx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	r, err := tx.ExecContext(ctx, `UPDATE passkeys SET sign_count = ?, used_ms = ? WHERE id = ? AND sign_count = ?`, next, nowMs, credID, prev)
	if err := oneRow(r, err); err != nil {
		return err
	}
	r, err = tx.ExecContext(ctx, `UPDATE approvals SET status = 'approved', passkey = ?
		WHERE id = ? AND status = 'pending' AND expires_ms > ?`, assertion, approvalID, nowMs)
	if err := oneRow(r, err); err != nil {
		return err
	}
	return tx.Commit()
}

// passkeys is the server's WebAuthn relying party (nil: passkeys off).
type passkeys struct {
	wa   *webauthn.WebAuthn
	rpID string
	mac  []byte // nil: no KEK, rows carry no MAC
}

func newPasskeys(cfg Config, store Store) (*passkeys, error) {
	pc := cfg.Passkeys
	if pc.Origin == "" {
		if len(pc.Approvals) > 0 {
			return nil, errors.New("authority: passkey approvals need Passkeys.Origin, the authority's origin")
		}
		return nil, nil
	}
	if !isOrigin(pc.Origin) {
		return nil, fmt.Errorf("authority: Passkeys.Origin %q is not an origin", pc.Origin)
	}
	if _, ok := store.(PasskeyStore); !ok {
		return nil, errors.New("authority: the store keeps no passkeys")
	}
	for aud := range pc.Approvals {
		if _, ok := cfg.Audiences[aud]; !ok {
			return nil, fmt.Errorf("authority: passkey approvals for %q, which is no audience", aud)
		}
	}
	u, _ := url.Parse(pc.Origin)
	wa, err := webauthn.New(&webauthn.Config{RPID: u.Hostname(), RPDisplayName: "Pling authority", RPOrigins: []string{pc.Origin}})
	if err != nil {
		return nil, fmt.Errorf("authority: passkeys: %w", err)
	}
	p := &passkeys{wa: wa, rpID: u.Hostname()}
	if len(cfg.KEK) > 0 {
		m := hmac.New(sha256.New, cfg.KEK)
		m.Write([]byte("pling authority passkeys"))
		p.mac = m.Sum(nil)
	}
	return p, nil
}

func (p *passkeys) rowMAC(k Passkey) []byte {
	if p.mac == nil {
		return []byte{}
	}
	m := hmac.New(sha256.New, p.mac)
	m.Write([]byte("passkey\x00" + k.Subject + "\x00" + base64.RawURLEncoding.EncodeToString(k.ID) + "\x00" + k.Credential))
	return m.Sum(nil)
}

// passkeyUser is a subject as WebAuthn's user: its handle a digest of
// the subject, its credentials those stored for it.
type passkeyUser struct {
	subject string
	creds   []webauthn.Credential
	counts  map[string]int64 // stored sign counter by credential id
}

func (u *passkeyUser) WebAuthnID() []byte {
	h := sha256.Sum256([]byte("pling passkey user\x00" + u.subject))
	return h[:]
}
func (u *passkeyUser) WebAuthnName() string                       { return u.subject }
func (u *passkeyUser) WebAuthnDisplayName() string                { return u.subject }
func (u *passkeyUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// passkeyUser loads subject's passkeys; a row whose MAC does not hold is not
// one this authority wrote, and is left out.
func (s *Server) passkeyUser(ctx context.Context, subject string) (*passkeyUser, error) {
	u := &passkeyUser{subject: subject, counts: map[string]int64{}}
	if subject == "" {
		return u, nil
	}
	rows, err := s.raw.(PasskeyStore).Passkeys(ctx, subject)
	if err != nil {
		return nil, err
	}
	for _, k := range rows {
		var c webauthn.Credential
		if !hmac.Equal(k.MAC, s.passkeys.rowMAC(k)) || json.Unmarshal([]byte(k.Credential), &c) != nil || !bytes.Equal(c.ID, k.ID) {
			s.cfg.Logger.Warn("passkey row not written by this authority: not used", "subject", subject)
			continue
		}
		c.Authenticator.SignCount = uint32(k.SignCount)
		u.creds = append(u.creds, c)
		u.counts[string(k.ID)] = k.SignCount
	}
	return u, nil
}

// passkeyRequired reports whether the site requires a passkey for a.
func (s *Server) passkeyRequired(a Approval) bool {
	pats := s.cfg.Passkeys.Approvals[a.Audience]
	if len(pats) == 0 {
		return false
	}
	var sh approvalShown
	if json.Unmarshal([]byte(a.Challenge), &sh) != nil {
		return true // fail closed: an approval the authority cannot read needs the most
	}
	return runtime.MatchAny(pats, sh.Request.Capability)
}

// approvalChallenge is the WebAuthn challenge of approval a: bound to its
// id, audience and binding, so an assertion approves that one request.
func approvalChallenge(a Approval) []byte {
	h := sha256.Sum256([]byte("pling approval passkey\x00" + a.ID + "\x00" + a.Audience + "\x00" + a.Binding))
	return h[:]
}

// approvalSubject is the subject of the session that asks for a.
func (s *Server) approvalSubject(ctx context.Context, a Approval) string {
	se, err := s.cfg.Store.Session(ctx, a.SessionID)
	if err != nil {
		return ""
	}
	d, err := s.cfg.Store.Delegation(ctx, se.DelegationID)
	if err != nil {
		return ""
	}
	return d.Subject
}

func (s *Server) passkeySession(u *passkeyUser, a Approval) webauthn.SessionData {
	ids := make([][]byte, 0, len(u.creds))
	for _, c := range u.creds {
		ids = append(ids, c.ID)
	}
	return webauthn.SessionData{Challenge: base64.RawURLEncoding.EncodeToString(approvalChallenge(a)), RelyingPartyID: s.passkeys.rpID,
		UserID: u.WebAuthnID(), AllowedCredentialIDs: ids, UserVerification: protocol.VerificationRequired}
}

// approvalPasskeyOptions are the options of navigator.credentials.get
// for a (JSON), or "" when the subject has no passkey.
func (s *Server) approvalPasskeyOptions(ctx context.Context, a Approval, subject string) (string, error) {
	u, err := s.passkeyUser(ctx, subject)
	if err != nil || len(u.creds) == 0 {
		return "", err
	}
	allow := make([]protocol.CredentialDescriptor, 0, len(u.creds))
	for _, c := range u.creds {
		allow = append(allow, c.Descriptor())
	}
	as, _, err := s.passkeys.wa.BeginLogin(u, webauthn.WithChallenge(approvalChallenge(a)),
		webauthn.WithUserVerification(protocol.VerificationRequired), webauthn.WithAllowedCredentials(allow))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(as.Response)
	return string(b), err
}

// errPasskey is an assertion that does not approve the approval.
var errPasskey = errors.New("authority: the passkey's assertion does not approve this request")

// verifyApprovalPasskey verifies assertion (the credential's JSON) for a:
// one of the subject's passkeys, user verified, signed over a's
// challenge on the authority's origin. It returns the credential and its
// stored counter. withCounter false skips the counter (the assertion is
// verified again, after it was counted).
func (s *Server) verifyApprovalPasskey(ctx context.Context, a Approval, assertion string, withCounter bool) (*webauthn.Credential, int64, error) {
	subject := s.approvalSubject(ctx, a)
	if subject == "" || assertion == "" {
		return nil, 0, errPasskey
	}
	u, err := s.passkeyUser(ctx, subject)
	if err != nil {
		return nil, 0, err
	}
	if len(u.creds) == 0 {
		return nil, 0, errPasskey
	}
	if !withCounter {
		for i := range u.creds {
			u.creds[i].Authenticator.SignCount = 0
		}
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(assertion))
	if err != nil {
		return nil, 0, errPasskey
	}
	c, err := s.passkeys.wa.ValidateLogin(u, s.passkeySession(u, a), parsed)
	if err != nil || c.Authenticator.CloneWarning || !parsed.Response.AuthenticatorData.Flags.HasUserVerified() {
		return nil, 0, errPasskey
	}
	return c, u.counts[string(c.ID)], nil
}

// approveWithPasskey approves a on the screen with assertion.
func (s *Server) approveWithPasskey(ctx context.Context, a Approval, assertion string) error {
	c, prev, err := s.verifyApprovalPasskey(ctx, a, assertion, true)
	if err != nil {
		return err
	}
	return s.raw.(PasskeyStore).ApproveWithPasskey(ctx, a.ID, assertion, c.ID, prev, int64(c.Authenticator.SignCount), s.nowMs())
}

// passkeyView is the passkeys screen's data.
type passkeyView struct {
	Subject, CSRF, Issued, Options string
	// Confirm are navigator.credentials.get's options when the subject
	// has a passkey: adding another needs one they have.
	Confirm string
	Count   int
}

// registrationChallenge is the challenge of a registration form: bound
// to the browser, the subject and when the form was given, so it needs
// no state; the CSRF token binds issued.
func (s *Server) registrationChallenge(browser, subject, issued string) []byte {
	m := hmac.New(sha256.New, s.screenKey)
	m.Write([]byte("passkey registration\x00" + browser + "\x00" + subject + "\x00" + issued))
	return m.Sum(nil)
}

func (s *Server) servePasskeys(w http.ResponseWriter, r *http.Request) {
	if s.passkeys == nil {
		screenHeaders(w)
		renderPasskeys(w, http.StatusNotFound, page{Problem: "This authority keeps no passkeys."})
		return
	}
	serveScreen(w, r, s.showPasskeys, s.registerPasskey)
}

func (s *Server) showPasskeys(w http.ResponseWriter, r *http.Request) {
	browser := browserID(w, r)
	subject, ok := s.screenSubject(r, browser)
	if !ok {
		renderPasskeys(w, http.StatusForbidden, page{Problem: "Sign in to register a passkey."})
		return
	}
	u, err := s.passkeyUser(r.Context(), subject)
	if err != nil {
		s.screenFailed(w, r, err, renderPasskeys)
		return
	}
	issued := fmt.Sprint(s.nowMs())
	challenge := s.registrationChallenge(browser, subject, issued)
	exclude := make([]protocol.CredentialDescriptor, 0, len(u.creds))
	for _, c := range u.creds {
		exclude = append(exclude, c.Descriptor())
	}
	cr, _, err := s.passkeys.wa.BeginRegistration(u, func(o *protocol.PublicKeyCredentialCreationOptions) error {
		o.Challenge = challenge
		return nil
	}, webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{ResidentKey: protocol.ResidentKeyRequirementRequired,
		UserVerification: protocol.VerificationRequired}), webauthn.WithExclusions(exclude))
	if err != nil {
		s.screenFailed(w, r, err, renderPasskeys)
		return
	}
	opts, _ := json.Marshal(cr.Response)
	v := &passkeyView{Subject: subject, Count: len(u.creds), Issued: issued, CSRF: s.csrf(browser, "passkeys\x00"+issued), Options: string(opts)}
	if len(u.creds) > 0 {
		as, _, err := s.passkeys.wa.BeginLogin(u, webauthn.WithChallenge(s.registrationChallenge(browser, subject, issued+"\x00confirm")),
			webauthn.WithUserVerification(protocol.VerificationRequired), webauthn.WithAllowedCredentials(exclude))
		if err != nil {
			s.screenFailed(w, r, err, renderPasskeys)
			return
		}
		b, _ := json.Marshal(as.Response)
		v.Confirm = string(b)
	}
	w.Header().Set("Content-Security-Policy", passkeyCSP)
	renderPasskeys(w, http.StatusOK, page{Passkeys: v})
}

// maxRegistrationAgeMs is how long a registration form is good for.
const maxRegistrationAgeMs = 5 * 60 * 1000

func (s *Server) registerPasskey(w http.ResponseWriter, r *http.Request) {
	refuse := func(status int, problem string) { renderPasskeys(w, status, page{Problem: problem}) }
	if !readForm(w, r) {
		refuse(http.StatusBadRequest, "The form could not be read.")
		return
	}
	issued := r.PostForm.Get("issued")
	var at int64
	if _, err := fmt.Sscan(issued, &at); err != nil || issued != fmt.Sprint(at) {
		issued = ""
	}
	browser, ok := s.checkDecision(w, r, map[bool]string{true: "passkeys\x00" + issued}[issued != ""], refuse)
	if !ok {
		return
	}
	if now := s.nowMs(); at > now || now-at > maxRegistrationAgeMs {
		refuse(http.StatusBadRequest, "This form has lapsed: open the page again.")
		return
	}
	subject, ok := s.screenSubject(r, browser)
	if !ok {
		refuse(http.StatusForbidden, "Sign in to register a passkey.")
		return
	}
	u, err := s.passkeyUser(r.Context(), subject)
	if err != nil {
		s.screenFailed(w, r, err, renderPasskeys)
		return
	}
	if len(u.creds) > 0 {
		// Whoever holds the person's signed-in browser (an extension, an
		// agent driving it) would otherwise add its own authenticator and
		// approve with it: adding a passkey needs one the person has.
		// The assertion's counter is not recorded: its challenge is this
		// form's, good for this browser for five minutes.
		ids := make([][]byte, 0, len(u.creds))
		for _, c := range u.creds {
			ids = append(ids, c.ID)
		}
		as, verr := protocol.ParseCredentialRequestResponseBytes([]byte(r.PostForm.Get("assertion")))
		if verr == nil {
			_, verr = s.passkeys.wa.ValidateLogin(u, webauthn.SessionData{
				Challenge:      base64.RawURLEncoding.EncodeToString(s.registrationChallenge(browser, subject, issued+"\x00confirm")),
				RelyingPartyID: s.passkeys.rpID, UserID: u.WebAuthnID(), AllowedCredentialIDs: ids, UserVerification: protocol.VerificationRequired}, as)
		}
		if verr != nil || !as.Response.AuthenticatorData.Flags.HasUserVerified() {
			refuse(http.StatusForbidden, "Adding a passkey needs one you have, and no valid one was given: nothing was registered.")
			return
		}
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes([]byte(r.PostForm.Get("credential")))
	if err != nil {
		refuse(http.StatusBadRequest, "Your browser sent no passkey.")
		return
	}
	c, err := s.passkeys.wa.CreateCredential(u, webauthn.SessionData{
		Challenge:      base64.RawURLEncoding.EncodeToString(s.registrationChallenge(browser, subject, issued)),
		RelyingPartyID: s.passkeys.rpID, UserID: u.WebAuthnID(), UserVerification: protocol.VerificationRequired,
		CredParams: webauthn.CredentialParametersDefault()}, parsed)
	if err != nil || !c.Flags.UserVerified {
		refuse(http.StatusBadRequest, "The passkey could not be registered: it must verify you (a PIN, a fingerprint or your face).")
		return
	}
	c.Attestation = webauthn.CredentialAttestation{}
	cj, err := json.Marshal(c)
	if err != nil {
		s.screenFailed(w, r, err, renderPasskeys)
		return
	}
	k := Passkey{ID: c.ID, Subject: subject, Credential: string(cj), SignCount: int64(c.Authenticator.SignCount), CreatedMs: s.nowMs()}
	k.MAC = s.passkeys.rowMAC(k)
	if !s.screenWrote(w, r, s.raw.(PasskeyStore).AddPasskey(r.Context(), k), renderPasskeys, "This passkey is registered already.") {
		return
	}
	s.cfg.Logger.Info("passkey registered", "subject", subject)
	renderPasskeys(w, http.StatusOK, page{Done: "Your passkey is registered. Approvals that need it will ask for it."})
}

func (s *Server) servePasskeyScript(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	_, _ = w.Write(passkeyScript)
}

func renderPasskeys(w http.ResponseWriter, status int, p page) {
	renderScreen(w, status, passkeysTemplate, p)
}

// passkeysTemplate is the passkeys screen: the options go to the script
// in a data attribute (escaped), the credential comes back in the form.
var passkeysTemplate = screenTemplate("passkeys", `{{define "heading"}}Your passkeys{{end}}
{{- define "style"}}.problem{color:#a00}button{font:inherit;padding:.4rem 1rem}{{end}}
{{- define "body"}}{{with .Passkeys}}
<p>Signed in as <strong id="subject">{{.Subject}}</strong>. You have <span id="count">{{.Count}}</span> passkey(s) here.
A site may require your passkey to approve what matters; nothing else can give that approval.</p>
<p class="problem" role="alert" id="passkey-problem" hidden></p>
<form method="post" action="`+PasskeysPath+`" id="passkey-form" data-passkey-create="{{.Options}}"{{with .Confirm}} data-passkey-get="{{.}}"{{end}}>
<input type="hidden" name="csrf" value="{{.CSRF}}"><input type="hidden" name="issued" value="{{.Issued}}">
<input type="hidden" name="credential" value="">{{if .Confirm}}<input type="hidden" name="assertion" value="">
<p id="passkey-confirm">Adding a passkey asks first for one you have.</p>{{end}}
<button type="submit" id="register">Add a passkey</button>
</form>
<script src="`+passkeyScriptPath+`"></script>{{end}}{{end}}`)
