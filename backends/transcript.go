package backends

// Optional interfaces a Backend may implement. The suite checks for them with a type
// assertion; nothing else depends on them.

// Transcriber is implemented by backends that record the contract calls made on them and on
// what they handed out (the out-of-process adapters of backends/remote): call, arguments
// summarised, result, timestamps, as they reached the adapter. For a user of such a backend
// outside the suite (a go test, a debugging session); the suite records every client, Go or
// adapter, through its own decorator (internal/history) and attaches that history to a spec
// that failed instead. Safe to call concurrently with the recorded calls.
type Transcriber interface {
	Transcript() string
}

// Unwrapper is implemented by decorators of a Backend (the known-bad variants of
// backends/mutants); FindTranscriber looks through them.
type Unwrapper interface {
	Unwrap() Backend
}

// FindTranscriber returns b's Transcriber, looking through decorators (Unwrapper).
func FindTranscriber(b Backend) (Transcriber, bool) {
	for b != nil {
		if t, ok := b.(Transcriber); ok {
			return t, true
		}
		u, ok := b.(Unwrapper)
		if !ok {
			return nil, false
		}
		b = u.Unwrap()
	}
	return nil, false
}

// Killer is implemented by in-process reference backends (backends/memory and the reference
// ports served through backends/remote): Kill drops the connection the way a crashed process
// would, with no Close of anything it handed out, so that the consumer-crash spec (R5) can run
// without a real process to kill. The Backend is unusable afterwards; Close stays harmless.
type Killer interface {
	Kill()
}
