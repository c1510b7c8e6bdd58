// Command corpus adds a failing workload program to the corpus that every W1 (W2) run replays
// before its fresh seeds (internal/workload/testdata/corpus, docs/workload.md), and lists it.
// A W1 or W2 failure on a fresh seed prints the add command that keeps it; a seed a user
// reports is added the same way (the program is the seed's, drawn by today's generator, unless
// -program gives the one that failed).
//
//	go run ./internal/workload/cmd/corpus add -seed 1796307262 -backend kafka -failure 'nacked message never redelivered'
//	go run ./internal/workload/cmd/corpus add -workload W2 -seed N -backend pulsar -schedule 'cut(long)@0 limit(long)@2' -failure '...'
//	go run ./internal/workload/cmd/corpus list
//
// Run it from the module's root or below (the corpus is found from go.mod), or give -dir.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/internal/workload"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(2)
	}
}

const usage = "usage: corpus add -seed N -backend NAME -failure KIND [-workload W1|W2] [-program STEPS] [-schedule FAULTS] [-shrunk STEPS] [-note TEXT] [-status open|closed] [-date YYYY-MM-DD] [-dir DIR]\n       corpus list [-dir DIR]"

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("corpus "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the corpus directory (default: "+workload.CorpusDir+" of the module this is run in)")
	switch args[0] {
	case "list":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		d, err := corpusDir(*dir)
		if err != nil {
			return err
		}
		entries, err := workload.ReadCorpusDir(d)
		if err != nil {
			return err
		}
		for _, e := range entries {
			fmt.Fprintf(stdout, "%s\t%s\t%d steps\t%s\t%s\n", e.File(), e.Status, len(e.Program), e.Failed[len(e.Failed)-1], e.Note)
		}
		return nil
	case "add":
	default:
		return fmt.Errorf("no command %q\n%s", args[0], usage)
	}
	var (
		wl       = fs.String("workload", "W1", "the workload that failed: W1 or W2")
		seed     = fs.Int("seed", -1, "the seed of the failing program (required)")
		backend  = fs.String("backend", "", "the backend it failed on (required)")
		failure  = fs.String("failure", "", "the kind of failure, as the failure message names it: the anomaly class, or error: <step> step, <call>: <class> (required)")
		program  = fs.String("program", "", "the failing program's steps (default: the seed's program, Generate(seed, 20, 40))")
		schedule = fs.String("schedule", "", "W2: the nemesis schedule it failed under (required for W2: it depends on the backend's faults)")
		shrunk   = fs.String("shrunk", "", "the program the failure was shrunk to")
		note     = fs.String("note", "", "what the failure is, or the fix or spec that closed it")
		status   = fs.String("status", "open", "open (the defect is not fixed: the entry is expected to fail there) or closed (-note names the fix)")
		date     = fs.String("date", time.Now().UTC().Format(time.DateOnly), "the day it failed")
	)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q\n%s", fs.Args(), usage)
	}
	if *seed < 0 || *backend == "" || *failure == "" {
		return fmt.Errorf("-seed, -backend and -failure are required\n%s", usage)
	}
	if *status != "open" && *status != "closed" {
		return fmt.Errorf("-status %q: want open or closed", *status)
	}
	if *wl != "W1" && *wl != "W2" {
		return fmt.Errorf("-workload %q: want W1 or W2", *wl)
	}
	d, err := corpusDir(*dir)
	if err != nil {
		return err
	}
	e := workload.Entry{Name: workload.EntryName(*wl, *seed), Workload: *wl, Seed: *seed, Status: *status, Note: *note}
	drawn := workload.Generate(*seed, workload.MinSteps, workload.MaxSteps)
	e.Program = drawn
	if *program != "" {
		if e.Program, err = workload.ParseProgram(*program); err != nil {
			return fmt.Errorf("-program: %w", err)
		}
		if e.Program.String() != drawn.String() {
			fmt.Fprintf(stderr, "corpus: seed %d draws another program with today's generator; storing the one given\n", *seed)
		}
	}
	if e.Schedule, err = workload.ParseSchedule(*schedule); err != nil {
		return fmt.Errorf("-schedule: %w", err)
	}
	if e.Shrunk, err = workload.ParseProgram(*shrunk); err != nil {
		return fmt.Errorf("-shrunk: %w", err)
	}
	if e.Note == "" {
		e.Note = fmt.Sprintf("found by %s on %s; name the fix or spec that closes it here, and set status: closed", *wl, *backend)
	}
	failed := fmt.Sprintf("%s %s: %s", *date, *backend, *failure)
	path := filepath.Join(d, e.File())
	verb := "added"
	if text, err := os.ReadFile(path); err == nil {
		old, err := workload.ParseEntry(e.File(), string(text))
		if err != nil {
			return err
		}
		if old.Program.String() != e.Program.String() || old.Schedule.String() != e.Schedule.String() {
			return fmt.Errorf("%s holds another program or schedule for seed %d:\n  stored: %s %s\n  given:  %s %s", path, *seed, old.Program, old.Schedule, e.Program, e.Schedule)
		}
		if *note != "" {
			old.Note = *note
		}
		if len(old.Shrunk) == 0 {
			old.Shrunk = e.Shrunk
		}
		old.Status = *status // it failed (again): open, unless the fix is named with it
		e, verb = old, "updated"
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := workload.ParseFailed(failed)
	if err != nil {
		return fmt.Errorf("-date, -backend, -failure: %w", err)
	}
	if !slices.Contains(e.Failed, f) {
		e.Failed = append(e.Failed, f)
	}
	// Written through ParseEntry: what is stored is an entry the corpus can read.
	if _, err := workload.ParseEntry(e.File(), e.Format()); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(e.Format()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s: %s, %d steps; every %s run replays it from the next build on\n", verb, path, failed, len(e.Program), *wl)
	return nil
}

// corpusDir is dir, or the corpus of the module the working directory is in.
func corpusDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if mod, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			if !strings.Contains(string(mod), "module github.com/pubsub-conformance/harness\n") {
				return "", fmt.Errorf("%s is not the harness module: run this in the harness's working copy, or give -dir", d)
			}
			return filepath.Join(d, filepath.FromSlash(workload.CorpusDir)), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run this in the harness's working copy, or give -dir", wd)
		}
	}
}
