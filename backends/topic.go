package backends

import (
	"fmt"
	"strings"
	"time"
)

// Class is the first part of a topic string. It decides durability, the default subscription
// mode and the default retention.
type Class string

const (
	ClassFlow     Class = "flow"
	ClassRequest  Class = "request"
	ClassResponse Class = "response"
	ClassNotify   Class = "notify"
)

// Classes lists every class, in catalogue order.
var Classes = []Class{ClassFlow, ClassRequest, ClassResponse, ClassNotify}

// DefaultTopicspace is the topicspace of a topic string without colons.
const DefaultTopicspace = "tg"

// Valid reports whether c is one of the four classes.
func (c Class) Valid() bool {
	switch c {
	case ClassFlow, ClassRequest, ClassResponse, ClassNotify:
		return true
	}
	return false
}

// Durable reports whether the class's messages must survive with nobody subscribed (flow only).
// [C-CLASS-1]
func (c Class) Durable() bool { return c == ClassFlow }

// DefaultMode is the subscription mode of the class: flow and request compete on a named
// subscription; response and notify fan out to every subscriber. [C-CLASS-2]
func (c Class) DefaultMode() Mode {
	if c == ClassResponse || c == ClassNotify {
		return Unique
	}
	return Shared
}

// DefaultRetention is the class's retention: 7 days for flow, 5 minutes for the others.
// [C-CLASS-3]
func (c Class) DefaultRetention() time.Duration {
	if c == ClassFlow {
		return 7 * 24 * time.Hour
	}
	return 5 * time.Minute
}

// maxTopicLength bounds the canonical topic string (Kafka's topic name limit).
const maxTopicLength = 249

// Topic is a parsed "class:topicspace:topic" string.
type Topic struct {
	Class Class
	Space string // the topicspace
	Name  string // may itself contain colons: "request:tg:prompt:default" has Name "prompt:default"
}

// String is the canonical "class:topicspace:topic" form.
func (t Topic) String() string { return string(t.Class) + ":" + t.Space + ":" + t.Name }

// ParseTopic parses a contract topic string.
//
//	"x"                       -> flow:tg:x                                      [C-NAME-1]
//	"class:topicspace:topic"  -> as written; further colons belong to the topic [C-NAME-2]
//
// Anything else (two parts, an unknown class, an empty part, characters a broker cannot name)
// is an error wrapping ErrInvalidTopic that says what is wrong. [C-NAME-3]
func ParseTopic(s string) (Topic, error) {
	if s == "" {
		return Topic{}, fmt.Errorf("%w: empty topic string (want \"class:topicspace:topic\")", ErrInvalidTopic)
	}
	parts := strings.SplitN(s, ":", 3)
	var t Topic
	switch len(parts) {
	case 1:
		t = Topic{Class: ClassFlow, Space: DefaultTopicspace, Name: s}
	case 2:
		return Topic{}, fmt.Errorf("%w: %q has two parts; want \"topic\" or \"class:topicspace:topic\"", ErrInvalidTopic, s)
	default:
		t = Topic{Class: Class(parts[0]), Space: parts[1], Name: parts[2]}
	}
	if !t.Class.Valid() {
		return Topic{}, fmt.Errorf("%w: %q has unknown class %q (want one of flow, request, response, notify)", ErrInvalidTopic, s, t.Class)
	}
	if err := checkPart(s, "topicspace", t.Space, false); err != nil {
		return Topic{}, err
	}
	if err := checkPart(s, "topic", t.Name, true); err != nil {
		return Topic{}, err
	}
	// 249 is Kafka's limit; every broker mapping so far keeps the length of the canonical form
	// (colons become dots or slashes), so it is checked here, once, for every backend.
	if n := len(t.String()); n > maxTopicLength {
		return Topic{}, fmt.Errorf("%w: %q is too long (%d characters as a broker name, at most %d)", ErrInvalidTopic, s, n, maxTopicLength)
	}
	return t, nil
}

// MustParseTopic is ParseTopic for constants in tests; it panics on an invalid string.
func MustParseTopic(s string) Topic {
	t, err := ParseTopic(s)
	if err != nil {
		panic(err)
	}
	return t
}

// checkPart allows letters, digits, '-', '_' and '.', and ':' inside the topic part.
func checkPart(whole, what, part string, colonOK bool) error {
	if part == "" {
		return fmt.Errorf("%w: %q has an empty %s", ErrInvalidTopic, whole, what)
	}
	for _, r := range part {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		case r == ':' && colonOK:
		default:
			return fmt.Errorf("%w: %q: character %q is not allowed in the %s (letters, digits, '-', '_', '.')", ErrInvalidTopic, whole, r, what)
		}
	}
	if part == "." || part == ".." {
		return fmt.Errorf("%w: %q: %s %q is reserved", ErrInvalidTopic, whole, what, part)
	}
	return nil
}
