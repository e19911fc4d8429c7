package bridge

import "embed"

// Sources are this package's Go files, for generated packages that carry
// their own copy of the runtime (see runtime.Sources).
//
//go:embed *.go
var Sources embed.FS
