package remote

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
	pb "github.com/pubsub-conformance/harness/proto/pubsub/v1"
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
// settings it reads from the environment are its broker's (the kind's EnvPrefix: KAFKA_*,
// PULSAR_*, RABBITMQ_*) plus SettingsEnv.
func (ad Adapter) Descriptor() backends.Descriptor {
	env := append([]string(nil), ad.SettingsEnv...)
	if r, ok := fixtures.LookupKind(fixtures.Kind(ad.Broker)); ok {
		env = append(env, r.EnvPrefix+"*")
	}
	var inProcess func() backends.Instance
	if ad.Reference {
		inProcess = func() backends.Instance { return newInstance(ad) }
	}
	return backends.Descriptor{
		InProcess:   inProcess,
		Prepare:     func(ctx context.Context) error { return Prepare(ctx, ad) },
		Name:        ad.Name,
		Description: ad.Description,
		Broker:      ad.Broker,
		Reference:   ad.Reference,
		OptIn:       ad.OptIn,
		New:         Constructor(ad),
		Settings:    ad.Settings,
		Env:         env,
		Secret:      []string{"*PASSWORD*", "*SECRET*", "*TOKEN*", "*API_KEY*", "*_KEY_LOCATION"},
	}
}

// InstanceSetting names a private instance of a reference port: its own adapter process (the
// process pool is keyed by the settings), so its own in-process broker.
const InstanceSetting = "PUBSUB_ADAPTER_INSTANCE"

var instanceSeq atomic.Int64

// instance is a private instance of a reference port (Descriptor.InProcess, for R4): Backends
// opened with its Settings run in an adapter process of their own, whose broker Restart
// restarts through the protocol (RestartBroker).
type instance struct {
	ad       Adapter
	settings map[string]string
}

func newInstance(ad Adapter) *instance {
	id := fmt.Sprintf("private-%d-%d", os.Getpid(), instanceSeq.Add(1))
	return &instance{ad: ad, settings: map[string]string{InstanceSetting: id}}
}

func (i *instance) Settings() map[string]string { return i.settings }

// Restart asks the instance's adapter process to restart its broker. Instance.Restart reports
// no error: a failure is written to the adapter's log (the spec's output), and the spec fails
// on what it then observes.
func (i *instance) Restart() {
	c := instanceProcess(i.ad, i.settings[InstanceSetting], false)
	if c == nil || c.exited() {
		return // never opened: nothing to restart
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := c.client.RestartBroker(ctx, &pb.RestartBrokerRequest{})
	if err != nil {
		err = c.callError("RestartBroker", err)
	} else {
		err = FromWire(r.GetError())
	}
	if err != nil {
		c.line(fmt.Sprintf("harness: broker restart failed: %v", err))
	}
}

// Close stops the instance's adapter process.
func (i *instance) Close() {
	if c := instanceProcess(i.ad, i.settings[InstanceSetting], true); c != nil {
		c.kill()
	}
}
