package pulsar

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// admin is a small client of the broker's admin REST API (/admin/v2). Only what the contract
// needs: tenants, namespaces, topic lifecycle, retention and topic stats.
//
// Who calls it: the Backend, for every topic lifecycle call and once per new namespace. Every
// request carries the caller's ctx and, when configured, the token as a Bearer header.
type admin struct {
	base  string // e.g. http://127.0.0.1:8080, no trailing slash
	token string
	http  *http.Client
}

// httpError is a non-2xx answer of the admin API.
type httpError struct {
	method, path string
	status       int
	reason       string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("admin %s %s: HTTP %d %s", e.method, e.path, e.status, e.reason)
}

// Is maps refusals to the contract's sentinels so callers can test with errors.Is.
func (e *httpError) Is(target error) bool {
	return target == backends.ErrAuth && (e.status == http.StatusUnauthorized || e.status == http.StatusForbidden)
}

func statusOf(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.status
	}
	return 0
}

func newAdmin(base, token, caFile string) (*admin, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: PULSAR_ADMIN_URL=%q is not an http(s)://host:port URL", backends.ErrInvalidConfig, base)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("%w: read PULSAR_TLS_TRUST_CERTS_FILE: %v", backends.ErrInvalidConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: PULSAR_TLS_TRUST_CERTS_FILE=%q holds no PEM certificate", backends.ErrInvalidConfig, caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &admin{
		base:  strings.TrimRight(u.String(), "/"),
		token: token,
		// The caller's ctx bounds each request; this is only a backstop for a ctx without deadline.
		http: &http.Client{Transport: tr, Timeout: 60 * time.Second},
	}, nil
}

// topicPath is the admin path of a topic, each segment escaped.
func topicPath(r resolved) string {
	return "/admin/v2/" + r.domain() + "/" + url.PathEscape(r.tenant) + "/" + url.PathEscape(r.namespace) + "/" + url.PathEscape(r.local)
}

// do sends one request. body, when not nil, is JSON-encoded; out, when not nil, receives the
// decoded JSON answer. Non-2xx answers are *httpError.
func (a *admin) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("admin %s %s: encode body: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return fmt.Errorf("admin %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return mapTransportErr(ctx, fmt.Sprintf("admin %s %s", method, path), err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &httpError{method: method, path: path, status: resp.StatusCode, reason: reasonOf(data)}
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("admin %s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

// reasonOf extracts the error's reason from a JSON body, an HTML title, or the first line.
func reasonOf(data []byte) string {
	var r struct {
		Reason  string `json:"reason"`  // the broker's own errors
		Message string `json:"message"` // the web server's (Jetty) errors, e.g. 401
	}
	if json.Unmarshal(data, &r) == nil && (r.Reason != "" || r.Message != "") {
		if r.Reason != "" {
			return r.Reason
		}
		return r.Message
	}
	s := strings.TrimSpace(string(data))
	if i, j := strings.Index(s, "<title>"), strings.Index(s, "</title>"); i >= 0 && j > i { // Jetty's HTML error page
		s = s[i+len("<title>") : j]
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// mapTransportErr turns a failed HTTP exchange into the contract's errors: the ctx's end into
// ErrTimeout / Canceled, a refused or unreachable address into ErrUnavailable.
func mapTransportErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return backends.CtxErr(ctx, what)
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.As(err, &opErr) || errors.As(err, &dnsErr) {
		return fmt.Errorf("%s: %w: %v", what, backends.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// clusters lists the cluster names the broker knows (the allowed clusters of a new tenant).
func (a *admin) clusters(ctx context.Context) ([]string, error) {
	var out []string
	if err := a.do(ctx, http.MethodGet, "/admin/v2/clusters", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// createTenant creates tenant; an existing tenant (409) is success.
func (a *admin) createTenant(ctx context.Context, tenant string, clusters []string) error {
	body := map[string]any{"allowedClusters": clusters}
	err := a.do(ctx, http.MethodPut, "/admin/v2/tenants/"+url.PathEscape(tenant), body, nil)
	if statusOf(err) == http.StatusConflict || lostCreateRace(err) {
		return nil
	}
	return err
}

// lostCreateRace recognises the broker's answer to a create that raced another client's create
// of the same tenant/namespace: HTTP 500 with a metadata AlreadyExists exception instead of 409
// (seen when two test processes created tenant "tg" at once).
func lostCreateRace(err error) bool {
	var he *httpError
	return errors.As(err, &he) && he.status == http.StatusInternalServerError &&
		(strings.Contains(he.reason, "AlreadyExistsException") || strings.Contains(he.reason, "BadVersionException"))
}

// createNamespace creates tenant/ns; created reports whether this call created it (false on 409).
func (a *admin) createNamespace(ctx context.Context, tenant, ns string) (created bool, err error) {
	err = a.do(ctx, http.MethodPut, "/admin/v2/namespaces/"+url.PathEscape(tenant)+"/"+url.PathEscape(ns), nil, nil)
	switch {
	case err == nil:
		return true, nil
	case statusOf(err) == http.StatusConflict, lostCreateRace(err):
		return false, nil
	default:
		return false, err
	}
}

type retentionPolicy struct {
	RetentionTimeInMinutes int   `json:"retentionTimeInMinutes"`
	RetentionSizeInMB      int64 `json:"retentionSizeInMB"`
}

func (a *admin) setNamespaceRetention(ctx context.Context, tenant, ns string, minutes int) error {
	return a.do(ctx, http.MethodPost, "/admin/v2/namespaces/"+url.PathEscape(tenant)+"/"+url.PathEscape(ns)+"/retention",
		retentionPolicy{RetentionTimeInMinutes: minutes, RetentionSizeInMB: -1}, nil)
}

func (a *admin) setTopicRetention(ctx context.Context, r resolved, minutes int) error {
	return a.do(ctx, http.MethodPost, topicPath(r)+"/retention",
		retentionPolicy{RetentionTimeInMinutes: minutes, RetentionSizeInMB: -1}, nil)
}

// topicRetention reads the retention in force (topic, else namespace, else broker default).
func (a *admin) topicRetention(ctx context.Context, r resolved) (retentionPolicy, error) {
	var p retentionPolicy
	err := a.do(ctx, http.MethodGet, topicPath(r)+"/retention?applied=true", nil, &p)
	return p, err
}

// createTopic creates a non-partitioned topic; created is false when it already existed (409).
func (a *admin) createTopic(ctx context.Context, r resolved) (created bool, err error) {
	err = a.do(ctx, http.MethodPut, topicPath(r), nil, nil)
	switch {
	case err == nil:
		return true, nil
	case statusOf(err) == http.StatusConflict:
		return false, nil
	default:
		return false, err
	}
}

// deleteTopic force-deletes a topic: connected clients are disconnected and its subscriptions
// (with their positions) and, for persistent topics, its messages and topic policies go. A
// missing topic or namespace (404) is success.
func (a *admin) deleteTopic(ctx context.Context, r resolved) error {
	err := a.do(ctx, http.MethodDelete, topicPath(r)+"?force=true", nil, nil)
	if statusOf(err) == http.StatusNotFound {
		return nil
	}
	return err
}

// topicExists lists the namespace's topics of r's domain and looks for r. For persistent
// topics the list comes from the metadata store; for non-persistent ones it is the topics
// currently loaded on the broker. A missing namespace means false.
func (a *admin) topicExists(ctx context.Context, r resolved) (bool, error) {
	var names []string
	err := a.do(ctx, http.MethodGet, "/admin/v2/"+r.domain()+"/"+url.PathEscape(r.tenant)+"/"+url.PathEscape(r.namespace), nil, &names)
	if statusOf(err) == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	full := r.fullName()
	for _, n := range names {
		if n == full {
			return true, nil
		}
	}
	return false, nil
}

// topicStats is the part of GET .../stats the backend reads.
type topicStats struct {
	Subscriptions map[string]struct {
		Consumers []struct {
			ConsumerName     string `json:"consumerName"`
			AvailablePermits int    `json:"availablePermits"`
		} `json:"consumers"`
	} `json:"subscriptions"`
}

func (a *admin) stats(ctx context.Context, r resolved) (topicStats, error) {
	var s topicStats
	err := a.do(ctx, http.MethodGet, topicPath(r)+"/stats", nil, &s)
	return s, err
}
