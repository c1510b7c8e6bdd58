// Package serve is the adapter protocol's server side in Go: it serves any backends.Backend
// constructor over proto/pubsub/v1, the way the Python SDK (backends/remote/python) serves a
// Python class. It exists to measure the protocol's own overhead (the Go reference backend in
// process vs served through the protocol: backends/remote/cmd/memory-adapter) and as a second
// worked example of the schema.
package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/remote"
	pb "github.com/pubsub-conformance/harness/proto/pubsub/v1"
)

type server struct {
	pb.UnimplementedAdapterServer
	name, version string
	open          backends.Constructor
	restart       func()
	ids           atomic.Uint64
	mu            sync.Mutex
	backends      map[uint64]backends.Backend
	producers     map[uint64]backends.Producer
	consumers     map[uint64]backends.Consumer
}

// Serve listens where PUBSUB_ADAPTER_LISTEN says (a loopback port when unset), announces the
// address on stdout and serves until the process is killed. restart is for in-process
// reference backends only (RestartBroker); nil answers UNIMPLEMENTED.
func Serve(name, version string, open backends.Constructor, restart func()) error {
	listen := os.Getenv(remote.ListenEnv)
	network, addr := "tcp", "127.0.0.1:0"
	if p, ok := strings.CutPrefix(listen, "unix:"); ok {
		network, addr = "unix", p
	} else if listen != "" {
		addr = listen
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		return err
	}
	announce := l.Addr().String()
	if network == "unix" {
		announce = "unix:" + addr
	}
	s := grpc.NewServer(grpc.MaxRecvMsgSize(64<<20), grpc.MaxSendMsgSize(64<<20))
	pb.RegisterAdapterServer(s, &server{name: name, version: version, open: open, restart: restart,
		backends: map[uint64]backends.Backend{}, producers: map[uint64]backends.Producer{}, consumers: map[uint64]backends.Consumer{}})
	fmt.Printf("PUBSUB_ADAPTER_LISTENING %s\n", announce)
	return s.Serve(l)
}

func (s *server) Handshake(ctx context.Context, r *pb.HandshakeRequest) (*pb.HandshakeResponse, error) {
	resp := &pb.HandshakeResponse{ProtocolVersion: pb.ProtocolVersion_PROTOCOL_VERSION_1, Adapter: s.name, Version: s.version}
	if r.ProtocolVersion != pb.ProtocolVersion_PROTOCOL_VERSION_1 {
		resp.Error = &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_CONFIG, Message: fmt.Sprintf("adapter speaks protocol 1, harness %d", r.ProtocolVersion)}
	}
	return resp, nil
}

func (s *server) Open(ctx context.Context, r *pb.OpenRequest) (*pb.OpenResponse, error) {
	cfg := backends.Config{Backend: r.Name, Settings: r.Settings, Log: os.Stderr}
	for cl, d := range r.Retention {
		if cfg.Retention == nil {
			cfg.Retention = map[backends.Class]time.Duration{}
		}
		cfg.Retention[backends.Class(cl)] = d.AsDuration()
	}
	b, err := s.open(ctx, cfg)
	if err != nil {
		return &pb.OpenResponse{Error: remote.ToWire(err)}, nil
	}
	id := s.ids.Add(1)
	s.mu.Lock()
	s.backends[id] = b
	s.mu.Unlock()
	resp := &pb.OpenResponse{Backend: id, Unsupported: map[string]string{}}
	for c, why := range b.Unsupported() {
		resp.Unsupported[string(c)] = why
	}
	return resp, nil
}

var errClosed = fmt.Errorf("handle: %w", backends.ErrClosed)

func get[T any](s *server, m map[uint64]T, id uint64) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := m[id]
	if !ok {
		var zero T
		return zero, errClosed
	}
	return v, nil
}

func topicOpts(r *pb.TopicRequest) []backends.TopicOption {
	if r.Retention == nil {
		return nil
	}
	return []backends.TopicOption{backends.WithRetention(r.Retention.AsDuration())}
}

func empty(err error) (*pb.Empty, error) { return &pb.Empty{Error: remote.ToWire(err)}, nil }

func (s *server) CreateTopic(ctx context.Context, r *pb.TopicRequest) (*pb.Empty, error) {
	b, err := get(s, s.backends, r.Backend)
	if err == nil {
		err = b.CreateTopic(ctx, r.Topic, topicOpts(r)...)
	}
	return empty(err)
}

func (s *server) EnsureTopic(ctx context.Context, r *pb.TopicRequest) (*pb.Empty, error) {
	b, err := get(s, s.backends, r.Backend)
	if err == nil {
		err = b.EnsureTopic(ctx, r.Topic, topicOpts(r)...)
	}
	return empty(err)
}

func (s *server) DeleteTopic(ctx context.Context, r *pb.TopicRequest) (*pb.Empty, error) {
	b, err := get(s, s.backends, r.Backend)
	if err == nil {
		err = b.DeleteTopic(ctx, r.Topic)
	}
	return empty(err)
}

func (s *server) TopicExists(ctx context.Context, r *pb.TopicRequest) (*pb.TopicExistsResponse, error) {
	b, err := get(s, s.backends, r.Backend)
	ok := false
	if err == nil {
		ok, err = b.TopicExists(ctx, r.Topic)
	}
	return &pb.TopicExistsResponse{Exists: ok, Error: remote.ToWire(err)}, nil
}

func (s *server) Retention(ctx context.Context, r *pb.TopicRequest) (*pb.RetentionResponse, error) {
	b, err := get(s, s.backends, r.Backend)
	var d time.Duration
	if err == nil {
		d, err = b.Retention(ctx, r.Topic)
	}
	return &pb.RetentionResponse{Retention: durationpb.New(d), Error: remote.ToWire(err)}, nil
}

func (s *server) CloseBackend(ctx context.Context, r *pb.Handle) (*pb.Empty, error) {
	s.mu.Lock()
	b, ok := s.backends[r.Handle]
	delete(s.backends, r.Handle)
	s.mu.Unlock()
	if !ok {
		return empty(nil)
	}
	return empty(b.Close(ctx))
}

func (s *server) KillBackend(ctx context.Context, r *pb.Handle) (*pb.Empty, error) {
	s.mu.Lock()
	b, ok := s.backends[r.Handle]
	s.mu.Unlock()
	if !ok {
		return empty(nil)
	}
	k, ok := b.(backends.Killer)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "%s cannot be killed", b.Name())
	}
	k.Kill()
	s.mu.Lock()
	delete(s.backends, r.Handle)
	s.mu.Unlock()
	return empty(nil)
}

func (s *server) RestartBroker(ctx context.Context, r *pb.RestartBrokerRequest) (*pb.Empty, error) {
	if s.restart == nil {
		return nil, status.Errorf(codes.Unimplemented, "%s has no in-process broker to restart", s.name)
	}
	s.restart()
	return empty(nil)
}

func (s *server) NewProducer(ctx context.Context, r *pb.ProducerRequest) (*pb.HandleResponse, error) {
	b, err := get(s, s.backends, r.Backend)
	if err != nil {
		return &pb.HandleResponse{Error: remote.ToWire(err)}, nil
	}
	p, err := b.Producer(ctx, r.Topic)
	if err != nil {
		return &pb.HandleResponse{Error: remote.ToWire(err)}, nil
	}
	id := s.ids.Add(1)
	s.mu.Lock()
	s.producers[id] = p
	s.mu.Unlock()
	return &pb.HandleResponse{Handle: id}, nil
}

func (s *server) Send(ctx context.Context, r *pb.SendRequest) (*pb.Empty, error) {
	p, err := get(s, s.producers, r.Producer)
	if err == nil {
		err = p.Send(ctx, backends.Message{Payload: r.Message.GetPayload(), Properties: r.Message.GetProperties()})
	}
	return empty(err)
}

func (s *server) CloseProducer(ctx context.Context, r *pb.Handle) (*pb.Empty, error) {
	s.mu.Lock()
	p, ok := s.producers[r.Handle]
	delete(s.producers, r.Handle)
	s.mu.Unlock()
	if !ok {
		return empty(nil)
	}
	return empty(p.Close(ctx))
}

func (s *server) NewConsumer(ctx context.Context, r *pb.ConsumerRequest) (*pb.HandleResponse, error) {
	b, err := get(s, s.backends, r.Backend)
	if err != nil {
		return &pb.HandleResponse{Error: remote.ToWire(err)}, nil
	}
	opts := []backends.ConsumerOption{}
	if r.Position == pb.Position_POSITION_EARLIEST {
		opts = append(opts, backends.WithPosition(backends.Earliest))
	}
	switch r.Mode {
	case pb.Mode_MODE_SHARED:
		opts = append(opts, backends.WithMode(backends.Shared))
	case pb.Mode_MODE_UNIQUE:
		opts = append(opts, backends.WithMode(backends.Unique))
	}
	c, err := b.Consumer(ctx, r.Topic, r.Subscription, opts...)
	if err != nil {
		return &pb.HandleResponse{Error: remote.ToWire(err)}, nil
	}
	id := s.ids.Add(1)
	s.mu.Lock()
	s.consumers[id] = c
	s.mu.Unlock()
	return &pb.HandleResponse{Handle: id}, nil
}

func (s *server) Receive(ctx context.Context, r *pb.Handle) (*pb.ReceiveResponse, error) {
	c, err := get(s, s.consumers, r.Handle)
	if err != nil {
		return &pb.ReceiveResponse{Error: remote.ToWire(err)}, nil
	}
	// Answer a little before the caller's deadline, so the reply (often a TIMEOUT) is in time.
	if dl, ok := ctx.Deadline(); ok {
		margin := min(50*time.Millisecond, time.Until(dl)/10)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-margin))
		defer cancel()
	}
	d, err := c.Receive(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("receive: nothing arrived before the deadline: %w", backends.ErrTimeout)
		}
		return &pb.ReceiveResponse{Error: remote.ToWire(err)}, nil
	}
	return &pb.ReceiveResponse{Delivery: &pb.Delivery{Id: d.ID, Topic: d.Topic, Payload: d.Payload, Properties: d.Properties}}, nil
}

func settle(ctx context.Context, s *server, r *pb.SettleRequest, ack bool) (*pb.Empty, error) {
	c, err := get(s, s.consumers, r.Consumer)
	if err == nil {
		d := backends.Delivery{ID: r.Delivery.GetId(), Topic: r.Delivery.GetTopic(), Payload: r.Delivery.GetPayload(), Properties: r.Delivery.GetProperties()}
		if ack {
			err = c.Ack(ctx, d)
		} else {
			err = c.Nack(ctx, d)
		}
	}
	return empty(err)
}

func (s *server) Ack(ctx context.Context, r *pb.SettleRequest) (*pb.Empty, error) {
	return settle(ctx, s, r, true)
}

func (s *server) Nack(ctx context.Context, r *pb.SettleRequest) (*pb.Empty, error) {
	return settle(ctx, s, r, false)
}

func (s *server) CloseConsumer(ctx context.Context, r *pb.Handle) (*pb.Empty, error) {
	s.mu.Lock()
	c, ok := s.consumers[r.Handle]
	delete(s.consumers, r.Handle)
	s.mu.Unlock()
	if !ok {
		return empty(nil)
	}
	return empty(c.Close(ctx))
}
