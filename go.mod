module github.com/pling-go/pling

go 1.26

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/hack-pad/safejs v0.1.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)
