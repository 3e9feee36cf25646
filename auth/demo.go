package auth

import (
	"errors"
	"fmt"
)

// The demo account lodge serve -demo makes.
const (
	DemoAccount     = "DEM00001"
	DemoAccountName = "Demo account"
	DemoKeyLabel    = "demo"
)

// Demo makes sure the demo account exists (adding it if needed) and
// creates a new API key labelled "demo" for it, returning the account code
// and the key's secret. Keys made by earlier calls stay valid until
// revoked. A disabled demo account is an error: its key would not work.
func Demo(s *Store) (account string, secret string, err error) {
	if _, err := s.AddAccount(DemoAccount, DemoAccountName); err != nil && !errors.Is(err, ErrExists) {
		return "", "", err
	}
	if a, err := s.Account(DemoAccount); err != nil {
		return "", "", err
	} else if a.Disabled {
		return "", "", fmt.Errorf("demo account %s is disabled (lodge account enable %s)", DemoAccount, DemoAccount)
	}
	secret, _, err = s.CreateKey(DemoAccount, DemoKeyLabel)
	if err != nil {
		return "", "", err
	}
	return DemoAccount, secret, nil
}
