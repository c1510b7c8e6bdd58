package pulsar

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	padmin "github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin/auth"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin/config"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/rest"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/pubsub-conformance/harness/backends"
)

// admin is the broker's admin REST API through pulsar-client-go's own pulsaradmin package.
// What is ours: the mapping of its answers to the contract's sentinels (adminError), the
// tenant/namespace create race (lostCreateRace) and the few calls the contract needs.
//
// Who calls it: the Backend, for every topic lifecycle call, once per new namespace and while
// a consumer waits for its permits. Every call goes through a pulsaradmin ...WithContext
// method (or the package's rest.Client with the caller's ctx), so the caller's ctx bounds it;
// the client's own 5-minute HTTP timeout is only a backstop. The token, when configured,
// travels as a Bearer header through pulsaradmin's token transport.
type admin struct {
	base   string // e.g. http://127.0.0.1:8080, no trailing slash
	client padmin.Client
	rest   *rest.Client // the same transport, for the one call pulsaradmin lacks (topicExists)
}

// adminError is an admin call the broker refused: a non-2xx answer (rest.Error).
type adminError struct {
	op  string // "create tenant tg"
	err error
}

func (e *adminError) Error() string {
	var re rest.Error
	errors.As(e.err, &re)
	// Without a body pulsaradmin's reason is the status line ("401 Unauthorized").
	reason := strings.TrimPrefix(reasonOf(re.Reason), strconv.Itoa(re.Code)+" ")
	return fmt.Sprintf("admin %s: HTTP %d %s", e.op, re.Code, reason)
}

func (e *adminError) Unwrap() error { return e.err }

// Is maps refusals to the contract's sentinels so callers can test with errors.Is.
func (e *adminError) Is(target error) bool {
	s := statusOf(e.err)
	return target == backends.ErrAuth && (s == http.StatusUnauthorized || s == http.StatusForbidden)
}

// statusOf is the HTTP status of a refused admin call, 0 for anything else.
func statusOf(err error) int {
	var re rest.Error
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

// reasonOf shortens a reason: pulsaradmin keeps a JSON body's "reason", else the whole body
// (Jetty's HTML error page for 401, say), else the status line.
func reasonOf(s string) string {
	s = strings.TrimSpace(s)
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

func newAdmin(base, token, caFile string) (*admin, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: PULSAR_ADMIN_URL=%q is not an http(s)://host:port URL", backends.ErrInvalidConfig, base)
	}
	if caFile != "" {
		// pulsaradmin reads the file but ignores a file without a certificate: say so here.
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("%w: read PULSAR_TLS_TRUST_CERTS_FILE: %v", backends.ErrInvalidConfig, err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: PULSAR_TLS_TRUST_CERTS_FILE=%q holds no PEM certificate", backends.ErrInvalidConfig, caFile)
		}
	}
	cfg := &config.Config{
		WebServiceURL:         strings.TrimRight(u.String(), "/"),
		Token:                 token,
		TLSTrustCertsFilePath: caFile,
		PulsarAPIVersion:      config.V2,
	}
	provider, err := auth.GetAuthProvider(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: pulsar admin client: %v", backends.ErrInvalidConfig, err)
	}
	client, err := padmin.NewPulsarClientWithAuthProvider(cfg, provider)
	if err != nil {
		return nil, fmt.Errorf("%w: pulsar admin client: %v", backends.ErrInvalidConfig, err)
	}
	return &admin{
		base:   cfg.WebServiceURL,
		client: client,
		rest: &rest.Client{ServiceURL: cfg.WebServiceURL, VersionInfo: padmin.ReleaseVersion,
			HTTPClient: &http.Client{Timeout: padmin.DefaultHTTPTimeOutDuration, Transport: provider}},
	}, nil
}

// wrap turns a pulsaradmin error into the contract's: an HTTP answer into an adminError
// (ErrAuth for 401/403), anything else through mapTransportErr.
func wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var re rest.Error
	if errors.As(err, &re) {
		return &adminError{op: op, err: err}
	}
	return mapTransportErr(ctx, "admin "+op, err)
}

// mapTransportErr turns a failed exchange into the contract's errors: the ctx's end into
// ErrTimeout / Canceled; a refused or unreachable address, or a connection dropped before the
// answer (EOF, reset, broken pipe: what a network cut does to a request in flight), into
// ErrUnavailable.
func mapTransportErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return backends.CtxErr(ctx, what)
	}
	var cve *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	if errors.As(err, &cve) || errors.As(err, &ua) || errors.As(err, &hn) {
		// The broker could not be authenticated: its certificate does not verify against
		// PULSAR_TLS_TRUST_CERTS_FILE (or the system's roots).
		return fmt.Errorf("%s: %w: %v", what, backends.ErrAuth, err)
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &opErr) || errors.As(err, &dnsErr) {
		return fmt.Errorf("%s: %w: %v", what, backends.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// topicName is pulsaradmin's name of r.
func topicName(r resolved) (utils.TopicName, error) {
	tn, err := utils.GetTopicName(r.fullName())
	if err != nil {
		return utils.TopicName{}, fmt.Errorf("%w: pulsar: %v", backends.ErrInvalidTopic, err)
	}
	return *tn, nil
}

// clusters lists the cluster names the broker knows (the allowed clusters of a new tenant).
func (a *admin) clusters(ctx context.Context) ([]string, error) {
	out, err := a.client.Clusters().ListWithContext(ctx)
	return out, wrap(ctx, "list clusters", err)
}

// createTenant creates tenant; an existing tenant (409) is success.
func (a *admin) createTenant(ctx context.Context, tenant string, clusters []string) error {
	err := a.client.Tenants().CreateWithContext(ctx, utils.TenantData{Name: tenant, AllowedClusters: clusters})
	if statusOf(err) == http.StatusConflict || lostCreateRace(err) {
		return nil
	}
	return wrap(ctx, "create tenant "+tenant, err)
}

// lostCreateRace recognises the broker's answer to a create that raced another client's create
// of the same tenant/namespace: HTTP 500 with a metadata AlreadyExists exception instead of 409
// (seen when two test processes created tenant "tg" at once).
func lostCreateRace(err error) bool {
	var re rest.Error
	return errors.As(err, &re) && re.Code == http.StatusInternalServerError &&
		(strings.Contains(re.Reason, "AlreadyExistsException") || strings.Contains(re.Reason, "BadVersionException"))
}

// createNamespace creates tenant/ns; created reports whether this call created it (false on 409).
func (a *admin) createNamespace(ctx context.Context, tenant, ns string) (created bool, err error) {
	err = a.client.Namespaces().CreateNamespaceWithContext(ctx, tenant+"/"+ns)
	switch {
	case err == nil:
		return true, nil
	case statusOf(err) == http.StatusConflict, lostCreateRace(err):
		return false, nil
	default:
		return false, wrap(ctx, "create namespace "+tenant+"/"+ns, err)
	}
}

type retentionPolicy = utils.RetentionPolicies

func (a *admin) setNamespaceRetention(ctx context.Context, tenant, ns string, minutes int) error {
	err := a.client.Namespaces().SetRetentionWithContext(ctx, tenant+"/"+ns,
		retentionPolicy{RetentionTimeInMinutes: minutes, RetentionSizeInMB: -1})
	return wrap(ctx, "set retention of namespace "+tenant+"/"+ns, err)
}

func (a *admin) setTopicRetention(ctx context.Context, r resolved, minutes int) error {
	tn, err := topicName(r)
	if err != nil {
		return err
	}
	err = a.client.Topics().SetRetentionWithContext(ctx, tn, retentionPolicy{RetentionTimeInMinutes: minutes, RetentionSizeInMB: -1})
	return wrap(ctx, "set retention of "+r.fullName(), err)
}

// setNamespaceDeduplication sets the namespace's deduplication policy: the broker then drops a
// message whose producer name and sequence ID it stored already (a producer's resend after a
// reconnect) on every persistent topic of the namespace, from the topic's load on.
func (a *admin) setNamespaceDeduplication(ctx context.Context, tenant, ns string, on bool) error {
	err := a.client.Namespaces().SetDeduplicationStatusWithContext(ctx, tenant+"/"+ns, on)
	return wrap(ctx, "set deduplication of namespace "+tenant+"/"+ns, err)
}

// nsPolicy is what a namespace's policies say of the topics the backend creates there.
type nsPolicy struct {
	// dedup: the namespace deduplicates; unset is false (the broker's
	// brokerDeduplicationEnabled, false by default, is what applies then).
	dedup bool
	// retention in minutes, when hasRetention (else the broker's default applies).
	retention    int
	hasRetention bool
}

// namespacePolicies reads the namespace's deduplication and retention policies.
func (a *admin) namespacePolicies(ctx context.Context, tenant, ns string) (nsPolicy, error) {
	p, err := a.client.Namespaces().GetPoliciesWithContext(ctx, tenant+"/"+ns)
	if err != nil {
		return nsPolicy{}, wrap(ctx, "get policies of namespace "+tenant+"/"+ns, err)
	}
	if p == nil {
		return nsPolicy{}, nil
	}
	out := nsPolicy{dedup: p.DeduplicationEnabled != nil && *p.DeduplicationEnabled}
	if p.RetentionPolicies != nil {
		out.retention, out.hasRetention = p.RetentionPolicies.RetentionTimeInMinutes, true
	}
	return out, nil
}

// setTopicDeduplication sets r's topic-level deduplication policy.
func (a *admin) setTopicDeduplication(ctx context.Context, r resolved, on bool) error {
	tn, err := topicName(r)
	if err != nil {
		return err
	}
	err = a.client.Topics().SetDeduplicationStatusWithContext(ctx, tn, on)
	return wrap(ctx, "set deduplication of "+r.fullName(), err)
}

// topicRetention reads the retention in force (topic, else namespace, else broker default).
func (a *admin) topicRetention(ctx context.Context, r resolved) (retentionPolicy, error) {
	tn, err := topicName(r)
	if err != nil {
		return retentionPolicy{}, err
	}
	p, err := a.client.Topics().GetRetentionWithContext(ctx, tn, true)
	if err != nil {
		return retentionPolicy{}, wrap(ctx, "get retention of "+r.fullName(), err)
	}
	if p == nil {
		return retentionPolicy{}, nil
	}
	return *p, nil
}

// createTopic creates a non-partitioned topic; created is false when it already existed (409).
func (a *admin) createTopic(ctx context.Context, r resolved) (created bool, err error) {
	tn, err := topicName(r)
	if err != nil {
		return false, err
	}
	err = a.client.Topics().CreateWithContext(ctx, tn, 0)
	switch {
	case err == nil:
		return true, nil
	case statusOf(err) == http.StatusConflict:
		return false, nil
	default:
		return false, wrap(ctx, "create topic "+r.fullName(), err)
	}
}

// deleteTopic force-deletes a non-partitioned topic: connected clients are disconnected and
// its subscriptions (with their positions) and, for persistent topics, its messages and topic
// policies go. A missing topic or namespace (404) is success.
func (a *admin) deleteTopic(ctx context.Context, r resolved) error {
	tn, err := topicName(r)
	if err != nil {
		return err
	}
	err = a.client.Topics().DeleteWithContext(ctx, tn, true, true)
	if statusOf(err) == http.StatusNotFound {
		return nil
	}
	return wrap(ctx, "delete topic "+r.fullName(), err)
}

// topicExists lists the namespace's topics of r's domain and looks for r. For persistent
// topics the list comes from the metadata store; for non-persistent ones it is the topics
// currently loaded on the broker. A missing namespace means false.
//
// Through the package's rest.Client rather than Topics().ListWithContext: that one asks four
// endpoints (both domains, partitioned or not) and, when one fails, returns while the other
// requests' goroutines stay blocked on an unbuffered channel (pulsaradmin v0.19.0), which a
// 404 for a missing namespace would trigger on every call.
func (a *admin) topicExists(ctx context.Context, r resolved) (bool, error) {
	var names []string
	path := "/admin/v2/" + r.domain() + "/" + url.PathEscape(r.tenant) + "/" + url.PathEscape(r.namespace)
	err := a.rest.GetWithContext(ctx, path, &names)
	if statusOf(err) == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, wrap(ctx, "list topics of "+r.domain()+"://"+r.tenant+"/"+r.namespace, err)
	}
	return slices.Contains(names, r.fullName()), nil
}

type topicStats = utils.TopicStats

func (a *admin) stats(ctx context.Context, r resolved) (topicStats, error) {
	tn, err := topicName(r)
	if err != nil {
		return topicStats{}, err
	}
	st, err := a.client.Topics().GetStatsWithContext(ctx, tn)
	return st, wrap(ctx, "stats of "+r.fullName(), err)
}

// deleteSubscription deletes a subscription and its cursor; a missing topic or subscription
// (404) is success.
func (a *admin) deleteSubscription(ctx context.Context, r resolved, subscription string) error {
	tn, err := topicName(r)
	if err != nil {
		return err
	}
	err = a.client.Subscriptions().DeleteWithContext(ctx, tn, subscription)
	if statusOf(err) == http.StatusNotFound {
		return nil
	}
	return wrap(ctx, "delete subscription "+subscription+" of "+r.fullName(), err)
}
