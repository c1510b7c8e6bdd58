package specs

var _ = Describe("Groups", Label("groups"), func() {
	specs.Behaviour("G1", func(ctx SpecContext) {})
})
