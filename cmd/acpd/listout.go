package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// printJSON writes v to out as indented JSON.
func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printTable writes a table to out: the tab-separated header, then the
// tab-separated line row makes of each element of rows.
func printTable[T any](out io.Writer, header string, rows []T, row func(T) string) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, row(r))
	}
	return tw.Flush()
}

// printList writes rows to out as a JSON array with asJSON (empty, not
// null, when there are none), else as none when there are none, else as a
// table (see printTable).
func printList[T any](out io.Writer, asJSON bool, rows []T, none, header string, row func(T) string) error {
	if asJSON {
		if rows == nil {
			rows = []T{}
		}
		return printJSON(out, rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(out, none)
		return err
	}
	return printTable(out, header, rows, row)
}
