// Package axtree reads the accessibility tree Chromium returns
// (Accessibility.getFullAXTree, a flat list of nodes naming their
// parents): pling mcp's view of a page (agent/cdp) and the benchmark's
// ARIA snapshot (pling-bench browser) walk it from the same root.
package axtree

import "github.com/chromedp/cdproto/accessibility"

// Index maps the nodes by id and finds the root: the first node whose
// parent is not in the list (nil when the list is empty).
func Index(nodes []*accessibility.Node) (byID map[accessibility.NodeID]*accessibility.Node, root *accessibility.Node) {
	byID = make(map[accessibility.NodeID]*accessibility.Node, len(nodes))
	for _, n := range nodes {
		byID[n.NodeID] = n
	}
	for _, n := range nodes {
		if n.ParentID == "" || byID[n.ParentID] == nil {
			return byID, n
		}
	}
	return byID, nil
}
