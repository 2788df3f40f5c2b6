package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one command of SPEC §11's table.
type command struct {
	name     string // as typed: "serve", "keys create"
	synopsis string // what follows the name on its usage line
	summary  string
	// operands names the arguments after the flags: the command takes
	// exactly these.
	operands []string
	// createsDatabase: the command may make a new database at the default
	// path (see runner.checkDefaultDatabase).
	createsDatabase bool
	// remote: the command talks to a server, never to a database.
	remote bool
	// interleaved: flags may follow the operands (petstore api GET /pets --all).
	interleaved bool
	// define declares the command's flags on fs and returns its work,
	// which reads them once they are parsed.
	define func(fs *flag.FlagSet) action
}

// action runs a parsed command with its operands.
type action func(ctx context.Context, r *runner, operands []string) error

// commands are every command, in the order the usage lists them.
var commands = []*command{
	{name: "serve", summary: "run the server (the default command)", createsDatabase: true, define: defineServe},
	{name: "migrate", summary: "apply the database migrations and exit", createsDatabase: true, define: defineMigrate},
	{name: "seed", summary: "add the demo categories and pets, only into an empty catalog", define: defineSeed},
	{
		name:     "keys create",
		synopsis: "--name N --role customer|staff --plan free|pro|business|enterprise [--per-minute N --per-day N]",
		summary:  "issue an API key; the plain key alone is the last line of stdout",
		define:   defineKeysCreate,
	},
	{name: "keys list", summary: "list the API keys (never the plain keys)", define: defineKeysList},
	{name: "keys revoke", synopsis: "ID", summary: "revoke an API key", operands: []string{"ID"}, define: defineKeysRevoke},
	{
		name:     "staff create",
		synopsis: "--username U [--role admin|clerk] [--password-stdin]",
		summary:  "create a staff user (an admin unless --role clerk); prints a generated password last unless one comes on stdin",
		define:   defineStaffCreate,
	},
	{
		name:        "api",
		synopsis:    "[--url URL] [--key KEY] METHOD PATH [--data JSON|@file] [--all]",
		summary:     "call any API operation through the Go client (paced, retried); prints the JSON answer; exit 1 on a 4xx, 2 on a 5xx or retries exhausted",
		operands:    []string{"METHOD", "PATH"},
		interleaved: true,
		remote:      true,
		define:      defineAPI,
	},
	{
		name:    "secrets rotate",
		summary: "re-seal every stored secret (webhook, TOTP) under the first key of PETSTORE_SECRET_KEYS; prints how many it re-sealed",
		define:  defineSecretsRotate,
	},
}

// usageFooter ends every usage text.
const usageFooter = `
Every command reads DATABASE_URL: empty means sqlite:var/petstore.db, relative
to the current folder. The other settings are environment variables too:
PETSTORE_ADDR, REDIS_URL, SESSION_KEYS, PETSTORE_SECRET_KEYS, PETSTORE_SUNSET,
PETSTORE_BAN_STRIKES, PETSTORE_BAN_DURATION, TRUSTED_PROXIES, LOG_LEVEL,
PETSTORE_SHOP_MAX_OPEN_UNITS, PETSTORE_CURRENCY, PETSTORE_METRICS_ADDR,
PETSTORE_PPROF_ADDR, PETSTORE_STAFF_2FA, PETSTORE_SMTP_URL, PETSTORE_MAIL_FROM,
PETSTORE_PUBLIC_URL (see README.md). SESSION_KEYS and
PETSTORE_SECRET_KEYS, unset, are generated into var/ (keep it: the secret keys
open the stored webhook and TOTP secrets).
`

// usage lists the commands whose names start with prefix ("" for all).
func usage(prefix string) string {
	var b strings.Builder
	b.WriteString("Usage: petstore [command] [flags]   (no command: serve)\n\nCommands:\n")
	for _, c := range commands {
		if strings.HasPrefix(c.name, prefix) {
			fmt.Fprintf(&b, "  %s\n        %s\n", strings.TrimSpace(c.name+" "+c.synopsis), c.summary)
		}
	}
	b.WriteString("\n'petstore COMMAND --help' shows a command's flags.\n")
	b.WriteString(usageFooter)
	return b.String()
}

// help is one command's usage, its flags included.
func (c *command) help(fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: petstore %s\n\n%s%s.\n", strings.TrimSpace(c.name+" "+c.synopsis), strings.ToUpper(c.summary[:1]), c.summary[1:])
	var flags bytes.Buffer
	fs.SetOutput(&flags)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	if flags.Len() > 0 {
		b.WriteString("\nFlags:\n")
		b.Write(flags.Bytes())
	}
	b.WriteString(usageFooter)
	return b.String()
}

func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// parseArgs finds the command args name and parses its flags and operands.
// Asked for help, it writes the usage to stdout and returns a nil action.
func parseArgs(args []string, stdout io.Writer) (*command, action, []string, error) {
	if len(args) == 0 {
		args = []string{"serve"}
	}
	if isHelp(args[0]) {
		fmt.Fprint(stdout, usage(""))
		return nil, nil, nil, nil
	}
	name, rest := args[0], args[1:]
	if group := name + " "; hasGroup(group) {
		if len(rest) == 0 {
			return nil, nil, nil, &usageError{name + ": give a subcommand", usage(group)}
		}
		if isHelp(rest[0]) {
			fmt.Fprint(stdout, usage(group))
			return nil, nil, nil, nil
		}
		name, rest = group+rest[0], rest[1:]
	}
	c := findCommand(name)
	if c == nil {
		return nil, nil, nil, &usageError{fmt.Sprintf("unknown command %q", name), usage("")}
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the errors and the usage are written by main
	act := c.define(fs)
	var operands []string
	for {
		if err := fs.Parse(rest); errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, c.help(fs))
			return nil, nil, nil, nil
		} else if err != nil {
			return nil, nil, nil, &usageError{c.name + ": " + err.Error(), c.help(fs)}
		}
		if !c.interleaved || fs.NArg() == 0 {
			operands = append(operands, fs.Args()...)
			break
		}
		operands, rest = append(operands, fs.Arg(0)), fs.Args()[1:]
	}
	switch n := len(operands); {
	case n > len(c.operands):
		return nil, nil, nil, &usageError{fmt.Sprintf("%s: unexpected argument %q", c.name, operands[len(c.operands)]), c.help(fs)}
	case n < len(c.operands):
		return nil, nil, nil, &usageError{fmt.Sprintf("%s: give the %s", c.name, c.operands[n]), c.help(fs)}
	}
	return c, act, operands, nil
}

// hasGroup reports whether some command's name starts with group ("keys ").
func hasGroup(group string) bool {
	for _, c := range commands {
		if strings.HasPrefix(c.name, group) {
			return true
		}
	}
	return false
}

func findCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}
