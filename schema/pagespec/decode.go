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
