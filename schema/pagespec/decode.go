//go:build !plinggen

package pagespec

// DecodeConfig reads a configuration as the shim sends it.
func DecodeConfig(v any) (Config, error) { return decodeAs(v, decodeConfig) }

// DecodeRecords reads a records declaration.
func DecodeRecords(v any) (Records, error) { return decodeAs(v, decodeRecords) }

// DecodeRows reads what a records reader returns: an array of rows (a
// null row is an empty one, as json.Unmarshal reads it), or null for none.
func DecodeRows(v any) ([]Row, error) {
	if v == nil {
		return nil, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, wrongType("rows", "an array")
	}
	rows := make([]Row, len(a))
	for i, e := range a {
		if e == nil {
			continue
		}
		if err := decodeRow(e, &rows[i]); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// DecodeState reads a state declaration.
func DecodeState(v any) (State, error) { return decodeAs(v, decodeState) }

// DecodeGuide reads a guide declaration.
func DecodeGuide(v any) (Guide, error) { return decodeAs(v, decodeGuide) }

// DecodeRegion reads a region declaration.
func DecodeRegion(v any) (Region, error) { return decodeAs(v, decodeRegion) }

// DecodeAction reads an action declaration.
func DecodeAction(v any) (Action, error) { return decodeAs(v, decodeAction) }

// decodeAs reads v with decode, the generated reader of one type.
func decodeAs[T any](v any, decode func(any, *T) error) (T, error) {
	var t T
	err := decode(v, &t)
	return t, err
}
