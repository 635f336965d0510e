//go:build !plinggen

package pagespec

// DecodeConfig reads a configuration as the shim sends it.
func DecodeConfig(v any) (Config, error) {
	var c Config
	err := decodeConfig(v, &c)
	return c, err
}

// DecodeRecords reads a records declaration.
func DecodeRecords(v any) (Records, error) {
	var r Records
	err := decodeRecords(v, &r)
	return r, err
}

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
func DecodeState(v any) (State, error) {
	var s State
	err := decodeState(v, &s)
	return s, err
}

// DecodeGuide reads a guide declaration.
func DecodeGuide(v any) (Guide, error) {
	var g Guide
	err := decodeGuide(v, &g)
	return g, err
}

// DecodeRegion reads a region declaration.
func DecodeRegion(v any) (Region, error) {
	var r Region
	err := decodeRegion(v, &r)
	return r, err
}

// DecodeAction reads an action declaration.
func DecodeAction(v any) (Action, error) {
	var a Action
	err := decodeAction(v, &a)
	return a, err
}
