package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"acpd/model/provider"
)

// loginProviders are the built-in providers `acpd login` stores keys for;
// providers of the configuration file are accepted too.
var loginProviders = []string{"anthropic", "openai", "gemini"}

func newLoginCmd(g *globalFlags) *cobra.Command {
	var prov string
	cmd := &cobra.Command{
		Use:   "login [PROVIDER]",
		Short: "Store a model provider's API key (mode 0600, under $XDG_CONFIG_HOME/acpd)",
		Long: `Store a model provider's API key for acpd. The key is read from the
terminal without echo (or from standard input when it is not a terminal) and
stored in $XDG_CONFIG_HOME/acpd/credentials.json with mode 0600. Keys in the
environment take precedence over stored ones. PROVIDER (or --provider) is
anthropic, openai, gemini or a provider of the configuration file; without
it acpd asks.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if prov != "" && prov != args[0] {
					return fmt.Errorf("two providers given: %q and --provider %q", args[0], prov)
				}
				prov = args[0]
			}
			known := slices.Clone(loginProviders)
			if loader, err := loadConfig(g); err == nil {
				for _, name := range slices.Sorted(maps.Keys(loader.User().Providers)) {
					if !slices.Contains(known, name) {
						known = append(known, name)
					}
				}
			}
			in := bufio.NewReader(cmd.InOrStdin())
			out := cmd.ErrOrStderr()
			if prov == "" {
				fmt.Fprintf(out, "Provider (%s) [anthropic]: ", strings.Join(loginProviders, ", "))
				line, err := in.ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				prov = strings.TrimSpace(line)
				if prov == "" {
					prov = "anthropic"
				}
			}
			if !slices.Contains(known, prov) {
				return fmt.Errorf("unknown provider %q (want one of %s)", prov, strings.Join(known, ", "))
			}
			fmt.Fprintf(out, "API key for %s: ", prov)
			key, err := readSecret(in)
			fmt.Fprintln(out)
			if err != nil {
				return err
			}
			if key == "" {
				return errors.New("no key entered")
			}
			if err := provider.OpenCredentials("").Set(prov, key); err != nil {
				return err
			}
			fmt.Fprintf(out, "Stored the %s key. Editors pick it up on their next session (or ACP authenticate).\n", prov)
			return nil
		},
	}
	cmd.Flags().StringVar(&prov, "provider", "", "provider to store a key for: "+strings.Join(loginProviders, ", "))
	return cmd
}

func newLogoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout [PROVIDER]",
		Short: "Delete stored API keys (all of them without an argument)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := ""
			if len(args) == 1 {
				p = args[0]
			}
			creds := provider.OpenCredentials("")
			stored := creds.Providers()
			switch {
			case p == "" && len(stored) == 0:
				fmt.Fprintln(cmd.ErrOrStderr(), "No stored keys: nothing to delete.")
				return nil
			case p != "" && !slices.Contains(stored, p):
				fmt.Fprintf(cmd.ErrOrStderr(), "No stored key for %s: nothing to delete.\n", p)
				return nil
			}
			if err := creds.Delete(p); err != nil {
				return err
			}
			if p != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "Deleted the stored key for %s.\n", p)
				return nil
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "Deleted stored keys.")
			return nil
		},
	}
}

// readSecret reads one line from the terminal with echo off, or from in when
// standard input is not a terminal.
func readSecret(in *bufio.Reader) (string, error) {
	if fd := os.Stdin.Fd(); in.Buffered() == 0 && term.IsTerminal(fd) {
		b, err := term.ReadPassword(fd) // echo off, on every platform
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(b)), nil
	}
	line, err := in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimSpace(line), nil
}
