package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseProgram reads a program in the form Program.String prints (`send(1) receive(3,long)
// nack(4,2) subscribe(t1,earliest,shared) ...`, steps separated by spaces). What the printed
// form leaves out (a Pick no step of that kind reads; which odd or even Pick a receive had) is
// read as 0 or 1: the parsed program runs exactly as the printed one, and prints the same.
func ParseProgram(s string) (Program, error) {
	var prog Program
	for i, f := range strings.Fields(s) {
		st, err := parseStep(f)
		if err != nil {
			return nil, fmt.Errorf("step %d %q: %w", i+1, f, err)
		}
		prog = append(prog, st)
	}
	return prog, nil
}

// call splits "name(a,b)" into name and its arguments.
func call(s string) (name string, args []string, err error) {
	name, rest, ok := strings.Cut(s, "(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return "", nil, fmt.Errorf("want name(arguments)")
	}
	return name, strings.Split(strings.TrimSuffix(rest, ")"), ","), nil
}

func nonNegative(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	return n, nil
}

func parseStep(s string) (Step, error) {
	name, args, err := call(s)
	if err != nil {
		return Step{}, err
	}
	op := Op(slices.Index(opNames[:], name))
	if op < 0 {
		return Step{}, fmt.Errorf("no step %q (want one of %v)", name, opNames)
	}
	want := map[Op]string{Send: "1", Receive: "1 or 2", Ack: "2", Nack: "2", Close: "1", Join: "1", Subscribe: "3"}[op]
	if !strings.Contains(want, strconv.Itoa(len(args))) {
		return Step{}, fmt.Errorf("%s takes %s arguments, not %d", name, want, len(args))
	}
	if op == Subscribe {
		t, ok := strings.CutPrefix(args[0], "t")
		topic, err := nonNegative(t)
		if !ok || err != nil || topic > 1 {
			return Step{}, fmt.Errorf("topic %q: want t0 or t1", args[0])
		}
		pos := slices.Index([]string{"earliest", "latest"}, args[1])
		mode := slices.Index([]string{"shared", "unique"}, args[2])
		if pos < 0 || mode < 0 {
			return Step{}, fmt.Errorf("want subscribe(t<0|1>,<earliest|latest>,<shared|unique>)")
		}
		return Step{Op: op, Arg: topic + 2*pos + 4*mode}, nil
	}
	arg, err := nonNegative(args[0])
	if err != nil {
		return Step{}, err
	}
	st := Step{Op: op, Arg: arg}
	switch {
	case op == Receive && len(args) == 2:
		if args[1] != "long" {
			return Step{}, fmt.Errorf("receive's second argument is long, not %q", args[1])
		}
		st.Pick = 1
	case op == Ack || op == Nack:
		if st.Pick, err = nonNegative(args[1]); err != nil {
			return Step{}, err
		}
	}
	return st, nil
}

// ParseSchedule reads a nemesis schedule in the form Schedule.String prints (`cut(long)@0
// limit(short)@2 restart@6 kill(1)@18`); what that form leaves out (a restart's or kill's
// duration, the Arg of a fault other than kill) is read as its zero value, which the run
// never reads.
func ParseSchedule(s string) (Schedule, error) {
	var out Schedule
	for i, f := range strings.Fields(s) {
		fs, err := parseFault(f)
		if err != nil {
			return nil, fmt.Errorf("fault %d %q: %w", i+1, f, err)
		}
		if i > 0 && out[i-1].Before > fs.Before {
			return nil, fmt.Errorf("fault %d %q starts before the fault ahead of it", i+1, f)
		}
		out = append(out, fs)
	}
	return out, nil
}

func parseFault(s string) (FaultStep, error) {
	what, at, ok := strings.Cut(s, "@")
	if !ok {
		return FaultStep{}, fmt.Errorf("want fault@step")
	}
	before, err := nonNegative(at)
	if err != nil {
		return FaultStep{}, err
	}
	name, args := what, []string(nil)
	if strings.Contains(what, "(") {
		if name, args, err = call(what); err != nil {
			return FaultStep{}, err
		}
	}
	f := Fault(slices.Index(faultNames[:], name))
	if f < 0 {
		return FaultStep{}, fmt.Errorf("no fault %q (want one of %v)", name, faultNames)
	}
	fs := FaultStep{Before: before, Fault: f}
	switch {
	case f == FaultRestart:
		if args != nil {
			return FaultStep{}, fmt.Errorf("restart takes no argument")
		}
	case f == FaultKill:
		if len(args) != 1 {
			return FaultStep{}, fmt.Errorf("want kill(<subscription>)")
		}
		if fs.Arg, err = nonNegative(args[0]); err != nil {
			return FaultStep{}, err
		}
	default:
		if len(args) != 1 || (args[0] != "short" && args[0] != "long") {
			return FaultStep{}, fmt.Errorf("want %s(short) or %s(long)", name, name)
		}
		fs.Long = args[0] == "long"
	}
	return fs, nil
}
