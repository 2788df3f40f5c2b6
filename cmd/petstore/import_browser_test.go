package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestImportBrowser imports a catalog in chromium: the Import page (axe
// clean), a file with problems back on the form listing them (axe clean),
// then a good file: the import's page follows it, polled by htmx, to
// "Imported", without a reload; axe clean there too.
func TestImportBrowser(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	cb.watchConsole()
	cb.signIn()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	bad := write("bad.csv", "name,category,price\nRex,Dogs,1.00\nMax,Dogs,abc\n")
	var b strings.Builder
	b.WriteString("name,category,quantity\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "Imported %d,Imported kind %d,%d\n", i, i%3, i%4)
	}
	good := write("good.csv", b.String())

	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-import"]`)))
	cb.waitJS(`location.pathname === "/staff/import"`)
	wantAxeClean(t, ctx, "import")

	cb.navigate(chromedp.SetUploadFiles(chromedp.CSS(`#import-file`), []string{bad}),
		chromedp.Click(chromedp.CSS(`[data-testid="import-submit"]`)))
	cb.waitText(`[data-testid="error-summary"]`, "row 3: price")
	cb.wantSummaryFocused("the refused file", "import-errors", "row 3: price")
	wantAxeClean(t, ctx, "import refused")
	screenshot(t, ctx, "console-import-refused")

	cb.navigate(chromedp.SetUploadFiles(chromedp.CSS(`#import-file`), []string{good}),
		chromedp.Click(chromedp.CSS(`[data-testid="import-submit"]`)))
	cb.waitJS(`location.pathname.startsWith("/staff/imports/")`)
	cb.markPage()
	// The import is a job on the queue: 2,000 rows took over 10 s under
	// -race beside the rest of the suite in CI.
	cb.waitJSWithin(textIncludes(`[data-testid="import-done"]`, "Imported 2,000 pets"), time.Minute)
	cb.wantSamePage()
	wantAxeClean(t, ctx, "import done")
	screenshot(t, ctx, "console-import-done")
	cb.wantQuietConsole()
}
