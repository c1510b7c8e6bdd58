package specs

var _ = Describe("Groups", Label("groups"), func() {
	// MUST give each message to exactly one of N consumers on one shared subscription.
	It("[G1] competing consumers", func(ctx SpecContext) {})

	// MUST, with K unique subscribers, give every message to each of them.
	ginkgo.It("[G10] fan-out ordering check", ginkgo.Label("slow"), func(ctx SpecContext) {})
})
