package main

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// TestDescribeSaysRowsAvailable: pling describe says, on a row action's
// record line, on how many rows in view it can run, for the natural check
// written per row (it throws without a row).
func TestDescribeSaysRowsAvailable(t *testing.T) {
	ctx, base := servePages(t, fstest.MapFS{"rows.html": {Data: []byte(`<!doctype html><title>Rows</title>
<script src="/pling/pling.js" data-expose="*"></script>
<script>
  const tickets = { t1: "open", t2: "closed", t3: "open", t4: "closed" };
  pling.records("ticket", () => Object.keys(tickets).map((id) => ({ id, label: "Ticket " + id, visible: id !== "t4" })));
  pling.action({ id: "close", title: "Close the ticket", record: { kind: "ticket" },
    available: (id) => tickets[id].length > 0 && tickets[id] === "open" || "already closed",
    run: ({ record }) => { tickets[record] = "closed"; return true; } });
</script>`)}})
	var stdout, stderr syncbuf.Buffer
	if code := run(ctx, []string{"describe", base + "/rows.html"}, &stdout, &stderr); code != 0 {
		t.Fatalf("pling describe: exit %d\n%s", code, stderr.String())
	}
	if want := "record: ticket, 4 total; pass input.record; visible t1, t2, t3; 1 offscreen; available for 2 of the 3 rows in view"; !strings.Contains(stdout.String(), want) {
		t.Errorf("pling describe printed no %q:\n%s", want, stdout.String())
	}
}
