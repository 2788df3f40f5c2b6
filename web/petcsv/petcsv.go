// Package petcsv reads the CSV file of a catalog import (SPEC §18): RFC
// 4180, UTF-8 (a byte order mark is skipped), CRLF or LF, a header row
// naming the columns in any order, one pet a row. Each row is checked by
// the store's own rules (db.CatalogRow.Validate, which reuses POST /pets'
// NewPet.Validate), so a file is refused for exactly what the API would
// refuse. The file is read as a stream, one record at a time.
package petcsv

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"petstore/db"
)

// Column names of the file: the API's field names of a pet, its category by
// name, and its stock.
const (
	ColName        = "name"
	ColCategory    = "category"
	ColStatus      = "status"
	ColPrice       = "price"
	ColBreed       = "breed"
	ColBirthDate   = "birthDate"
	ColDescription = "description"
	ColQuantity    = "quantity"
)

// Columns are the columns a file may have; name and category are required.
var Columns = []string{ColName, ColCategory, ColStatus, ColPrice, ColBreed, ColBirthDate, ColDescription, ColQuantity}

// MaxProblems is how many problems a refusal lists; reading stops there,
// and no problem past it is kept.
const MaxProblems = 100

// Bounds of a file's rows: encoding/csv holds a whole record, and each of
// its cells, in memory, so a header (or a row) of a mebibyte of commas
// would take a million cells, and a problem for each. A pet's row, its
// description of 2,000 characters quoted included, takes a fraction of
// MaxRecordBytes; the header names at most the 8 columns.
const (
	// MaxRecordBytes is the longest a row may be, the header included
	// (line breaks within quotes belong to the row).
	MaxRecordBytes = 64 << 10
	// MaxColumns is the most cells the header may have.
	MaxColumns = 64
)

// HeaderRow is the row number of the header: rows are numbered as a
// spreadsheet shows them, the header being row 1 and the first pet row 2
// (a cell holding line breaks does not start a new row; blank lines are
// skipped and not counted).
const HeaderRow = 1

var bom = []byte{0xEF, 0xBB, 0xBF}

// Read reads a catalog file from r and checks every row against today (the
// store's date: no birth date after it). While the file has no problem,
// each row goes to emit as soon as it is read (an error from emit stops
// the reading and is returned). It returns the number of pet rows, or a
// validation_failed db.Error listing the file's first MaxProblems problems,
// each {field: "row N: column", message}; or the header's ("row 1: …"), or
// the whole file's (field "file": empty, no pet rows, more than
// db.MaxImportRows rows).
func Read(r io.Reader, today time.Time, emit func(*db.CatalogRow) error) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if head, err := br.Peek(len(bom)); err == nil && bytes.Equal(head, bom) {
		_, _ = br.Discard(len(bom))
	}
	cr := csv.NewReader(&recordLimit{r: br})
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return 0, fileProblem("is empty: its first row must name the columns (%s)", strings.Join(Columns, ", "))
	}
	if errors.Is(err, errLongRecord) || errors.Is(err, errWideRecord) {
		what := fmt.Sprintf("is longer than %d KiB", MaxRecordBytes>>10)
		if errors.Is(err, errWideRecord) {
			what = fmt.Sprintf("has more than %d cells", MaxColumns)
		}
		return 0, problems(db.Problems{{Field: rowField(HeaderRow, ""),
			Message: fmt.Sprintf("%s: the header names the columns (%s)", what, strings.Join(Columns, ", "))}})
	}
	if err != nil && !errors.As(err, new(*csv.ParseError)) {
		return 0, err
	}
	if err != nil {
		return 0, problems(db.Problems{parseProblem(HeaderRow, err)})
	}
	index, pr := readHeader(header)
	if len(pr) > 0 {
		return 0, problems(pr)
	}
	var rows int64
	for len(pr) < MaxProblems {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		row := HeaderRow + 1 + rows
		rows++
		if rows > db.MaxImportRows {
			return 0, fileProblem("has more than %d rows of pets, the most one import takes", db.MaxImportRows)
		}
		if errors.Is(err, errLongRecord) {
			add(&pr, rowField(row, ""), "is longer than %d KiB, more than any pet's row can be", MaxRecordBytes>>10)
			break // the rest of the file is not read
		}
		if errors.Is(err, errWideRecord) {
			add(&pr, rowField(row, ""), "has more than %d cells where the header has %d", MaxColumns, len(header))
			break
		}
		if err != nil && !errors.Is(err, csv.ErrFieldCount) {
			if !errors.As(err, new(*csv.ParseError)) {
				return 0, err // the reading failed, not the file
			}
			pr = append(pr, parseProblem(row, err)) // the loop's condition leaves room for it
			break                                   // after a quoting error the rest of the file cannot be read reliably
		}
		if len(rec) != len(header) {
			add(&pr, rowField(row, ""), "has %d cells where the header has %d", len(rec), len(header))
			continue
		}
		cr := rowOf(rec, index)
		if err := cr.Validate(today); err != nil {
			var e *db.Error
			if !errors.As(err, &e) {
				return 0, err
			}
			for _, d := range e.Details {
				add(&pr, rowField(row, d.Field), "%s", d.Message)
			}
			continue
		}
		if len(pr) == 0 && emit != nil {
			if err := emit(cr); err != nil {
				return 0, err
			}
		}
	}
	if len(pr) > 0 {
		return 0, problems(pr)
	}
	if rows == 0 {
		return 0, fileProblem("has a header row and no pets")
	}
	return rows, nil
}

// readHeader maps each column to its cell's position: the header's cells
// are column names (any order, surrounding spaces ignored, letter case as
// listed). Unknown and repeated columns, and a missing name or category,
// are problems.
func readHeader(header []string) (map[string]int, db.Problems) {
	var pr db.Problems
	index := map[string]int{}
	for i, cell := range header {
		col := strings.TrimSpace(cell)
		switch _, seen := index[col]; {
		case !known(col):
			add(&pr, rowField(HeaderRow, printable(col)), "is not a column of an import; the columns are %s", strings.Join(Columns, ", "))
		case seen:
			add(&pr, rowField(HeaderRow, col), "appears more than once")
		default:
			index[col] = i
		}
	}
	for _, col := range []string{ColName, ColCategory} {
		if _, ok := index[col]; !ok {
			add(&pr, rowField(HeaderRow, col), "is a required column and is missing")
		}
	}
	return index, pr
}

func known(col string) bool {
	for _, c := range Columns {
		if c == col {
			return true
		}
	}
	return false
}

// printable is a column name as a problem names it: quoted when empty or
// holding what would not read as text.
func printable(col string) string {
	if col == "" || strings.ContainsFunc(col, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Sprintf("%q", col)
	}
	if len(col) > 100 {
		return col[:100] + "…"
	}
	return col
}

// rowOf is record as a CatalogRow: an empty (or blank) cell is a field
// not given.
func rowOf(rec []string, index map[string]int) *db.CatalogRow {
	cell := func(col string) *string {
		i, ok := index[col]
		if !ok || strings.TrimSpace(rec[i]) == "" {
			return nil
		}
		v := rec[i]
		return &v
	}
	return &db.CatalogRow{
		Name: cell(ColName), Category: cell(ColCategory), Status: cell(ColStatus), Price: cell(ColPrice),
		Breed: cell(ColBreed), BirthDate: cell(ColBirthDate), Description: cell(ColDescription), Quantity: cell(ColQuantity),
	}
}

// rowField is the field of a problem of row n (and a column).
func rowField(n int64, col string) string {
	if col == "" {
		return fmt.Sprintf("row %d", n)
	}
	return fmt.Sprintf("row %d: %s", n, col)
}

// parseProblem is the problem of a row encoding/csv could not read.
func parseProblem(row int64, err error) db.FieldError {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return db.FieldError{Field: rowField(row, ""), Message: fmt.Sprintf("is not valid CSV: %v (line %d, column %d)", pe.Err, pe.Line, pe.Column)}
	}
	return db.FieldError{Field: rowField(row, ""), Message: "could not be read"}
}

// add adds a problem to pr unless it holds MaxProblems already: problems
// past those a refusal lists are dropped as they are found, never kept.
func add(pr *db.Problems, field, format string, args ...any) {
	if len(*pr) < MaxProblems {
		pr.Add(field, format, args...)
	}
}

// problems is the refusal of a file with pr (at most MaxProblems of them).
func problems(pr db.Problems) error {
	msg := "The file has problems; nothing was imported."
	if len(pr) == MaxProblems {
		msg = fmt.Sprintf("The file has problems; nothing was imported. The first %d are listed.", MaxProblems)
	}
	return &db.Error{Code: db.EValidationFailed, Message: msg, Details: pr}
}

// recordLimit's refusals of a record.
var (
	errLongRecord = errors.New("petcsv: a row longer than MaxRecordBytes")
	errWideRecord = errors.New("petcsv: a row of more than MaxColumns cells")
)

// recordLimit passes a CSV file through to encoding/csv, following its
// quotes to tell where each record ends (a line break outside quotes) and
// where its cells end (a comma outside quotes), and fails as soon as a
// record runs past MaxRecordBytes (errLongRecord) or MaxColumns cells
// (errWideRecord): before encoding/csv has read more of it than that. The
// bytes before that point are passed on first, so the records before it
// read as usual. (In a file encoding/csv reads, a quote opens or closes a
// quoted cell or is one of a doubled pair: toggling on each quote follows
// the quoting exactly; in any other file encoding/csv finds a quoting
// error.)
type recordLimit struct {
	r        io.Reader
	inQuotes bool
	n        int   // bytes of the current record so far
	cells    int   // cells of the current record so far, less one
	err      error // the refusal, once reached
}

func (l *recordLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i, b := range p[:n] {
		switch {
		case b == '"':
			l.inQuotes = !l.inQuotes
		case b == '\n' && !l.inQuotes:
			l.n, l.cells = 0, 0
			continue
		case b == ',' && !l.inQuotes:
			l.cells++
		}
		l.n++
		switch {
		case l.n > MaxRecordBytes:
			l.err = errLongRecord
		case l.cells >= MaxColumns:
			l.err = errWideRecord
		default:
			continue
		}
		if i == 0 {
			return 0, l.err
		}
		return i, nil
	}
	return n, err
}

// fileProblem is the refusal of the file as a whole.
func fileProblem(format string, args ...any) error {
	var pr db.Problems
	pr.Add("file", format, args...)
	return &db.Error{Code: db.EValidationFailed, Message: "The file " + fmt.Sprintf(format, args...) + ".", Details: pr}
}
