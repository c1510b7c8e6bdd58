package rabbitmq

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// management calls the management plugin's HTTP API for what AMQP 0-9-1 cannot ask: the
// queues bound to an exchange, and an exchange's arguments.
type management struct {
	base       string // http://host:15672
	vhost      string
	user, pass string
	client     *http.Client
}

// newManagement: an https:// management URL is verified against the amqps CA (tlsConf, nil:
// the system's roots).
func newManagement(rc Config, tlsConf *tls.Config) *management {
	client := &http.Client{Timeout: 30 * time.Second}
	if tlsConf != nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tlsConf.Clone()
		t.TLSClientConfig.ServerName = ""
		client.Transport = t
	}
	return &management{base: rc.ManagementURL, vhost: rc.Vhost, user: rc.ManagementUsername, pass: rc.ManagementPassword,
		client: client}
}

// errNoRetention: the exchange carries no retention argument (another client created it).
var errNoRetention = errors.New("no " + retentionArg + " argument (not created by this backend): its retention is unknown")

// statusError is an HTTP answer other than 2xx.
type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

func (m *management) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.base+path, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", backends.ErrInvalidConfig, err)
	}
	req.SetBasicAuth(m.user, m.pass)
	resp, err := m.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return backends.CtxErr(ctx, "rabbitmq: management GET "+path)
		}
		return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		if ctx.Err() != nil {
			return backends.CtxErr(ctx, "rabbitmq: management GET "+path)
		}
		return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: management GET %s: %v", backends.ErrAuth, path, &statusError{resp.StatusCode, trim(body)})
	case resp.StatusCode >= 300:
		return &statusError{resp.StatusCode, trim(body)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("management GET %s: %w", path, err)
	}
	return nil
}

func trim(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}

func (m *management) probe(ctx context.Context) error {
	return m.get(ctx, "/api/vhosts/"+url.PathEscape(m.vhost), nil)
}

// boundQueues lists the queues bound to exchange; none for a missing exchange.
func (m *management) boundQueues(ctx context.Context, exchange string) ([]string, error) {
	var bindings []struct {
		Destination     string `json:"destination"`
		DestinationType string `json:"destination_type"`
	}
	err := m.get(ctx, "/api/exchanges/"+url.PathEscape(m.vhost)+"/"+url.PathEscape(exchange)+"/bindings/source", &bindings)
	if se, ok := err.(*statusError); ok && se.status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, b := range bindings {
		if b.DestinationType == "queue" && !seen[b.Destination] {
			seen[b.Destination] = true
			out = append(out, b.Destination)
		}
	}
	return out, nil
}

// retention reads the exchange's x-pubsub-retention-ms argument.
func (m *management) retention(ctx context.Context, exchange string) (time.Duration, error) {
	var ex struct {
		Arguments map[string]any `json:"arguments"`
	}
	if err := m.get(ctx, "/api/exchanges/"+url.PathEscape(m.vhost)+"/"+url.PathEscape(exchange), &ex); err != nil {
		return 0, err
	}
	v, ok := ex.Arguments[retentionArg].(float64)
	if !ok || v <= 0 {
		return 0, fmt.Errorf("exchange %s: %w", exchange, errNoRetention)
	}
	return time.Duration(v) * time.Millisecond, nil
}
