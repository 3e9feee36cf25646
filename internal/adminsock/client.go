package adminsock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"
)

// Client calls operations on an admin socket, one connection per call.
// The zero value but Path means the documented defaults.
type Client struct {
	Path string
	// Kinds turn the errors of the operations called back into errors
	// wrapping their sentinels (the kinds the server registered them
	// with).
	Kinds       []Kind
	Timeout     time.Duration // a call's time, connecting included (default 15 s)
	MaxResponse int           // bytes of an answer line (default 64 MiB)
}

// Error is an error the server answered: its text, wrapping the sentinel
// of its kind (ErrBadRequest, ErrDenied or one of Client.Kinds; none for
// internal errors), so that errors.Is works as with the store itself.
type Error struct {
	Op   string
	Kind string
	Msg  string
	err  error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.err }

// Dial returns a client of the admin socket at path after checking with
// ping that a server of this protocol answers there; ping's answer says
// which operations it serves.
func Dial(path string, kinds ...Kind) (*Client, Ping, error) {
	c := &Client{Path: path, Kinds: kinds}
	var p Ping
	if err := c.Call("ping", nil, &p); err != nil {
		return nil, Ping{}, err
	}
	if p.Protocol != Protocol {
		return nil, Ping{}, fmt.Errorf("admin socket %s: the server speaks protocol %d, this lodge %d", path, p.Protocol, Protocol)
	}
	return c, p, nil
}

// Serves reports whether a ping's server serves every operation of ops.
func (p Ping) Serves(ops ...string) bool {
	for _, op := range ops {
		if !slices.Contains(p.Ops, op) {
			return false
		}
	}
	return true
}

// Call sends op with args (marshalled to a JSON object; nil for none) and
// decodes the result into result (nil to drop it). An error the server
// answered is an *Error.
func (c *Client) Call(op string, args, result any) error {
	req := Request{Op: op}
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return err
		}
		req.Args = b
	}
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultClientTimeout
	}
	max := c.MaxResponse
	if max <= 0 {
		max = DefaultMaxResponse
	}
	conn, err := net.DialTimeout("unix", c.Path, timeout)
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("admin socket %s: %s: %w", c.Path, op, err)
	}
	line, err = readLine(conn, max)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("admin socket %s: %s: %w", c.Path, op, err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("admin socket %s: %s: bad answer: %w", c.Path, op, err)
	}
	if !resp.OK {
		e := &Error{Op: op, Kind: resp.Kind, Msg: resp.Error}
		if e.Msg == "" {
			e.Msg = "admin socket: " + op + " failed"
		}
		switch resp.Kind {
		case KindBadRequest:
			e.err = ErrBadRequest
		case KindDenied:
			e.err = ErrDenied
		}
		for _, k := range c.Kinds {
			if k.Name == resp.Kind {
				e.err = k.Err
				break
			}
		}
		return e
	}
	if result != nil && resp.Result != nil {
		if err := json.Unmarshal(resp.Result, result); err != nil {
			return fmt.Errorf("admin socket %s: %s: bad result: %w", c.Path, op, err)
		}
	}
	return nil
}

// IsServerError reports whether err is an answer of the server (rather
// than a failure to reach it).
func IsServerError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
