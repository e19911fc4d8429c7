package runtime

import "embed"

// Sources are this package's Go files. skelgen writes them into generated
// packages that carry their own copy of the runtime (-runtime vendor);
// an embed pattern cannot reach a package's parent directories, so each
// package embeds its own sources.
//
//go:embed *.go
var Sources embed.FS
