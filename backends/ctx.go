package backends

// Helpers for backends that bound a client's blocking calls by a context. They are not
// part of the contract, so they live outside the files reports/contract.go scans.

import (
	"context"
	"errors"
)

// CtxErr converts a finished context into the contract's error: ErrTimeout for a deadline,
// context.Canceled otherwise, both wrapped with what was waited for.
func CtxErr(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &timeoutError{what: what}
	}
	if ctx.Err() != nil {
		return errors.Join(errors.New(what), ctx.Err())
	}
	return nil
}

type timeoutError struct{ what string }

func (e *timeoutError) Error() string { return e.what + ": timeout (context deadline exceeded)" }
func (e *timeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// RunCtx runs fn, which cannot take a ctx (a client's blocking call), and returns when it
// finishes or when ctx ends, whichever is first; with a ctx that ended already it runs
// nothing. When ctx wins, fn keeps running (bounded by the client's own timeouts) and
// cleanup, if given, receives its late result.
func RunCtx[T any](ctx context.Context, what string, fn func() (T, error), cleanup func(T)) (T, error) {
	if ctx.Err() != nil {
		var zero T
		return zero, CtxErr(ctx, what)
	}
	return RunCtxStarted(ctx, what, fn, cleanup)
}

// RunCtxStarted is RunCtx that starts fn even when ctx has ended already: a Close given a
// spent ctx still closes the client's producer or consumer in the background (the Pulsar
// backend's Close paths).
func RunCtxStarted[T any](ctx context.Context, what string, fn func() (T, error), cleanup func(T)) (T, error) {
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	go func() {
		v, err := fn()
		ch <- res{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		go func() {
			r := <-ch
			if r.err == nil && cleanup != nil {
				cleanup(r.v)
			}
		}()
		var zero T
		return zero, CtxErr(ctx, what)
	}
}
