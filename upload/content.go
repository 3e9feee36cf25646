package upload

import (
	"github.com/lodge-mail/lodge/upload/inspect"
)

// rejectedError is a file refused for its type: HTTP 403.
type rejectedError struct{ msg string }

func (e *rejectedError) Error() string { return e.msg }

// checkContent checks that a file's first bytes are what its extension says.
func checkContent(name, ext string, head []byte) (string, error) {
	k, err := inspect.CheckType(name, head)
	if err != nil {
		return "", &rejectedError{msg: err.Error()}
	}
	return string(k), nil
}
