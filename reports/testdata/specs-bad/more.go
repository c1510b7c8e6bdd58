package specs

var _ = Describe("More", func() {
	// MUST be unique.
	It("[A1] duplicate ID", func(ctx SpecContext) {})
})
