package specs

// Fixture for the catalogue check: parsed with go/ast, never compiled.

var _ = Describe("Acks", func() {
	Behaviour("A1", func(ctx SpecContext) {})
	Behaviour("A1", func(ctx SpecContext) {})
	It("[A2] declared without the wrapper", func(ctx SpecContext) {})
	It("[A10] a two-digit ID without the wrapper", func(ctx SpecContext) {})
	Behaviour("Q9", func(ctx SpecContext) {})
})
