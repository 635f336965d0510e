package demosite

import (
	"html/template"
	"net/http"
)

// screenLayout is what the site's own screens for a person (the consent
// screen, the approval screen) share: the head, the base style, the
// heading, the problem and done lines, and the Approve and Deny buttons of
// a decision form. A screen defines "heading", "style" (its own rules)
// and "body", and sets .Problem and .Done.
const screenLayout = `{{define "screen"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{template "heading"}} · Pling demo</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}
{{template "style"}}</style>
</head><body>
<h1>{{template "heading"}}</h1>
{{with .Problem}}<p class="problem" role="alert" id="problem">{{.}}</p>{{end}}
{{with .Done}}<p id="done" role="status">{{.}}</p>{{end}}
{{template "body" .}}
</body></html>
{{end}}{{define "decide"}}<input type="hidden" name="id" value="{{.ID}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<button type="submit" name="decision" value="approve" id="approve">Approve</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>{{end}}`

// screenTemplate is a screen: screenLayout with the definitions in
// screen, parsed as html/template, so every string a page or an agent
// supplied is escaped for where it lands. The screens have no script.
func screenTemplate(name, screen string) *template.Template {
	return template.Must(template.New(name).Parse(`{{template "screen" .}}` + screenLayout + screen))
}

// renderScreen writes a screen with data p and status.
func renderScreen(w http.ResponseWriter, status int, t *template.Template, p any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = t.Execute(w, p)
}

// serveScreen answers a request for a screen with screenHeaders: show
// answers GET and HEAD, decide POST, any other method is refused.
func serveScreen(w http.ResponseWriter, r *http.Request, show, decide http.HandlerFunc) {
	screenHeaders(w)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		show(w, r)
	case http.MethodPost:
		decide(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}
