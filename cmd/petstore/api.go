package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"strings"

	"petstore/web/client"
)

// apiTransport makes the transport `petstore api` sends through; tests
// replace it to wait on the server's clock instead of the wall's.
var apiTransport = func(url string) *client.Transport { return &client.Transport{} }

// defineAPI is `petstore api` (SPEC §20): any operation from the shell
// through the Go client, so it paces itself, waits out 429s, retries 503s
// and keys every POST like a program using the client does.
func defineAPI(fs *flag.FlagSet) action {
	url := fs.String("url", "", "the store's address (default $PETSTORE_URL, else http://localhost:8080)")
	key := fs.String("key", "", "the API key (default $PETSTORE_API_KEY)")
	data := fs.String("data", "", "the JSON body, or @file to read it from a file (@- for stdin)")
	all := fs.Bool("all", false, "follow the cursors of a list and print every page as one JSON array")
	return func(ctx context.Context, r *runner, operands []string) error {
		if *url == "" {
			*url = r.getenv("PETSTORE_URL")
		}
		if *url == "" {
			*url = "http://localhost:8080"
		}
		if *key == "" {
			*key = r.getenv("PETSTORE_API_KEY")
		}
		method, path := strings.ToUpper(operands[0]), operands[1]
		var body []byte
		switch {
		case strings.HasPrefix(*data, "@-"):
			b, err := io.ReadAll(r.stdin)
			if err != nil {
				return err
			}
			body = b
		case strings.HasPrefix(*data, "@"):
			b, err := os.ReadFile((*data)[1:])
			if err != nil {
				return &usageError{msg: "api: --data: " + err.Error()}
			}
			body = b
		case *data != "":
			body = []byte(*data)
		}
		if body != nil && !json.Valid(body) {
			return &usageError{msg: "api: --data is not JSON"}
		}
		if *all && method != http.MethodGet {
			return &usageError{msg: "api: --all follows the pages of a GET"}
		}
		c, err := client.New(client.Config{URL: *url, Key: *key, Transport: apiTransport(*url)})
		if err != nil {
			return &usageError{msg: "api: " + err.Error()}
		}
		if *all {
			items := []json.RawMessage{}
			for it, err := range c.Items(ctx, path) {
				if err != nil {
					return apiFailure(err)
				}
				items = append(items, it)
			}
			out, err := json.Marshal(items)
			if err != nil {
				return err
			}
			return printJSON(r.stdout, out)
		}
		a, err := c.Do(ctx, method, path, body)
		if err != nil {
			return apiFailure(err)
		}
		return printJSON(r.stdout, a.Body)
	}
}

// printJSON writes an answer indented, or nothing for an empty body (204).
func printJSON(w io.Writer, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Indent(&b, body, "", "  ") != nil {
		b.Reset()
		b.Write(body)
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// apiExit is `petstore api`'s failure: what goes to stderr and the exit
// status of SPEC §20 (1 for a 4xx, 2 for a 5xx or retries exhausted).
type apiExit struct {
	stderr []byte
	code   int
}

func (e *apiExit) Error() string { return strings.TrimSpace(string(e.stderr)) }

func apiFailure(err error) error {
	var ce *client.Error
	if !errors.As(err, &ce) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return &apiExit{stderr: []byte("petstore: " + err.Error() + "\n"), code: 2}
	}
	out, _ := json.MarshalIndent(ce, "", "  ")
	code := 1
	// A 429 reaching the command is one the transport could not wait out.
	if ce.Status >= 500 || ce.Status == http.StatusTooManyRequests {
		code = 2
	}
	return &apiExit{stderr: append(out, '\n'), code: code}
}
