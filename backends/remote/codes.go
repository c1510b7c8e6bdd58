package remote

import (
	"context"
	"fmt"

	"github.com/pubsub-conformance/harness/backends"
	pb "github.com/pubsub-conformance/harness/proto/pubsub/v1"
)

// codeErrors maps each wire code to the error a Go backend would wrap. Kept 1:1 with
// backends.Code (codes_test.go checks both directions for every sentinel).
var codeErrors = map[pb.ErrorCode]error{
	pb.ErrorCode_ERROR_CODE_TIMEOUT:          backends.ErrTimeout,
	pb.ErrorCode_ERROR_CODE_CANCELED:         context.Canceled,
	pb.ErrorCode_ERROR_CODE_INVALID_TOPIC:    backends.ErrInvalidTopic,
	pb.ErrorCode_ERROR_CODE_CLOSED:           backends.ErrClosed,
	pb.ErrorCode_ERROR_CODE_UNKNOWN_DELIVERY: backends.ErrUnknownDelivery,
	pb.ErrorCode_ERROR_CODE_AUTH:             backends.ErrAuth,
	pb.ErrorCode_ERROR_CODE_UNAVAILABLE:      backends.ErrUnavailable,
	pb.ErrorCode_ERROR_CODE_UNKNOWN_BACKEND:  backends.ErrUnknownBackend,
	pb.ErrorCode_ERROR_CODE_INVALID_CONFIG:   backends.ErrInvalidConfig,
}

// codeNames is backends.Code's string for each wire code.
var codeNames = map[pb.ErrorCode]string{
	pb.ErrorCode_ERROR_CODE_TIMEOUT:          "timeout",
	pb.ErrorCode_ERROR_CODE_CANCELED:         "canceled",
	pb.ErrorCode_ERROR_CODE_INVALID_TOPIC:    "invalid_topic",
	pb.ErrorCode_ERROR_CODE_CLOSED:           "closed",
	pb.ErrorCode_ERROR_CODE_UNKNOWN_DELIVERY: "unknown_delivery",
	pb.ErrorCode_ERROR_CODE_AUTH:             "auth",
	pb.ErrorCode_ERROR_CODE_UNAVAILABLE:      "unavailable",
	pb.ErrorCode_ERROR_CODE_UNKNOWN_BACKEND:  "unknown_backend",
	pb.ErrorCode_ERROR_CODE_INVALID_CONFIG:   "invalid_config",
	pb.ErrorCode_ERROR_CODE_INTERNAL:         "internal",
}

// ToWire is the wire code of err (backends.Code as an enum); nil for a nil err. A Go adapter
// server (and the tests) use it.
func ToWire(err error) *pb.Error {
	if err == nil {
		return nil
	}
	code := backends.Code(err)
	for c, n := range codeNames {
		if n == code {
			return &pb.Error{Code: c, Message: err.Error()}
		}
	}
	return &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INTERNAL, Message: err.Error()}
}

// FromWire turns a contract error from the adapter into a Go error wrapping the matching
// sentinel (errors.Is works), with the adapter's message. nil for no error.
func FromWire(e *pb.Error) error {
	if e == nil || e.Code == pb.ErrorCode_ERROR_CODE_UNSPECIFIED {
		return nil
	}
	if s, ok := codeErrors[e.Code]; ok {
		return &wireError{msg: e.Message, sentinel: s}
	}
	return &wireError{msg: e.Message, code: e.Code}
}

// wireError is a contract error that came over the wire: its text is the adapter's message,
// errors.Is finds the sentinel of its code.
type wireError struct {
	msg      string
	sentinel error
	code     pb.ErrorCode
}

func (e *wireError) Error() string {
	if e.sentinel == nil {
		return fmt.Sprintf("%s (%s)", e.msg, codeNames[e.code])
	}
	return e.msg
}

func (e *wireError) Unwrap() error { return e.sentinel }

// Is lets a TIMEOUT from the adapter match context.DeadlineExceeded too, as backends.CtxErr's
// errors do.
func (e *wireError) Is(target error) bool {
	return e.sentinel == backends.ErrTimeout && target == context.DeadlineExceeded
}
