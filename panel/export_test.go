package panel

// Untranslated lists the texts asked for in Russian that Russian lacks.
func Untranslated() []string {
	var out []string
	untranslated.Range(func(k, _ any) bool {
		out = append(out, k.(string))
		return true
	})
	return out
}
