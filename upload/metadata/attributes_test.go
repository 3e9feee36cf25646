package metadata_test

import (
	"reflect"
	"testing"

	"github.com/segmentio/encoding/json"
)

// TestAttributes: the attributes a metadata file sets, under their field
// names, without letters; unset ones absent, set zero values kept.
func TestAttributes(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got, _ := json.Marshal(mustParse(t, in).Attributes())
		var g, w any
		json.Unmarshal(got, &g)
		json.Unmarshal([]byte(want), &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\ngot  %s\nwant %s", in, got, want)
		}
	}
	f(`{"letters":[{"postal":"A"}]}`, `{}`)
	f(`{"duplex":false,"title":"","colour_model":0,"letters":[{"postal":"A"}]}`, `{"duplex":false,"title":"","colour_model":0}`)
	f(`{"title":"Run","cust_hold":true,"attachments":[],"production_options":{"aup_dlvtyp":0,"background":"lh.pdf"},"letters":[{"postal":"A"}]}`,
		`{"title":"Run","cust_hold":true,"attachments":[],"production_options":{"aup_dlvtyp":0,"background":"lh.pdf"}}`)
	f(`{"production_options":{},"letters":[{"postal":"A"}]}`, `{}`)
}
