// The page API of pling.js and node.js (docs/page-api.md §2), written by
// hand: it describes JS functions, which have no Go type to generate it
// from. Every wire type and every data member a page sends the module comes
// from the generated pling.d.ts (make generate), imported, never copied.

import type {
  ActionErrorCode,
  Feedback,
  JsonSchema,
  Page,
  PageInfo,
  PropertySchema,
  SurfaceApprovalChallenge,
  SurfaceApprovalDecision,
  SurfaceRequest,
  SurfaceResponse,
} from "./pling.js";

export type * from "./pling.js";

/** What a declaring call's `declared` promise settles to (§2). */
export interface DeclareOutcome {
  ok: boolean;
  /** A conflict: the declaration stays registered, the id is unavailable. */
  code?: ActionErrorCode;
  message?: string;
  /** A declaration the runtime refused. */
  error?: string;
  /** Disposed before the module started. */
  disposed?: boolean;
}

/** What every declaring call returns (§2). */
export interface Handle {
  dispose(): void;
  readonly declared: Promise<DeclareOutcome>;
  /** The conflict code, once known. */
  readonly code?: ActionErrorCode;
}

/**
 * One parameter of an action: the wire's PropertySchema, and required; enum
 * may be a readonly (`as const`) array.
 */
export interface Param extends Omit<PropertySchema, "type" | "items" | "enum"> {
  type: NonNullable<PropertySchema["type"]>;
  required?: boolean;
  enum?: readonly unknown[];
  items?: Param;
}

/** The codes a handler's business failure may carry (§2.9). */
export type FailureCode = "INVALID_PARAMS" | "PERMISSION_DENIED" | "ACTION_UNAVAILABLE" | "EXECUTION_FAILED";

/** What a failure may name: INVALID_PARAMS's parameters, as JSON pointers ("/name") or names. */
export interface FailureDetails {
  path?: string;
  paths?: string[];
  violations?: { path: string; reason?: string }[];
}

/** A handler's business failure: returned by pling.fail, or thrown (§2.9). */
export interface Failure extends Error {
  readonly code: FailureCode;
  readonly details?: FailureDetails;
}

export interface FailureConstructor {
  new (code: FailureCode, message?: string, details?: FailureDetails): Failure;
  readonly prototype: Failure;
}

export type Params = Record<string, Param>;

type ValueOf<P extends Param> = P["enum"] extends readonly (infer E)[]
  ? E
  : P["type"] extends "string"
    ? string
    : P["type"] extends "number" | "integer"
      ? number
      : P["type"] extends "boolean"
        ? boolean
        : P["type"] extends "array"
          ? unknown[]
          : P["type"] extends "object"
            ? Record<string, unknown>
            : unknown;

/** The input an action's run gets for its params; record for a row action. */
export type InputOf<P extends Params> = {
  [K in keyof P as P[K] extends { required: true } ? K : never]: ValueOf<P[K]>;
} & {
  [K in keyof P as P[K] extends { required: true } ? never : K]?: ValueOf<P[K]>;
} & { record?: string };

/** What run, available, hooks and steps learn of the invoke (§2.1). */
export interface Call {
  action: string;
  capability: string;
  record?: string;
  requestId: string;
  step: number;
  subject?: string;
  /** The session token the request carried: forward it, the site's server verifies it (docs/authority.md). */
  session?: string;
  /** The approval the authority signed for this invoke (pa1.…), when a person approved it there. */
  approval?: string;
  /** Pling-Session and Pling-Approval, ready for fetch(url, {headers: call.headers}). */
  headers?: { "Pling-Session": string; "Pling-Approval"?: string };
}

/** An expectation (§2.1). */
export interface Expect {
  state?: string;
  change?: "increase" | "decrease" | "any";
  equals?: unknown;
  timeoutMs?: number;
  predicate?(before: unknown, after: unknown): boolean;
}

/** What available may answer: true, false, or the reason it is not. */
export type Availability = boolean | string;

/** Whether an input needs approval: true or the reason asks, false does not. */
export type ApprovalWhen = (input: Record<string, unknown>, record?: string) => boolean | string;

/** pling.action's argument (§2.1). */
export interface ActionDef<P extends Params = Params> {
  id: string;
  title?: string;
  description?: string;
  params?: P;
  risk?: "read" | "write" | "destructive";
  available?: Availability | ((record?: string) => Availability);
  run?: (input: InputOf<P>, call: Call) => unknown;
  expect?: Expect;
  steps?: { title?: string; run: (input: InputOf<P>, call: Call) => unknown; expect?: Expect }[];
  /** result, when given, is the call's value, read once the person is done (§2.1). */
  handoff?: boolean | string | { prompt?: string; timeoutMs?: number; result?: (input: InputOf<P>, call: Call) => unknown };
  /**
   * true: every invoke waits for a person. A function decides per input
   * and record: true or a reason (shown to the person) asks, false runs
   * without approval. summary gives the person the page's words for what
   * they approve; the text is bound to the challenge (§2.1).
   */
  approval?: boolean | ApprovalWhen | { when?: ApprovalWhen; summary?: (input: InputOf<P>, record?: string) => string };
  region?: string;
  record?: { kind: string; id?: string; allowOffscreen?: boolean };
  /** The handler's deadline in ms (default: the page's handlerTimeoutMs, 30 s). */
  timeoutMs?: number;
  identity?: unknown;
}

/** A row of pling.records (§2.5). */
export interface RecordRow {
  id: string;
  label?: string;
  visible?: boolean;
}

/** The handoff hook's request (§2.7). */
export interface HandoffRequest {
  capability: string;
  record?: string;
  title?: string;
  prompt?: string;
  timeoutMs: number;
}

/** A hook's abort signal: onabort is called when the runtime stops waiting. */
export interface HookSignal {
  onabort: (() => void) | null;
}

type Awaitable<T> = T | Promise<T>;

/** The hooks of pling.configure; false or null removes the default (§2.7). */
export interface Hooks {
  handoff?: ((req: HandoffRequest, signal: HookSignal) => Awaitable<"done" | "cancel">) | false | null;
  approve?: ((challenge: SurfaceApprovalChallenge, signal: HookSignal) => Awaitable<SurfaceApprovalDecision>) | false | null;
  waiting?: ((w: { id: string; capability: string; kind: "approval" | "handoff"; timeoutMs: number }) => void) | false | null;
  page?: (() => PageInfo) | false | null;
  feedback?: (() => Feedback[]) | false | null;
}

/**
 * Where a page's files are served (§1.1, §7): assets is the URL of the
 * directory with pling.wasm, wasm_exec.js, ui.js and webmcp.js; the others
 * name one file each.
 */
export interface LoaderOptions {
  assets?: string;
  wasm?: string;
  wasmExec?: string;
  ui?: string;
  webmcpSrc?: string;
  /** Subresource Integrity of pling.wasm and wasm_exec.js (dist/sri.json). */
  wasmIntegrity?: string;
  wasmExecIntegrity?: string;
}

/** pling.configure's argument: the generated Page.Config, hooks, loader. */
export type ConfigureOptions = Page.Config & Hooks & LoaderOptions;

/** A model tool of pling.tools (protocol §4.2.6). */
export interface Tool {
  name: string;
  description: string;
  parameters: JsonSchema;
  capability: string;
}

/** window.pling, and what loadPling returns (§2). */
export interface Pling {
  action<const P extends Params = {}>(def: ActionDef<P>): Handle;
  state(key: string, read: () => unknown, opts?: Omit<Page.State, "key">): Handle;
  guide(target: string, label?: string | Omit<Page.Guide, "target">): Handle;
  guide(def: Page.Guide): Handle;
  region(def: Page.Region & { active?: boolean | (() => boolean) }): Handle;
  records(kind: string, rows: RecordRow[] | (() => RecordRow[])): Handle;
  hook(def: { before?(call: Call): unknown; after?(call: Call, value: unknown): void }): Handle;
  /** A business failure for a handler to return (or throw): a business result, not a crash (§2.9). */
  fail(code: FailureCode, message?: string, details?: FailureDetails): Failure;
  readonly Failure: FailureConstructor;
  /** Before the module starts; afterwards it throws. */
  configure(options: ConfigureOptions): { dispose(): void };
  load(): Promise<Pling>;
  /** Reading it starts loading the module. */
  readonly ready: Promise<Pling>;
  readonly configured: boolean;
  surface: {
    handle(request: SurfaceRequest | string | Uint8Array): Promise<SurfaceResponse>;
    cancel(id: string, session?: string): Promise<boolean>;
  };
  tools(session?: string): Promise<Tool[]>;
  callTool(name: string, argumentsText?: string, session?: string): Promise<SurfaceResponse>;
}

/** loadPling's options: the module's directory, and configure's data (§6). */
export interface NodeOptions extends Page.Config {
  /** The directory with pling.wasm and wasm_exec.js (default: the package's dist/). */
  dir?: string;
}

/** Node: a pling backed by the module in opts.dir (§6). */
export declare function loadPling(opts?: NodeOptions): Pling;

/** The page's pling (the ES module entry for pages, §7). */
export declare const pling: Pling;

declare global {
  interface Window {
    pling: Pling;
  }
}
