package metadata

import "strings"

// ApplyProfile fills the mailing attributes p leaves unset from defaults
// (a profile, spec 2.1: "an attribute that is not specified takes its
// value from pre-configured or default profiles"). Set fields, even to a
// zero value or an empty string, are kept. production_options is merged
// field by field; attachments are taken only when p has no attachments
// list at all. Letters and the profile name never come from a profile.
// Values are copied: p shares no memory with defaults afterwards.
//
// When defaults.Source names the profile, p remembers it for each
// attribute filled, and the problems Validate finds in those attributes
// carry it (Problem.Source): the client is told the operator's profile is
// at fault, not its own file.
//
// To apply a chain (the named profile, then the account's default
// profile), call ApplyProfile once per profile, most specific first.
func ApplyProfile(p *Pack, defaults Pack) {
	if p == nil {
		return
	}
	from := func(key string, filled bool) {
		if !filled || defaults.Source == "" {
			return
		}
		if p.from == nil {
			p.from = map[string]string{}
		}
		p.from[key] = defaults.Source
	}
	from("duplex", fill(&p.Duplex, defaults.Duplex))
	from("colour_model", fill(&p.ColourModel, defaults.ColourModel))
	from("title", fill(&p.Title, defaults.Title))
	from("customer_email", fill(&p.CustomerEmail, defaults.CustomerEmail))
	from("confirmation_email", fill(&p.ConfirmationEmail, defaults.ConfirmationEmail))
	from("department", fill(&p.Department, defaults.Department))
	from("purchase_order", fill(&p.PurchaseOrder, defaults.PurchaseOrder))
	from("terminal", fill(&p.Terminal, defaults.Terminal))
	from("cust_hold", fill(&p.CustHold, defaults.CustHold))
	from("orientation", fill(&p.Orientation, defaults.Orientation))
	if !p.AttachmentsSet && defaults.AttachmentsSet {
		p.Attachments = append([]string{}, defaults.Attachments...)
		p.AttachmentsSet = true
		from("attachments", true)
	}
	if d := defaults.ProductionOptions; d != nil {
		if p.ProductionOptions == nil {
			p.ProductionOptions = &ProductionOptions{}
		}
		from("production_options.aup_dlvtyp", fill(&p.ProductionOptions.AupDlvtyp, d.AupDlvtyp))
		from("production_options.force_c4", fill(&p.ProductionOptions.ForceC4, d.ForceC4))
		from("production_options.background", fill(&p.ProductionOptions.Background, d.Background))
		from("production_options.background_pages", fill(&p.ProductionOptions.BackgroundPages, d.BackgroundPages))
		from("production_options.cover_sheet", fill(&p.ProductionOptions.CoverSheet, d.CoverSheet))
		from("production_options.stock", fill(&p.ProductionOptions.Stock, d.Stock))
		from("production_options.split_pages", fill(&p.ProductionOptions.SplitPages, d.SplitPages))
		from("production_options.split_marker", fill(&p.ProductionOptions.SplitMarker, d.SplitMarker))
	}
	from("template", fill(&p.Template, defaults.Template))
	from("sms_from", fill(&p.SMSFrom, defaults.SMSFrom))
	from("email_from", fill(&p.EmailFrom, defaults.EmailFrom))
	from("email_subj", fill(&p.EmailSubj, defaults.EmailSubj))
}

// fill sets *dst to a copy of *src when *dst is unset and src is not; it
// reports whether it did.
func fill[T any](dst **T, src *T) bool {
	if *dst == nil && src != nil {
		v := *src
		*dst = &v
		return true
	}
	return false
}

// sourceOf returns the Source of the profile that supplied the attribute
// at path ("attachments[2]", "production_options.force_c4"), or "" when
// it is the metadata file's own.
func (p *Pack) sourceOf(path string) string {
	if p == nil || p.from == nil {
		return ""
	}
	if s, ok := p.from[path]; ok {
		return s
	}
	if i := strings.IndexAny(path, ".["); i >= 0 {
		path = path[:i]
	}
	return p.from[path]
}
