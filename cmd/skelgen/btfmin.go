package main

import (
	"errors"
	"io"
)

func cmdBtfmin(args []string, stdout, stderr io.Writer) error {
	return errors.New("btfmin: not implemented yet")
}
