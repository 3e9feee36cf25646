package auth

import "testing"

func TestURLHasCredentials(t *testing.T) {
	f := func(uri string, want bool) {
		t.Helper()
		if got := URLHasCredentials([]byte(uri)); got != want {
			t.Errorf("URLHasCredentials(%q) = %v, want %v", uri, got, want)
		}
	}
	_, key := newKeySecret()

	f("/apiv2/jsonrpc", false)
	f("/apiv2/jsonrpc?", false)
	f("/publicinterface/get_session_id.json?account=ABC12345", false)
	f("/publicinterface/end_session.json?session_id=2JWM49JYMXWV2PGYX8TRBGJ847JK", false)
	f("/x?keyword=a&author=b&monkey=c&passage=d&tokens=e", false)
	f("/x?q=password", false) // a value, not a name
	f("https://lodge.example/apiv2/jsonrpc?id=1", false)
	f("/user@example.com/x", false) // '@' in a path is not userinfo
	f("/x#password=a", false)       // fragments are not sent

	f("https://alice:secret@lodge.example/apiv2/jsonrpc", true)
	f("https://alice@lodge.example/apiv2/jsonrpc", true)
	f("http://a:b@h", true)
	f("/x?password=a", true)
	f("/x?PassWord=a", true)
	f("/x?passwd=a", true)
	f("/x?pwd", true) // no value still names one
	f("/x?pass=a", true)
	f("/x?api_key=a", true)
	f("/x?API-KEY=a", true)
	f("/x?apikey=a", true)
	f("/x?apiKey=a", true)
	f("/x?key=a", true)
	f("/x?KEY=", true)
	f("/x?token=a", true)
	f("/x?access_token=a", true)
	f("/x?id_token=a", true)
	f("/x?auth=a", true)
	f("/x?Authorization=Bearer+x", true)
	f("/x?client_secret=a", true)
	f("/x?new_password=a", true)
	f("/x?a=1&b=2&password=3", true)
	f("/x?a=1;pwd=3", true)
	f("/x?pass%77ord=a", true) // percent-encoded name
	f("/x?api%5Fkey=a", true)
	f("/x?"+key, true) // a key where it should not be
	f("/x/"+key, true)
	f("/x?q="+key[:14]+"...", true)
}
