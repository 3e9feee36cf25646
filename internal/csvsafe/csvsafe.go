// Package csvsafe keeps customers' text in the CSV files lodge writes
// (manifests, invoices) from being read as a formula when the file is
// opened in a spreadsheet (CSV injection): a cell starting with = + - @,
// a tab or a carriage return gets a leading quote mark, which spreadsheets
// show as text and do not evaluate.
package csvsafe

// Cell returns s made safe to be a CSV cell of customer text.
func Cell(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r') {
		return "'" + s
	}
	return s
}
