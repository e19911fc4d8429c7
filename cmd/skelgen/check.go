package main

import (
	"errors"
	"io"
)

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	return errors.New("check: not implemented yet")
}
