package specs

// Fixture for the catalogue generator: parsed with go/ast, never compiled.

var _ = Describe("Delivery", func() {
	// MUST deliver payload bytes and properties intact, including an empty map and unicode.
	It("[D1] round trip keeps payload and properties", Label("delivery"), func(ctx SpecContext) {
		// A comment inside the body is not a spec's doc.
		Expect(true).To(BeTrue())
	})

	// MUST deliver a message sent immediately after Consumer() returns,
	// for every class, with initial position latest and no sleep anywhere.
	//
	// This paragraph is commentary, not part of the MUST sentence.
	conformanceIt("[D2] ready on return", Label("delivery", "seed-bug"), func(ctx SpecContext) {})

	// MUST end Receive on an empty topic at its deadline with a timeout error.
	DescribeTable("[D7] bounded receive",
		func(ctx SpecContext, cancel bool) {},
		Entry("deadline", false),
		Entry("[X] not an ID: entries do not count", true),
	)

	It("helper text without an ID is not a catalogue spec", func() {})
})
