package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// scaleReport is what one scale run measured.
type scaleReport struct {
	Settings string
	Sizes    []int
	Rows     []scaleRow
	Seeds    []scaleSeed
	Notes    []string
}

// scaleSeed is how long seeding one size took on one database: pets and
// their stock by INSERT ... SELECT with the schema's triggers on (issue 27).
type scaleSeed struct {
	Database string
	Pets     int
	Took     time.Duration
}

// rate is the measured rate of read on database at n pets, false when
// that was not measured.
func (r *scaleReport) rate(read, database string, n int) (scaleRow, bool) {
	for _, rw := range r.Rows {
		if rw.Read == read && rw.Database == database && rw.Pets == n {
			return rw, true
		}
	}
	return scaleRow{}, false
}

// write prints one table per database: each read's rate at every size and
// the ratio of the largest size to the smallest, marked against the target.
func (r *scaleReport) write(w io.Writer) {
	fmt.Fprintln(w, "## Scale: reads as the catalog grows")
	fmt.Fprintln(w)
	fmt.Fprintln(w, r.Settings)
	if len(r.Sizes) == 0 {
		return
	}
	small, large := r.Sizes[0], r.Sizes[len(r.Sizes)-1]
	met, missed := 0, []string{}
	for _, database := range []string{dbSQLite, dbPostgres} {
		if _, ok := r.rate(scaleReads[0].Name, database, small); !ok {
			continue
		}
		fmt.Fprintln(w)
		head := "| " + database + " |"
		rule := "|---|"
		for _, n := range r.Sizes {
			head += " " + petCount(n) + " req/s (p50, CPU/req) |"
			rule += "---|"
		}
		fmt.Fprintf(w, "%s %s / %s | target ≥ %.1f |\n%s---|---|\n", head, petCount(large), petCount(small), targetScaleRatio, rule)
		for _, read := range scaleReads {
			line := "| " + read.Name + " |"
			for _, n := range r.Sizes {
				rw, ok := r.rate(read.Name, database, n)
				switch {
				case !ok:
					line += " – |"
				case rw.Errors > 0:
					line += fmt.Sprintf(" %s (%s, %s), %d errors |", thousands(rw.Rate), ms(rw.P50), micros(rw.CPU), rw.Errors)
				default:
					line += fmt.Sprintf(" %s (%s, %s) |", thousands(rw.Rate), ms(rw.P50), micros(rw.CPU))
				}
			}
			a, okA := r.rate(read.Name, database, small)
			b, okB := r.rate(read.Name, database, large)
			if !okA || !okB || a.Rate == 0 || small == large {
				fmt.Fprintln(w, line+" – | – |")
				continue
			}
			ratio := b.Rate / a.Rate
			verdict := "met"
			if ratio < targetScaleRatio || b.Errors > 0 {
				verdict = "**missed**"
				missed = append(missed, database+": "+read.Name)
			} else {
				met++
			}
			fmt.Fprintf(w, "%s %.2f | %s |\n", line, ratio, verdict)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Target (every read at %s pets ≥ %.1f of its rate at %s): %d met, %d missed", petCount(large), targetScaleRatio, petCount(small), met, len(missed))
	if len(missed) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(missed, "; "))
	}
	fmt.Fprintln(w, ".")
	r.writeSeeds(w)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "- "+n)
	}
}

// petCount is n the way the table heads it: 10k, 1M, 2.5M, 750.
func petCount(n int) string {
	switch {
	case n >= 1_000_000 && n%100_000 == 0:
		return strings.TrimSuffix(strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64), ".0") + "M"
	case n >= 1000 && n%100 == 0:
		return strings.TrimSuffix(strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64), ".0") + "k"
	}
	return strconv.Itoa(n)
}

// parseSizes reads -scale: catalog sizes, each at least 1,000.
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n < 1000 {
			return nil, fmt.Errorf("-scale: %q is not a catalog size of at least 1000", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// writeSeeds prints the seeding wall time and rows/s of each size: a write
// whose cost grows linearly keeps its rows/s as the size grows (SPEC §18).
func (r *scaleReport) writeSeeds(w io.Writer) {
	if len(r.Seeds) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| seeding (pets + stock, triggers on; PostgreSQL's time includes its VACUUM ANALYZE) | pets | wall time | rows/s |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, sd := range r.Seeds {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", sd.Database, petCount(sd.Pets), sd.Took.Round(10*time.Millisecond),
			thousands(float64(sd.Pets)/sd.Took.Seconds()))
	}
	fmt.Fprintln(w)
}
