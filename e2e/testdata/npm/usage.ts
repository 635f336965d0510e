// The page API as a TypeScript user writes it against @pling/page: it must
// type-check under --strict (TestNPMPackage).
import { loadPling, type Handle, type Pling, type SurfaceResponse, type SurfaceDescription, type Page } from "@pling/page";
import type { SurfaceInvokeResult } from "@pling/page/wire";

export async function main(): Promise<void> {
  const pling: Pling = loadPling({ expose: ["*"], rateLimit: { invoke: { burst: 10, perSecond: 5 } } });
  const cart: { sku: string; qty: number }[] = [];
  pling.configure({ replayGuard: "memory", page: () => ({ url: "https://shop.example/", title: "Shop" }), feedback: () => [], assets: "/static/pling/" });
  const state: Handle = pling.state("cart.count", () => cart.length, { description: "items in the cart" });
  const add = pling.action({
    id: "cart.add",
    title: "Add to cart",
    params: { sku: { type: "string", required: true }, qty: { type: "integer", minimum: 1 }, size: { type: "string", enum: ["s", "m"] } },
    available: () => cart.length < 3 || "Cart is full",
    run: async ({ sku, qty, size }, call) => {
      const s: string = sku;
      const q: number | undefined = qty;
      const z: "s" | "m" | undefined = size;
      cart.push({ sku: s + (z ?? ""), qty: q ?? 1 });
      return { added: sku, id: call.requestId };
    },
    expect: { state: "cart.count", change: "increase", predicate: (before, after) => before !== after },
  });
  pling.action({ id: "open", title: "Open", record: { kind: "order" }, available: (record) => record !== "x", run: ({ record }) => record ?? "" });
  const sizes = ["s", "m", "l"] as const;
  pling.action({
    id: "board.rename", timeoutMs: 5000,
    params: { name: { type: "string", required: true, minLength: 3 }, size: { type: "string", enum: sizes } },
    run: ({ name, size }) => {
      const z: "s" | "m" | "l" | undefined = size;
      if (name.length > 40) throw new pling.Failure("INVALID_PARAMS", "The name is too long", { path: "/name" });
      return name === "admin" ? pling.fail("PERMISSION_DENIED", "Only admins may use that name") : { renamed: name, size: z };
    },
  });
  pling.action({
    id: "pay", params: { sku: { type: "string", required: true } },
    handoff: { prompt: "Confirm with your bank", result: ({ sku }, call) => ({ paid: sku, id: call.requestId }) },
    run: () => true,
  });
  pling.guide("cart", "The cart");
  pling.guide({ target: "checkout", label: "Check out", selector: "#checkout" });
  pling.region({ id: "dialog", title: "Dialog", modal: true, active: () => false });
  pling.records("order", () => [{ id: "ord_1", label: "#1001", visible: true }]);
  pling.hook({ before: (call) => (call.capability === "never" ? "blocked" : undefined), after: (_call, _value) => {} });
  const ready: Pling = await pling.ready;
  const outcome = await add.declared;
  if (!outcome.ok && outcome.code === "DUPLICATE_ACTION_ID") throw new Error(outcome.message);
  const d: SurfaceResponse = await ready.surface.handle({ protocol: "pling.surface/0.1", id: "t1", method: "describe" });
  const desc = d.result as SurfaceDescription;
  const ids: string[] = desc.capabilities.map((c) => c.id);
  const r = await pling.surface.handle(JSON.stringify({ protocol: "pling.surface/0.1", id: "t2", method: "invoke", capability: "cart.add", input: { sku: "A1" } }));
  const value: unknown = (r.result as SurfaceInvokeResult).value;
  const tools = await pling.tools();
  const names: string[] = tools.map((t) => t.name + t.capability + Object.keys(t.parameters.properties ?? {}).join());
  const call = await pling.callTool("cart_add", JSON.stringify({ sku: "B2" }));
  const cancelled: boolean = await pling.surface.cancel("t3");
  const cfg: Page.Config = { expose: ids, anonymous: [] };
  state.dispose();
  console.log(ids, value, names, call.ok, cancelled, cfg, pling.configured);
}

// The page's global, as pling.js defines it.
export function inPage(w: Window): Handle {
  return w.pling.action({ id: "hello", title: "Say hello", run: () => "hi" });
}
