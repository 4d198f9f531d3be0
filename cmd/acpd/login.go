package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"acpd/model/provider"
)

// loginProviders are the providers `acpd login` stores keys for.
var loginProviders = []string{"anthropic", "openai", "gemini"}

func newLoginCmd() *cobra.Command {
	var prov string
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Store a model provider's API key (mode 0600, under $XDG_CONFIG_HOME/acpd)",
		Long: `Store a model provider's API key for acpd. The key is read from the
terminal without echo (or from standard input when it is not a terminal) and
stored in $XDG_CONFIG_HOME/acpd/credentials.json with mode 0600. Keys in the
environment take precedence over stored ones.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			if !slices.Contains(loginProviders, prov) {
				return fmt.Errorf("unknown provider %q (want one of %s)", prov, strings.Join(loginProviders, ", "))
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
			if err := provider.OpenCredentials("").Delete(p); err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "Deleted stored keys.")
			return nil
		},
	}
}

// readSecret reads one line from the terminal with echo off, or from in when
// standard input is not a terminal.
func readSecret(in *bufio.Reader) (string, error) {
	fd := int(os.Stdin.Fd())
	if t, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		quiet := *t
		quiet.Lflag &^= unix.ECHO
		if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err == nil {
			defer unix.IoctlSetTermios(fd, unix.TCSETS, t)
		}
	}
	line, err := in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimSpace(line), nil
}
