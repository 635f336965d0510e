package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// agentTask is one scripted task of the agent benchmark, as an agent is
// asked it, with its script for each side. A script returns what it
// reports (the total, the order's new status) once it has verified the
// outcome; any error fails the run.
type agentTask struct {
	Name, Ask string
	// Site is "helpdesk" for a task on the help desk (internal/helpdesk),
	// the site written from the docs only; "" is the demo.
	Site   string
	pling  func(ctx context.Context, a *plingAgent) (string, error)
	pw     func(ctx context.Context, a *pwAgent) (string, error)
	webmcp func(ctx context.Context, a *webmcpAgent) (string, error)
}

// The demo site's data the tasks name, as a person would say it.
const (
	taskOrder     = "#1250" // pending on the seeded orders page
	taskOrder2    = "#1260" // pending too
	taskProduct   = "Beacon headlamp"
	taskPageSize  = "100"
	taskOTP       = "123456" // the bank window shows it: "Demo code: 123456"
	ordersAllRows = "/orders/?rows=all"
)

var agentTasks = []agentTask{
	{
		Name: "approve", webmcp: webmcpApprove, Ask: "approve order " + taskOrder + " on the 500-row orders page",
		pling: func(ctx context.Context, a *plingAgent) (string, error) {
			if err := a.open(ctx, ordersAllRows, "approve__order"); err != nil {
				return "", err
			}
			return a.approve(ctx, taskOrder)
		},
		pw: func(ctx context.Context, a *pwAgent) (string, error) {
			if err := a.navigate(ctx, ordersAllRows); err != nil {
				return "", err
			}
			return a.approve(ctx, taskOrder)
		},
	},
	{
		Name: "checkout", webmcp: webmcpCheckout, Ask: "add the " + taskProduct + " to the cart, check out (the person confirms with the bank) and report the total",
		pling: func(ctx context.Context, a *plingAgent) (string, error) {
			if err := a.open(ctx, "/shop/", "cart_add"); err != nil {
				return "", err
			}
			sku, err := a.skuOf(taskProduct)
			if err != nil {
				return "", err
			}
			if _, err := a.invoke(ctx, "cart_add", map[string]any{"sku": sku, "qty": 1}); err != nil {
				return "", err
			}
			person := a.personHandoff(ctx, "/shop/")
			r, err := a.invoke(ctx, "checkout", map[string]any{})
			if err := afterPerson(person, err); err != nil {
				return "", err
			}
			if r.Evidence == nil || r.Evidence.Handoff != "done" {
				return "", fmt.Errorf("checkout: no completed handoff in the evidence: %s", r.raw)
			}
			var v struct{ Total float64 }
			if err := json.Unmarshal(r.Value, &v); err != nil || v.Total <= 0 {
				return "", fmt.Errorf("checkout: no total in the value: %s", r.Value)
			}
			return fmt.Sprintf("total €%.2f", v.Total), nil
		},
		pw: func(ctx context.Context, a *pwAgent) (string, error) {
			if err := a.navigate(ctx, "/shop/"); err != nil {
				return "", err
			}
			if err := a.click(ctx, "button", "Add "+taskProduct+" to cart"); err != nil {
				return "", err
			}
			if err := a.click(ctx, "button", "Checkout"); err != nil {
				return "", err
			}
			// The bank's window is on the page now; the person answers it.
			if err := a.personConfirms(ctx); err != nil {
				return "", fmt.Errorf("the person: %w", err)
			}
			if _, err := a.s.call(ctx, "browser_wait_for", map[string]any{"text": "placed"}); err != nil {
				return "", err
			}
			text, err := a.look(ctx, "placed")
			if err != nil {
				return "", err
			}
			m := regexp.MustCompile(`Order NW-\d+ placed\. Paid (€\d+\.\d\d)`).FindStringSubmatch(text)
			if m == nil {
				return "", errors.New("no placed order in a later snapshot")
			}
			return "total " + m[1], nil
		},
	},
	{
		Name: "setting", webmcp: webmcpSetting, Ask: "set orders per page to " + taskPageSize + " in the settings and save",
		pling: plingSaveNumber("/settings/", "pageSize", taskPageSize),
		pw:    pwSaveNumber("/settings/", "Orders per page", taskPageSize, demoSave),
	},
	{
		Name: "two pages", webmcp: webmcpTwoPages, Ask: "turn on refund e-mails in the settings, save, then approve order " + taskOrder2 + " on the orders page",
		pling: func(ctx context.Context, a *plingAgent) (string, error) {
			if err := a.open(ctx, "/settings/", "settings_save"); err != nil {
				return "", err
			}
			if _, err := a.invoke(ctx, "settings_save", map[string]any{"refundAlerts": true}); err != nil {
				return "", err
			}
			if err := a.open(ctx, ordersAllRows, "approve__order"); err != nil {
				return "", err
			}
			return a.approve(ctx, taskOrder2)
		},
		pw: func(ctx context.Context, a *pwAgent) (string, error) {
			if err := a.navigate(ctx, "/settings/"); err != nil {
				return "", err
			}
			if err := a.click(ctx, "checkbox", "Email me when an order is refunded"); err != nil {
				return "", err
			}
			if _, err := a.save(ctx, demoSave); err != nil {
				return "", err
			}
			if err := a.navigate(ctx, ordersAllRows); err != nil {
				return "", err
			}
			return a.approve(ctx, taskOrder2)
		},
	},
}

// The help desk's tasks: a site the bridge's authors did not write.
const (
	taskTicket = "T-1042" // open in the help desk's data
	taskSLA    = "48"
)

var helpdeskTasks = []agentTask{
	{
		Name: "helpdesk close", webmcp: webmcpHelpdeskClose, Site: "helpdesk", Ask: "close ticket " + taskTicket + " on the help desk (1,000 tickets, 25 a page)",
		pling: func(ctx context.Context, a *plingAgent) (string, error) {
			if err := a.open(ctx, "/tickets/", "tickets_search"); err != nil {
				return "", err
			}
			if _, err := a.invoke(ctx, "tickets_search", map[string]any{"query": taskTicket}); err != nil {
				return "", err
			}
			if _, err := a.invoke(ctx, "close__ticket", map[string]any{"record": taskTicket}); err != nil {
				return "", err
			}
			return taskTicket + " closed", nil
		},
		pw: func(ctx context.Context, a *pwAgent) (string, error) {
			if err := a.navigate(ctx, "/tickets/"); err != nil {
				return "", err
			}
			if err := a.typeInto(ctx, "searchbox", "Search", taskTicket); err != nil {
				return "", err
			}
			if err := a.click(ctx, "button", "Search"); err != nil {
				return "", err
			}
			if err := a.click(ctx, "button", "Close ticket "+taskTicket); err != nil {
				return "", err
			}
			// A find shows the row's first cells only (not its status):
			// on the find path the agent looks for the row's Close button,
			// which an open ticket has and a closed one has not.
			for try := 0; ; try++ {
				look := taskTicket
				if a.find {
					look = "Close ticket " + taskTicket
				}
				text, err := a.look(ctx, look)
				if err != nil {
					return "", err
				}
				if a.find && strings.Contains(text, "No matches found") ||
					!a.find && rowNamed(text, taskTicket, "closed") {
					return taskTicket + " closed", nil
				}
				if try > 0 {
					return "", fmt.Errorf("ticket %s is not shown closed", taskTicket)
				}
			}
		},
	},
	{
		Name: "helpdesk setting", webmcp: webmcpHelpdeskSetting, Site: "helpdesk", Ask: "set the help desk's answer time to " + taskSLA + " hours in its settings (every field prefilled and required)",
		// The form's inputs are all prefilled and required: the tool's
		// schema has each current value as its default, so the Pling
		// script sends the one it changes and the others keep the page's.
		pling: plingSaveNumber("/admin/", "slaHours", taskSLA),
		pw:    pwSaveNumber("/admin/", "Answer within (hours)", taskSLA, settingsSave{button: "Save", done: "Saved."}),
	},
}

// rowNamed is rowHas for a row whose first cell holds a link (the help
// desk's ticket number links to its page): the cell has no name of its
// own, the link has the text.
func rowNamed(snapshot, link, cell string) bool {
	return rowWith(snapshot, `link "`+link+`"`, cell)
}

// approve is the Pling script for "approve the order a person calls
// label": approve it and read the evidence. The page approves only rows a
// person can see; approve__order's description says it first runs
// open__order for a row out of view, so the script does not call it.
func (a *plingAgent) approve(ctx context.Context, label string) (string, error) {
	rec := a.record("approve__order", label)
	if !strings.Contains(a.cur.tools["approve__order"].Description, "first runs open__order") {
		if _, err := a.invoke(ctx, "open__order", map[string]any{"record": rec}); err != nil {
			return "", err
		}
	}
	if _, err := a.invoke(ctx, "approve__order", map[string]any{"record": rec}); err != nil {
		return "", err
	}
	return label + " approved", nil
}

// approve is the Playwright script for the same: find the row's Approve
// button, click it, and see the row say "approved" in a later look. A
// look taken before the row re-rendered is taken again, up to twice
// (counted), as an agent would before it concluded the click did nothing
// (with 0.0.86 on the 500-row page at load 11-12, one retry was not
// enough in two of eighteen runs).
func (a *pwAgent) approve(ctx context.Context, label string) (string, error) {
	if err := a.click(ctx, "button", "Approve order "+label); err != nil {
		return "", err
	}
	for try := 0; ; try++ {
		text, err := a.look(ctx, label)
		if err != nil {
			return "", err
		}
		if rowHas(text, label, "approved") {
			return label + " approved", nil
		}
		if try == 2 {
			return "", fmt.Errorf("order %s is not shown approved", label)
		}
	}
}

// plingSaveNumber is the Pling script for "set the number field to
// value in the settings at path and save": settings_save with that field
// alone.
func plingSaveNumber(path, field, value string) func(context.Context, *plingAgent) (string, error) {
	return func(ctx context.Context, a *plingAgent) (string, error) {
		if err := a.open(ctx, path, "settings_save"); err != nil {
			return "", err
		}
		n, _ := strconv.Atoi(value)
		if _, err := a.invoke(ctx, "settings_save", map[string]any{field: n}); err != nil {
			return "", err
		}
		return "saved", nil
	}
}

// pwSaveNumber is the Playwright script for the same: type value into the
// spin button labelled label, and save.
func pwSaveNumber(path, label, value string, s settingsSave) func(context.Context, *pwAgent) (string, error) {
	return func(ctx context.Context, a *pwAgent) (string, error) {
		if err := a.navigate(ctx, path); err != nil {
			return "", err
		}
		if err := a.typeInto(ctx, "spinbutton", label, value); err != nil {
			return "", err
		}
		return a.save(ctx, s)
	}
}

// settingsSave is how a site's settings form is saved: its button's
// name, and the text the page shows once it saved.
type settingsSave struct{ button, done string }

// demoSave is the demo's settings form's.
var demoSave = settingsSave{button: "Save settings", done: "Settings saved"}

// save clicks the form's save button and sees the page say it saved in a
// later look.
func (a *pwAgent) save(ctx context.Context, s settingsSave) (string, error) {
	if err := a.click(ctx, "button", s.button); err != nil {
		return "", err
	}
	text, err := a.look(ctx, s.done)
	if err != nil {
		return "", err
	}
	if !strings.Contains(text, s.done) {
		return "", fmt.Errorf("no %q in a later look", s.done)
	}
	return "saved", nil
}

// afterPerson is the error of a call that handed over to the person once
// the person is done: theirs first, the call's failure following from it.
func afterPerson(person <-chan error, err error) error {
	if perr := <-person; perr != nil {
		return fmt.Errorf("the person: %w", perr)
	}
	return err
}

// personConfirms is the person at the bank's window, on the Playwright
// side: they read the page, type the code it shows and confirm. These
// calls are the person's, so they are not the agent's to count.
func (a *pwAgent) personConfirms(ctx context.Context) error {
	snap, err := a.s.personCall(ctx, "browser_snapshot", map[string]any{})
	if err != nil {
		return err
	}
	code, ok := findRef(snap.Text, "textbox", "One-time code")
	if !ok {
		return errors.New("no one-time code field on the page")
	}
	if _, err := a.s.personCall(ctx, "browser_type", map[string]any{"target": code, "element": "One-time code", "text": taskOTP}); err != nil {
		return err
	}
	confirm, ok := findRef(snap.Text, "button", "Confirm payment")
	if !ok {
		return errors.New("no Confirm payment button on the page")
	}
	r, err := a.s.personCall(ctx, "browser_click", map[string]any{"target": confirm, "element": "Confirm payment"})
	if err == nil && r.IsError {
		err = fmt.Errorf("confirm: %.200s", r.Text)
	}
	a.snapshot = "" // the page changed
	return err
}
