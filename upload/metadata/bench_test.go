package metadata_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/upload/metadata"
)

// A statement run of 10,000 letters, in each format.
func benchInput(xml bool) []byte {
	var b strings.Builder
	if xml {
		b.WriteString("<pack><title>Statements</title><letters>")
		for i := range 10000 {
			fmt.Fprintf(&b, "<letter><postal><line>Customer %d</line><line>%d George St</line><line><suburb>Sydney</suburb><state>NSW</state><postcode>2000</postcode></line></postal><email>c%d@example.com</email><reference>ACC-%d</reference><page_start>%d</page_start><page_end>%d</page_end></letter>", i, i, i, i, 2*i, 2*i+1)
		}
		b.WriteString("</letters></pack>")
		return []byte(b.String())
	}
	b.WriteString(`{"title":"Statements","letters":[`)
	for i := range 10000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"postal":["Customer %d","%d George St",{"suburb":"Sydney","state":"NSW","postcode":"2000"}],"email":"c%d@example.com","reference":"ACC-%d","page_start":%d,"page_end":%d}`, i, i, i, i, 2*i, 2*i+1)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func BenchmarkParseJSON(b *testing.B) { benchParse(b, "m.json", benchInput(false)) }
func BenchmarkParseXML(b *testing.B)  { benchParse(b, "m.xml", benchInput(true)) }

func benchParse(b *testing.B, name string, data []byte) {
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if p, probs := metadata.Parse(name, data, metadata.Limits{}); p == nil || len(probs) > 0 {
			b.Fatal(strs(probs))
		}
	}
}

func BenchmarkPlan(b *testing.B) {
	p, _ := metadata.Parse("m.json", benchInput(false), metadata.Limits{})
	files := metadata.Files{{Name: "statements.pdf", Pages: 20000}}
	for b.Loop() {
		if plan, probs := p.Plan(files); len(plan) != 10000 || len(probs) > 0 {
			b.Fatal(strs(probs))
		}
	}
}
