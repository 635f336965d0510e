// A WebMCP consumer through Stagehand's own programmatic API (no model):
// attached to a running Chromium by its debugging address (argv[2]), it
// reads one JSON command a line on stdin and answers one JSON line on
// stdout with what Stagehand gives its user, carrying the command's id.
//   {"op":"open","url":U}               -> {"ok":true}
//   {"op":"tools"}                      -> {"tools":[{name,annotations}]}
//   {"op":"call","tool":T,"args":{...}} -> {"status","output","errorText","exception"}
// Any failure answers {"error":MESSAGE}. Commands run one at a time.
import { Stagehand, localBrowser } from "@browserbasehq/stagehand";
import { createInterface } from "node:readline";

const browser = await localBrowser.connect({ cdpUrl: process.argv[2] });
const stagehand = await Stagehand.create({ browser });
let page;

const ops = {
  async open({ url }) {
    page = await browser.context.newPage();
    // Until the load event, not goto's default DOMContentLoaded: a
    // Pling page's mirror may register its tools between the two
    // (TestWebMCPClients looks once, right after the navigation).
    await page.goto(url, { waitUntil: "load" });
    return { ok: true };
  },
  async tools() {
    const tools = await page.tools();
    return { tools: tools.map((t) => ({ name: t.name, annotations: t.annotations ?? {} })) };
  },
  async call({ tool, args }) {
    const found = (await page.tools()).find((t) => t.name === tool);
    if (!found) return { error: "no tool " + tool };
    const invocation = await found.invoke({ input: args ?? {} });
    return await invocation.result();
  },
};

const write = (v) => process.stdout.write(JSON.stringify(v) + "\n");
write({ ready: true });
for await (const line of createInterface({ input: process.stdin })) {
  let cmd = {};
  try {
    cmd = JSON.parse(line);
    write({ id: cmd.id, ...(await ops[cmd.op](cmd)) });
  } catch (e) {
    write({ id: cmd.id, error: String(e && e.message ? e.message : e) });
  }
}
await stagehand.close().catch(() => {});
await browser.disconnect().catch(() => {});
process.exit(0);
