// Package version names the skelgen release. Generated files carry it in
// their first line, so that a file tells which skelgen wrote it; it is a
// constant rather than the binary's build information so that the output
// is byte-identical wherever and however skelgen is built.
package version

// Version is skelgen's release.
const Version = "v0.1.0-dev"
