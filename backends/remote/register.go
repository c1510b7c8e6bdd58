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
		backends.Register(ad.Name, Constructor(ad))
	}
	return err
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
