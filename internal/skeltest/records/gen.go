// Package records tests typed ring buffer and perf readers on records of
// variable length: shorter than the record struct (a header and a payload
// of the length sent) and longer (the struct then a tail it does not
// describe). struct rec and struct small are used only inside functions,
// so they are not in the object's BTF: -type finds rec in the source, and
// small types its ring buffer without -type. The program sends its
// struct scratch buffer, whose first bytes are a struct rec: the ! of
// -type rb=rec! says that reading them as rec is intended.
package records

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" -type rb=rec! -type perf=rec! records.bpf.c
