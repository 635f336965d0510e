package schema

import (
	"encoding/json"
	"sort"
	"strconv"
)

// AppendInvokeResult appends the JSON of r exactly as Encode writes it,
// without reflection for the result's own structure. Values typed any
// (a handler's value, state values, details) are written by AppendValue;
// an error is Encode's.
func AppendInvokeResult(dst []byte, r *SurfaceInvokeResult) ([]byte, error) {
	var err error
	dst = append(dst, '{')
	first := true
	if r.Value != nil {
		dst = appendKey(dst, &first, "value")
		if dst, err = AppendValue(dst, r.Value); err != nil {
			return nil, err
		}
	}
	if e := r.Evidence; e != nil {
		dst = appendKey(dst, &first, "evidence")
		if dst, err = appendEvidence(dst, e); err != nil {
			return nil, err
		}
	}
	if f := r.Error; f != nil {
		dst = appendKey(dst, &first, "error")
		dst = append(dst, `{"code":`...)
		dst = AppendQuoted(dst, f.Code, false)
		dst = append(dst, `,"message":`...)
		dst = AppendQuoted(dst, f.Message, false)
		if len(f.Details) > 0 {
			dst = append(dst, `,"details":`...)
			if dst, err = AppendValue(dst, f.Details); err != nil {
				return nil, err
			}
		}
		if f.Resume != "" {
			dst = append(dst, `,"resume":`...)
			dst = AppendQuoted(dst, f.Resume, false)
		}
		dst = append(dst, '}')
	}
	if o := r.Observation; o != nil {
		dst = appendKey(dst, &first, "observation")
		if dst, err = appendObservation(dst, o); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

func appendEvidence(dst []byte, e *Evidence) ([]byte, error) {
	var err error
	dst = append(dst, `{"capability":`...)
	dst = AppendQuoted(dst, e.Capability, false)
	if e.Record != "" {
		dst = append(dst, `,"record":`...)
		dst = AppendQuoted(dst, e.Record, false)
	}
	if len(e.Records) > 0 {
		dst = append(dst, `,"records":[`...)
		for i, s := range e.Records {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendQuoted(dst, s, false)
		}
		dst = append(dst, ']')
	}
	if len(e.Expectations) > 0 {
		dst = append(dst, `,"expectations":[`...)
		for i := range e.Expectations {
			x := &e.Expectations[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"state":`...)
			dst = AppendQuoted(dst, x.State, false)
			dst = append(dst, `,"condition":`...)
			dst = AppendQuoted(dst, x.Condition, false)
			if x.Before != nil {
				dst = append(dst, `,"before":`...)
				if dst, err = AppendValue(dst, x.Before); err != nil {
					return nil, err
				}
			}
			if x.After != nil {
				dst = append(dst, `,"after":`...)
				if dst, err = AppendValue(dst, x.After); err != nil {
					return nil, err
				}
			}
			dst = append(dst, `,"met":`...)
			dst = strconv.AppendBool(dst, x.Met)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if e.Steps != 0 {
		dst = append(dst, `,"steps":`...)
		dst = strconv.AppendInt(dst, int64(e.Steps), 10)
	}
	for _, f := range [...]struct{ name, v string }{{"handoff", e.Handoff}, {"approval", e.Approval}, {"summary", e.Summary}} {
		if f.v != "" {
			dst = append(dst, ',', '"')
			dst = append(dst, f.name...)
			dst = append(dst, '"', ':')
			dst = AppendQuoted(dst, f.v, false)
		}
	}
	return append(dst, '}'), nil
}

func appendObservation(dst []byte, o *SurfaceObservation) ([]byte, error) {
	var err error
	dst = append(dst, '{')
	if len(o.States) > 0 {
		dst = append(dst, `"states":{`...)
		keys := make([]string, 0, len(o.States))
		for k := range o.States {
			keys = append(keys, k)
		}
		sort.Strings(keys) // encoding/json writes map keys sorted
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendQuoted(dst, k, false)
			c := o.States[k]
			dst = append(dst, `:{"before":`...)
			if dst, err = AppendValue(dst, c.Before); err != nil {
				return nil, err
			}
			dst = append(dst, `,"after":`...)
			if dst, err = AppendValue(dst, c.After); err != nil {
				return nil, err
			}
			dst = append(dst, '}')
		}
		dst = append(dst, '}', ',')
	}
	if len(o.Feedback) > 0 {
		dst = append(dst, `"feedback":`...)
		dst = append(appendFeedback(dst, o.Feedback), ',')
	}
	if n := o.Navigation; n != nil {
		dst = append(dst, `"navigation":`...)
		dst = append(appendStringFields(dst, "from", n.From, "to", n.To), ',')
	}
	dst = append(dst, `"capabilitiesChanged":`...)
	dst = strconv.AppendBool(dst, o.CapabilitiesChanged)
	dst = append(dst, `,"revision":`...)
	dst = AppendQuoted(dst, o.Revision, false)
	if o.Truncated {
		dst = append(dst, `,"truncated":true`...)
	}
	return append(dst, '}'), nil
}

// Compact marks bytes that Encode wrote: valid, compact JSON that
// AppendValue copies as they are (a json.RawMessage would be
// validated and compacted again by encoding/json; the output is the same).
type Compact []byte

// MarshalJSON implements json.Marshaler for Encode's way.
func (c Compact) MarshalJSON() ([]byte, error) { return c, nil }

var _ json.Marshaler = Compact(nil)

// appendKey appends "name": to an object being written, after a comma
// unless it is the object's first key.
func appendKey(dst []byte, first *bool, name string) []byte {
	if !*first {
		dst = append(dst, ',')
	}
	*first = false
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendFeedback appends a feedback list as an array.
func appendFeedback(dst []byte, fb []Feedback) []byte {
	dst = append(dst, '[')
	for i, f := range fb {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"level":`...)
		dst = AppendQuoted(dst, f.Level, false)
		dst = append(dst, `,"message":`...)
		dst = AppendQuoted(dst, f.Message, false)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendStringFields appends an object of string fields tagged omitempty,
// given as name, value pairs in field order.
func appendStringFields(dst []byte, nameValues ...string) []byte {
	first := true
	dst = append(dst, '{')
	for i := 0; i+1 < len(nameValues); i += 2 {
		if v := nameValues[i+1]; v != "" {
			dst = appendKey(dst, &first, nameValues[i])
			dst = AppendQuoted(dst, v, false)
		}
	}
	return append(dst, '}')
}
