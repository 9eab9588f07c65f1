package loadgen

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// CSVHeader is redis-benchmark's --csv header plus p99.9 as a last column.
var CSVHeader = []string{"test", "rps", "avg_latency_ms", "min_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "max_latency_ms", "p999_latency_ms"}

// WriteCSV writes results the way redis-benchmark --csv does (every field
// quoted, rps with 2 decimals, latencies with 3), with p99.9 appended.
func WriteCSV(w io.Writer, results []Result) error {
	quote := func(fields []string) string {
		var b []byte
		for i, f := range fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, f)
		}
		return string(b) + "\n"
	}
	if _, err := io.WriteString(w, quote(CSVHeader)); err != nil {
		return err
	}
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, r := range results {
		row := []string{r.Title, strconv.FormatFloat(r.OpsPerSec, 'f', 2, 64),
			ms(r.AvgMs), ms(r.MinMs), ms(r.P50Ms), ms(r.P95Ms), ms(r.P99Ms), ms(r.MaxMs), ms(r.P999Ms)}
		if _, err := io.WriteString(w, quote(row)); err != nil {
			return err
		}
	}
	return nil
}

// ReadCSV parses redis-benchmark's (or WriteCSV's) CSV output into
// test title -> rps.
func ReadCSV(r io.Reader) (map[string]float64, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("reading benchmark CSV: %w", err)
	}
	out := map[string]float64{}
	for i, rec := range recs {
		if i == 0 || len(rec) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(rec[1], 64)
		if err != nil {
			return nil, fmt.Errorf("benchmark CSV line %d: rps %q: %w", i+1, rec[1], err)
		}
		out[rec[0]] = v
	}
	return out, nil
}

// Report is what --json writes.
type Report struct {
	Config  Config   `json:"config"`
	Results []Result `json:"results"`
}

// WriteJSON writes cfg and results as one indented JSON document.
func WriteJSON(w io.Writer, cfg Config, results []Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Report{Config: cfg, Results: results})
}

// WriteTable writes a readable table.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "test\trequests/s\tavg ms\tmin\tp50\tp95\tp99\tp99.9\tmax\trequests\terrors\tmisses\tcpu µs/op\t")
	for _, r := range results {
		cpu := 0.0
		if r.Requests > 0 {
			cpu = float64(r.ClientCPU.Microseconds()) / float64(r.Requests)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%d\t%d\t%.3f\t\n",
			r.Title, r.OpsPerSec, r.AvgMs, r.MinMs, r.P50Ms, r.P95Ms, r.P99Ms, r.P999Ms, r.MaxMs, r.Requests, r.Errors, r.Misses, cpu)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		for _, s := range r.ErrorSamples {
			if _, err := fmt.Fprintf(w, "error sample: %s\n", s); err != nil {
				return err
			}
		}
	}
	return nil
}
