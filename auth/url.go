package auth

import (
	"bytes"
	"net/url"
	"strings"
)

// credentialParams are query parameter names taken to carry credentials,
// compared after lower-casing and dropping '-', '_' and '.'.
var credentialParams = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "pass": true,
	"apikey": true, "key": true, "token": true, "accesstoken": true,
	"auth": true, "authorization": true, "secret": true, "clientsecret": true,
	"bearer": true, "credentials": true,
}

// URLHasCredentials says whether a request URI carries credentials: user
// information (user:pass@) in an absolute URI, a query parameter named
// like a password or key (password, passwd, pwd, api_key, apikey, key,
// token, access_token, auth, ... in any case, with '-', '_' or '.'
// anywhere; and any name containing "password" or ending in "token"), or
// anything shaped like a lodge API key anywhere in it. The server refuses
// such requests: URLs end up in logs, proxies and browser histories.
func URLHasCredentials(uri []byte) bool {
	if looksLikeKey(uri) {
		return true
	}
	if i := bytes.IndexByte(uri, '#'); i >= 0 {
		uri = uri[:i]
	}
	path, query, _ := bytes.Cut(uri, []byte{'?'})
	if i := bytes.Index(path, []byte("://")); i >= 0 {
		authority := path[i+3:]
		if j := bytes.IndexByte(authority, '/'); j >= 0 {
			authority = authority[:j]
		}
		if bytes.IndexByte(authority, '@') >= 0 {
			return true
		}
	}
	for len(query) > 0 {
		var part []byte
		if i := bytes.IndexAny(query, "&;"); i >= 0 {
			part, query = query[:i], query[i+1:]
		} else {
			part, query = query, nil
		}
		name, _, _ := bytes.Cut(part, []byte{'='})
		if credentialName(name) {
			return true
		}
	}
	return false
}

func credentialName(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	name := string(raw)
	if dec, err := url.QueryUnescape(name); err == nil {
		name = dec
	}
	name = strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(name))
	if credentialParams[name] {
		return true
	}
	return strings.Contains(name, "password") || strings.Contains(name, "passwd") || strings.HasSuffix(name, "token") || strings.HasSuffix(name, "apikey")
}
