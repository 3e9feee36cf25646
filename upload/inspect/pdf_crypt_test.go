package inspect

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// encryptedDir holds the encrypted test PDFs, with the PDF reader's tests.
var encryptedDir = filepath.Join("..", "..", "internal", "pdf", "testdata", "encrypted")

// TestEncryptedPDFs: PDFs encrypted by qpdf (encryptedDir/make.sh),
// one per revision of the standard security handler. With an owner
// password only they open with the empty user password, and their page
// trees, in encrypted object streams, are counted; with a user password
// they are refused, although their page trees are in plain objects.
func TestEncryptedPDFs(t *testing.T) {
	f := func(file string, want int, msg string) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(encryptedDir, file))
		if err != nil {
			t.Fatal(err)
		}
		// as written, and with the cross-reference data lost (rebuilt by
		// scanning, the object streams decrypted after it)
		broken := bytes.Replace(data, []byte("startxref"), []byte("startxreg"), 1)
		for i, data := range [][]byte{data, broken} {
			n, err := count(PDF, data, Limits{})
			if msg == "" && (n != want || err != nil) {
				t.Errorf("%s (%d): %d, %v; want %d pages", file, i, n, err, want)
			}
			if msg != "" && (n != 0 || !errors.Is(err, ErrEncrypted) || err.Error() != msg) {
				t.Errorf("%s (%d): %d, %v; want ErrEncrypted %q", file, i, n, err, msg)
			}
		}
	}
	const needs = "encrypted: opening it needs a password"
	f("plain.pdf", 3, "")
	for _, v := range []string{"40", "128rc4", "128aes", "256r5", "256"} {
		f("o"+v+".pdf", 3, "")
		f("u"+v+".pdf", 0, needs)
	}
}

// TestEncryptedQpdf encrypts afresh with the qpdf installed (new salts,
// IVs and IDs each run, and both layouts for each kind of password).
func TestEncryptedQpdf(t *testing.T) {
	testenv.Tool(t, "qpdf")
	dir := t.TempDir()
	plain := filepath.Join(encryptedDir, "plain.pdf")
	i := 0
	for _, args := range [][]string{{"40"}, {"128"}, {"128", "--use-aes=y"}, {"256", "--force-R5"}, {"256"}} {
		for _, user := range []string{"", "user"} {
			for _, layout := range []string{"generate", "disable"} {
				i++
				out := filepath.Join(dir, strings.Repeat("x", i)+".pdf")
				cmd := append([]string{"--allow-weak-crypto", "--object-streams=" + layout, "--encrypt", user, "owner"}, args...)
				cmd = append(cmd, "--", plain, out)
				if b, err := exec.Command("qpdf", cmd...).CombinedOutput(); err != nil {
					t.Fatalf("qpdf %q: %v\n%s", cmd, err, b)
				}
				data, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				n, err := count(PDF, data, Limits{})
				if user == "" && (n != 3 || err != nil) || user != "" && (n != 0 || !errors.Is(err, ErrEncrypted)) {
					t.Errorf("qpdf %q: %d, %v", cmd, n, err)
				}
			}
		}
	}
}

// encCase is a 1-page PDF whose trailer has encrypt added, and object 4
// when obj4 is set.
type encCase struct{ name, encrypt, obj4, msg string }

func (c encCase) pdf() []byte {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] >>", "<< /Type /Page /Parent 2 0 R >>"}
	if c.obj4 != "" {
		objs = append(objs, c.obj4)
	}
	return bytes.Replace(testdoc.PDFWith(objs...), []byte("/Root 1 0 R"), []byte("/Root 1 0 R "+c.encrypt), 1)
}

// hostileEncrypt: broken or unknown /Encrypt dictionaries, all refused as
// encrypted (a printer could not open them either), none a crash.
var hostileEncrypt = []encCase{
	{"/Encrypt is a number", "/Encrypt 5", "", "not a dictionary"},
	{"/Encrypt is empty", "/Encrypt << >>", "", "names no security handler"},
	{"public-key handler", "/Encrypt << /Filter /Adobe.PubSec /V 4 /R 4 >>", "", "/Adobe.PubSec security handler"},
	{"unknown /V", "/Encrypt << /Filter /Standard /V 9 /R 3 /O <00> /U <00> >>", "", "(/V 9 /R 3)"},
	{"/R 7", "/Encrypt << /Filter /Standard /V 5 /R 7 >>", "", "(/V 5 /R 7)"},
	{"short /O and /U", "/Encrypt << /Filter /Standard /V 2 /R 3 /O <00> /U <00> /P -4 >>", "", "no valid /O and /U"},
	{"/O and /U not strings", "/Encrypt << /Filter /Standard /V 1 /R 2 /O 1 /U [1] /P -4 >>", "", "no valid /O and /U"},
	{"4096-bit RC4", "/Encrypt << /Filter /Standard /V 2 /R 3 /Length 4096 >>", "", "4096-bit key"},
	{"negative /Length", "/Encrypt << /Filter /Standard /V 2 /R 3 /Length -8 >>", "", "-8-bit key"},
	{"wrong /U (a user password)", "/Encrypt 4 0 R /ID [<01> <01>]",
		"<< /Filter /Standard /V 2 /R 3 /Length 128 /O <" + strings.Repeat("11", 32) + "> /U <" + strings.Repeat("22", 32) + "> /P -4 >>", "opening it needs a password"},
	{"/StmF names no filter", "/Encrypt << /Filter /Standard /V 4 /R 4 /StmF /StdCF /O <00> /U <00> >>", "", "/StmF crypt filter /StdCF is not defined"},
	{"unknown crypt method", "/Encrypt << /Filter /Standard /V 4 /R 4 /StmF /X /CF << /X << /CFM /Rot13 >> >> >>", "", "/Rot13 method"},
	{"AES-256 without /UE", "/Encrypt << /Filter /Standard /V 5 /R 6 /StmF /X /CF << /X << /CFM /AESV3 >> >> /U <" + strings.Repeat("00", 48) + "> >>", "", "no valid /U and /UE"},
	{"wrong /U of revision 6", "/Encrypt << /Filter /Standard /V 5 /R 6 /StmF /X /CF << /X << /CFM /AESV3 >> >> /U <" + strings.Repeat("00", 48) + "> /UE <" + strings.Repeat("00", 32) + "> >>", "", "opening it needs a password"},
	{"AES-128 with a 256-bit key", "/Encrypt << /Filter /Standard /V 5 /R 5 /StmF /X /CF << /X << /CFM /AESV2 >> >> /U <" + strings.Repeat("00", 48) + "> /UE <" + strings.Repeat("00", 32) + "> >>", "", "opening it needs a password"},
	{"/Encrypt refers to itself", "/Encrypt 4 0 R", "4 0 R", "cannot be read"},
	{"/Encrypt refers to a missing object", "/Encrypt 9 0 R", "", "cannot be read"},
}
