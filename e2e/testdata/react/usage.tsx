// Type-checked by TestReact with tsc --strict against @types/react 19.
import { useState, type JSX } from "react";
import { usePlingAction, usePlingRecords, usePlingState } from "@pling/page/react";

export function Cart(): JSX.Element {
  const [items, setItems] = useState<{ sku: string; qty: number }[]>([]);
  usePlingState("cart.count", items.length, { description: "Items in the cart" });
  usePlingRecords("line", items.map((it) => ({ id: it.sku, label: `${it.qty} × ${it.sku}` })));
  usePlingAction({
    id: "cart.add",
    title: "Add to cart",
    params: { sku: { type: "string", required: true }, qty: { type: "integer", minimum: 1 } },
    run: ({ sku, qty }) => {
      const s: string = sku;
      const q: number | undefined = qty;
      setItems((xs) => [...xs, { sku: s, qty: q ?? 1 }]);
      return xs_length(items) + 1;
    },
    expect: { state: "cart.count", change: "increase" },
  }, [items.length]);
  usePlingAction({ id: "remove", record: { kind: "line" }, run: ({ record }) => setItems((xs) => xs.filter((x) => x.sku !== record)) });
  // @ts-expect-error: a param's type must be one of the JSON Schema types
  usePlingAction({ id: "bad", params: { n: { type: "int" } } });
  // @ts-expect-error: rows have an id
  usePlingRecords("line", [{ label: "no id" }]);
  // @ts-expect-error: deps are an array
  usePlingAction({ id: "x" }, "items");
  return <ul>{items.map((it) => <li key={it.sku}>{it.sku}</li>)}</ul>;
}

function xs_length(xs: readonly unknown[]): number {
  return xs.length;
}
