package main

import (
	"errors"
	"io"
)

func cmdGenerate(args []string, stdout, stderr io.Writer) error {
	return errors.New("generate: not implemented yet")
}
