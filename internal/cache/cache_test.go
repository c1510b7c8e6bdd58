package cache

import "testing"

func TestRootFollowsEnv(t *testing.T) {
	t.Setenv("PUBSUB_CACHE", "/x/pc")
	t.Setenv("XDG_CACHE_HOME", "/x/xdg")
	if got, _ := Root(); got != "/x/pc" {
		t.Errorf("PUBSUB_CACHE: got %s", got)
	}
	t.Setenv("PUBSUB_CACHE", "")
	if got, _ := Root(); got != "/x/xdg/pubsub-conformance" {
		t.Errorf("XDG_CACHE_HOME: got %s", got)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/x/home")
	if got, _ := Root(); got != "/x/home/.cache/pubsub-conformance" {
		t.Errorf("HOME: got %s", got)
	}
}
