package pdf

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/rc4"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"hash"
)

// PDF encryption (ISO 32000-2 section 7.6, the standard security handler).
// A document whose user password is empty (an owner password alone
// restricts printing or copying) opens for anyone, so the printer can
// print it; one that needs a user password cannot be printed by anyone
// who lacks it and is refused. "Needs a password" is decided as a reader
// decides it: by trying the empty user password against /U (algorithms
// 2 with 4 or 5 for revisions 2 to 4, RC4 and MD5; SHA-256 for revision 5;
// algorithm 2.B for revision 6). With the key it gives, object streams are
// decrypted (RC4, AES-128 and AES-256, crypt filters of /V 4 and 5), so the
// page tree in them is counted like any other.

// pdfPadding is the password padding of algorithm 2.
var pdfPadding = []byte("\x28\xBF\x4E\x5E\x4E\x75\x8A\x41\x64\x00\x4E\x56\xFF\xFA\x01\x08" +
	"\x2E\x2E\x00\xB6\xD0\x68\x3E\x80\x2F\x0C\xA9\xFE\x64\x53\x69\x7A")

// pdfCrypt decrypts strings and streams with the file key the empty user
// password gives.
type pdfCrypt struct {
	key []byte
	// the methods for streams and strings: "Identity", "V2" (RC4),
	// "AESV2" or "AESV3"
	stream, str string
	// metadata: /Metadata streams are encrypted (/EncryptMetadata)
	metadata bool
	// encNum is the object number of the /Encrypt dictionary, whose
	// strings are never encrypted
	encNum int64
}

// errNeedsPassword is the message for documents nobody can open without
// being told a password.
const errNeedsPassword = "encrypted: opening it needs a password"

func encryptedErr(format string, args ...any) error {
	return newErr([]error{ErrEncrypted, errFinal}, format, args...)
}

// openEncryption reads the trailer's /Encrypt dictionary and opens the
// document with the empty user password, or says why it cannot be opened.
func (d *Reader) openEncryption() error {
	e := d.trailer["Encrypt"]
	if e == nil {
		return nil
	}
	d.encrypted = true
	o, err := d.resolveErr(e)
	if err != nil {
		return prefixed("PDF /Encrypt dictionary: ", err)
	}
	enc, ok := o.(dict)
	if !ok {
		return encryptedErr("encrypted, and its /Encrypt entry is not a dictionary: it cannot be opened")
	}
	num := func(k pdfName, def int64) int64 {
		if v, ok := d.resolve(enc[k]).(int64); ok {
			return v
		}
		return def
	}
	str := func(k pdfName) []byte {
		s, _ := d.resolve(enc[k]).(pdfString)
		return []byte(s)
	}
	if f, _ := d.resolve(enc["Filter"]).(pdfName); f != "Standard" {
		if f == "" {
			return encryptedErr("encrypted, and its /Encrypt dictionary names no security handler: it cannot be opened")
		}
		return encryptedErr("encrypted with the /%s security handler, which needs a password or a certificate to open", f)
	}
	v, r := num("V", 0), num("R", 0)
	var id0 []byte
	if ids, ok := d.resolve(d.trailer["ID"]).(array); ok && len(ids) > 0 {
		s, _ := d.resolve(ids[0]).(pdfString)
		id0 = []byte(s)
	}
	c := &pdfCrypt{stream: "V2", str: "V2", metadata: true}
	if r, ok := e.(ref); ok {
		c.encNum = r.num
	}
	if m, ok := d.resolve(enc["EncryptMetadata"]).(bool); ok {
		c.metadata = m
	}
	switch {
	case (v == 1 || v == 2 || v == 4) && r >= 2 && r <= 4:
		n := int(num("Length", 40) / 8)
		if r == 2 {
			n = 5
		}
		if v == 4 {
			method, length, err := d.cryptFilter(enc, "StmF")
			if err != nil {
				return err
			}
			if c.str, _, err = d.cryptFilter(enc, "StrF"); err != nil {
				return err
			}
			c.stream = method
			if method == "AESV2" {
				n = 16
			} else if _, ok := enc["Length"]; !ok && length > 0 {
				n = length
			}
		}
		if n < 5 || n > 16 {
			return encryptedErr("encrypted with a %d-bit key, which the standard security handler does not allow: it cannot be opened", n*8)
		}
		o, u := str("O"), str("U")
		if len(o) < 32 || len(u) < 32 {
			return encryptedErr("encrypted, and its /Encrypt dictionary has no valid /O and /U: it cannot be opened")
		}
		c.key = rc4Key(o[:32], uint32(num("P", 0)), id0, int(r), n, c.metadata)
		if !rc4UserOK(c.key, u, id0, int(r)) {
			return encryptedErr(errNeedsPassword)
		}
	case v == 5 && (r == 5 || r == 6):
		method, _, err := d.cryptFilter(enc, "StmF")
		if err != nil {
			return err
		}
		if c.str, _, err = d.cryptFilter(enc, "StrF"); err != nil {
			return err
		}
		c.stream = method
		u, ue := str("U"), str("UE")
		if len(u) < 48 || len(ue) < 32 {
			return encryptedErr("encrypted, and its /Encrypt dictionary has no valid /U and /UE: it cannot be opened")
		}
		hashFn := sha256Hash
		if r == 6 {
			hashFn = hash2B
		}
		if !bytes.Equal(hashFn(nil, u[32:40]), u[:32]) {
			return encryptedErr(errNeedsPassword)
		}
		c.key = aesNoIV(hashFn(nil, u[40:48]), ue[:32])
	default:
		return encryptedErr("encrypted with an algorithm this server does not know (/V %d /R %d): it cannot be opened", v, r)
	}
	for _, m := range []string{c.stream, c.str} {
		if m == "AESV3" && len(c.key) != 32 || m == "AESV2" && len(c.key) != 16 {
			return encryptedErr("encrypted with /%s and a %d-bit key, which do not go together: it cannot be opened", m, len(c.key)*8)
		}
	}
	d.crypt = c
	return nil
}

// cryptFilter returns the method (and the /Length in bytes, 0 when not
// given) of the crypt filter that /StmF names in a /V 4 or 5 dictionary.
func (d *Reader) cryptFilter(enc dict, which pdfName) (string, int, error) {
	name, _ := d.resolve(enc[which]).(pdfName)
	if name == "" || name == "Identity" {
		return "Identity", 0, nil
	}
	cfs, _ := d.resolve(enc["CF"]).(dict)
	cf, ok := d.resolve(cfs[name]).(dict)
	if !ok {
		return "", 0, encryptedErr("encrypted, and its /%s crypt filter /%s is not defined: it cannot be opened", which, name)
	}
	method, _ := d.resolve(cf["CFM"]).(pdfName)
	length, _ := d.resolve(cf["Length"]).(int64)
	if length > 16 && length <= 256 {
		length /= 8 // in bits, as some writers give it
	} else if length < 0 || length > 256 {
		length = 0
	}
	switch method {
	case "None", "":
		return "Identity", int(length), nil
	case "V2", "AESV2", "AESV3":
		return string(method), int(length), nil
	}
	return "", 0, encryptedErr("encrypted with the /%s method, which this server does not know: it cannot be opened", method)
}

// rc4Key is algorithm 2 with the empty password: the file key of
// revisions 2 to 4.
func rc4Key(o []byte, p uint32, id0 []byte, r, n int, encMeta bool) []byte {
	h := md5.New()
	h.Write(pdfPadding)
	h.Write(o)
	var pb [4]byte
	binary.LittleEndian.PutUint32(pb[:], p)
	h.Write(pb[:])
	h.Write(id0)
	if r >= 4 && !encMeta {
		h.Write([]byte{0xFF, 0xFF, 0xFF, 0xFF})
	}
	sum := h.Sum(nil)
	if r >= 3 {
		for range 50 {
			s := md5.Sum(sum[:n])
			sum = s[:]
		}
	}
	return sum[:n]
}

// rc4UserOK checks the key against /U: algorithm 4 (revision 2) or 5
// (revisions 3 and 4), which compare what the empty password encrypts to.
func rc4UserOK(key, u, id0 []byte, r int) bool {
	if r == 2 {
		return bytes.Equal(rc4XOR(key, pdfPadding), u[:32])
	}
	h := md5.New()
	h.Write(pdfPadding)
	h.Write(id0)
	x := rc4XOR(key, h.Sum(nil))
	k := make([]byte, len(key))
	for i := 1; i <= 19; i++ {
		for j := range key {
			k[j] = key[j] ^ byte(i)
		}
		x = rc4XOR(k, x)
	}
	return bytes.Equal(x, u[:16])
}

func rc4XOR(key, data []byte) []byte {
	c, err := rc4.NewCipher(key)
	if err != nil {
		return nil
	}
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out
}

// sha256Hash is revision 5's hash of a password and a salt.
func sha256Hash(pw, salt []byte) []byte {
	h := sha256.New()
	h.Write(pw)
	h.Write(salt)
	return h.Sum(nil)
}

// hash2B is algorithm 2.B of ISO 32000-2 (revision 6) for a user
// password: at least 64 rounds of AES-128-CBC and SHA-2.
func hash2B(pw, salt []byte) []byte {
	k := sha256Hash(pw, salt)
	var e []byte
	for i := 0; i < 64 || int(e[len(e)-1]) > i-32; i++ {
		k1 := bytes.Repeat(append(append([]byte{}, pw...), k...), 64)
		block, _ := aes.NewCipher(k[:16])
		e = make([]byte, len(k1))
		cipher.NewCBCEncrypter(block, k[16:32]).CryptBlocks(e, k1)
		sum := 0
		for _, b := range e[:16] {
			sum += int(b) // 256 ≡ 1 (mod 3): the bytes' sum has the number's remainder
		}
		var h hash.Hash
		switch sum % 3 {
		case 0:
			h = sha256.New()
		case 1:
			h = sha512.New384()
		default:
			h = sha512.New()
		}
		h.Write(e)
		k = h.Sum(nil)
	}
	return k[:32]
}

// aesNoIV decrypts 32 bytes with AES-256-CBC and a zero IV (the file key
// in /UE).
func aesNoIV(key, data []byte) []byte {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil
	}
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, make([]byte, aes.BlockSize)).CryptBlocks(out, data)
	return out
}

// decrypt returns the plain data of stream num gen.
func (c *pdfCrypt) decrypt(num, gen int64, data []byte) ([]byte, error) {
	return c.decryptWith(c.stream, num, gen, data)
}

// decryptWith decrypts data of object num gen with a method.
func (c *pdfCrypt) decryptWith(method string, num, gen int64, data []byte) ([]byte, error) {
	switch method {
	case "Identity":
		return data, nil
	case "AESV3":
		return aesCBC(c.key, data)
	}
	h := md5.New()
	h.Write(c.key)
	h.Write([]byte{byte(num), byte(num >> 8), byte(num >> 16), byte(gen), byte(gen >> 8)})
	if method == "AESV2" {
		h.Write([]byte("sAlT"))
	}
	key := h.Sum(nil)[:min(len(c.key)+5, 16)]
	if method == "AESV2" {
		return aesCBC(key, data)
	}
	return rc4XOR(key, data), nil
}

// aesCBC decrypts data whose first 16 bytes are the IV and removes the
// padding; a partial last block is dropped, as readers do.
func aesCBC(key, data []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, malformed("PDF encryption key: %v", err)
	}
	if len(data) < 2*aes.BlockSize {
		return nil, nil
	}
	body := data[aes.BlockSize:]
	body = body[:len(body)/aes.BlockSize*aes.BlockSize]
	out := make([]byte, len(body))
	cipher.NewCBCDecrypter(block, data[:aes.BlockSize]).CryptBlocks(out, body)
	if p := int(out[len(out)-1]); p >= 1 && p <= aes.BlockSize {
		out = out[:len(out)-p]
	}
	return out, nil
}

// decryptStrings decrypts, in place, the strings of object num gen (an
// object stored directly in the file: those in object streams are
// encrypted with their stream). A string that does not decrypt (a short
// AES string) becomes empty, as readers show it.
func (c *pdfCrypt) decryptStrings(o object, num, gen int64) object {
	if num == c.encNum || c.str == "Identity" {
		return o
	}
	var walk func(o object, depth int) object
	walk = func(o object, depth int) object {
		if depth > maxNesting+1 {
			return o
		}
		switch v := o.(type) {
		case pdfString:
			plain, err := c.decryptWith(c.str, num, gen, []byte(v))
			if err != nil {
				return pdfString("")
			}
			return pdfString(plain)
		case array:
			for i := range v {
				v[i] = walk(v[i], depth+1)
			}
		case dict:
			for k, x := range v {
				v[k] = walk(x, depth+1)
			}
		case *stream:
			walk(v.dict, depth+1)
		}
		return o
	}
	return walk(o, 0)
}
