// The React binding of the npm package (docs/page-api.md §8):
//
//   import { usePlingAction, usePlingState, usePlingRecords } from "@pling/page/react";
//
// Each hook declares in an effect and disposes in its cleanup, so a
// component's declarations live exactly as long as it is mounted; under
// StrictMode's mount-unmount-mount the first declaration is disposed before
// the second is made, and one capability remains. The functions a hook is
// given (run, available, steps' run, predicates, a state's value, a list's
// rows) are read from a ref at call time: a re-render with a new handler
// keeps the one declaration and the agent's next invoke runs the new
// handler. The declaration is remade only when its data (id, title,
// params, …) or the deps given change.
import { useEffect, useLayoutEffect, useRef } from "react";
import { pling as shimPling } from "./pling.mjs";

function api() {
  return globalThis.pling || shimPling;
}

// dataKey is the part of an action definition that is data: what makes
// the declaration itself change (functions are read from the ref).
function dataKey(def) {
  return JSON.stringify(def, function (k, v) { return typeof v === "function" ? "\u0192" : v; });
}

// usePlingAction(def, deps?) declares pling.action(def) while the
// component is mounted and returns nothing; def's functions may change
// on every render.
export function usePlingAction(def, deps) {
  var ref = useRef(def);
  useLayoutEffect(function () { ref.current = def; });
  var key = dataKey(def);
  useEffect(function () {
    var d = ref.current, spec = Object.assign({}, d);
    if (typeof d.run === "function") spec.run = function (input, call) { return ref.current.run(input, call); };
    if (typeof d.available === "function") spec.available = function (record) {
      var a = ref.current.available;
      return typeof a === "function" ? a(record) : a;
    };
    if (d.expect && typeof d.expect.predicate === "function") {
      spec.expect = Object.assign({}, d.expect, { predicate: function (before, after) { return ref.current.expect.predicate(before, after); } });
    }
    if (Array.isArray(d.steps)) {
      spec.steps = d.steps.map(function (st, i) {
        var s = Object.assign({}, st, { run: function (input, call) { return ref.current.steps[i].run(input, call); } });
        if (st.expect && typeof st.expect.predicate === "function") {
          s.expect = Object.assign({}, st.expect, { predicate: function (b, a) { return ref.current.steps[i].expect.predicate(b, a); } });
        }
        return s;
      });
    }
    // The identity is the functions' source, by pling.js's one rule; the
    // wrappers above would all look alike.
    if (spec.identity === undefined) spec.identity = "react:" + key + api()._identity(d);
    var h = api().action(spec);
    return function () { h.dispose(); };
  }, [key].concat(deps || []));
}

// usePlingState(key, value, opts?) declares a state whose value is the
// one of the last committed render.
export function usePlingState(key, value, opts) {
  var ref = useRef(value);
  useLayoutEffect(function () { ref.current = value; });
  var okey = JSON.stringify(opts || {});
  useEffect(function () {
    var o = Object.assign({}, opts);
    if (o.identity === undefined) o.identity = "react:state:" + key;
    var h = api().state(key, function () { return ref.current; }, o);
    return function () { h.dispose(); };
  }, [key, okey]);
}

// usePlingRecords(kind, rows) declares the records of kind: rows is the
// list as last rendered, [{id, label?, visible?}].
export function usePlingRecords(kind, rows) {
  var ref = useRef(rows);
  useLayoutEffect(function () { ref.current = rows; });
  useEffect(function () {
    var h = api().records(kind, function () { return ref.current; });
    return function () { h.dispose(); };
  }, [kind]);
}
