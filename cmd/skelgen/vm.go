package main

import (
	"errors"
	"io"
)

func cmdVM(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errors.New("vm: not implemented yet")
}
