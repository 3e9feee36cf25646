// The account, user and key commands: they manage the auth store
// (<data-dir>/auth). pebble lets one process open the store at a time, so
// while lodge serve holds it they go through its admin socket
// (<data-dir>/admin.sock); auth.OpenAdmin picks.

package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
)

const accountUsage = `usage:
  lodge account add CODE [-name NAME]   add an account (codes look like ABC12345)
  lodge account list                    list accounts
  lodge account disable|enable CODE     stop or restart every key and user of an account
  lodge account sender add|remove CODE -email DOMAIN | -sms NAME
                                        approve (or withdraw) an email_from domain or an
                                        alphanumeric sms_from name for the account
  lodge account sender list CODE        the account's approved senders
Every command takes -data-dir (default lodge-data).
`

const userUsage = `usage:
  lodge user add -account CODE [-operator] [-password-stdin] NAME
                                                        add a user (asks for the password);
                                                        -operator: with the operator role
  lodge user passwd [-password-stdin] NAME              set a user's password
  lodge user role NAME customer|operator                set a user's role (operators see every
                                                        account's print batches in the portal)
  lodge user disable|enable NAME                        stop or restart a user
  lodge user list [-account CODE]                       list users
The password is read from the terminal without echo, or as one line from
stdin when stdin is not a terminal or with -password-stdin.
Every command takes -data-dir (default lodge-data).
`

const keyUsage = `usage:
  lodge key create -account CODE [-label LABEL]   make an API key; its secret is shown once
  lodge key list [-account CODE]                  list keys (never their secrets)
  lodge key revoke ID                             revoke a key at once
Every command takes -data-dir (default lodge-data).
`

// authCommand is one invocation of an account, user or key subcommand.
type authCommand struct {
	fs      *flag.FlagSet
	dataDir string
	dbURL   string   // -db: the shared database of several nodes
	args    []string // positional arguments
}

// newAuthCommand makes the flag set of "lodge <group> <sub>"; register adds
// the subcommand's own flags.
func newAuthCommand(group, sub, usage string, register func(fs *flag.FlagSet)) *authCommand {
	c := &authCommand{fs: flag.NewFlagSet(group+" "+sub, flag.ContinueOnError)}
	c.fs.StringVar(&c.dataDir, "data-dir", "lodge-data", "directory holding the index and other state; accounts live in its auth folder")
	c.fs.StringVar(&c.dbURL, "db", "", "the PostgreSQL database nodes share (as lodge serve -db): accounts live there, not in -data-dir")
	if register != nil {
		register(c.fs)
	}
	c.fs.Usage = func() {
		fmt.Fprint(c.fs.Output(), usage+"\nflags of "+group+" "+sub+":\n")
		c.fs.PrintDefaults()
	}
	return c
}

// parse parses args, allowing flags after positional arguments
// ("account add ABC12345 -name Acme"); "--" ends the flags.
func (c *authCommand) parse(args []string, positional int) error {
	for {
		if err := c.fs.Parse(args); err != nil {
			return err
		}
		rest := c.fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			c.args = append(c.args, rest...)
			break
		}
		c.args = append(c.args, rest[0])
		args = rest[1:]
	}
	if len(c.args) != positional {
		c.fs.Usage()
		return fmt.Errorf("%s: want %d argument(s), got %q", c.fs.Name(), positional, c.args)
	}
	return nil
}

// open opens the auth store, or the admin socket of the lodge serve that
// holds it; done closes what was opened. For listing, a store that does
// not exist is reported as nil rather than made.
func (c *authCommand) open(create bool) (s auth.Admin, done func() error, err error) {
	if c.dbURL != "" {
		// several nodes' accounts: the database is the one store, and
		// every node learns of a change by its notification
		ctx := context.Background()
		db, err := pgdb.Open(ctx, pgdb.Config{URL: c.dbURL})
		if err != nil {
			return nil, nil, fmt.Errorf("-db: %w", err)
		}
		st, err := auth.OpenPostgres(ctx, db, auth.PostgresConfig{})
		if err != nil {
			db.Close()
			return nil, nil, err
		}
		return st, func() error { err := st.Close(); db.Close(); return err }, nil
	}
	if !create {
		if _, err := os.Stat(filepath.Join(c.dataDir, "auth")); errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil
		}
	}
	return auth.OpenAdmin(c.dataDir)
}

func runAccount(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, accountUsage)
		return errors.New("account: missing subcommand")
	}
	switch sub := args[0]; sub {
	case "add":
		var name string
		c := newAuthCommand("account", sub, accountUsage, func(fs *flag.FlagSet) {
			fs.StringVar(&name, "name", "", "the account's name, e.g. the company")
		})
		if err := c.parse(args[1:], 1); err != nil {
			return err
		}
		s, done, err := c.open(true)
		if err != nil {
			return err
		}
		defer done()
		a, err := s.AddAccount(c.args[0], name)
		if err != nil {
			return err
		}
		fmt.Printf("added account %s %q\n", a.Code, a.Name)
		return nil
	case "list":
		c := newAuthCommand("account", sub, accountUsage, nil)
		if err := c.parse(args[1:], 0); err != nil {
			return err
		}
		s, done, err := c.open(false)
		if err != nil || s == nil {
			if err == nil {
				fmt.Fprintln(os.Stderr, "no accounts yet")
			}
			return err
		}
		defer done()
		accts, err := s.Accounts()
		if err != nil {
			return err
		}
		if len(accts) == 0 {
			fmt.Fprintln(os.Stderr, "no accounts yet")
			return nil
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
		fmt.Fprintln(w, "CODE\tNAME\tSTATUS\tCREATED")
		for _, a := range accts {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", a.Code, a.Name, status(a.Disabled), when(a.Created))
		}
		return w.Flush()
	case "sender":
		return runSender(args[1:])
	case "disable", "enable":
		c := newAuthCommand("account", sub, accountUsage, nil)
		if err := c.parse(args[1:], 1); err != nil {
			return err
		}
		s, done, err := c.open(true)
		if err != nil {
			return err
		}
		defer done()
		if sub == "disable" {
			err = s.DisableAccount(c.args[0])
		} else {
			err = s.EnableAccount(c.args[0])
		}
		if err != nil {
			return err
		}
		fmt.Printf("account %s %sd\n", auth.NormalizeAccountCode(c.args[0]), sub)
		return nil
	case "-h", "--help", "help":
		fmt.Print(accountUsage)
		return nil
	}
	fmt.Fprint(os.Stderr, accountUsage)
	return fmt.Errorf("account: unknown subcommand %q", args[0])
}

func runUser(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, userUsage)
		return errors.New("user: missing subcommand")
	}
	switch sub := args[0]; sub {
	case "add", "passwd":
		var account string
		var fromStdin, operator bool
		c := newAuthCommand("user", sub, userUsage, func(fs *flag.FlagSet) {
			if sub == "add" {
				fs.StringVar(&account, "account", "", "the account the user belongs to (required)")
				fs.BoolVar(&operator, "operator", false, "give the user the operator role (the portal's print room pages, every account's batches)")
			}
			fs.BoolVar(&fromStdin, "password-stdin", false, "read the password as one line from stdin")
		})
		if err := c.parse(args[1:], 1); err != nil {
			return err
		}
		name := c.args[0]
		if sub == "add" && account == "" {
			c.fs.Usage()
			return errors.New("user add: -account is required")
		}
		if sub == "add" && !auth.ValidUserName(name) {
			return fmt.Errorf("user name %q: want 1 to 64 of A-Z a-z 0-9 . _ @ -", name)
		}
		s, done, err := c.open(true)
		if err != nil {
			return err
		}
		defer done()
		// Say what is wrong before asking for a password.
		if sub == "add" {
			if _, err := s.Account(account); err != nil {
				return err
			}
			if _, err := s.User(name); err == nil {
				return fmt.Errorf("user %s: %w", name, auth.ErrExists)
			}
		} else if _, err := s.User(name); err != nil {
			return err
		}
		pw, err := readPassword(name, fromStdin)
		if err != nil {
			return err
		}
		if sub == "add" {
			u, err := s.AddUser(account, name, pw)
			if err != nil {
				return err
			}
			if operator {
				// a second write: should it fail, the user is a
				// customer, the role with less access
				if err := s.SetRole(name, auth.RoleOperator); err != nil {
					return fmt.Errorf("user %s was added as a customer; its operator role was not set: %w", name, err)
				}
				u.Role = auth.RoleOperator
			}
			fmt.Printf("added user %s to account %s as %s\n", u.Name, u.Account, u.Role)
			return nil
		}
		if err := s.SetPassword(name, pw); err != nil {
			return err
		}
		fmt.Printf("password of %s changed\n", name)
		return nil
	case "role":
		c := newAuthCommand("user", sub, userUsage, nil)
		if err := c.parse(args[1:], 2); err != nil {
			return err
		}
		if err := auth.CheckRole(c.args[1]); err != nil {
			c.fs.Usage()
			return err
		}
		s, done, err := c.open(true)
		if err != nil {
			return err
		}
		defer done()
		if err := s.SetRole(c.args[0], c.args[1]); err != nil {
			return err
		}
		fmt.Printf("user %s is now %s\n", c.args[0], c.args[1])
		return nil
	case "disable", "enable":
		c := newAuthCommand("user", sub, userUsage, nil)
		if err := c.parse(args[1:], 1); err != nil {
			return err
		}
		s, done, err := c.open(true)
		if err != nil {
			return err
		}
		defer done()
		if sub == "disable" {
			err = s.DisableUser(c.args[0])
		} else {
			err = s.EnableUser(c.args[0])
		}
		if err != nil {
			return err
		}
		fmt.Printf("user %s %sd\n", c.args[0], sub)
		return nil
	case "list":
		var account string
		c := newAuthCommand("user", sub, userUsage, func(fs *flag.FlagSet) {
			fs.StringVar(&account, "account", "", "only this account's users")
		})
		if err := c.parse(args[1:], 0); err != nil {
			return err
		}
		s, done, err := c.open(false)
		if err != nil || s == nil {
			if err == nil {
				fmt.Fprintln(os.Stderr, "no users")
			}
			return err
		}
		defer done()
		users, err := s.Users(account)
		if err != nil {
			return err
		}
		if len(users) == 0 {
			fmt.Fprintln(os.Stderr, "no users")
			return nil
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tACCOUNT\tROLE\tSTATUS\tCREATED\tPASSWORD SET")
		for _, u := range users {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", u.Name, u.Account, u.Role, status(u.Disabled), when(u.Created), when(u.PasswordSet))
		}
		return w.Flush()
	case "-h", "--help", "help":
		fmt.Print(userUsage)
		return nil
	}
	fmt.Fprint(os.Stderr, userUsage)
	return fmt.Errorf("user: unknown subcommand %q", args[0])
}

func runKey(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, keyUsage)
		return errors.New("key: missing subcommand")
	}
	switch sub := args[0]; sub {
	case "create":
		var account, label string
		c := newAuthCommand("key", sub, keyUsage, func(fs *flag.FlagSet) {
			fs.StringVar(&account, "account", "", "the account the key acts for (required)")
			fs.StringVar(&label, "label", "", "a note saying what the key is for")
		})
		if err := c.parse(args[1:], 0); err != nil {
			return err
		}
		if account == "" {
			c.fs.Usage()
			return errors.New("key create: -account is required")
		}
		s, done, err := c.open(true)
		if err != nil {
			return err
		}
		defer done()
		secret, k, err := s.CreateKey(account, label)
		if err != nil {
			return err
		}
		// The secret alone goes to stdout, so KEY=$(lodge key create ...) works.
		fmt.Fprintf(os.Stderr, "API key %s for account %s:\n", k.ID, k.Account)
		fmt.Println(secret)
		fmt.Fprintf(os.Stderr, "Store it now: it cannot be shown again (lodge keeps only a hash of it).\n"+
			"Send it as the header  Authorization: Bearer <key>.  Revoke it with: lodge key revoke %s\n", k.ID)
		return nil
	case "list":
		var account string
		c := newAuthCommand("key", sub, keyUsage, func(fs *flag.FlagSet) {
			fs.StringVar(&account, "account", "", "only this account's keys")
		})
		if err := c.parse(args[1:], 0); err != nil {
			return err
		}
		s, done, err := c.open(false)
		if err != nil || s == nil {
			if err == nil {
				fmt.Fprintln(os.Stderr, "no keys")
			}
			return err
		}
		defer done()
		keys, err := s.Keys(account)
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			fmt.Fprintln(os.Stderr, "no keys")
			return nil
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tACCOUNT\tLABEL\tSTATUS\tCREATED")
		for _, k := range keys {
			st := "active"
			if k.IsRevoked() {
				st = "revoked " + when(k.Revoked)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Account, k.Label, st, when(k.Created))
		}
		return w.Flush()
	case "revoke":
		c := newAuthCommand("key", sub, keyUsage, nil)
		if err := c.parse(args[1:], 1); err != nil {
			return err
		}
		s, done, err := c.open(true)
		if err != nil {
			return err
		}
		defer done()
		if err := s.RevokeKey(c.args[0]); err != nil {
			return err
		}
		fmt.Printf("key %s revoked\n", strings.ToLower(c.args[0]))
		return nil
	case "-h", "--help", "help":
		fmt.Print(keyUsage)
		return nil
	}
	fmt.Fprint(os.Stderr, keyUsage)
	return fmt.Errorf("key: unknown subcommand %q", args[0])
}

// readPassword asks for a password on the terminal, twice and without
// echo, or reads one line of stdin when it is not a terminal or fromStdin.
func readPassword(user string, fromStdin bool) (string, error) {
	fd := int(os.Stdin.Fd())
	if !fromStdin && term.IsTerminal(fd) {
		fmt.Fprintf(os.Stderr, "Password for %s: ", user)
		p1, err := term.ReadPassword(fd)
		fmt.Fprintln(os.Stderr)
		if err != nil {
			return "", err
		}
		if err := auth.CheckPassword(string(p1)); err != nil {
			return "", err
		}
		fmt.Fprint(os.Stderr, "Repeat it: ")
		p2, err := term.ReadPassword(fd)
		fmt.Fprintln(os.Stderr)
		if err != nil {
			return "", err
		}
		if string(p1) != string(p2) {
			return "", errors.New("the passwords differ")
		}
		return string(p1), nil
	}
	line, err := bufio.NewReader(io.LimitReader(os.Stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	if errors.Is(err, io.EOF) && line == "" {
		return "", errors.New("no password on stdin")
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	return line, auth.CheckPassword(line)
}

func status(disabled bool) string {
	if disabled {
		return "disabled"
	}
	return "active"
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// runSender is "lodge account sender": the account's approved senders,
// kept in its settings file (<data-dir>/accounts/<CODE>.json, or with -db
// the shared database's accounts/<CODE>.json), which the server reads at
// each end_session: no restart, no admin socket needed.
func runSender(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, accountUsage)
		return errors.New("account sender: missing add, remove or list")
	}
	sub := args[0]
	var domain, name string
	c := newAuthCommand("account sender", sub, accountUsage, func(fs *flag.FlagSet) {
		if sub != "list" {
			fs.StringVar(&domain, "email", "", "an email_from domain, e.g. example.com.au")
			fs.StringVar(&name, "sms", "", "an alphanumeric sms_from name, 1 to 10 characters")
		}
	})
	if err := c.parse(args[1:], 1); err != nil {
		return err
	}
	settings := pipeline.AccountSettings{Dir: filepath.Join(c.dataDir, "accounts")}
	if c.dbURL != "" { // several nodes: the settings are the shared database's
		files, done, err := openSettingsFiles(context.Background(), c.dbURL, "")
		if err != nil {
			return err
		}
		defer done()
		settings = pipeline.AccountSettings{Files: datafiles.Sub(files, "accounts")}
	}
	account := c.args[0]
	var s pipeline.Senders
	var err error
	switch sub {
	case "list":
		s, err = settings.Senders(account)
	case "add", "remove":
		if (domain == "") == (name == "") {
			return errors.New("account sender " + sub + ": give -email DOMAIN or -sms NAME")
		}
		s, err = settings.EditSenders(account, func(s *pipeline.Senders) error {
			list, v := &s.EmailDomains, strings.ToLower(strings.TrimSpace(domain))
			if name != "" {
				list, v = &s.SMSNames, strings.TrimSpace(name)
				if why := pipeline.CheckSMSName(v); why != "" {
					return errors.New(why)
				}
			} else if why := pipeline.CheckEmailDomain(v); why != "" {
				return errors.New(why)
			}
			*list = slices.DeleteFunc(*list, func(x string) bool { return x == v })
			if sub == "add" {
				*list = append(*list, v)
				slices.Sort(*list)
			}
			return nil
		})
	default:
		fmt.Fprint(os.Stderr, accountUsage)
		return fmt.Errorf("account sender: unknown subcommand %q", sub)
	}
	if err != nil {
		return err
	}
	fmt.Printf("account %s: email_from domains %s; sms_from names %s\n", account, listOrNone(s.EmailDomains), listOrNone(s.SMSNames))
	return nil
}

func listOrNone(v []string) string {
	if len(v) == 0 {
		return "(none)"
	}
	return strings.Join(v, ", ")
}
