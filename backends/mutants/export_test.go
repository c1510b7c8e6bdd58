package mutants

// SwapCatalogue replaces the catalogue for a test and returns the function that puts the
// real one back.
func SwapCatalogue(vs []Variant) (restore func()) {
	catalogueMu.Lock()
	old := catalogue
	catalogue = vs
	catalogueMu.Unlock()
	return func() {
		catalogueMu.Lock()
		catalogue = old
		catalogueMu.Unlock()
	}
}
