package catalogue

// Contract coverage, in the manner of Kubernetes' behaviours coverage: every normative sentence
// of the contract's doc comments (backends/backend.go, backends/topic.go) carries an ID in
// brackets right after it ("[C-ACK-1]"); each ID is asserted by the behaviours listed in
// Asserts, or it is in NotTestable with the reason no conformance spec can assert it.
// reports/contract.md is generated from these tables and the markers (go run
// ./reports/cmd/contract); its -check (make catalogue) fails when a sentence has neither.

// ContractFiles are the contract's source files, relative to the repository root.
var ContractFiles = []string{"backends/backend.go", "backends/topic.go"}

// Asserts maps a behaviour ID to the contract sentences its spec asserts: each entry's
// Asserts, gathered (the entry is the one place that says it).
func Asserts() map[string][]string {
	out := make(map[string][]string, len(Behaviours))
	for _, b := range Behaviours {
		out[b.ID] = b.Asserts
	}
	return out
}

// NotTestable lists the contract sentences no conformance spec can assert, with the reason.
var NotTestable = map[string]string{
	"C-LIFE-1": "an obligation of the caller (close the Backend once, after what it handed out), not of the backend; the specs follow it through DeferCleanup order",
	"C-LIFE-2": "an obligation of the caller (who closes what); the backend's side of it is C-LIFE-3",
	"C-PROD-2": "an obligation of the caller (close the producer); nothing a backend does can be observed",
	"C-CONS-2": "a restriction on the caller (no concurrent Receive on one consumer); it allows backends behaviour the contract leaves undefined",
	"C-BE-2":   "the suite opens every backend by its registry name and every report row carries it: a wrong Name fails the run's setup, not a spec",
	"C-BE-3":   "a declaration, not a behaviour: every spec that needs a capability skips with the declared reason, and a capability a backend claims is asserted by those specs (A1, A3, T2, T3)",
	"C-CAP-2":  "no behaviour requires it: the design asks replay of durable (flow) messages only (T2), and no spec needs this capability, so declaring it lacking skips nothing",
	"C-ERR-3":  "a pure function over the sentinels, unit-tested in backends (TestCodeAndCtxErr)",
	"C-SEND-3": "an allowance, not an obligation: a Send that errs conforms whether or not its message arrives. F3 counts the Sends that erred during its cut and were delivered all the same in a report entry (\"F3 sends during the cut\"); on kafka, pulsar and pulsar-persistent all 6 Sends that erred during the cut were delivered, in each of 20 census runs",
	"C-SUB-7":  "an allowance, not an obligation: a Consumer call that errs conforms whether or not it made the subscription. W2's checkers apply it (internal/history: a latest subscription may hold what was sent after its first Consumer call started, failed or not; internal/workload: a subscription whose Consumer call failed is not compared); W2 corpus entry w2-1796190012 replays it on pulsar, where a fault cut the answer to a subscribe the broker had made",
	"C-ACK-9":  "an allowance, not an obligation: a Nack refused after its message was acked through another delivery conforms, one that returned nil owes the redelivery (C-NACK-1, asserted by W1's checkers). Only a rebalance that gives a partition straight back produces two deliveries of one message to one consumer; backends/kafka's TestIntegrationNackOfAckedDuplicate forces that with a member of the same group on another topic, and W1 corpus entries w1-1796183137 and w1-1796307262 replay it by luck",
	"C-ERR-2":  "Code is a pure function over the sentinels, unit-tested in backends (TestCodeAndCtxErr); the wire side is the adapter protocol's",
}

// DeclaredLevels gives the level of each NotTestable sentence. An asserted sentence takes its
// level from the behaviours asserting it (reports.ContractLevels): MUST when any of them is a
// MUST, SHOULD when all are SHOULD.
var DeclaredLevels = map[string]Level{
	"C-LIFE-1": MUST,   // how TrustGraph's wrapper classes use a backend, too
	"C-LIFE-2": MUST,   // the same
	"C-PROD-2": MUST,   // the same
	"C-CONS-2": SHOULD, // a restriction of ours: TrustGraph's concurrent receive() tasks share a subscription, not a consumer object
	"C-BE-2":   MUST,   // the registry name is how a run names its columns
	"C-BE-3":   MUST,   // a capability declared lacking is how an API that cannot express a behaviour says so
	"C-CAP-2":  SHOULD, // replay of what non-durable classes held: TrustGraph's q0 queues are best-effort
	"C-ERR-3":  MUST,   // the sentinels are how every MUST failure is told apart
	"C-SEND-3": SHOULD, // an allowance on top of C-SEND-1
	"C-SUB-7":  SHOULD, // an allowance on top of C-SUB-1
	"C-ACK-9":  SHOULD, // an allowance on top of C-NACK-1
	"C-ERR-2":  MUST,   // the wire side of the sentinels, for adapters of TrustGraph's own backends
}
