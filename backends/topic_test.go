package backends

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseTopic(t *testing.T) {
	for _, tc := range []struct {
		in        string
		want      Topic
		durable   bool
		mode      Mode
		retention time.Duration
	}{
		{in: "x", want: Topic{ClassFlow, "tg", "x"}, durable: true, mode: Shared, retention: 7 * 24 * time.Hour},
		{in: "flow:tg:x", want: Topic{ClassFlow, "tg", "x"}, durable: true, mode: Shared, retention: 7 * 24 * time.Hour},
		{in: "request:tg:prompt:default", want: Topic{ClassRequest, "tg", "prompt:default"}, mode: Shared, retention: 5 * time.Minute},
		{in: "response:space-1:a.b_c", want: Topic{ClassResponse, "space-1", "a.b_c"}, mode: Unique, retention: 5 * time.Minute},
		{in: "notify:tg:a:b:c", want: Topic{ClassNotify, "tg", "a:b:c"}, mode: Unique, retention: 5 * time.Minute},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTopic(tc.in)
			if err != nil {
				t.Fatalf("ParseTopic(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("ParseTopic(%q) = %+v; want %+v", tc.in, got, tc.want)
			}
			if got.Class.Durable() != tc.durable || got.Class.DefaultMode() != tc.mode || got.Class.DefaultRetention() != tc.retention {
				t.Errorf("class %s: durable %v mode %s retention %s; want %v %s %s", got.Class,
					got.Class.Durable(), got.Class.DefaultMode(), got.Class.DefaultRetention(), tc.durable, tc.mode, tc.retention)
			}
			// The canonical form parses back to the same topic.
			if again, err := ParseTopic(got.String()); err != nil || again != got {
				t.Errorf("round trip of %q: %+v, %v", got.String(), again, err)
			}
		})
	}
}

func TestParseTopicInvalid(t *testing.T) {
	for _, tc := range []struct{ in, mentions string }{
		{"", "empty"},
		{"tg:x", "two parts"},
		{"bogus:tg:x", "unknown class"},
		{"FLOW:tg:x", "unknown class"},
		{"flow::x", "empty topicspace"},
		{"flow:tg:", "empty topic"},
		{":tg:x", "unknown class"},
		{"flow:t g:x", "not allowed"},
		{"flow:tg:a/b", "not allowed"},
		{"flow:t:g:x", ""}, // valid: "g:x" is the topic; checked below
		{"flow:tg:..", "reserved"},
		{"flow:tg:" + strings.Repeat("x", 300), "too long"},
		{"x y", "not allowed"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseTopic(tc.in)
			if tc.mentions == "" {
				if err != nil {
					t.Fatalf("ParseTopic(%q): unexpected error %v", tc.in, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseTopic(%q) succeeded; want an error mentioning %q", tc.in, tc.mentions)
			}
			if !errors.Is(err, ErrInvalidTopic) {
				t.Errorf("ParseTopic(%q) error %v does not wrap ErrInvalidTopic", tc.in, err)
			}
			if Code(err) != "invalid_topic" {
				t.Errorf("Code = %q; want invalid_topic", Code(err))
			}
			if !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("ParseTopic(%q) error %q does not say %q", tc.in, err, tc.mentions)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestMustParseTopicPanicsOnInvalid(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParseTopic(\"a:b\") did not panic")
		}
	}()
	MustParseTopic("a:b")
}

func TestConsumerAndTopicOptions(t *testing.T) {
	resp := MustParseTopic("response:tg:x")
	if s := ApplyConsumerOptions(resp); s.Mode != Unique || s.Position != Latest {
		t.Errorf("defaults for response: %+v; want unique, latest", s)
	}
	if s := ApplyConsumerOptions(resp, WithMode(Shared), WithPosition(Earliest), nil); s.Mode != Shared || s.Position != Earliest {
		t.Errorf("overrides: %+v; want shared, earliest", s)
	}
	flow := MustParseTopic("x")
	cfg := Config{Retention: map[Class]time.Duration{ClassFlow: time.Hour}}
	if s := ApplyTopicOptions(flow, Config{}); s.Retention != 7*24*time.Hour {
		t.Errorf("flow default retention %s", s.Retention)
	}
	if s := ApplyTopicOptions(flow, cfg); s.Retention != time.Hour {
		t.Errorf("config override: %s; want 1h", s.Retention)
	}
	if s := ApplyTopicOptions(flow, cfg, WithRetention(time.Second)); s.Retention != time.Second {
		t.Errorf("option override: %s; want 1s", s.Retention)
	}
}
