package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/netloadgen/netloadgen/internal/suggest"
)

// flagError is a flag package error with the nearest defined flag named
// when the flag typed is not one ("flag provided but not defined: -qps:
// did you mean --target-qps?").
func flagError(fs *flag.FlagSet, err error) error {
	const undefined = "flag provided but not defined: -"
	typed, ok := strings.CutPrefix(err.Error(), undefined)
	if !ok || errors.Is(err, flag.ErrHelp) {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := suggest.Nearest(strings.TrimLeft(typed, "-"), names); near != "" {
		return fmt.Errorf("%w: did you mean --%s?", err, near)
	}
	return err
}
