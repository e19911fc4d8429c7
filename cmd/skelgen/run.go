package main

import (
	"errors"
	"io"
)

func cmdRun(args []string, stdout, stderr io.Writer) error {
	return errors.New("run: not implemented yet")
}
