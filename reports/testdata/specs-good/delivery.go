package specs

// Fixture for the catalogue generator: parsed with go/ast, never compiled.

var _ = Describe("Delivery", func() {
	Behaviour("D1", func(ctx SpecContext) {
		// A comment inside the body is not a spec's doc.
		Expect(true).To(BeTrue())
	})

	BehaviourTable("D2",
		func(ctx SpecContext, cancel bool) {},
		Entry("[X1] entries are not specs", true),
	)

	It("helper text without an ID is not a catalogue spec", func() {})
})
