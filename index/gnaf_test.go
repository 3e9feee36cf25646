package index

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestReadPSVHostile: broken tables give an error naming file and line,
// never a panic; retired rows are skipped.
func TestReadPSVHostile(t *testing.T) {
	f := func(in string, wantRows, wantRetired int, wantErr string) {
		t.Helper()
		rows, retired, err := readPSV(context.Background(), strings.NewReader(in), "T.psv", []string{"A", "B"}, nil, func(t *gnafTable, row *gnafRow) error {
			_ = row.get(t.col("A"))
			return nil
		})
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%.60q: %v, want error %q", in, err, wantErr)
		}
		if err == nil && (rows != wantRows || retired != wantRetired) {
			t.Errorf("%.60q: %d rows %d retired, want %d %d", in, rows, retired, wantRows, wantRetired)
		}
	}
	f("A|B\n1|2\n3|4\n", 2, 0, "")
	f("A|B\r\n1|2\r\n3|4", 2, 0, "")                                    // CRLF, no final newline
	f("\xef\xbb\xbfB|A|DATE_RETIRED\n1|2|\n3|4|2020-01-01\n", 1, 1, "") // BOM, columns by name, retired
	f("", 0, 0, "empty file")
	f("A\n1\n", 0, 0, "no column B")
	f("A|B|A\n1|2|3\n", 0, 0, "column A twice")
	f("A|B\n1|2|3\n", 0, 0, "T.psv:2: 3 fields")
	f("A|B\n1\n", 0, 0, "T.psv:2: 1 fields")
	f("A|B\n"+strings.Repeat("x", maxGNAFLine+10)+"|1\n", 0, 0, "line too long")
	f("A|B\n\x00|\xff\xfe\n", 1, 0, "") // NUL and invalid UTF-8 are data; the engine's builder judges them
	f("A|B\n\n\n1|2\n", 1, 0, "")       // blank lines
}

func FuzzReadPSV(f *testing.F) {
	f.Add([]byte("A|B|DATE_RETIRED\n1|2|\n3|4|x\n"))
	f.Add([]byte("B|A\r\n1|2\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		readPSV(context.Background(), bytes.NewReader(in), "F.psv", []string{"A"}, nil, func(t *gnafTable, row *gnafRow) error {
			_ = row.get(t.col("A"))
			_ = row.get(t.col("ZZ"))
			return nil
		})
	})
}
