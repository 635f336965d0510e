package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// changesJS keeps, in an isolated world of the document, a mark that
// moves whenever the page may have changed what it describes: a change
// to its DOM (nodes, attributes, text), or a person's input, change,
// click, submit or reset. The first call installs the watch; every call
// returns the mark, "ID:N:H", where ID is drawn when the watch is
// installed (a new document never repeats an old mark), N counts what
// happened, and H is a hash of the values in the forms a page declares
// (form[toolname], form[data-pling-toolname], form[data-pling-action]):
// a script that fills a form (from its own fetch) sets values, which
// moves no observer and fires no event, and those values are the
// described defaults. A secret field's value (secretFieldJS) is left out
// of H: it is never a default, and the mark goes to the agent's side,
// where a hash of a short one-time code or PIN could be tried back to
// its value. The page's script cannot reach the isolated world:
// it can make the mark move (by changing its DOM), not stop it or set it
// back.
const changesJS = `(() => {
  const secret = ` + secretFieldJS + `;
  let m = globalThis.__plingChanges;
  if (!m) {
    m = globalThis.__plingChanges = { id: Math.random().toString(36).slice(2) + Date.now().toString(36), n: 0 };
    const bump = () => { m.n++; };
    new MutationObserver(bump).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    for (const t of ["input", "change", "click", "submit", "reset"]) document.addEventListener(t, bump, true);
  }
  let h = 0;
  for (const f of document.querySelectorAll("form[toolname],form[data-pling-toolname],form[data-pling-action]")) {
    for (const e of f.elements) {
      if (secret(e)) continue;
      const v = (e.checked ? "1" : "0") + e.value + "\u0000";
      for (let i = 0; i < v.length; i++) h = (Math.imul(h, 31) + v.charCodeAt(i)) | 0;
    }
  }
  return m.id + ":" + m.n + ":" + (h >>> 0).toString(36);
})()`

// changesWorld names the isolated world the mark is kept in; the browser
// gives one world per name and frame, so every call finds the watch the
// first one installed in the document.
const changesWorld = "pling-changes"

// ChangeMark returns a mark that moves whenever the page the tab shows
// may have changed: its DOM, a person's input, another document. A
// bridge that finds the mark where it was at its last describe need not
// describe again (agent/mcp WithChangeMark). What a page changes without
// touching its DOM (data its script keeps) does not move the mark.
func (p *Page) ChangeMark(ctx context.Context) (string, error) {
	tctx, cancel := p.bounded(ctx, p.cur())
	defer cancel()
	tree, err := chromedp.Call(tctx, page.GetFrameTree, cdproto.Empty{})
	if err != nil {
		return "", fmt.Errorf("cdp: reading the page's change mark: %w", err)
	}
	if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return "", errors.New("cdp: reading the page's change mark: the tab has no main frame")
	}
	world, err := chromedp.Call(tctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: tree.FrameTree.Frame.ID, WorldName: changesWorld})
	if err != nil {
		return "", fmt.Errorf("cdp: reading the page's change mark: %w", err)
	}
	byValue := true
	res, err := chromedp.Call(tctx, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: changesJS,
		ContextID: world.ExecutionContextID, ReturnByValue: &byValue})
	if err != nil {
		return "", fmt.Errorf("cdp: reading the page's change mark: %w", err)
	}
	var mark string
	if res.ExceptionDetails != nil || res.Result == nil || json.Unmarshal(res.Result.Value, &mark) != nil || len(mark) > 64 {
		return "", errors.New("cdp: reading the page's change mark: the script failed")
	}
	return string(tree.FrameTree.Frame.LoaderID) + "/" + mark, nil
}
