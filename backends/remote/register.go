package remote

import (
	"context"
	"fmt"
	"sync"

	"github.com/pubsub-conformance/harness/backends"
)

var (
	regMu      sync.Mutex
	registered = map[string]Adapter{}
)

// Register adds every declared adapter (the shipped ones and the user's PUBSUB_ADAPTER_<NAME>)
// to the backends registry. An invalid user declaration is returned as an error (the valid
// ones are registered regardless); a user adapter whose name is taken is an error too.
func Register() error {
	ads, err := Declared()
	regMu.Lock()
	defer regMu.Unlock()
	for _, ad := range ads {
		if _, dup := registered[ad.Name]; dup {
			continue
		}
		if _, lerr := backends.Lookup(ad.Name); lerr == nil {
			err = fmt.Errorf("adapter %s: the name is already a registered backend", ad.Name)
			continue
		}
		registered[ad.Name] = ad
		backends.Register(ad.Descriptor())
	}
	return err
}

// Descriptor is ad's registry record: a backend like any other, whose New starts (or reuses) the
// adapter process and passes Config.Settings to it (in its environment and in Open). The
// settings it reads from the environment are its broker's (KAFKA_*, PULSAR_*) plus SettingsEnv.
func (ad Adapter) Descriptor() backends.Descriptor {
	env := append([]string(nil), ad.SettingsEnv...)
	switch ad.Broker {
	case "kafka":
		env = append(env, "KAFKA_*")
	case "pulsar":
		env = append(env, "PULSAR_*")
	}
	return backends.Descriptor{
		Name:        ad.Name,
		Description: ad.Description,
		Broker:      ad.Broker,
		Reference:   ad.Reference,
		New:         Constructor(ad),
		Settings:    ad.Settings,
		Env:         env,
		Secret:      []string{"*PASSWORD*", "*SECRET*", "*TOKEN*", "*API_KEY*", "*_KEY_LOCATION"},
	}
}

// Lookup returns the declaration of a registered adapter.
func Lookup(name string) (Adapter, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	ad, ok := registered[name]
	return ad, ok
}

// PrepareNamed prepares (see Prepare) each of names that is a registered adapter.
func PrepareNamed(ctx context.Context, names []string) error {
	for _, n := range names {
		if ad, ok := Lookup(n); ok {
			if err := Prepare(ctx, ad); err != nil {
				return err
			}
		}
	}
	return nil
}
