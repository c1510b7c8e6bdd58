package rabbitmq

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(map[string]string{"RABBITMQ_HOST": "mq"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 5672 || c.Username != "guest" || c.Password != "guest" || c.Vhost != "/" || c.Prefetch != DefaultPrefetch || c.ManagementUsername != "guest" {
		t.Fatalf("defaults (TrustGraph's): %+v", c)
	}
	for _, bad := range []map[string]string{
		{},
		{"RABBITMQ_HOST": "amqp://mq:5672"},
		{"RABBITMQ_HOST": "mq", "RABBITMQ_PORT": "x"},
		{"RABBITMQ_HOST": "mq", "RABBITMQ_PORT": "70000"},
		{"RABBITMQ_HOST": "mq", "RABBITMQ_PREFETCH": "0"},
		{"RABBITMQ_HOST": "mq", "RABBITMQ_MANAGEMENT_URL": "mq:15672"},
		{"RABBITMQ_HOST": "mq", "RABBITMQ_CONSUMER_AUTO_ACK": "sometimes"},
		{"RABBITMQ_HOST": "mq", "RABBITMQ_SSL": "maybe"},
		{"RABBITMQ_HOST": "mq", "RABBITMQ_SSL_CA_FILE": "/ca.pem"}, // a CA without amqps
	} {
		_, err := ParseConfig(bad)
		if !errors.Is(err, backends.ErrInvalidConfig) {
			t.Errorf("ParseConfig(%v) = %v, want ErrInvalidConfig", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line: %q", err)
		}
	}
}

func TestParseConfigTLS(t *testing.T) {
	c, err := ParseConfig(map[string]string{"RABBITMQ_HOST": "mq", "RABBITMQ_SSL": "true", "RABBITMQ_SSL_CA_FILE": "/ca.pem"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.TLS || c.CAFile != "/ca.pem" || c.Port != 5671 {
		t.Fatalf("amqps settings: %+v (want TLS, the CA file, port 5671 by default)", c)
	}
	// A CA file that is not PEM is one clear line at New, before any dial.
	_, err = New(context.Background(), backends.Config{Settings: map[string]string{
		"RABBITMQ_HOST": "127.0.0.1", "RABBITMQ_SSL": "true", "RABBITMQ_SSL_CA_FILE": "rabbitmq_test.go"}})
	if !errors.Is(err, backends.ErrInvalidConfig) || !strings.Contains(err.Error(), "RABBITMQ_SSL_CA_FILE") {
		t.Fatalf("New with a non-PEM CA file: %v", err)
	}
}

func TestNames(t *testing.T) {
	tp := backends.MustParseTopic("request:tg:prompt:default")
	if got := ExchangeName(tp); got != "tg.request.prompt:default" {
		t.Fatalf("ExchangeName = %q", got)
	}
	if got := QueueName(tp, "svc"); got != "tg.request.prompt:default.svc" {
		t.Fatalf("QueueName = %q", got)
	}
}

// New fails within its context, with one line, on a host that does not answer.
func TestNewBoundedByContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := New(ctx, backends.Config{Settings: map[string]string{"RABBITMQ_HOST": "10.255.255.1", "RABBITMQ_PORT": "5672"}})
	if err == nil {
		t.Fatal("New on an unroutable host succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("New took %v past a 300ms context", d)
	}
	if !errors.Is(err, backends.ErrTimeout) && !errors.Is(err, backends.ErrUnavailable) {
		t.Fatalf("New: %v, want ErrTimeout or ErrUnavailable", err)
	}
}
