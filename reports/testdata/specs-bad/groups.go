package specs

// Fixture for the catalogue check: parsed with go/ast, never compiled.

var _ = Describe("groups", func() {
	// MUST deliver it: requirement text copied from the catalogue goes stale.
	Behaviour("D1", func(ctx SpecContext) {})
	BehaviourTable("L10", func(ctx SpecContext, n int) {}, Entry("[L10] an entry's text is not a spec", 1))
})
