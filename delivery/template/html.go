package template

import (
	"html"
	"strings"
	"unicode/utf8"
)

func escape(b *strings.Builder, v string) { b.WriteString(html.EscapeString(v)) }

// isHTML: after leading white space the text starts with '<', or it holds
// a closing tag of an HTML element, or a <br>, <p> or <hr> tag.
func isHTML(s string) bool {
	if strings.HasPrefix(strings.TrimLeft(s, " \t\r\n\ufeff"), "<") {
		return true
	}
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			return false
		}
		i += j + 1
		name, rest, closing := tagName(s[i:])
		if name == "" {
			continue
		}
		rest = strings.TrimLeft(rest, " \t\r\n")
		switch {
		case closing && knownElement(name) && strings.HasPrefix(rest, ">"):
			return true
		case !closing && (name == "br" || name == "p" || name == "hr") && (strings.HasPrefix(rest, ">") || strings.HasPrefix(rest, "/>")):
			return true
		}
	}
}

// tagName reads an element name after '<' (and '/' when closing),
// lower-cased, and the text after it.
func tagName(s string) (name, rest string, closing bool) {
	if strings.HasPrefix(s, "/") {
		closing, s = true, s[1:]
	}
	k := 0
	for k < len(s) && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z' || k > 0 && s[k] >= '0' && s[k] <= '9') {
		k++
	}
	return strings.ToLower(s[:k]), s[k:], closing
}

var elements = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`a abbr address article aside b big blockquote body caption center cite code dd del
		details div dl dt em figcaption figure font footer form h1 h2 h3 h4 h5 h6 head header html i ins kbd label li main
		mark nav ol p pre q s samp section small span strike strong style sub summary sup table tbody td tfoot th thead
		title tr tt u ul`) {
		elements[e] = true
	}
}

func knownElement(name string) bool { return elements[name] }

// Elements whose start or end breaks a line in the text form, and those
// whose content is not text.
var (
	blockElements = map[string]bool{"address": true, "article": true, "aside": true, "blockquote": true, "body": true,
		"caption": true, "center": true, "dd": true, "details": true, "div": true, "dl": true, "dt": true, "figcaption": true,
		"figure": true, "footer": true, "form": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
		"header": true, "hr": true, "html": true, "li": true, "main": true, "nav": true, "ol": true, "p": true, "pre": true,
		"section": true, "summary": true, "table": true, "tbody": true, "tfoot": true, "thead": true, "tr": true, "ul": true}
	hiddenElements = map[string]bool{"head": true, "style": true, "script": true, "title": true, "template": true}
)

// HTMLToText turns HTML into the text part of an email: tags dropped;
// <br>, and the start and end of block elements (p, div, li, tr, h1 ...),
// break lines; runs of white space are one space, and blank lines at most
// one; entities are decoded; a link's address follows its text in angle
// brackets (unless the text is the address); comments, declarations and
// the content of head, title, style and script are dropped. It takes time
// linear in s.
func HTMLToText(s string) string {
	var out strings.Builder
	out.Grow(len(s))
	var text strings.Builder // text since the last tag, undecoded
	space := false           // a space is owed before the next word
	bol := true              // nothing written on the line yet (but a list mark)
	newlines := 2            // line breaks ending out; at the start: none owed
	href := ""               // the open link's address
	linkText := 0            // out.Len() where the open link's text starts
	emitText := func() {
		t := html.UnescapeString(text.String())
		text.Reset()
		for t != "" {
			k := strings.IndexFunc(t, isSpace)
			if k == 0 {
				_, n := utf8.DecodeRuneInString(t)
				t, space = t[n:], true
				continue
			}
			if k < 0 {
				k = len(t)
			}
			if space && !bol {
				out.WriteByte(' ')
			}
			out.WriteString(t[:k])
			t, space, bol, newlines = t[k:], false, false, 0
		}
	}
	lineBreak := func(n int) {
		for newlines < n {
			out.WriteByte('\n')
			newlines++
		}
		space, bol = false, true
	}
	i := 0
	for i < len(s) {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			text.WriteString(s[i:])
			break
		}
		text.WriteString(s[i : i+j])
		i += j
		rest := s[i+1:]
		switch {
		case strings.HasPrefix(rest, "!--"):
			emitText()
			end := strings.Index(rest[3:], "-->")
			if end < 0 {
				i = len(s)
			} else {
				i += 1 + 3 + end + 3
			}
			continue
		case strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "?"):
			emitText()
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				i = len(s)
			} else {
				i += 1 + end + 1
			}
			continue
		}
		name, _, closing := tagName(rest)
		if name == "" {
			text.WriteByte('<') // a '<' that starts no tag is text
			i++
			continue
		}
		emitText()
		end := tagEnd(s, i+1)
		attrs := s[i+1 : end]
		i = min(end+1, len(s))
		switch {
		case hiddenElements[name] && !closing && !strings.HasSuffix(attrs, "/"):
			// skip to the element's end tag
			k := indexFold(s[i:], "</"+name)
			if k < 0 {
				i = len(s)
			} else {
				i = min(tagEnd(s, i+k+1)+1, len(s))
			}
		case name == "br":
			lineBreak(min(newlines+1, 2))
		case blockElements[name]:
			lineBreak(1)
			if name == "li" && !closing {
				out.WriteString("- ")
				newlines = 0 // bol stays: the item's text follows without a space
			}
			if name == "p" || name == "blockquote" || len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6' {
				lineBreak(2)
			}
		case name == "td" || name == "th":
			space = true
		case name == "a" && !closing:
			href, linkText = attr(attrs, "href"), out.Len()
		case name == "a" && closing && href != "":
			shown := strings.TrimSpace(out.String()[linkText:])
			addr := strings.TrimPrefix(href, "mailto:")
			if shown != addr && shown != href {
				if !bol {
					out.WriteByte(' ')
				}
				out.WriteString("<" + href + ">")
				bol, newlines = false, 0
			}
			href = ""
		}
	}
	emitText()
	return strings.TrimRight(out.String(), " \n") + "\n"
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isSpace: HTML's white space, and the no-break space (&nbsp;), which
// the text form writes as a space.
func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\u00a0'
}

// tagEnd returns the index of the '>' ending the tag whose name starts at
// s[i], skipping quoted attribute values; len(s) when there is none.
func tagEnd(s string, i int) int {
	var quote byte
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return i
		}
	}
	return len(s)
}

// indexFold is strings.Index ignoring ASCII case of sub (lower case).
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			return -1
		}
		i += j
		if i+len(sub) <= len(s) && strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// attr returns the decoded value of an attribute in a tag's text (after
// '<'), "" when it has none.
func attr(tag, name string) string {
	lower := asciiLower(tag) // byte for byte: offsets hold in tag
	for i := 0; ; {
		k := strings.Index(lower[i:], name)
		if k < 0 {
			return ""
		}
		k += i
		i = k + len(name)
		if k == 0 || !(lower[k-1] == ' ' || lower[k-1] == '\t' || lower[k-1] == '\n' || lower[k-1] == '\r') {
			continue
		}
		rest := strings.TrimLeft(tag[i:], " \t\r\n")
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\r\n")
		var v string
		switch {
		case strings.HasPrefix(rest, `"`) || strings.HasPrefix(rest, `'`):
			end := strings.IndexByte(rest[1:], rest[0])
			if end < 0 {
				v = rest[1:]
			} else {
				v = rest[1 : 1+end]
			}
		default:
			end := strings.IndexAny(rest, " \t\r\n>")
			if end < 0 {
				end = len(rest)
			}
			v = strings.TrimSuffix(rest[:end], "/")
		}
		return html.UnescapeString(v)
	}
}
