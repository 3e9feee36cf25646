package metadata

// ApplyProfile fills the mailing attributes p leaves unset from defaults
// (a profile, spec 2.1: "an attribute that is not specified takes its
// value from pre-configured or default profiles"). Set fields, even to a
// zero value or an empty string, are kept. production_options is merged
// field by field; attachments are taken only when p has no attachments
// list at all. Letters and the profile name never come from a profile.
// Values are copied: p shares no memory with defaults afterwards.
//
// To apply a chain (the named profile, then the account's default
// profile), call ApplyProfile once per profile, most specific first.
func ApplyProfile(p *Pack, defaults Pack) {
	if p == nil {
		return
	}
	fill(&p.Duplex, defaults.Duplex)
	fill(&p.ColourModel, defaults.ColourModel)
	fill(&p.Title, defaults.Title)
	fill(&p.CustomerEmail, defaults.CustomerEmail)
	fill(&p.ConfirmationEmail, defaults.ConfirmationEmail)
	fill(&p.Department, defaults.Department)
	fill(&p.PurchaseOrder, defaults.PurchaseOrder)
	fill(&p.Terminal, defaults.Terminal)
	fill(&p.CustHold, defaults.CustHold)
	fill(&p.Orientation, defaults.Orientation)
	if !p.AttachmentsSet && defaults.AttachmentsSet {
		p.Attachments = append([]string{}, defaults.Attachments...)
		p.AttachmentsSet = true
	}
	if d := defaults.ProductionOptions; d != nil {
		if p.ProductionOptions == nil {
			p.ProductionOptions = &ProductionOptions{}
		}
		fill(&p.ProductionOptions.AupDlvtyp, d.AupDlvtyp)
		fill(&p.ProductionOptions.ForceC4, d.ForceC4)
	}
	fill(&p.Template, defaults.Template)
	fill(&p.SMSFrom, defaults.SMSFrom)
	fill(&p.EmailFrom, defaults.EmailFrom)
	fill(&p.EmailSubj, defaults.EmailSubj)
}

func fill[T any](dst **T, src *T) {
	if *dst == nil && src != nil {
		v := *src
		*dst = &v
	}
}
