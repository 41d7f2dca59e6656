package cmd

import (
	"strings"

	"connector/pkg/httpx"
)

// sizeFlag is a flag holding a number of bytes, written 64MiB, 1GiB or 1048576 (see
// httpx.ParseSize).
type sizeFlag int64

func (s *sizeFlag) String() string {
	num, unit, _ := strings.Cut(httpx.FormatSize(int64(*s)), " ")
	if strings.HasPrefix(unit, "byte") {
		return num
	}
	return num + unit
}

func (s *sizeFlag) Set(v string) error {
	n, err := httpx.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

func (s *sizeFlag) Type() string { return "size" }
