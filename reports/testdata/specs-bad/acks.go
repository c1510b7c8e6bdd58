package specs

var _ = Describe("Acks", func() {
	// MUST deliver a nacked message again.
	It("[A1] nack redelivers", func(ctx SpecContext) {})

	It("[A2] ack acknowledges nothing after it", func(ctx SpecContext) {})

	// MUSTER is not a MUST comment.
	It("[A3] unacked message is redelivered", func(ctx SpecContext) {})

	// MUST not redeliver acked messages.

	It("[A4] acked messages stay acked", func(ctx SpecContext) {})
})
