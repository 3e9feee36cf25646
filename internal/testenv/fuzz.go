package testenv

import (
	"flag"
	"testing"
)

// LimitMinimization bounds how long the fuzzer minimises each new input
// (-test.fuzzminimizetime, default 60 s) unless the command line sets it:
// minimising is time not spent finding inputs, and an input that needs a
// minute to shrink is not worth it. The flag is read when f.Fuzz starts.
func LimitMinimization(f *testing.F, budget string) {
	set := false
	flag.Visit(func(fl *flag.Flag) { set = set || fl.Name == "test.fuzzminimizetime" })
	if fl := flag.Lookup("test.fuzzminimizetime"); fl != nil && !set {
		if err := fl.Value.Set(budget); err != nil {
			f.Fatal(err)
		}
	}
}
