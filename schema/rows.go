package schema

import "fmt"

// AvailabilityRows is how many of a row action's known rows describe
// asks, one by one, whether the action can run on them
// (RecordTemplate.Available).
const AvailabilityRows = 200

// RowsAvailable says, for people and models, on how many rows in view a
// row action can run: "available for N of the M rows in view" (of the
// first 200, when more are in view), or "" when describe gave no count.
func (r *RecordTemplate) RowsAvailable() string {
	if r == nil || r.Available == nil {
		return ""
	}
	if inView := r.Total - r.Offscreen; inView <= AvailabilityRows {
		return fmt.Sprintf("available for %d of the %d rows in view", *r.Available, inView)
	}
	return fmt.Sprintf("available for %d of the first %d rows in view", *r.Available, AvailabilityRows)
}
