// The React test app of TestReact (e2e/react_test.go): the binding's hooks
// under React 19's StrictMode in a development build, driven by the test
// through window.app.
import { StrictMode, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { pling } from "@pling/page";
import { usePlingAction, usePlingRecords, usePlingState } from "@pling/page/react";

pling.configure({ expose: ["*"], assets: "/pling/" });

window.effects = 0; // how many times Greeter's effects ran: 2 proves StrictMode re-ran them

function Greeter({ version, onRun }) {
  useEffect(() => { window.effects++; }, []);
  usePlingAction({
    id: "greet",
    title: "Greet",
    params: { name: { type: "string", required: true } },
    // A new closure on every render: the invoke must run the latest one.
    run: ({ name }) => { onRun(version); return "hello " + name + " from v" + version; },
    expect: { state: "runs", change: "increase" },
  });
  return <p id="greeter">greeter v{version}</p>;
}

function Items({ items }) {
  usePlingRecords("item", items.map((it) => ({ id: it.id, label: it.label })));
  usePlingAction({
    id: "remove", title: "Remove item", record: { kind: "item" },
    run: ({ record }) => { window.app.setItems((xs) => xs.filter((x) => x.id !== record)); return record; },
  });
  return <ul>{items.map((it) => <li key={it.id}>{it.label}</li>)}</ul>;
}

function App() {
  const [version, setVersion] = useState(1);
  const [shown, setShown] = useState(true);
  const [runs, setRuns] = useState(0);
  const [lastRun, setLastRun] = useState(0);
  const [items, setItems] = useState([{ id: "a", label: "Apple" }, { id: "b", label: "Banana" }]);
  window.app = { setVersion, setShown, setItems, rendered: { version, shown, runs, lastRun, items: items.length } };
  usePlingState("runs", runs);
  usePlingState("lastRun", lastRun);
  const onRun = (v) => { setRuns((n) => n + 1); setLastRun(v); };
  return (
    <main>
      {shown && <Greeter version={version} onRun={onRun} />}
      <Items items={items} />
    </main>
  );
}

createRoot(document.getElementById("root")).render(<StrictMode><App /></StrictMode>);
