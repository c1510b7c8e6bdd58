package kafka

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// TestBadCredentialsNeverCrash opens the backend with a wrong password again and again. New's
// probe returns as soon as the auth error is seen, while its metadata goroutine may still be
// inside librdkafka; New then closes the clients. Closing them under that call freed the handle
// it was using: the test binary died with SIGABRT ("The futex facility returned an unexpected
// error code", in rd_kafka_metadata) in a make test run.
func TestBadCredentialsNeverCrash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bad := config(t, saslBad)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 25; i++ {
				if _, err := New(ctx, bad); !errors.Is(err, backends.ErrAuth) {
					t.Errorf("New with a bad password (try %d): %v; want ErrAuth", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
