// Deliberately wrong uses of the page API: tsc --strict must refuse every
// line marked "wrong:" (TestNPMPackage checks each is named in its errors).
import { loadPling } from "@pling/page";

const pling = loadPling({ expose: ["*"] });
pling.action({ title: "no id", run: () => 1 }); // wrong: id is required
pling.action({ id: 7, run: () => 1 }); // wrong: id is a string
pling.action({ id: "a", params: { n: { type: "integer", required: true } }, run: ({ n }) => n.toUpperCase() }); // wrong: an integer param is a number
pling.action({ id: "b", params: { s: { type: "text" } } }); // wrong: no such param type
pling.action({ id: "c", risk: "dangerous" }); // wrong: risk is read, write or destructive
pling.action({ id: "d", expect: { state: "x", change: "up" } }); // wrong: change is increase, decrease or any
pling.configure({ RateLimit: {} }); // wrong: the member is rateLimit
pling.configure({ expose: "*" }); // wrong: expose is a list
pling.configure({ rateLimit: { invoke: { burst: "10" } } }); // wrong: burst is a number
pling.state("k"); // wrong: a state needs its reader
pling.records("order", [{ label: "no id" }]); // wrong: a record row has an id
pling.surface.handle(42); // wrong: a request object, its text or its bytes
pling.surface.handle({ protocol: "pling.surface/0.1", id: "r", method: "list" }); // wrong: method is describe or invoke
const n: number = pling.ready; // wrong: ready is a promise of pling
pling.tools().then((ts) => ts.map((t) => t.title)); // wrong: a tool has a name, not a title
pling.nope(); // wrong: no such method
pling.action({ id: "e", run: () => pling.fail("LOOP_DETECTED", "x") }); // wrong: not a code a handler gives
