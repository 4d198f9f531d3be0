package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"acpd/config"
)

// newConfigCmd is `acpd config`: the annotated example configuration, so
// that a binary from a release archive (or `go install`) documents its
// keys without the repository.
func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the annotated example configuration",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "example",
		Short: "Print the annotated example config.toml (every key, with its default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), config.Example)
			return err
		},
	})
	return cmd
}
