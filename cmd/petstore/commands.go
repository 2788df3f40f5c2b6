package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/crypto/bcrypt"

	"petstore/db"
)

// storeCmd runs a command against the migrated database.
type storeCmd struct {
	store *db.Store
}

func withStore(ctx context.Context, cfg *Config, now func() time.Time, fn func(*storeCmd) error) error {
	store, err := db.Open(ctx, cfg.DatabaseURL, now)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	return fn(&storeCmd{store: store})
}

func (s *storeCmd) seed(ctx context.Context, stdout io.Writer) error {
	seeded, err := s.store.SeedDemo(ctx)
	if err != nil {
		return err
	}
	if !seeded {
		fmt.Fprintln(stdout, "the catalog is not empty: nothing seeded (the demo catalog goes only into an empty one)")
		return nil
	}
	fmt.Fprintln(stdout, "demo catalog seeded")
	return nil
}

func (s *storeCmd) keys(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageError("keys: give create, list or revoke")
	}
	switch args[0] {
	case "create":
		fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		name := fs.String("name", "", "key name")
		role := fs.String("role", db.RoleCustomer, "customer or staff")
		plan := fs.String("plan", db.PlanFree, "free, pro, business or enterprise")
		perMin := fs.Int64("per-minute", 0, "enterprise: requests per minute")
		perDay := fs.Int64("per-day", 0, "enterprise: requests per day")
		if err := fs.Parse(args[1:]); err != nil {
			return usageError("keys create: " + err.Error())
		}
		in := db.NewAPIKey{Name: name, Role: role, Plan: plan}
		if *perMin != 0 {
			in.PerMinute = perMin
		}
		if *perDay != 0 {
			in.PerDay = perDay
		}
		k, plain, err := s.store.CreateAPIKey(ctx, in)
		if err != nil {
			return describe(err)
		}
		fmt.Fprintf(stdout, "issued key %d %q (%s, %s plan: %d/min, %d/day); it is shown only now:\n", k.ID, k.Name, k.Role, k.Plan, k.PerMinute, k.PerDay)
		fmt.Fprintln(stdout, plain)
		return nil
	case "list":
		var all []*db.APIKey
		page := db.Page{Limit: db.MaxLimit}
		for {
			ks, more, err := s.store.FindAPIKeys(ctx, page)
			if err != nil {
				return err
			}
			all = append(all, ks...)
			if !more {
				break
			}
			page.AfterID = ks[len(ks)-1].ID
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPREFIX\tNAME\tROLE\tPLAN\tPER MIN\tPER DAY\tCREATED\tSTATE")
		for _, k := range all {
			state := "active"
			if k.RevokedAt != nil {
				state = "revoked " + k.RevokedAt.Format(time.RFC3339)
			} else if k.BannedUntil != nil {
				state = "banned until " + k.BannedUntil.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%d\t%s…\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", k.ID, k.Prefix, k.Name, k.Role, k.Plan, k.PerMinute, k.PerDay,
				k.CreatedAt.Format(time.RFC3339), state)
		}
		return tw.Flush()
	case "revoke":
		if len(args) != 2 {
			return usageError("keys revoke: give the key's ID")
		}
		id, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || id < 1 {
			return usageError("keys revoke: ID must be a positive integer")
		}
		if err := s.store.RevokeAPIKey(ctx, id); err != nil {
			return describe(err)
		}
		fmt.Fprintf(stdout, "key %d revoked\n", id)
		return nil
	}
	return usageError("keys: unknown subcommand " + strconv.Quote(args[0]))
}

func (s *storeCmd) staff(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return usageError("staff: give create --username U [--password-stdin]")
	}
	fs := flag.NewFlagSet("staff create", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	username := fs.String("username", "", "login name")
	fromStdin := fs.Bool("password-stdin", false, "read the password from standard input")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError("staff create: " + err.Error())
	}
	password, generated := "", false
	if *fromStdin {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("read password: %w", err)
		}
		password = strings.TrimRight(line, "\r\n")
		if len(password) < 8 || len(password) > 72 {
			return usageError("staff create: the password must be 8 to 72 bytes")
		}
	} else {
		var err error
		if password, err = generatePassword(); err != nil {
			return err
		}
		generated = true
	}
	if _, err := createStaff(ctx, s.store, *username, password); err != nil {
		return describe(err)
	}
	fmt.Fprintf(stdout, "staff user %q created\n", strings.TrimSpace(*username))
	if generated {
		fmt.Fprintln(stdout, "generated password (shown only now):")
		fmt.Fprintln(stdout, password)
	}
	return nil
}

// createStaff stores a staff user with a bcrypt hash of password.
func createStaff(ctx context.Context, store *db.Store, username, password string) (*db.StaffUser, error) {
	hash, err := hashPassword(password)
	if err != nil {
		return nil, err
	}
	return store.CreateStaffUser(ctx, username, hash)
}

// hashPassword is the stored form of a staff password.
func hashPassword(password string) (string, error) {
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(hash), nil
}

func generatePassword() (string, error) {
	b := make([]byte, 15)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// describe turns a coded error into one readable line for the terminal.
func describe(err error) error {
	e, ok := err.(*db.Error)
	if !ok {
		return err
	}
	var b strings.Builder
	b.WriteString(e.Message)
	for _, d := range e.Details {
		fmt.Fprintf(&b, " %s %s;", d.Field, d.Message)
	}
	return usageError(strings.TrimSuffix(b.String(), ";"))
}
