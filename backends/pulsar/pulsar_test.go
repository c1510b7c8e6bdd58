package pulsar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/rest"

	"github.com/pubsub-conformance/harness/backends"
)

// Unit tests: no broker. Naming, escaping, id round trip, error mapping, and the admin client
// against a recording HTTP server (an HTTP double for request shape only, never for behaviour).

func TestResolveMapping(t *testing.T) {
	cases := []struct {
		topic   string
		allPers bool
		want    string
	}{
		{"x", false, "persistent://tg/flow/x"},
		{"flow:ts:a", false, "persistent://ts/flow/a"},
		{"request:tg:prompt:default", false, "non-persistent://tg/request/prompt.default"},
		{"response:tg:r", false, "non-persistent://tg/response/r"},
		{"notify:tg:n", false, "non-persistent://tg/notify/n"},
		{"request:tg:prompt:default", true, "persistent://tg/request/prompt.default"},
		{"notify:tg:n", true, "persistent://tg/notify/n"},
	}
	for _, c := range cases {
		b := &Backend{allPers: c.allPers}
		r, err := b.resolve(c.topic)
		if err != nil {
			t.Fatalf("%s: %v", c.topic, err)
		}
		if r.fullName() != c.want {
			t.Errorf("%s (allPersistent=%v): got %s want %s", c.topic, c.allPers, r.fullName(), c.want)
		}
		if r.orig != c.topic {
			t.Errorf("orig: got %q", r.orig)
		}
	}
}

func TestResolveInvalid(t *testing.T) {
	b := &Backend{}
	for _, s := range []string{"", "a:b", "bogus:tg:x", "flow::x", "flow:tg:", "flow:t g:x", "flow:tg:a/b", "flow:tg:%2F"} {
		if _, err := b.resolve(s); !errors.Is(err, backends.ErrInvalidTopic) {
			t.Errorf("%q: want ErrInvalidTopic, got %v", s, err)
		}
	}
}

func TestTopicNameForAdmin(t *testing.T) {
	r := resolved{persistent: false, tenant: "t", namespace: "request", local: "a.b-c"}
	tn, err := topicName(r)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tn.GetRestPath(), "non-persistent/t/request/a.b-c"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func TestDeliveryIDRoundTrip(t *testing.T) {
	// An id as the broker hands it out (ledger, entry, batch index) survives encode/decode.
	id := pulsar.NewMessageID(12, 34, 5, 0)
	s := encodeID(7, id)
	if strings.ContainsAny(s, "+/=\n ") {
		t.Fatalf("id %q is not URL-safe text", s)
	}
	seq, back, err := decodeID(s)
	if err != nil {
		t.Fatal(err)
	}
	if seq != 7 || back.LedgerID() != 12 || back.EntryID() != 34 || back.BatchIdx() != 5 {
		t.Fatalf("round trip: got %d %v", seq, back)
	}
	// The same message id delivered twice (non-persistent topics, redeliveries) gives two IDs.
	if encodeID(1, id) == encodeID(2, id) {
		t.Fatal("IDs of two deliveries of one message id collide")
	}
	for _, bad := range []string{"!!not base64", "x.AAAA", "1.!!", "1"} {
		if _, _, err := decodeID(bad); err == nil {
			t.Errorf("garbage %q decoded", bad)
		}
	}
}

func TestUnknownDelivery(t *testing.T) {
	c := &consumer{r: resolved{orig: "x"}, pending: map[string]pulsar.Message{}}
	for _, id := range []string{"", "!!", encodeID(1, pulsar.NewMessageID(1, 2, -1, 0))} {
		_, err := c.take("ack", backends.Delivery{ID: id})
		if !errors.Is(err, backends.ErrUnknownDelivery) {
			t.Errorf("id %q: want ErrUnknownDelivery, got %v", id, err)
		}
	}
}

func TestRetentionMinutes(t *testing.T) {
	cases := map[time.Duration]int{
		0: 0, time.Second: 1, time.Minute: 1, 61 * time.Second: 2,
		5 * time.Minute: 5, 7 * 24 * time.Hour: 10080,
	}
	for d, want := range cases {
		if got := retentionMinutes(d); got != want {
			t.Errorf("%v: got %d want %d", d, got, want)
		}
	}
}

func TestMapClientErr(t *testing.T) {
	cases := []struct {
		err  error
		want error
	}{
		{errors.New("AuthenticationError: Failed to authenticate"), backends.ErrAuth},
		{errors.New("AuthorizationError: Client is not authorized to Produce"), backends.ErrAuth},
		{fmt.Errorf("dial tcp 127.0.0.1:1: connect: connection refused"), backends.ErrUnavailable},
		{context.DeadlineExceeded, backends.ErrTimeout},
		{context.Canceled, context.Canceled},
		{fmt.Errorf("x: %w", backends.ErrClosed), backends.ErrClosed},
	}
	for _, c := range cases {
		if got := mapClientErr(c.err); !errors.Is(got, c.want) {
			t.Errorf("%v: got %v, want %v", c.err, got, c.want)
		}
	}
	if mapClientErr(nil) != nil {
		t.Error("nil")
	}
	if got := backends.Code(mapClientErr(errors.New("something else"))); got != "internal" {
		t.Errorf("unknown error code %q", got)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	ctx := context.Background()
	for _, pc := range []map[string]string{
		{},
		{"PULSAR_HOST": "http://x:1", "PULSAR_ADMIN_URL": "http://x:2"},
		{"PULSAR_HOST": "pulsar://x:1"},
		{"PULSAR_HOST": "pulsar://x:1", "PULSAR_ADMIN_URL": "ftp://x"},
		{"PULSAR_HOST": "pulsar://x:1", "PULSAR_ADMIN_URL": "http://x:2", "PULSAR_NACK_REDELIVERY_DELAY": "-1s"},
		{"PULSAR_HOST": "pulsar://x:1", "PULSAR_ADMIN_URL": "http://x:2", "PULSAR_ALL_PERSISTENT": "maybe"},
	} {
		_, err := New(ctx, backends.Config{Settings: pc})
		if !errors.Is(err, backends.ErrInvalidConfig) {
			t.Errorf("%+v: want ErrInvalidConfig, got %v", pc, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error is not one line: %q", pc, err)
		}
	}
}

// recorder is an HTTP server that answers admin calls with canned statuses and records them.
type recorder struct {
	mu     sync.Mutex
	calls  []string
	auth   []string
	status map[string]int // "METHOD path" -> status; default 204
	body   map[string]string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	key := req.Method + " " + req.URL.EscapedPath()
	if req.URL.RawQuery != "" {
		key += "?" + req.URL.RawQuery
	}
	r.mu.Lock()
	r.calls = append(r.calls, key)
	r.auth = append(r.auth, req.Header.Get("Authorization"))
	st, ok := r.status[key]
	body := r.body[key]
	r.mu.Unlock()
	if !ok {
		st = http.StatusNoContent
	}
	if body != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(st)
	_, _ = w.Write([]byte(body))
}

func TestAdminRequests(t *testing.T) {
	rec := &recorder{
		status: map[string]int{
			"PUT /admin/v2/tenants/ts":                            409,
			"PUT /admin/v2/namespaces/ts/flow":                    204,
			"PUT /admin/v2/persistent/ts/flow/a.b":                409,
			"DELETE /admin/v2/persistent/ts/flow/gone?force=true": 404,
			"GET /admin/v2/clusters":                              200,
			"DELETE /admin/v2/persistent/ts/flow/x?force=true":    401,
		},
		body: map[string]string{
			"GET /admin/v2/clusters":                           `["standalone"]`,
			"DELETE /admin/v2/persistent/ts/flow/x?force=true": `{"reason":"unauthorized"}`,
		},
	}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	adm, err := newAdmin(srv.URL, "tok", "")
	if err != nil {
		t.Fatal(err)
	}
	b := &Backend{admin: adm, clusters: []string{"standalone"}, nsOK: map[string]bool{}, nsRun: map[string]chan struct{}{}}
	ctx := context.Background()

	// Concurrent creates: one tenant+namespace round, every topic PUT's 409 is success.
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.CreateTopic(ctx, "flow:ts:a:b"); err != nil {
				t.Errorf("create: %v", err)
			}
		}()
	}
	wg.Wait()
	if err := b.DeleteTopic(ctx, "flow:ts:gone"); err != nil {
		t.Errorf("delete of a missing topic: %v", err)
	}
	err = b.DeleteTopic(ctx, "flow:ts:x")
	if !errors.Is(err, backends.ErrAuth) || !strings.Contains(err.Error(), "unauthorized") {
		t.Errorf("401: want ErrAuth with the broker's reason, got %v", err)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	count := map[string]int{}
	for _, c := range rec.calls {
		count[c]++
	}
	if count["PUT /admin/v2/tenants/ts"] != 1 || count["PUT /admin/v2/namespaces/ts/flow"] != 1 {
		t.Errorf("tenant/namespace should be ensured once per backend: %v", rec.calls)
	}
	if count["POST /admin/v2/namespaces/ts/flow/retention"] != 1 {
		t.Errorf("a namespace this backend created gets the class retention: %v", rec.calls)
	}
	if count["POST /admin/v2/namespaces/ts/flow/deduplication"] != 1 {
		t.Errorf("a namespace this backend created gets deduplication: %v", rec.calls)
	}
	if count["PUT /admin/v2/persistent/ts/flow/a.b"] != 5 {
		t.Errorf("topic PUT: %v", rec.calls)
	}
	if count["POST /admin/v2/persistent/ts/flow/a.b/retention"] != 0 {
		t.Errorf("an existing topic (409) must be left as it is: %v", rec.calls)
	}
	for i, a := range rec.auth {
		if a != "Bearer tok" {
			t.Errorf("call %s without the token: %q", rec.calls[i], a)
		}
	}
}

// A namespace that existed (409) keeps its policies; if they do not deduplicate, each
// persistent topic the backend creates there gets a topic-level policy (a resend after a
// reconnect written once), a non-persistent one none, an existing topic (409) nothing.
func TestDeduplicationOfAnExistingNamespace(t *testing.T) {
	for _, nsPolicy := range []string{`{}`, `{"deduplicationEnabled":false}`, `{"deduplicationEnabled":true}`} {
		rec := &recorder{
			status: map[string]int{
				"PUT /admin/v2/tenants/ts":                  409,
				"PUT /admin/v2/namespaces/ts/flow":          409,
				"PUT /admin/v2/namespaces/ts/request":       409,
				"GET /admin/v2/namespaces/ts/flow":          200,
				"GET /admin/v2/namespaces/ts/request":       200,
				"PUT /admin/v2/persistent/ts/flow/old":      409,
				"PUT /admin/v2/non-persistent/ts/request/r": 204,
			},
			body: map[string]string{
				"GET /admin/v2/namespaces/ts/flow":    nsPolicy,
				"GET /admin/v2/namespaces/ts/request": nsPolicy,
			},
		}
		srv := httptest.NewServer(rec)
		adm, err := newAdmin(srv.URL, "", "")
		if err != nil {
			t.Fatal(err)
		}
		b := &Backend{admin: adm, clusters: []string{"standalone"}, nsOK: map[string]bool{}, nsRun: map[string]chan struct{}{}}
		ctx := context.Background()
		for _, topic := range []string{"flow:ts:new", "flow:ts:old", "request:ts:r"} {
			if err := b.CreateTopic(ctx, topic); err != nil {
				t.Errorf("%s: create %s: %v", nsPolicy, topic, err)
			}
		}
		srv.Close()
		count := map[string]int{}
		for _, c := range rec.calls {
			count[c]++
		}
		want := 1
		if nsPolicy == `{"deduplicationEnabled":true}` {
			want = 0
		}
		if count["POST /admin/v2/persistent/ts/flow/new/deduplicationEnabled"] != want {
			t.Errorf("namespace policy %s: want %d topic-level deduplication call for the new topic: %v", nsPolicy, want, rec.calls)
		}
		for _, c := range rec.calls {
			if strings.HasSuffix(c, "/deduplication") || strings.Contains(c, "/old/") || strings.Contains(c, "/request/r/dedup") {
				t.Errorf("namespace policy %s: %s: an existing namespace or topic, or a non-persistent topic, gets no deduplication call", nsPolicy, c)
			}
		}
	}
}

func TestAdminUnavailableIsFast(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	adm, err := newAdmin(url, "", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err = adm.clusters(ctx)
	if !errors.Is(err, backends.ErrUnavailable) {
		t.Fatalf("want ErrUnavailable, got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
}

// A connection the network drops mid-request (a cut: the request was sent, no answer came,
// the client reads EOF) is the broker being unreachable too, not an unclassified error. F4
// caught this: during a network cut, Consumer()'s admin PUT failed with a bare "EOF".
func TestAdminConnectionDroppedIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// Read the request, then drop the connection without an answer.
			_, _ = c.Read(make([]byte, 4096))
			c.Close()
		}
	}()
	adm, err := newAdmin("http://"+l.Addr().String(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = adm.clusters(ctx)
	if !errors.Is(err, backends.ErrUnavailable) {
		t.Fatalf("want ErrUnavailable for a dropped connection, got %v", err)
	}
}

func TestLoggerRoutesToWriter(t *testing.T) {
	var buf bytes.Buffer
	l := newLogger(&buf, nil)
	l.WithField("topic", "t").Infof("connected %d", 1)
	l.Debugf("dropped")
	l.SubLogger(map[string]any{"a": 1}).Warn("w")
	out := buf.String()
	if !strings.Contains(out, "INFO connected 1 topic=t") || !strings.Contains(out, "WARN w a=1") || strings.Contains(out, "dropped") {
		t.Fatalf("log output: %q", out)
	}
	newLogger(nil, nil).Error("discarded") // must not panic
}

func TestLostCreateRaceIsExisting(t *testing.T) {
	race := rest.Error{Code: 500,
		Reason: "--- An unexpected error occurred in the server --- Message: org.apache.pulsar.metadata.api.MetadataStoreException$BadVersionException: Version mismatch, actual=0, expect=-1"}
	if !lostCreateRace(race) {
		t.Error("a 500 BadVersion answer to a create must count as a lost race (already exists)")
	}
	other := rest.Error{Code: 500, Reason: "NullPointerException"}
	if lostCreateRace(other) || lostCreateRace(nil) {
		t.Error("other server errors are errors")
	}
}

func TestParseConfigAndTopicName(t *testing.T) {
	c, err := ParseConfig(map[string]string{"PULSAR_HOST": "pulsar://p:6650", "PULSAR_ADMIN_URL": "http://p:8080",
		"PULSAR_API_KEY": "tok", "PULSAR_ALL_PERSISTENT": "true", "PULSAR_NACK_REDELIVERY_DELAY": "250ms"})
	if err != nil || c.Host != "pulsar://p:6650" || c.AdminURL != "http://p:8080" || c.APIKey != "tok" ||
		!c.AllPersistent || c.NackRedeliveryDelay != 250*time.Millisecond || adminToken(c) != "tok" {
		t.Errorf("parsed %+v, %v", c, err)
	}
	for key, val := range map[string]string{"PULSAR_ALL_PERSISTENT": "maybe", "PULSAR_NACK_REDELIVERY_DELAY": "soon"} {
		_, err := ParseConfig(map[string]string{key: val})
		if !errors.Is(err, backends.ErrInvalidConfig) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s: %v; want ErrInvalidConfig naming the setting", key, val, err)
		}
	}
	for in, want := range map[string][2]string{
		"x":                         {"persistent://tg/flow/x", "persistent://tg/flow/x"},
		"request:tg:prompt:default": {"non-persistent://tg/request/prompt.default", "persistent://tg/request/prompt.default"},
		"response:space-1:a.b_c":    {"non-persistent://space-1/response/a.b_c", "persistent://space-1/response/a.b_c"},
		"notify:tg:a:b:c":           {"non-persistent://tg/notify/a.b.c", "persistent://tg/notify/a.b.c"},
	} {
		tp := backends.MustParseTopic(in)
		if got := TopicName(tp, false); got != want[0] {
			t.Errorf("TopicName(%s, false) = %q; want %q", in, got, want[0])
		}
		if got := TopicName(tp, true); got != want[1] {
			t.Errorf("TopicName(%s, true) = %q; want %q", in, got, want[1])
		}
	}
	if PersistentDescriptor.Settings["PULSAR_ALL_PERSISTENT"] != "true" || Descriptor.Settings != nil {
		t.Error("only pulsar-persistent fixes PULSAR_ALL_PERSISTENT")
	}
}

// Every admin call is bounded by its ctx: a hanging admin API gives ErrTimeout at the deadline.
func TestAdminBoundedByCtx(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	adm, err := newAdmin(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	r := resolved{persistent: true, tenant: "t", namespace: "flow", local: "x"}
	calls := map[string]func(ctx context.Context) error{
		"clusters":     func(ctx context.Context) error { _, err := adm.clusters(ctx); return err },
		"createTenant": func(ctx context.Context) error { return adm.createTenant(ctx, "t", []string{"c"}) },
		"createTopic":  func(ctx context.Context) error { _, err := adm.createTopic(ctx, r); return err },
		"deleteTopic":  func(ctx context.Context) error { return adm.deleteTopic(ctx, r) },
		"topicExists":  func(ctx context.Context) error { _, err := adm.topicExists(ctx, r); return err },
		"retention":    func(ctx context.Context) error { _, err := adm.topicRetention(ctx, r); return err },
		"stats":        func(ctx context.Context) error { _, err := adm.stats(ctx, r); return err },
		"deleteSub":    func(ctx context.Context) error { return adm.deleteSubscription(ctx, r, "s") },
	}
	for name, call := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		err := call(ctx)
		cancel()
		if !errors.Is(err, backends.ErrTimeout) {
			t.Errorf("%s: want ErrTimeout, got %v", name, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s returned after %v with a 300ms ctx", name, d)
		}
	}
}

func TestAdminErrorText(t *testing.T) {
	for _, c := range []struct {
		err  rest.Error
		want string
	}{
		{rest.Error{Code: 401, Reason: "401 Unauthorized"}, "admin list clusters: HTTP 401 Unauthorized"},
		{rest.Error{Code: 409, Reason: "Topic already exists"}, "admin list clusters: HTTP 409 Topic already exists"},
		{rest.Error{Code: 401, Reason: "<html><head><title>Error 401 Unauthorized</title></head>\n<body>...</body></html>"}, "admin list clusters: HTTP 401 Error 401 Unauthorized"},
	} {
		err := wrap(context.Background(), "list clusters", c.err)
		if err.Error() != c.want {
			t.Errorf("got %q, want %q", err.Error(), c.want)
		}
		if errors.Is(err, backends.ErrAuth) != (c.err.Code == 401) {
			t.Errorf("%v: ErrAuth mapping wrong", c.err)
		}
	}
}

// waitPermits polls the topic stats; the broker answers some of those polls with a 500 that
// is its own race, not a refusal: a non-persistent subscription is listed on the topic before
// its dispatcher exists, and the stats endpoint throws an NPE on it (seen under D2's
// concurrent subscriptions). The poll rides over such answers within its ctx; a refusal
// (401/403) still ends it at once, and a 500 that never goes away ends it at the deadline
// with ErrTimeout quoting the broker's last answer.
func TestWaitPermitsRidesOverTransientServerErrors(t *testing.T) {
	const statsPath = "/admin/v2/non-persistent/t/response/x/stats"
	const npe = `{"reason":"--- An unexpected error occurred in the server --- Message: Cannot invoke \"org.apache.pulsar.broker.service.nonpersistent.NonPersistentDispatcher.getMessageDropRate()\" because \"dispatcher\" is null"}`
	const ready = `{"subscriptions":{"s":{"consumers":[{"consumerName":"c1","availablePermits":1000}]}}}`
	r := resolved{tenant: "t", namespace: "response", local: "x"}
	// answers: the status of each stats call in turn; the last one repeats.
	serve := func(t *testing.T, answers ...int) (*Backend, *int) {
		var mu sync.Mutex
		calls := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.URL.Path != statsPath {
				t.Errorf("unexpected call %s %s", req.Method, req.URL.Path)
				w.WriteHeader(http.StatusTeapot)
				return
			}
			mu.Lock()
			st := answers[min(calls, len(answers)-1)]
			calls++
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(st)
			switch st {
			case http.StatusOK:
				_, _ = w.Write([]byte(ready))
			case http.StatusInternalServerError:
				_, _ = w.Write([]byte(npe))
			default:
				_, _ = w.Write([]byte(`{"reason":"refused"}`))
			}
		}))
		t.Cleanup(srv.Close)
		adm, err := newAdmin(srv.URL, "", "")
		if err != nil {
			t.Fatal(err)
		}
		return &Backend{admin: adm}, &calls
	}

	t.Run("500 then ready", func(t *testing.T) {
		b, calls := serve(t, 500, 500, 200)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.waitPermits(ctx, r, "s", "c1"); err != nil {
			t.Fatalf("a broker 500 during subscription creation must not end the wait: %v", err)
		}
		if *calls != 3 {
			t.Errorf("stats calls: %d, want 3 (two 500s, then the answer)", *calls)
		}
	})
	t.Run("500 until the deadline", func(t *testing.T) {
		b, _ := serve(t, 500)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		err := b.waitPermits(ctx, r, "s", "c1")
		if !errors.Is(err, backends.ErrTimeout) || !strings.Contains(err.Error(), "HTTP 500") ||
			!strings.Contains(err.Error(), `"dispatcher" is null`) {
			t.Fatalf("want ErrTimeout quoting the last 500 answer, got %v", err)
		}
	})
	for _, st := range []int{401, 403} {
		t.Run(fmt.Sprintf("%d ends it", st), func(t *testing.T) {
			b, calls := serve(t, 500, st, 200)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := b.waitPermits(ctx, r, "s", "c1")
			if !errors.Is(err, backends.ErrAuth) || errors.Is(err, backends.ErrTimeout) {
				t.Fatalf("want ErrAuth at once, got %v", err)
			}
			if *calls != 2 {
				t.Errorf("stats calls: %d, want 2 (no poll after the refusal)", *calls)
			}
		})
	}
	t.Run("cancel ends it", func(t *testing.T) {
		b, _ := serve(t, 500)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		err := b.waitPermits(ctx, r, "s", "c1")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want context.Canceled, got %v", err)
		}
	})
}

// A topic the backend creates gets a topic-level retention policy only where its namespace's
// policy does not already give the retention wanted: every topic-level policy is one more
// admin call and one more message on the namespace's system topic, which the broker reads
// back (about two thirds of the topics of a conformance run). The namespace's policy is the
// class's retention when this backend created the namespace, else what its policies say
// (read once with the deduplication).
func TestTopicRetentionOnlyWhereTheNamespaceDiffers(t *testing.T) {
	flowMin := retentionMinutes(backends.Class("flow").DefaultRetention())
	for _, tc := range []struct {
		name     string
		nsStatus int    // the namespace PUT's answer: 204 made here, 409 there already
		nsPolicy string // an existing namespace's policies
		override time.Duration
		want     int // topic-level retention calls for the new topic
	}{
		{name: "namespace made here", nsStatus: 204, want: 0},
		{name: "namespace made here, another retention asked", nsStatus: 204, override: 3 * time.Second, want: 1},
		{name: "existing namespace with the class's retention", nsStatus: 409,
			nsPolicy: fmt.Sprintf(`{"deduplicationEnabled":true,"retention_policies":{"retentionTimeInMinutes":%d,"retentionSizeInMB":-1}}`, flowMin), want: 0},
		{name: "existing namespace with another retention", nsStatus: 409,
			nsPolicy: fmt.Sprintf(`{"deduplicationEnabled":true,"retention_policies":{"retentionTimeInMinutes":%d,"retentionSizeInMB":-1}}`, flowMin+1), want: 1},
		{name: "existing namespace without a retention policy", nsStatus: 409, nsPolicy: `{"deduplicationEnabled":true}`, want: 1},
		{name: "existing namespace whose policies cannot be read", nsStatus: 409, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := map[string]int{
				"PUT /admin/v2/tenants/ts":             409,
				"PUT /admin/v2/namespaces/ts/flow":     tc.nsStatus,
				"PUT /admin/v2/persistent/ts/flow/new": 204,
			}
			body := map[string]string{}
			if tc.nsPolicy != "" {
				status["GET /admin/v2/namespaces/ts/flow"] = 200
				body["GET /admin/v2/namespaces/ts/flow"] = tc.nsPolicy
			} else if tc.nsStatus == 409 {
				status["GET /admin/v2/namespaces/ts/flow"] = 403
			}
			rec := &recorder{status: status, body: body}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			adm, err := newAdmin(srv.URL, "", "")
			if err != nil {
				t.Fatal(err)
			}
			b := &Backend{admin: adm, clusters: []string{"standalone"}, nsOK: map[string]bool{}, nsRun: map[string]chan struct{}{}}
			var opts []backends.TopicOption
			if tc.override > 0 {
				opts = append(opts, backends.WithRetention(tc.override))
			}
			if err := b.CreateTopic(context.Background(), "flow:ts:new", opts...); err != nil {
				t.Fatalf("create: %v", err)
			}
			got := 0
			for _, c := range rec.calls {
				if c == "POST /admin/v2/persistent/ts/flow/new/retention" {
					got++
				}
			}
			if got != tc.want {
				t.Errorf("want %d topic-level retention calls, got %d: %v", tc.want, got, rec.calls)
			}
		})
	}
}
