package conformance

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Case is one parsed .data file.
type Case struct {
	Path string // as given to ParseFile; "" for Parse
	Name string // file name without directory and ".data"

	HasAsm  bool
	Asm     string // the "-- asm" section, lines joined with "\n"
	AsmLine int    // line number of the first asm line in the file

	HasRaw bool
	Raw    []byte // "-- raw" as little-endian instruction bytes

	Mem []byte // "-- mem"; nil when absent

	HasResult bool
	Result    uint64

	HasError bool
	Error    string // expected error text; may be empty

	// Unknown lists sections this runner does not know, in file order.
	Unknown []string
}

// ParseError is a malformed .data file.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ignoredSections are informational sections of the suite.
var ignoredSections = map[string]bool{"c": true, "no register offset": true}

// ParseFile reads and parses one .data file.
func ParseFile(path string) (*Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	c.Path = path
	return c, nil
}

// Parse parses the contents of a .data file; name is used in errors and to
// derive Case.Name.
func Parse(name string, data []byte) (*Case, error) {
	c := &Case{Name: strings.TrimSuffix(filepath.Base(name), ".data")}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	section := ""
	var body []string
	bodyStart := 0
	flush := func() error {
		if section == "" {
			return nil
		}
		return c.setSection(name, section, body, bodyStart)
	}
	for i, line := range lines {
		if s, ok := strings.CutPrefix(line, "-- "); ok || line == "--" {
			if err := flush(); err != nil {
				return nil, err
			}
			section, body, bodyStart = strings.TrimSpace(s), nil, i+2
			continue
		}
		if section == "" {
			// Before the first section only comments and blank lines may appear.
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				return nil, &ParseError{name, i + 1, fmt.Sprintf("text outside any section: %q", t)}
			}
			continue
		}
		body = append(body, line)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Case) setSection(file, section string, body []string, start int) error {
	switch {
	case section == "asm":
		c.HasAsm, c.Asm, c.AsmLine = true, strings.Join(body, "\n"), start
	case section == "raw":
		raw, err := parseRaw(file, body, start)
		if err != nil {
			return err
		}
		c.HasRaw, c.Raw = true, raw
	case section == "mem":
		mem, err := parseBytes(file, body, start)
		if err != nil {
			return err
		}
		c.Mem = mem
	case section == "result":
		v, line, err := parseResult(body)
		if err != nil {
			return &ParseError{file, start + line, fmt.Sprintf("section result: %v", err)}
		}
		c.HasResult, c.Result = true, v
	case section == "error":
		c.HasError, c.Error = true, strings.TrimSpace(strings.Join(dropComments(body), "\n"))
	case ignoredSections[section]:
	default:
		c.Unknown = append(c.Unknown, section)
	}
	return nil
}

// dropComments removes '#' comment lines and blank lines.
func dropComments(body []string) []string {
	var out []string
	for _, l := range body {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			out = append(out, t)
		}
	}
	return out
}

func parseResult(body []string) (uint64, int, error) {
	var vals []string
	line := 0
	for i, l := range body {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			vals = append(vals, t)
			line = i
		}
	}
	if len(vals) != 1 {
		return 0, line, fmt.Errorf("want one value, have %d", len(vals))
	}
	s := strings.ToLower(vals[0])
	var v uint64
	var err error
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		v, err = strconv.ParseUint(h, 16, 64)
	} else if strings.HasPrefix(s, "-") {
		var n int64
		n, err = strconv.ParseInt(s, 10, 64)
		v = uint64(n)
	} else {
		v, err = strconv.ParseUint(s, 10, 64)
	}
	return v, line, err
}

// parseRaw reads "-- raw" in either of the suite's forms: one 0x-prefixed
// 64-bit word per slot with the opcode in the low byte, or (negative/unused-*)
// the eight bytes of each slot as space-separated hex pairs.
func parseRaw(file string, body []string, start int) ([]byte, error) {
	var out []byte
	for i, l := range body {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		fields := strings.Fields(t)
		if len(fields) == 1 && strings.HasPrefix(strings.ToLower(t), "0x") {
			w, err := strconv.ParseUint(t[2:], 16, 64)
			if err != nil {
				return nil, &ParseError{file, start + i, fmt.Sprintf("section raw: bad word %q", t)}
			}
			out = binary.LittleEndian.AppendUint64(out, w)
			continue
		}
		b, err := hexBytes(fields)
		if err != nil {
			return nil, &ParseError{file, start + i, fmt.Sprintf("section raw: %v", err)}
		}
		out = append(out, b...)
	}
	if len(out)%8 != 0 {
		return nil, &ParseError{file, start, fmt.Sprintf("section raw: %d bytes is not a whole number of 8-byte slots", len(out))}
	}
	return out, nil
}

func parseBytes(file string, body []string, start int) ([]byte, error) {
	var out []byte
	for i, l := range body {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b, err := hexBytes(strings.Fields(t))
		if err != nil {
			return nil, &ParseError{file, start + i, fmt.Sprintf("section mem: %v", err)}
		}
		out = append(out, b...)
	}
	return out, nil
}

// hexBytes decodes fields of two hex digits each.
func hexBytes(fields []string) ([]byte, error) {
	out := make([]byte, 0, len(fields))
	for _, f := range fields {
		if len(f) != 2 {
			return nil, fmt.Errorf("bad byte %q (want two hex digits)", f)
		}
		v, err := strconv.ParseUint(f, 16, 8)
		if err != nil {
			return nil, fmt.Errorf("bad byte %q (want two hex digits)", f)
		}
		out = append(out, byte(v))
	}
	return out, nil
}
