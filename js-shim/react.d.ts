// The React binding (react.mjs, docs/page-api.md §8), written by hand like
// pling-page.d.ts. React is a peer dependency; these hooks take no React
// types, so they check against any @types/react 19.

import type { ActionDef, Page, Params, RecordRow } from "./pling-page.js";

/**
 * Declares pling.action(def) while the component is mounted. def's
 * functions are read at call time (a new handler needs no new
 * declaration); the declaration is remade when def's data or deps change.
 */
export declare function usePlingAction<const P extends Params = {}>(def: ActionDef<P>, deps?: readonly unknown[]): void;

/** Declares the state key, reading the value of the last committed render. */
export declare function usePlingState(key: string, value: unknown, opts?: Omit<Page.State, "key">): void;

/** Declares the records of kind: the rows of the last committed render. */
export declare function usePlingRecords(kind: string, rows: readonly RecordRow[]): void;
