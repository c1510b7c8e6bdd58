package kafka

import (
	"context"
	"errors"
	"fmt"

	ck "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pubsub-conformance/harness/backends"
)

// sentinelFor maps a librdkafka or broker error code to the contract's sentinel, nil when the
// code has no contract meaning (it then surfaces as "internal").
func sentinelFor(code ck.ErrorCode) error {
	switch code {
	case ck.ErrAuthentication, ck.ErrSaslAuthenticationFailed, ck.ErrUnsupportedSaslMechanism,
		ck.ErrIllegalSaslState, ck.ErrTopicAuthorizationFailed, ck.ErrGroupAuthorizationFailed,
		ck.ErrClusterAuthorizationFailed, ck.ErrSsl:
		return backends.ErrAuth
	case ck.ErrAllBrokersDown, ck.ErrTransport, ck.ErrResolve, ck.ErrBrokerNotAvailable,
		ck.ErrLeaderNotAvailable, ck.ErrCoordinatorNotAvailable, ck.ErrNotCoordinator,
		ck.ErrNotController:
		return backends.ErrUnavailable
	case ck.ErrTopicException:
		return backends.ErrInvalidTopic
	case ck.ErrInvalidArg, ck.ErrInvalidConfig, ck.ErrInvalidReplicationFactor,
		ck.ErrInvalidPartitions, ck.ErrPolicyViolation:
		return backends.ErrInvalidConfig
	case ck.ErrTimedOut, ck.ErrTimedOutQueue:
		return backends.ErrTimeout
	}
	return nil
}

// kafkaError is a librdkafka error with the contract's sentinel attached, so errors.Is finds
// both the sentinel and the original ck.Error.
type kafkaError struct {
	what     string
	err      error
	sentinel error
}

func (e *kafkaError) Error() string {
	if e.sentinel == nil {
		return e.what + ": " + e.err.Error()
	}
	return fmt.Sprintf("%s: %v: %v", e.what, e.sentinel, e.err)
}

func (e *kafkaError) Unwrap() []error {
	if e.sentinel == nil {
		return []error{e.err}
	}
	return []error{e.sentinel, e.err}
}

// mapErr wraps err with what and the matching sentinel. When ctx has ended, the context's
// contract error wins: a call that ran out of time reports a timeout, whatever librdkafka said.
func mapErr(ctx context.Context, what string, err error) error {
	if err == nil {
		return nil
	}
	if ctx != nil && ctx.Err() != nil {
		return errors.Join(backends.CtxErr(ctx, what), err)
	}
	var ke ck.Error
	if errors.As(err, &ke) {
		return &kafkaError{what: what, err: err, sentinel: sentinelFor(ke.Code())}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// codeOf returns err's librdkafka code, ck.ErrNoError when it is not a ck.Error.
func codeOf(err error) ck.ErrorCode {
	var ke ck.Error
	if errors.As(err, &ke) {
		return ke.Code()
	}
	return ck.ErrNoError
}
