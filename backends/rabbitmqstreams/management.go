package rabbitmqstreams

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// management reads what the stream protocol cannot: a stream's x-max-age.
type management struct {
	base, vhost, user, pass string
}

var mgmtClient = &http.Client{Timeout: 30 * time.Second}

func (m *management) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.base+path, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", backends.ErrInvalidConfig, err)
	}
	req.SetBasicAuth(m.user, m.pass)
	resp, err := mgmtClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return backends.CtxErr(ctx, Name+": management GET "+path)
		}
		return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: management GET %s: HTTP %d", backends.ErrAuth, path, resp.StatusCode)
	case resp.StatusCode >= 300:
		if len(body) > 200 {
			body = body[:200]
		}
		return fmt.Errorf("management GET %s: HTTP %d: %s", path, resp.StatusCode, body)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}

func (m *management) probe(ctx context.Context) error {
	return m.get(ctx, "/api/vhosts/"+url.PathEscape(m.vhost), nil)
}

// maxAge reads the stream queue's x-max-age argument ("604800s", "7D", ...).
func (m *management) maxAge(ctx context.Context, streamName string) (time.Duration, error) {
	var q struct {
		Arguments map[string]any `json:"arguments"`
	}
	if err := m.get(ctx, "/api/queues/"+url.PathEscape(m.vhost)+"/"+url.PathEscape(streamName), &q); err != nil {
		return 0, err
	}
	s, ok := q.Arguments["x-max-age"].(string)
	if !ok {
		return 0, fmt.Errorf("stream %s has no x-max-age argument", streamName)
	}
	return parseMaxAge(s)
}

// parseMaxAge reads RabbitMQ's x-max-age: a whole number and a unit, Y M D h m s.
func parseMaxAge(s string) (time.Duration, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("x-max-age %q is not a number and a unit", s)
	}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("x-max-age %q is not a number and a unit", s)
	}
	unit := map[byte]time.Duration{'Y': 365 * 24 * time.Hour, 'M': 30 * 24 * time.Hour, 'D': 24 * time.Hour,
		'h': time.Hour, 'm': time.Minute, 's': time.Second}[s[len(s)-1]]
	if unit == 0 {
		return 0, fmt.Errorf("x-max-age %q has an unknown unit", s)
	}
	return time.Duration(n) * unit, nil
}
