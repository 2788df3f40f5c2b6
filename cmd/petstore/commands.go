package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"petstore/db"
)

// osUser is the name of the operating system's user running the command,
// "" when it cannot be told.
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// checkDefaultDatabase guards against running a command in the wrong
// folder: with DATABASE_URL unset the database is var/petstore.db relative
// to the current folder, and opening it where there is none would make a
// new, empty one. Only commands that create a database (serve, migrate) go
// on, with a warning naming the absolute path; the others refuse.
func (r *runner) checkDefaultDatabase(createsDatabase bool) error {
	if r.cfg.DatabaseURL != "" {
		return nil
	}
	path, err := filepath.Abs(db.DefaultSQLitePath)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if createsDatabase {
		r.logger.Warn("DATABASE_URL is unset and there is no database at the default path: creating a new one", "path", path)
		return nil
	}
	return fmt.Errorf("no database at %s (DATABASE_URL is unset, so the default path in the current folder is used): "+
		"run the command in the folder that holds var/petstore.db, or set DATABASE_URL", path)
}

// withStore opens and migrates the database for fn. What fn changes is
// audited as the command line's (SPEC §16), named after the operating
// system's user who ran it.
func withStore(fn func(ctx context.Context, r *runner, s *db.Store, operands []string) error) action {
	return func(ctx context.Context, r *runner, operands []string) error {
		ctx = db.WithOrigin(ctx, db.Origin{Actor: db.CLIActor(osUser())})
		store, err := db.Open(ctx, r.cfg.DatabaseURL, r.now)
		if err != nil {
			return err
		}
		defer store.Close()
		store.Currency = r.cfg.Currency
		store.Secrets = r.cfg.SecretKeys
		if err := store.Migrate(ctx); err != nil {
			return err
		}
		return fn(ctx, r, store, operands)
	}
}

func defineServe(*flag.FlagSet) action {
	return func(ctx context.Context, r *runner, _ []string) error {
		return serve(ctx, r.cfg, r.logger, r.now, r.stdout)
	}
}

func defineMigrate(*flag.FlagSet) action {
	return withStore(func(_ context.Context, r *runner, _ *db.Store, _ []string) error {
		fmt.Fprintln(r.stdout, "migrations applied")
		return nil
	})
}

func defineSeed(*flag.FlagSet) action {
	return withStore(func(ctx context.Context, r *runner, s *db.Store, _ []string) error {
		seeded, err := s.SeedDemo(ctx)
		if err != nil {
			return err
		}
		if !seeded {
			fmt.Fprintln(r.stdout, "the catalog is not empty: nothing seeded (the demo catalog goes only into an empty one)")
			return nil
		}
		fmt.Fprintln(r.stdout, "demo catalog seeded")
		return nil
	})
}

func defineKeysCreate(fs *flag.FlagSet) action {
	name := fs.String("name", "", "the key's name (required)")
	role := fs.String("role", db.RoleCustomer, "customer or staff")
	plan := fs.String("plan", db.PlanFree, "free, pro, business or enterprise")
	perMin := fs.Int64("per-minute", 0, "requests per minute (enterprise plan only, required there)")
	perDay := fs.Int64("per-day", 0, "requests per day (enterprise plan only, required there)")
	return withStore(func(ctx context.Context, r *runner, s *db.Store, _ []string) error {
		in := db.NewAPIKey{Name: name, Role: role, Plan: plan}
		if *perMin != 0 {
			in.PerMinute = perMin
		}
		if *perDay != 0 {
			in.PerDay = perDay
		}
		k, plain, err := s.CreateAPIKey(ctx, in)
		if err != nil {
			return err
		}
		fmt.Fprintf(r.stdout, "issued key %d %q (%s, %s plan: %d/min, %d/day); it is shown only now:\n", k.ID, k.Name, k.Role, k.Plan, k.PerMinute, k.PerDay)
		fmt.Fprintln(r.stdout, plain)
		return nil
	})
}

func defineKeysList(*flag.FlagSet) action {
	return withStore(func(ctx context.Context, r *runner, s *db.Store, _ []string) error {
		var all []*db.APIKey
		page := db.Page{Limit: db.MaxLimit}
		for {
			ks, more, err := s.FindAPIKeys(ctx, page)
			if err != nil {
				return err
			}
			all = append(all, ks...)
			if !more {
				break
			}
			page.AfterID = ks[len(ks)-1].ID
		}
		tw := tabwriter.NewWriter(r.stdout, 0, 4, 2, ' ', 0)
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
	})
}

func defineKeysRevoke(*flag.FlagSet) action {
	return func(ctx context.Context, r *runner, operands []string) error {
		id, err := strconv.ParseInt(operands[0], 10, 64)
		if err != nil || id < 1 {
			return &usageError{msg: "keys revoke: ID must be a positive integer"}
		}
		return withStore(func(ctx context.Context, r *runner, s *db.Store, _ []string) error {
			if err := s.RevokeAPIKey(ctx, id); err != nil {
				return err
			}
			fmt.Fprintf(r.stdout, "key %d revoked\n", id)
			return nil
		})(ctx, r, operands)
	}
}

func defineStaffCreate(fs *flag.FlagSet) action {
	username := fs.String("username", "", "login name (required)")
	role := fs.String("role", db.RoleAdmin, "admin or clerk")
	fromStdin := fs.Bool("password-stdin", false, fmt.Sprintf("read the password (%d to %d characters, not the username) from the first line of standard input", db.MinPasswordLength, db.MaxPasswordLength))
	return func(ctx context.Context, r *runner, operands []string) error {
		password, generated := "", false
		if *fromStdin {
			line, err := bufio.NewReader(r.stdin).ReadString('\n')
			if err != nil && err != io.EOF {
				return fmt.Errorf("read password: %w", err)
			}
			password = strings.TrimRight(line, "\r\n")
			// The console's rule for a password a user chooses (SPEC §16).
			var coded *db.Error
			if err := db.CheckNewPassword(*username, password); errors.As(err, &coded) && len(coded.Details) > 0 {
				return &usageError{msg: "staff create: the password " + coded.Details[0].Message}
			} else if err != nil {
				return err
			}
		} else {
			var err error
			if password, err = generatePassword(); err != nil {
				return err
			}
			generated = true
		}
		if !db.ValidRole(*role) {
			return &usageError{msg: "staff create: --role must be admin or clerk"}
		}
		return withStore(func(ctx context.Context, r *runner, s *db.Store, _ []string) error {
			hash, err := db.HashPassword(password)
			if err != nil {
				return err
			}
			if _, err := s.AddStaffUser(ctx, db.NewStaffUser{Username: *username, Role: *role, PasswordHash: hash}); err != nil {
				return err
			}
			fmt.Fprintf(r.stdout, "staff user %q created\n", strings.TrimSpace(*username))
			if generated {
				fmt.Fprintln(r.stdout, "generated password (shown only now):")
				fmt.Fprintln(r.stdout, password)
			}
			return nil
		})(ctx, r, operands)
	}
}

// createStaff stores an admin with a hash of password (db.HashPassword).
func createStaff(ctx context.Context, store *db.Store, username, password string) (*db.StaffUser, error) {
	hash, err := hashPassword(password)
	if err != nil {
		return nil, err
	}
	return store.CreateStaffUser(ctx, username, hash)
}

// hashPassword is the stored form of a staff password.
func hashPassword(password string) (string, error) { return db.HashPassword(password) }

func generatePassword() (string, error) {
	b := make([]byte, 15)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// describe words a coded error for the terminal, in one line: the store's
// messages are written for API clients ("The request has invalid values."),
// a command names what is wrong: "invalid values: username: is taken",
// "API key 9 not found". It is a usage error (exit 2): the values given
// on the command line were refused. Other errors pass unchanged.
func describe(err error) error {
	e, ok := err.(*db.Error)
	if !ok {
		return err
	}
	msg := strings.TrimSuffix(e.Message, ".")
	if e.Code == db.EValidationFailed {
		msg = "invalid values"
	}
	if len(e.Details) > 0 {
		parts := make([]string, len(e.Details))
		for i, d := range e.Details {
			parts[i] = d.Field + ": " + d.Message
		}
		msg += ": " + strings.Join(parts, "; ")
	}
	return &usageError{msg: msg}
}
