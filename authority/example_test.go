package authority_test

import (
	"fmt"

	"github.com/pling-go/pling/authority"
)

func ExampleStoreSpec() {
	spec := authority.StoreSpec("postgres://pling:s3cret@db.internal:5432/pling?sslmode=verify-full")
	d, _, err := spec.Parse()
	fmt.Println(d, err)
	fmt.Println(spec) // printed and logged redacted
	_, _, err = authority.StoreSpec("pling.db").Parse()
	fmt.Println(err)
	// Output:
	// postgres <nil>
	// postgres://pling:xxxxx@db.internal:5432/pling?sslmode=verify-full
	// store "pling.db": want sqlite:PATH or a postgres://USER@HOST/DB URL
}
