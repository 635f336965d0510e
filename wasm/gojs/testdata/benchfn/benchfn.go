// Package benchfn is the work BenchmarkCall measures, shared by the test
// module (its roundTrip) and the native side of the benchmark, so both run
// the same code.
package benchfn

import "encoding/json"

// Doc is the shape of the benchmark's JSON document.
type Doc struct {
	ID     string            `json:"id"`
	Kind   string            `json:"kind"`
	Count  int               `json:"count"`
	Score  float64           `json:"score"`
	Tags   []string          `json:"tags"`
	Attrs  map[string]string `json:"attrs"`
	Items  []Item            `json:"items"`
	Active bool              `json:"active"`
}

// Item is an element of Doc.Items.
type Item struct {
	Name  string  `json:"name"`
	Price float64 `json:"price"`
	Qty   int     `json:"qty"`
}

// RoundTrip decodes a document, touches it, and encodes it again.
func RoundTrip(in string) (string, error) {
	var d Doc
	if err := json.Unmarshal([]byte(in), &d); err != nil {
		return "", err
	}
	d.Count++
	out, err := json.Marshal(&d)
	return string(out), err
}
