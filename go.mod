module github.com/skelgen/skelgen

go 1.26.0

require (
	github.com/cilium/ebpf v0.22.0
	github.com/dave/jennifer v1.7.1
	github.com/ulikunitz/xz v0.5.15
	golang.org/x/mod v0.42.0
	golang.org/x/sys v0.49.0
	golang.org/x/tools v0.52.0
)

require golang.org/x/sync v0.24.0 // indirect
