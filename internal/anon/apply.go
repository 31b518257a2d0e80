package anon

// Apply returns a copy of v with its addresses and names replaced by a's
// tokens, after learning the names v holds; v itself when a is nil.
func Apply[T any](a *Anonymizer, v T) T {
	if a == nil {
		return v
	}
	a.LearnFrom(v)
	return Value(a, v)
}
