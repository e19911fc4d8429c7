// Package skeltest holds BPF programs with their generated skeletons, one
// package each, and the tests that load them into the kernel through the
// generated API. The skeletons are regenerated with go generate and checked
// with skelgen check like any user's.
package skeltest
