package importer

import (
	"io"
)

// ColumnDoc is a column of a kind as the import page lists it: its header
// in the page's language, whether a row needs it, and an example value.
type ColumnDoc struct {
	Name     string
	Required bool
	Example  string
}

// Columns lists a kind's columns, in lang (ru or en).
func Columns(kind Kind, lang string) []ColumnDoc {
	cols := columns[kind]
	ex := examples[kind][lang]
	out := make([]ColumnDoc, len(cols))
	for i, c := range cols {
		out[i] = ColumnDoc{Name: c.en, Required: c.required}
		if lang == "ru" {
			out[i].Name = c.ru
		}
		if len(ex) > 0 && i < len(ex[0]) {
			out[i].Example = ex[0][i]
		}
	}
	return out
}

// Template writes a file of the kind that a salon fills in and imports:
// the header and example rows, as an export of lang writes them (for ru,
// a BOM and semicolons, as a Russian Excel opens and saves a CSV).
func Template(w io.Writer, kind Kind, lang string) error {
	cw, err := newSheet(w, kind, lang)
	if err != nil {
		return err
	}
	for _, row := range examples[kind][lang] {
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// examples are rows of each kind, in the columns' order, that the import
// takes (its test imports them, in order, into an empty salon).
var examples = map[Kind]map[string][][]string{
	Services: {
		"en": {{"Haircut", "60", "2500", "0", "10"}, {"Colouring", "120", "6000", "1000", "15"}},
		"ru": {{"Стрижка", "60", "2500", "0", "10"}, {"Окрашивание", "120", "6000", "1000", "15"}},
	},
	Masters: {
		"en": {{"Anna Smirnova", "+7 912 345-67-89", "Haircut|Colouring"}, {"Boris Volkov", "", "Haircut"}},
		"ru": {{"Анна Смирнова", "+7 912 345-67-89", "Стрижка|Окрашивание"}, {"Борис Волков", "", "Стрижка"}},
	},
	Schedule: {
		"en": {{"Anna Smirnova", "2030-03-04", "10:00", "19:00", "14:00", "14:30"}, {"Boris Volkov", "2030-03-04", "18:00", "26:00", "", ""}},
		"ru": {{"Анна Смирнова", "04.03.2030", "10:00", "19:00", "14:00", "14:30"}, {"Борис Волков", "04.03.2030", "18:00", "26:00", "", ""}},
	},
	Clients: {
		"en": {{"Maria Ivanova", "+7 915 123-45-67", "", "allergic to ammonia"}, {"Olga Petrova", "8 916 765-43-21", "", ""}},
		"ru": {{"Мария Иванова", "+7 915 123-45-67", "", "аллергия на аммиак"}, {"Ольга Петрова", "8 916 765-43-21", "", ""}},
	},
	Bookings: {
		"en": {{"Anna Smirnova", "Haircut", "2030-03-04", "11:00", "+7 915 123-45-67", "Maria Ivanova", "confirmed"}},
		"ru": {{"Анна Смирнова", "Стрижка", "04.03.2030", "11:00", "+7 915 123-45-67", "Мария Иванова", "подтверждена"}},
	},
}
