package raw

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	samqp "github.com/rabbitmq/rabbitmq-stream-go-client/pkg/amqp"
	"github.com/rabbitmq/rabbitmq-stream-go-client/pkg/message"
	"github.com/rabbitmq/rabbitmq-stream-go-client/pkg/stream"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/rabbitmqstreams"
	"github.com/pubsub-conformance/harness/bench"
	"github.com/pubsub-conformance/harness/fixtures"
)

func init() {
	// The streams backend speaks RabbitMQ's stream protocol, so its baseline is the stream
	// client, not amqp091-go (the kind's baseline, which stays the rabbitmq backend's).
	registerBackend(rabbitmqstreams.Name, func(ep fixtures.Endpoints) ([]bench.Client, error) {
		def, err := NewRabbitMQStreams(ep, false)
		return pair(def, func() (bench.Target, error) { return NewRabbitMQStreams(ep, true) }, err)
	})
}

// streamStoreEvery is how often a receiver stores its acked offset: the contract's ack
// guarantee (stored in the background within backends.AckCrashBound), the backend's default
// RABBITMQ_STREAM_COMMIT_INTERVAL_MS; both baselines use it (it is the guarantee, not a
// performance setting).
const streamStoreEvery = 200 * time.Millisecond

// RabbitMQStreams is rabbitmq-stream-go-client used directly, as its own examples do: a topic is
// the stream the backend created for it (rabbitmqstreams.StreamName, so both read and write
// streams with the same retention), a sender a stream producer whose Send waits for the
// broker's publish confirmation, a subscription a named consumer whose position is the
// broker's stored offset: it starts after the stored offset, or at next when there is none; an
// ack records the message's offset and a goroutine stores the highest acked offset every
// 200 ms and on Close (manual commit, the library's default).
//
// raw is the library's defaults (one producer or consumer per connection, 8 KiB socket
// buffers, CRC checks on delivery); same (raw-same-settings) has the backend's own: up to 64
// producers and consumers per connection, the kernel's socket buffers, a 16 MiB frame, no CRC
// check. Both connect as the backend does: to the endpoints' stream port, with an address
// resolver so every connection goes there whatever host and port the broker advertises.
type RabbitMQStreams struct {
	env  *stream.Environment
	same bool
}

// NewRabbitMQStreams connects to the stream port of ep.
func NewRabbitMQStreams(ep fixtures.Endpoints, same bool) (*RabbitMQStreams, error) {
	if ep.StreamPort == 0 {
		return nil, errors.New("raw rabbitmq streams: the broker has no stream listener (no stream port in its endpoints)")
	}
	host, _, err := net.SplitHostPort(ep.AMQP)
	if err != nil {
		return nil, fmt.Errorf("raw rabbitmq streams: broker address %q: %w", ep.AMQP, err)
	}
	vhost := ep.VHost
	if vhost == "" {
		vhost = "/"
	}
	opts := stream.NewEnvironmentOptions().
		SetHost(host).SetPort(ep.StreamPort).SetUser(ep.Username).SetPassword(ep.Password).SetVHost(vhost).
		SetAddressResolver(stream.AddressResolver{Host: host, Port: ep.StreamPort})
	if same {
		opts = opts.SetMaxConsumersPerClient(64).SetMaxProducersPerClient(64).
			SetRequestedMaxFrameSize(16 << 20).SetReadBuffer(0).SetWriteBuffer(0)
	}
	env, err := stream.NewEnvironment(opts)
	if err != nil {
		return nil, fmt.Errorf("raw rabbitmq streams: connect to %s: %w", net.JoinHostPort(host, strconv.Itoa(ep.StreamPort)), err)
	}
	return &RabbitMQStreams{env: env, same: same}, nil
}

func (r *RabbitMQStreams) Info() string {
	s := "rabbitmq-stream-go-client, stream per topic, each Send waits for its publish confirmation, named consumer from its stored offset, highest acked offset stored every 200 ms"
	if r.same {
		return s + "; the backend's settings: 64 producers/consumers per connection, kernel socket buffers, 16 MiB frame, no CRC check"
	}
	return s + "; the library's defaults"
}

func (r *RabbitMQStreams) Close(context.Context) error { return r.env.Close() }

// stream names topic's stream and declares it when missing (the bench's topics exist already,
// created by the backend; a stream that exists is left as it is).
func (r *RabbitMQStreams) stream(topic string) (string, error) {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return "", err
	}
	name := rabbitmqstreams.StreamName(t)
	// Declaring a stream that exists with other arguments (the backend's x-max-age) is refused
	// (PRECONDITION_FAILED), so only a missing one is declared.
	ok, err := r.env.StreamExists(name)
	if err != nil {
		return "", fmt.Errorf("raw rabbitmq streams: does %s exist: %w", name, err)
	}
	if ok {
		return name, nil
	}
	if err := r.env.DeclareStream(name, nil); err != nil && !errors.Is(err, stream.StreamAlreadyExists) {
		return "", fmt.Errorf("raw rabbitmq streams: declare %s: %w", name, err)
	}
	return name, nil
}

func (r *RabbitMQStreams) Sender(_ context.Context, topic string) (bench.Sender, error) {
	name, err := r.stream(topic)
	if err != nil {
		return nil, err
	}
	sp, err := r.env.NewProducer(name, stream.NewProducerOptions())
	if err != nil {
		return nil, fmt.Errorf("raw rabbitmq streams: producer on %s: %w", name, err)
	}
	s := &streamSender{sp: sp, waiting: map[message.StreamMessage]chan error{}}
	go s.confirms(sp.NotifyPublishConfirmation())
	return s, nil
}

// streamSender matches each publish confirmation to its Send by the message it carries.
type streamSender struct {
	sp      *stream.Producer
	mu      sync.Mutex
	waiting map[message.StreamMessage]chan error
}

func (s *streamSender) confirms(ch stream.ChannelPublishConfirm) {
	for batch := range ch {
		for _, st := range batch {
			var err error
			if !st.IsConfirmed() {
				err = fmt.Errorf("raw rabbitmq streams: publish not confirmed: %v", st.GetError())
			}
			s.mu.Lock()
			done, ok := s.waiting[st.GetMessage()]
			delete(s.waiting, st.GetMessage())
			s.mu.Unlock()
			if ok {
				done <- err
			}
		}
	}
}

// Send publishes and waits for the broker's publish confirmation.
func (s *streamSender) Send(ctx context.Context, payload []byte) error {
	m := samqp.NewMessage(payload)
	done := make(chan error, 1)
	s.mu.Lock()
	s.waiting[m] = done
	s.mu.Unlock()
	if err := s.sp.Send(m); err != nil {
		s.mu.Lock()
		delete(s.waiting, m)
		s.mu.Unlock()
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *streamSender) Close(context.Context) error { return s.sp.Close() }

type streamDelivery struct {
	payload []byte
	offset  int64
}

func (r *RabbitMQStreams) Receiver(_ context.Context, topic, sub string) (bench.Receiver, error) {
	name, err := r.stream(topic)
	if err != nil {
		return nil, err
	}
	spec := stream.OffsetSpecification{}.Next()
	stored, err := r.env.QueryOffset(sub, name)
	switch {
	case err == nil:
		spec = stream.OffsetSpecification{}.Offset(stored + 1)
	case !errors.Is(err, stream.OffsetNotFoundError):
		return nil, fmt.Errorf("raw rabbitmq streams: query offset of %s on %s: %w", sub, name, err)
	}
	rc := &streamReceiver{ds: make(chan streamDelivery), done: make(chan struct{}), stopped: make(chan struct{}), acked: -1, stored: -1}
	if err == nil {
		rc.acked, rc.stored = stored, stored
	}
	opts := stream.NewConsumerOptions().SetConsumerName(sub).SetOffset(spec).SetManualCommit()
	if r.same {
		opts = opts.SetCRCCheck(false)
	}
	// Live from here: the subscription exists on the broker when NewConsumer returns.
	sc, err := r.env.NewConsumer(name, func(cc stream.ConsumerContext, m *samqp.Message) {
		select {
		case rc.ds <- streamDelivery{payload: m.GetData(), offset: cc.Consumer.GetOffset()}:
		case <-rc.done:
		}
	}, opts)
	if err != nil {
		return nil, fmt.Errorf("raw rabbitmq streams: consumer %s on %s: %w", sub, name, err)
	}
	rc.sc = sc
	go rc.storeLoop()
	return rc, nil
}

type streamReceiver struct {
	sc      *stream.Consumer
	ds      chan streamDelivery
	done    chan struct{} // closed by Close: the handler and storeLoop stop
	stopped chan struct{} // closed when storeLoop returned

	mu     sync.Mutex
	acked  int64 // highest acked offset
	stored int64 // highest stored offset
	once   sync.Once
	err    error
}

func (r *streamReceiver) Receive(ctx context.Context) ([]byte, func(context.Context) error, error) {
	select {
	case d := <-r.ds:
		return d.payload, func(context.Context) error {
			r.mu.Lock()
			if d.offset > r.acked {
				r.acked = d.offset
			}
			r.mu.Unlock()
			return nil
		}, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// store writes the highest acked offset when it moved.
func (r *streamReceiver) store() error {
	r.mu.Lock()
	acked, stored := r.acked, r.stored
	r.mu.Unlock()
	if acked <= stored {
		return nil
	}
	if err := r.sc.StoreCustomOffset(acked); err != nil {
		return fmt.Errorf("raw rabbitmq streams: store offset %d: %w", acked, err)
	}
	r.mu.Lock()
	r.stored = acked
	r.mu.Unlock()
	return nil
}

func (r *streamReceiver) storeLoop() {
	defer close(r.stopped)
	t := time.NewTicker(streamStoreEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = r.store() // the next tick tries again; Close reports a failure
		case <-r.done:
			return
		}
	}
}

// Close stores the last acked offset, then closes the consumer.
func (r *streamReceiver) Close(context.Context) error {
	r.once.Do(func() {
		close(r.done)
		<-r.stopped
		r.err = errors.Join(r.store(), r.sc.Close())
	})
	return r.err
}
